"""The recap, "What to remember": its sentences link to their pages, each small chart is
the chart its page draws at the same settings, each self-check card is graded as its
page's card, and in a room the presenter sees a card's first answers beside the recap's.

The pages' runs are the session's shared ones (:func:`tests.app.helpers.page_run`: every
question answered by the link, "Go deeper" open), at each page's defaults. What each
sentence says is checked against the measurement at those defaults.
"""

from __future__ import annotations

import functools
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import pytest

import rooms
from tests.app.helpers import assert_page_in, page_run, run_page, warnings
from tests.app.test_pinned_charts import decode_chart
from tests.app.test_rooms import captions, room_charts, with_tab
from ui.common import i18n
from ui.common.pages import STORY, page
from ui.recap import charts, data

RECAP = "app_pages/recap.py"
LANGS = ("en", "zh")
#: The url path of each page the recap sums up.
LINKED = {name: page(name).url_path for name in data.PAGES}


def recap_charts(lang: str) -> dict[str, dict]:
    """The recap's small charts by page name, decoded (:func:`decode_chart`), in order."""
    run = page_run("recap", lang)
    assert not run.exceptions, run.exceptions
    return {
        name: decode_chart(proto)[0] for name, proto in zip(data.PAGES, run.charts, strict=True)
    }


def page_charts(name: str, lang: str) -> list[dict]:
    """Every chart of story page ``name``, decoded, at the recap's settings."""
    run = page_run(LINKED[name], lang)
    assert not run.exceptions, run.exceptions
    return [decode_chart(proto)[0] for proto in run.charts]


def marks(spec: dict) -> list[tuple[str, tuple[str, ...]]]:
    """Each layer's mark and the fields it encodes, in order (nested layers walked)."""
    out = []
    if "mark" in spec:
        mark = spec["mark"] if isinstance(spec["mark"], str) else spec["mark"]["type"]
        fields = tuple(
            sorted(
                f"{channel}:{enc.get('field')}"
                for channel, enc in spec.get("encoding", {}).items()
                if isinstance(enc, dict) and "field" in enc
            )
        )
        out.append((mark, fields))
    for child in spec.get("layer", []):
        out += marks(child)
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_the_recap_in_both_languages(lang):
    at = run_page(RECAP, lang=lang)
    charts_drawn = assert_page_in(at, lang, len(data.PAGES))
    for chart in charts_drawn:
        spec = chart["spec"]
        assert "title" not in spec and spec["height"] == charts.SMALL_PLOT_PX
    assert [h.value for h in at.header] == [
        i18n.catalog(lang)["recap.answers_header"].format(n=len(data.PAGES)),
        i18n.catalog(lang)["recap.check_header"],
    ]


def test_the_recap_sums_up_every_story_page():
    assert data.PAGES == tuple(name for name in STORY if name != "recap")
    assert STORY[-1] == "recap"  # the story's close
    assert set(data.CARDS) <= set(data.PAGES) and 3 <= len(data.CARDS) <= 5


@pytest.mark.parametrize("lang", LANGS)
def test_each_sentence_links_to_its_page(lang):
    at = run_page(RECAP, lang=lang)
    cat = i18n.catalog(lang)
    links = {link.proto.page: link.proto for link in at.get("page_link")}
    for name, url_path in LINKED.items():
        link = links[url_path]
        assert cat[f"recap.{name}"] in link.label
        assert cat[f"home.step_{name}_title"] in link.label
        assert not link.query_string  # the page's defaults; the seed is the session's


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", data.PAGES)
def test_each_small_chart_is_its_pages_chart(name, lang):
    """The small chart's data, value by value, and its marks and their fields are those of
    one chart of its page at the same settings; only its words and size are its own."""
    small = recap_charts(lang)[name]
    same = [c for c in page_charts(name, lang) if c["datasets"] == small["datasets"]]
    assert len(same) == 1, f"{name}: {len(same)} charts of its page have the recap's data"
    assert marks(same[0]["spec"]) == marks(small["spec"])
    assert small["spec"]["description"] == i18n.catalog(lang)[f"recap.{name}_alt"]


def test_each_sentence_holds_at_the_defaults():
    """What the sentences say, against the measurements at the pages' defaults (seed 0)."""
    from core.real_models import COLLAPSE_NATS
    from ui.common.data import alpha_sweep
    from ui.story import data as story_data
    from ui.story import language_model, real_models
    from ui.training import data as training

    var = story_data.variance_sweep("normal", 0)
    raw, scaled = var[~var["scaled"]], var[var["scaled"]]
    assert (abs(scaled["var"] - 1) < 0.1).all()  # ÷√dₖ holds it at 1
    assert (abs(raw["var"] / raw["d"] - 1) < 0.1).all()  # Var(q·k) grows like dₖ
    sweep = pd.concat(alpha_sweep(10, 0.5, 0.0, 0))
    at = sweep.set_index(["alpha", "d"])
    assert at.loc[(0.0, 4096), "max_weight_mean"] > 0.95  # nears 1
    assert at.loc[(0.5, 4096), "max_weight_mean"] < 0.5  # keeps it low
    dead = sweep.pivot(index="d", columns="alpha", values="dead_fraction")
    assert dead[0.0].is_monotonic_increasing and dead[0.0].iloc[-1] > 0.5  # ever more rows
    assert (dead[0.5] == 0).all()  # with ÷√dₖ, none
    spread = story_data.sqrt_vs_d_sweep(10, 0.75, 0.0, 0)
    spread = spread.pivot(index="d", columns="alpha", values="logit_std")
    assert (abs(spread[0.5] - 1) < 0.05).all()  # only ÷√dₖ keeps it at 1
    assert spread[0.0].is_monotonic_increasing and spread[1.0].is_monotonic_decreasing
    task = int(page("training").param("m").default)
    stats = training.sweep_stats(task, "adam", 64, 0, 300, training.BASE_VARIANTS)["per"]
    assert task == 2 and stats["alpha_0"]["best"] > training.uniform(task)  # never beats it
    assert "learns" in stats["alpha_half"]["verdicts"]
    cells = language_model.cells()
    assert cells["none", 64].best_loss > cells["sqrt", 64].best_loss  # a higher loss
    means = story_data.head_means(512, 8, 0, "fan_in")
    assert abs(means["d_k"]["std"] - 1) < 0.05 and means["d_model"]["std"] < 0.5  # too small
    entropy = real_models.corpus().summary["entropy"][..., real_models.divisor_index("none")]
    assert (entropy < COLLAPSE_NATS).mean() > 0.25  # many heads nearly one-hot


def test_without_the_shipped_sweep_the_training_chart_says_why():
    """Seed 1: the training lab's runs are not shipped (the recap never trains)."""
    at = run_page(RECAP, seed="1")
    assert not at.exception and not warnings(at)
    assert len(at.get("vega_lite_chart")) == len(data.PAGES) - 1
    note = i18n.catalog("en")["recap.training_missing"].format(seed=1)
    assert note in [c.value for c in at.caption]


def card_texts(texts: tuple[tuple[str, str], ...]) -> list[str]:
    """The paragraphs of the prediction cards of a run: each question, and each verdict
    with its explanation (answered by the link: "The measurement says …"; an answered
    card draws both in one element)."""
    return [
        paragraph
        for kind, text in texts
        if kind == "markdown" and "**" in text
        for paragraph in text.split("\n\n")
    ]


@functools.cache
def unanswered(script: str, lang: str):
    """A run of ``script`` in ``lang`` with its questions open (their options shown)."""
    at = run_page(script, reveal=False, lang=lang)
    assert not at.exception, at.exception
    return at


def options_of(at, key: str) -> list[str]:
    (radio,) = [r for r in at.radio if r.key == f"{key}_guess"]
    return [str(o) for o in radio.options]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", data.CARDS)
def test_each_card_is_graded_as_on_its_page(name, lang):
    """Question, options and right answer: the recap's card (``recap.<card>``) shows its
    page card's question and options, and the same verdict: the right option, then the
    explanation with the measured numbers."""
    key = data.card(name, 0)["key"]
    cat = i18n.catalog(lang)
    question = f"**{cat['workshop.predict_title']}** — "
    verdict = cat["workshop.skipped"].split("{answer}")[0]
    recap = card_texts(page_run("recap", lang).elements)
    on_page = card_texts(page_run(LINKED[name], lang).elements)
    asked = [t for t in recap if t.startswith(question) and t in on_page]
    graded = [t for t in recap if t.startswith(verdict) and t in on_page]
    assert len(asked) == 1 and len(graded) == 1, (asked, graded)
    assert options_of(unanswered(RECAP, lang), f"recap.{key}") == options_of(
        unanswered(page(name).script, lang), key
    )


# --- rooms: the presenter sees the first guesses beside the recap's answers ---------------
def test_the_presenter_sees_first_guesses_beside_the_recaps(sqlite_store):
    card = data.card("saturation", 0)
    first, again = card["key"], f"recap.{card['key']}"
    presenter = run_page(RECAP, reveal=False, present="1", step="2")
    presenter.button(key="room_open").click().run()
    assert not presenter.exception, presenter.exception
    code = presenter.session_state["room"]
    links = [c.value for c in presenter.sidebar.code if "room=" in c.value]
    query = dict(parse_qsl(urlsplit(links[0]).query))
    assert query["room"] == code

    def learner(script: str, tab: str):
        return with_tab(run_page(script, reveal=False, room=code), tab)

    # two learners answer the saturation page's card, then its recap card
    answers = {"a": (0, 1), "b": (1, 1)}
    for name, (on_page, in_recap) in answers.items():
        tab = rooms.new_learner_id()
        at = learner(page("saturation").script, tab)
        at.radio(key=f"{first}_guess").set_value(on_page).run()
        at.button(key=f"{first}_reveal").click().run()
        at = learner(RECAP, tab)
        at.radio(key=f"{again}_guess").set_value(in_recap).run()
        at.button(key=f"{again}_reveal").click().run()
        assert not at.exception and any("in the room's count" in c for c in captions(at)), name

    presenter.run()
    options = card["options"]
    shown = room_charts(presenter)
    first_counts = {options[0]: 1, options[1]: 1} | {o: 0 for o in options[2:]}
    again_counts = {options[1]: 2} | {o: 0 for o in options if o != options[1]}
    # the first card's pair (first guesses, then the recap's), under the first tab
    assert shown[0]["counts"] == first_counts and shown[1]["counts"] == again_counts
    assert i18n.catalog("en")["room.first_answers"] in captions(presenter)

    # "Reveal to the room" reveals both: the recap's answers and the first guesses
    presenter.button(key=f"{again}_room_reveal").click().run()
    store = rooms.open_store("", sqlite_store)
    assert store.is_revealed(code, again) and store.is_revealed(code, first)


@pytest.fixture
def sqlite_store(monkeypatch, tmp_path) -> str:
    """The test's room store: a SQLite folder of its own (its path)."""
    monkeypatch.delenv("ROOM_STORE_URL", raising=False)
    monkeypatch.setenv("ROOM_STORE_DIR", str(tmp_path))
    return str(tmp_path)
