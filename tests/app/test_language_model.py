"""The language-model page through AppTest, in both languages.

The charts' data are checked against ``data/char_lm.npz`` recomputed here with plain NumPy
(not through the page's own data module); the prediction's answer and the page's
headline numbers likewise. The continuations are checked by their shape and their
determinism (same seed, same text), never letter by letter: they are sampled from
float32 logits, whose last bits differ between CPUs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import char_lm
from tests.app.helpers import assert_page_in, pictures, reveal_all, run_page, warnings
from tests.app.test_pinned_charts import decode_chart
from ui.common import i18n
from ui.common.pages import page

SCRIPT = "app_pages/language-model.py"
DATA = Path(__file__).resolve().parents[2] / "data" / "char_lm.npz"
#: loss against rate at dₕ = 16 and 64 (the short path), step-0 histogram, held-out loss
#: over training, max |logit| of layers 1 and 2, entropy of layers 1 and 2, the next character
N_CHARTS = 9
LOSS_16, LOSS_64, HIST, VAL, LOGIT_1, LOGIT_2, ENTROPY_1, ENTROPY_2, NEXT = range(N_CHARTS)
VARIANTS = ("sqrt", "none", "mup", "qk_ln")
CONTEXT = 64


def open_page(reveal: bool = True, **params: str | list[str]) -> AppTest:
    return run_page(SCRIPT, reveal=reveal, **params)


@pytest.fixture(scope="module")
def sweep():
    with np.load(DATA) as z:
        arrays = {k: z[k] for k in z.files if k != "meta"}
        meta = json.loads(str(z["meta"]))
    return arrays, meta


def table(at: AppTest, i: int, k: int = 0) -> dict[str, list]:
    """The columns of dataset ``k`` of chart ``i``."""
    chart, _ = decode_chart(at.get("vega_lite_chart")[i].proto)
    return chart["datasets"][k]["columns"]


def rows(columns: dict[str, list]) -> list[dict]:
    return [
        dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)
    ]


def labels(lang: str = "en") -> dict[str, str]:
    """Legend label -> variant, in ``lang``."""
    cat = i18n.catalog(lang)
    return {cat[f"language_model.variant_{v}"]: v for v in VARIANTS}


def codes(at: AppTest) -> list[str]:
    return [c.value for c in at.code]


def page_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + warnings(at) + [c.value for c in at.caption]
    parts += [i.value for i in at.info]
    return "\n".join(parts)


# --- the page, in both languages --------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_with_every_chart(lang):
    at = open_page(lang=lang)
    assert_page_in(at, lang, N_CHARTS)
    assert at.radio(key="d_h").value == "64"
    assert at.select_slider(key="rate").value == "0.03"
    assert at.slider(key="temperature").value == pytest.approx(0.8)
    assert at.radio(key="length").value == "200"
    assert len(codes(at)) == 4  # one continuation per variant
    assert len(at.table) == 1  # LR sensitivity per variant and head size
    svg = pictures(at)
    assert len(svg) == 1 and svg[0].startswith("<svg") and ("模型" in svg[0]) == (lang == "zh")


def test_registry_matches_the_shipped_sweep(sweep):
    _, meta = sweep
    spec = page("language_model")
    assert spec.param("d_h").options == tuple(str(h) for h in meta["head_sizes"])
    rates = spec.param("rate").options
    np.testing.assert_allclose([float(r) for r in rates], meta["lrs"], rtol=1e-12)
    assert meta["config"]["context"] == CONTEXT and meta["vocab"] == char_lm.VOCAB


# --- the charts' data are the sweep's ------------------------------------------------------
def clipped(z: dict, a: int, b: int) -> np.ndarray:
    """min(final, ℓ₀) per (rate, seed), ℓ₀ where a run diverged (NaN)."""
    final, l0 = z["final_val_loss"][a, b], z["initial_val_loss"][a, b]
    return np.where(np.isfinite(final), np.minimum(final, l0), l0)


def test_loss_against_rate_is_the_sweep(sweep):
    z, meta = sweep
    at = open_page()
    names = labels()
    for chart, b in ((LOSS_16, 0), (LOSS_64, 1)):
        got = rows(table(at, chart))  # the lines and bands
        assert len(got) == len(VARIANTS) * len(meta["lrs"])
        for row in got:
            a = VARIANTS.index(names[row["series"]])
            c = meta["lrs"].index(row["lr"])
            loss = clipped(z, a, b)
            assert row["value"] == pytest.approx(loss[c].mean(), rel=1e-12)
            assert row["lo"] == pytest.approx(loss[c].min(), rel=1e-12)
            assert row["hi"] == pytest.approx(loss[c].max(), rel=1e-12)
            mean = loss.mean(axis=1)
            # Wortsman et al. 2023: the mean excess over the best rate of the grid
            assert row["sensitivity"] == pytest.approx(np.mean(mean - mean.min()), rel=1e-12)
        best = rows(table(at, chart, 1))  # the large points: each variant's best rate
        assert len(best) == len(VARIANTS)
        for row in best:
            a = VARIANTS.index(names[row["series"]])
            mean = clipped(z, a, b).mean(axis=1)
            assert row["lr"] == meta["lrs"][int(np.argmin(mean))]
            assert row["value"] == pytest.approx(mean.min(), rel=1e-12)


def test_logits_at_step_0_are_the_sweeps_histogram(sweep):
    z, meta = sweep
    at = open_page()
    names = labels()
    edges = z["logit_hist_edges"]
    b = meta["head_sizes"].index(64)
    got = rows(table(at, HIST))
    for v in VARIANTS:
        counts = z["logit_hist"][VARIANTS.index(v), b].sum(axis=(0, 1))  # seeds, layers
        mine = [r for r in got if names[r["series"]] == v]
        assert sum(r["share"] for r in mine) == pytest.approx(1.0, abs=1e-12)  # nothing cut
        for r in mine:
            i = int(np.searchsorted(edges, r["x0"]))
            assert edges[i] == r["x0"] and edges[i + 1] == r["x1"]
            assert r["share"] == pytest.approx(counts[i] / counts.sum(), abs=1e-15)


@pytest.mark.parametrize("rate", ["0.03", "0.3"])
def test_curves_over_training_are_the_sweep(sweep, rate):
    z, meta = sweep
    at = open_page(rate=rate)
    assert not at.exception and not warnings(at)
    names = labels()
    b, c = meta["head_sizes"].index(64), meta["lrs"].index(float(rate))
    steps = list(z["eval_steps"])
    for chart, name, layer in (
        (VAL, "val_loss", None),
        (LOGIT_1, "max_logit", 0),
        (LOGIT_2, "max_logit", 1),
        (ENTROPY_1, "entropy", 0),
        (ENTROPY_2, "entropy", 1),
    ):
        got = rows(table(at, chart))
        assert len(got) == len(VARIANTS) * len(steps)  # no run diverged
        for row in got:
            a = VARIANTS.index(names[row["series"]])
            values = z[name][a, b, c] if layer is None else z[name][a, b, c][..., layer]
            e = steps.index(row["step"])
            assert row["value"] == pytest.approx(values[:, e].mean(), rel=1e-12)
            assert row["lo"] == pytest.approx(values[:, e].min(), rel=1e-12, abs=1e-15)
            assert row["hi"] == pytest.approx(values[:, e].max(), rel=1e-12, abs=1e-15)
            if name == "max_logit":
                onehot = z["onehot_share"][a, b, c][:, e, layer].mean()
                assert row["onehot"] == pytest.approx(onehot, rel=1e-12)


def test_the_takeaway_over_training_quotes_the_sweep(sweep):
    z, meta = sweep
    at = open_page(rate="0.3")
    b, c = meta["head_sizes"].index(64), meta["lrs"].index(0.3)
    first_layer = z["max_logit"][:, b, c, :, :, 0].mean(axis=1)  # (variant, step)
    text = next(m.value for m in at.markdown if m.value.startswith("**At rate 0.3"))
    for v in ("sqrt", "none", "qk_ln"):
        end = first_layer[VARIANTS.index(v), -1]
        shown = f"{float(f'{end:.3g}'):,.0f}" if end >= 100 else f"{end:.3g}"
        assert shown in text, (v, shown, text)


def test_changing_the_rate_and_the_head_size_changes_the_charts():
    at = open_page()
    before = [c.proto.SerializeToString() for c in at.get("vega_lite_chart")]
    at.select_slider(key="rate").set_value("0.3").run()
    after = [c.proto.SerializeToString() for c in at.get("vega_lite_chart")]
    # the loss charts mark the rate; the curves over training are at it
    assert [i for i in range(N_CHARTS) if before[i] != after[i]] == [
        LOSS_16, LOSS_64, VAL, LOGIT_1, LOGIT_2, ENTROPY_1, ENTROPY_2
    ]  # fmt: skip
    at.radio(key="d_h").set_value("16").run()
    moved = [c.proto.SerializeToString() for c in at.get("vega_lite_chart")]
    assert moved[HIST] != after[HIST] and moved[NEXT] != after[NEXT]
    assert moved[LOSS_16] == after[LOSS_16]  # both head sizes are always shown


# --- the prediction ------------------------------------------------------------------------
@pytest.mark.parametrize("d_h", ["16", "64"])
def test_the_predictions_answer_comes_from_the_data(sweep, d_h):
    z, meta = sweep
    b = meta["head_sizes"].index(int(d_h))
    best = {v: int(np.argmin(clipped(z, VARIANTS.index(v), b).mean(axis=1))) for v in VARIANTS}
    answer = 0 if best["none"] < best["sqrt"] else 1 if best["none"] == best["sqrt"] else 2
    option = ("lower", "the same", "higher")[answer]
    at = open_page(reveal=False, d_h=d_h)
    assert len(at.get("vega_lite_chart")) == N_CHARTS - 2  # not the loss against rate yet
    at.radio(key="language_model_best_rate_guess").set_value(answer).run()
    at.button(key="language_model_best_rate_reveal").click().run()
    assert not at.exception
    said = page_text(at)
    assert f"You guessed **{option}** — right." in said
    assert len(at.get("vega_lite_chart")) == N_CHARTS
    rate = meta["lrs"][best["none"]]
    assert f"{rate:g} without the scale" in said


# --- your own prompt -------------------------------------------------------------------------
def test_a_prompt_gives_four_continuations_of_the_asked_length():
    at = open_page(prompt="KING.\nMy lord", length="100", temperature="0.5")
    assert not at.exception and not warnings(at)
    texts = codes(at)
    assert len(texts) == 4
    for text in texts:
        assert text.startswith("KING.\nMy lord") and len(text) == len("KING.\nMy lord") + 100
        assert set(text) <= set(char_lm.VOCAB)
    again = open_page(prompt="KING.\nMy lord", length="100", temperature="0.5")
    assert codes(again) == texts  # the same seed, the same texts
    other = open_page(prompt="KING.\nMy lord", length="100", temperature="0.5", seed="7")
    assert codes(other) != texts


def test_the_next_character_chart_is_a_distribution():
    at = open_page(temperature="1")
    got = rows(table(at, NEXT))
    names = labels()
    for v in VARIANTS:
        p = [r["p"] for r in got if names[r["series"]] == v]
        assert 0 < sum(p) <= 1 + 1e-9 and len(p) >= 5


def test_a_chinese_prompt_is_dropped_and_said_in_chinese():
    at = open_page(lang="zh", prompt="生存还是毁灭，这是一个问题。")
    assert not at.exception
    said = " ".join(warnings(at))
    assert "读不懂中文" in said and "84" in said and "莎士比亚" in said
    # the models start from a newline (a code box does not show a leading one)
    assert [len(text) <= 200 and "生" not in text for text in codes(at)] == [True] * 4
    assert "生存" not in page_text(at)  # the prompt is never echoed


def test_a_mixed_prompt_says_how_many_and_which_kind():
    at = open_page(prompt="ROMEO. café #1 ☃ 你好")
    said = " ".join(warnings(at))
    assert "Dropped 5 of your characters, not among the 84" in said
    assert "2 Chinese" in said and "3 of other kinds" in said
    assert all(text.startswith("ROMEO. caf 1  ") for text in codes(at))


def test_an_empty_prompt_starts_from_a_newline():
    at = open_page(prompt="")
    assert not warnings(at)
    assert "An empty prompt: the models start from a new line." in page_text(at)
    assert [len(text) <= 200 for text in codes(at)] == [True] * 4  # after the newline


def test_a_long_prompt_keeps_its_end_and_says_so():
    long = "".join(f"Line {i} of a long speech.\n" for i in range(20))
    at = open_page(prompt=long)
    kept = long[-CONTEXT:]
    assert f"they continue the last {CONTEXT} of the {len(long)} they could" in page_text(at)
    assert all(text.startswith(kept) and not text.startswith(long[:20]) for text in codes(at))


def test_typographic_characters_are_read_as_ascii():
    at = open_page(prompt="“Soft” — she said…\tyes")
    assert "look-alikes (curly quotes, dashes, tabs): 5." in page_text(at)
    assert not warnings(at)
    assert all(text.startswith('"Soft" - she said... yes') for text in codes(at))


@pytest.mark.parametrize(
    "prompt",
    ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "**bold** [a](http://x.invalid)"],
)
def test_hostile_text_is_shown_as_text_only(prompt):
    at = open_page(prompt=prompt)
    assert not at.exception
    shown = page_text(at)
    for fragment in ("<script", "<img", "onerror", "**bold**", "](http"):
        assert fragment not in shown
    assert not [h for h in at.get("html") if "alert" in str(getattr(h, "proto", ""))]
    texts = codes(at)
    assert len(texts) == 4
    kept = "".join(ch for ch in prompt if ch in char_lm.VOCAB)
    assert all(text.startswith(kept) for text in texts)


def test_the_prompt_in_the_url_is_capped():
    cap = int(page("language_model").param("prompt").hi)
    at = open_page(reveal=False, prompt="a" * (cap + 1))
    said = " ".join(warnings(at))
    assert "`prompt`" in said and f"{cap:,}" in said
    default = page("language_model").param("prompt").default
    assert all(text.startswith(default) for text in codes(at))
    assert "a" * 100 not in page_text(at)


@pytest.mark.parametrize(
    ("key", "value"),
    [("d_h", "32"), ("rate", "1"), ("temperature", "9"), ("length", "5000"), ("rate", "abc")],
)
def test_bad_values_fall_back_with_a_warning(key, value):
    at = open_page(reveal=False, **{key: value})
    assert not at.exception
    assert f"`{key}`" in " ".join(warnings(at))


def test_url_sets_the_controls():
    at = open_page(d_h="16", rate="0.1", temperature="1.2", length="100", prompt="KING.\n")
    assert not warnings(at)
    assert at.radio(key="d_h").value == "16"
    assert at.select_slider(key="rate").value == "0.1"
    assert at.slider(key="temperature").value == pytest.approx(1.2)
    assert all(len(text) == len("KING.\n") + 100 for text in codes(at))


# --- what it means -----------------------------------------------------------------------------
def test_what_it_means_quotes_the_sweep(sweep):
    z, meta = sweep
    at = open_page()
    said = page_text(at)
    mean = {
        (v, h): clipped(z, VARIANTS.index(v), b).mean(axis=1)
        for v in VARIANTS
        for b, h in enumerate(meta["head_sizes"])
    }
    for h in meta["head_sizes"]:
        gap = round(mean["none", h].min(), 3) - round(mean["sqrt", h].min(), 3)  # as shown
        assert gap > 0 and f"{gap:.3f}" in said
    top = len(meta["lrs"]) - 1
    b = meta["head_sizes"].index(64)
    for v in ("sqrt", "none", "qk_ln"):
        end = z["max_logit"][VARIANTS.index(v), b, top, :, -1, 0].mean()
        assert (f"{float(f'{end:.3g}'):,.0f}" if end >= 100 else f"{end:.3g}") in said
    sens = {v: np.mean(mean[v, 64] - mean[v, 64].min()) for v in VARIANTS}
    assert f"{sens['none']:.3f} against {sens['sqrt']:.3f}" in said
    assert ("*less* sensitive" in said) == (sens["none"] < sens["sqrt"])
    assert f"{meta['unigram_val_loss']:.3f}" in said
    assert "none of the 96 runs diverged" in said
    assert math.isclose(sum(1 for m in at.markdown if ":material/check_circle:" in m.value), 1)


def test_the_training_labs_verdict_is_its_shipped_sweep():
    doc = json.loads((DATA.parent / "training_sweep.json").read_text(encoding="utf-8"))
    m, opt, d = doc["m"].index(1), doc["optimizers"].index("adam"), doc["d_k"].index(64)
    best = []
    for name in ("alpha_0", "alpha_half"):
        v = [x["name"] for x in doc["variants"]].index(name)
        loss = np.array(doc["final_loss"][m][opt][d][v], dtype=float)  # (seeds, rates)
        best.append(np.nanmin(np.nanmedian(loss, axis=0)))
    assert best[0] > best[1]  # the one-layer lab: it learns, and ends higher without
    said = page_text(open_page())
    assert f"{best[0]:.2g} without the scale against {best[1]:.2g} with it" in said


# --- presenter mode ---------------------------------------------------------------------------
def test_presenter_steps_reveal_the_sections_in_turn():
    """The loss against rate (step id 2) opens the page, "Step 1 of 5" (``step=1``); the
    experiment (id 1) follows it, "Step 2 of 5"."""
    at = open_page(present="1", step="1")
    assert not at.exception and len(at.get("vega_lite_chart")) == 2
    assert at.selectbox(key="step").value == 2
    at = open_page(present="1", step="2")
    assert not at.exception and len(at.get("vega_lite_chart")) == 3
    assert at.selectbox(key="step").value == 1
    at = reveal_all(open_page(present="1", step="5"))
    assert not at.exception and len(at.get("vega_lite_chart")) == N_CHARTS


def test_the_short_path_is_the_loss_against_rate_with_the_learners_rate(sweep):
    """Go deeper closed: the question, then both loss charts with the learner's rate
    marked and what each variant reaches at that rate; nothing of the deeper sections."""
    z, meta = sweep
    at = open_page(reveal=False, deeper="false")
    assert not at.exception and not at.get("vega_lite_chart")
    assert [h.value for h in at.header] == ["Final loss against learning rate"]
    reveal_all(at)
    assert len(at.get("vega_lite_chart")) == 2
    for i in (LOSS_16, LOSS_64):
        chart, _ = decode_chart(at.get("vega_lite_chart")[i].proto)
        assert [0.03] in [d["columns"].get("lr") for d in chart["datasets"]]  # the rule
    b = meta["head_sizes"].index(64)
    loss = clipped(z, VARIANTS.index("none"), b)[meta["lrs"].index(0.03)].mean()
    assert f"÷1 (no scale) {loss:.3f}" in page_text(at)
    assert [h.value for h in at.header] == ["Final loss against learning rate"]


def test_show_me_where_it_breaks_is_the_top_rate(sweep):
    """The button sets rate 0.3: at dₕ = 64 the standard and the unscaled model end near
    the unigram loss there, QK-LayerNorm far below it, and the first layer's largest
    |logit| without the scale ends above 100,000."""
    z, meta = sweep
    at = open_page()
    at.button(key="break_it").click().run()
    assert at.select_slider(key="rate").value == "0.3"
    assert at.query_params["rate"] in ("0.3", ["0.3"])
    b, c = meta["head_sizes"].index(64), meta["lrs"].index(0.3)
    loss = {v: clipped(z, VARIANTS.index(v), b)[c].mean() for v in VARIANTS}
    unigram = meta["unigram_val_loss"]
    assert loss["sqrt"] > unigram - 0.15 and loss["none"] > unigram - 0.15
    assert loss["qk_ln"] < unigram - 0.7
    said = page_text(at)
    assert "At your rate 0.3 (dₕ = 64)" in said and f"QK-LayerNorm {loss['qk_ln']:.3f}" in said
    top = z["max_logit"][VARIANTS.index("none"), b, c][..., 0]  # (seeds, evals), layer 1
    assert top[:, -1].mean() > 1e5
