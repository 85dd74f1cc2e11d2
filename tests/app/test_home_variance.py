"""Home and variance pages through AppTest, in both languages."""

import pyarrow as pa
import pytest

from tests.app.helpers import (
    CJK,
    assert_page_in,
    assert_swapped_in_place,
    chart_data,
    code_panels,
    pictures,
    run_page,
    warnings,
)
from ui.common.i18n import catalog
from ui.common.pages import STORY, page
from ui.home import data


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_runs(lang):
    at = run_page(lang=lang)
    assert not at.exception
    assert at.title[0].value
    assert bool(CJK.search(at.title[0].value)) == (lang == "zh")
    assert len(at.latex) == 1
    # the layer's picture, its labels in the page's language
    (svg,) = pictures(at)
    assert svg.startswith("<svg") and catalog(lang)["home.diagram_title"] in svg
    # the story's answer: one sentence per story page, each a link to its page (and the
    # glossary's link under "Terms on this page")
    links = [link.proto for link in at.get("page_link")]
    story = [link for link in links if "glossary" not in link.page]
    assert [link.page.rsplit("/", 1)[-1] for link in story] == [
        page(name).url_path for name in STORY
    ]
    for number, (link, name) in enumerate(zip(story, STORY, strict=True), start=1):
        assert link.label.startswith(f"**{number}. ")
        assert catalog(lang)[f"home.step_{name}_text"] in link.label


def test_home_short_path_draws_the_example_at_its_default_step():
    """The worked example opens at its scores: QKᵀ beside the same ÷√d_k (d_k = 4)."""
    at = run_page(reveal=False, deeper="false")
    assert not at.exception and not warnings(at)
    assert at.segmented_control(key="example_step").value == "scores"
    keys = [c["spec"]["description"] for c in chart_data(at)]
    assert len(keys) == 2 and "dot products" in keys[0] and "divided by" in keys[1]
    summary = data.example_summary(4, 0)
    reading = next(m.value for m in at.markdown if m.value.startswith("At dₖ = 4"))
    assert f"standard deviation is {summary['spread']:.2g}" in reading
    assert ", ".join(f"{x:.2f}" for x in summary["top_unscaled"]) in reading


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_variance_runs_with_every_chart(lang):
    at = run_page("app_pages/variance.py", lang=lang)
    assert_page_in(at, lang, 5, title=False)
    assert len(at.metric) == 4
    assert len(at.latex) == 0  # the derivation's box is closed: nothing drawn inside
    at.session_state["variance_derivation"] = True
    at.run()
    assert len(at.latex) == 1  # the derivation, five aligned lines in one formula
    assert catalog(lang)["variance.derivation_note"] in [c.value for c in at.caption]


def test_changing_d_k_changes_the_charts():
    at = run_page("app_pages/variance.py")
    before = chart_data(at)
    at.number_input(key="d_k").set_value(1024).run()
    after = chart_data(at)
    assert not at.exception
    # histograms, paths and terms are redrawn; the sweep moves only its d_k marker
    for b, a in zip(before, after, strict=True):
        assert b["raw"] != a["raw"]
    metric = {m.label: m.value for m in at.metric}
    assert float(metric["Variance of q·k"]) == pytest.approx(1024, rel=0.05)


def test_doubling_and_halving_buttons():
    at = run_page("app_pages/variance.py", d_k="100")
    at.button(key="d_k_double").click().run()
    assert at.number_input(key="d_k").value == 200
    at.button(key="d_k_half").click().run()
    at.button(key="d_k_half").click().run()
    assert at.number_input(key="d_k").value == 50
    at = run_page("app_pages/variance.py", d_k="4096")
    assert at.button(key="d_k_double").disabled


def test_query_params_set_the_controls():
    at = run_page(
        "app_pages/variance.py",
        d_k="256",
        dist="rademacher",
        sigma_q="2.0",
        sigma_k="0.5",
        n_samples="5000",
    )
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_k").value == 256
    assert at.radio(key="dist").value == "rademacher"
    assert at.slider(key="sigma_q").value == 2.0
    assert at.slider(key="sigma_k").value == 0.5
    assert at.select_slider(key="n_samples").value == "5000"
    # the Rademacher histogram sits on the lattice 2·σ_qσ_k apart
    hist = chart_data(at)[0]
    rows = max(hist["datasets"].values(), key=len)
    assert rows  # binned data reached the browser


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"d_k": "abc"}, "d_k"),
        ({"d_k": str(10**9)}, "d_k"),
        ({"d_k": "3.5"}, "d_k"),
        ({"d_k": ["8", "16"]}, "d_k"),
        ({"dist": "cauchy"}, "dist"),
        ({"sigma_q": "nan"}, "sigma_q"),
        ({"sigma_k": "-1"}, "sigma_k"),
        ({"n_samples": "7"}, "n_samples"),
        ({"seed": "x"}, "seed"),
        ({"lang": "fr"}, "lang"),
    ],
)
def test_malformed_params_warn_and_fall_back(params, name):
    # the warning belongs to the first run (the page as opened from the link)
    at = run_page("app_pages/variance.py", reveal=False, **params)
    assert not at.exception
    found = [w for w in warnings(at) if f"`{name}`" in w]
    assert found, warnings(at)
    defaults = {"d_k": 64, "dist": "normal", "sigma_q": 1.0, "sigma_k": 1.0, "n_samples": "20000"}
    if name in defaults:
        widget = {"d_k": at.number_input, "dist": at.radio, "n_samples": at.select_slider}.get(
            name, at.slider
        )
        assert widget(key=name).value == defaults[name]
    # the page still draws its charts (the histograms wait for a prediction)
    assert len(at.get("vega_lite_chart")) == 3


def test_unknown_and_hostile_params_are_not_echoed():
    at = run_page(
        "app_pages/variance.py",
        reveal=False,
        **{"<b>x</b>": "1", "d_k": "<script>alert(1)</script>"},
    )
    assert not at.exception
    text = " ".join(warnings(at))
    assert "<script>" not in text and "<b>" not in text
    assert "`d_k`" in text


def test_language_switch_keeps_controls():
    at = run_page("app_pages/variance.py", d_k="300", dist="uniform")
    at.radio(key="lang").set_value("zh").run()
    assert CJK.search(at.title[0].value)
    assert at.number_input(key="d_k").value == 300
    assert at.radio(key="dist").value == "uniform"


def test_same_seed_same_pictures_and_new_seed_new_pictures():
    a = chart_data(run_page("app_pages/variance.py", seed="7"))
    b = chart_data(run_page("app_pages/variance.py", seed="7"))
    c = chart_data(run_page("app_pages/variance.py", seed="8"))
    assert [x["datasets"] for x in a] == [x["datasets"] for x in b]
    assert a[0]["datasets"] != c[0]["datasets"]


def test_no_prediction_at_d_k_1_where_every_option_is_the_same():
    at = run_page("app_pages/variance.py", reveal=False, d_k="1")
    assert "variance_std_guess" not in [r.key for r in at.radio]
    assert any("nothing to predict" in i.value for i in at.info)
    assert len(at.get("vega_lite_chart")) == 5  # the histograms are shown at once
    at.number_input(key="d_k").set_value(2).run()
    assert "variance_std_guess" in [r.key for r in at.radio]


def test_derivation_writes_large_numbers_in_full():
    at = run_page("app_pages/variance.py", d_k="4096", sigma_q="4", sigma_k="4")
    at.session_state["variance_derivation"] = True
    at.run()
    derivation = " ".join(x.value for x in at.latex)
    assert "4{,}096 \\cdot 256 = 1{,}048{,}576" in derivation and "e+" not in derivation
    kurt = next(m for m in at.metric if "kurtosis" in m.label.lower())
    assert "theory 0.001465 " in kurt.delta  # 6/4096, not rounded to 4 decimals


def test_the_worked_example_follows_its_own_d_k():
    at = run_page(example_d_k="256", example_step="weights")
    assert not at.exception and not warnings(at)
    assert at.radio(key="example_d_k").value == "256"
    before = chart_data(at)
    at.radio(key="example_d_k").set_value("16").run()
    after = chart_data(at)
    assert len(before) == len(after) == 2
    for b, a in zip(before, after, strict=True):
        assert b["raw"] != a["raw"]
    # the story's d_k is another control
    assert "d_k" not in at.query_params
    # without the scale the rows at d_k = 256 pile onto one key; with ÷√d_k they do not
    unscaled, scaled = (
        max(r["weight_unscaled" if i == 0 else "weight_scaled"] for r in _rows(c))
        for i, c in enumerate(before)
    )
    assert unscaled > 0.99 and scaled < 0.9


def test_the_worked_example_says_how_far_twelve_scores_wander():
    """The example's spread of twelve scores is one draw: the page gives the band 8 draws
    in 10 fall in (its exact sampler), and the band holds √d_k."""
    from ui.home import data

    at = run_page(example_d_k="1024")
    lo, hi = data.spread_band(1024)
    assert lo < 32 < hi and 0.6 * 32 < lo and hi < 1.3 * 32
    reading = next(m.value for m in at.markdown if "scores' standard deviation" in m.value)
    assert f"12 scores are few, and 8 draws in 10 give between {lo:.2g} and {hi:.2g}" in reading


def _rows(chart: dict) -> list[dict]:
    """The records of a chart's largest dataset (Arrow IPC bytes)."""
    raws = sorted(chart["datasets"].values(), key=len, reverse=True)
    return pa.ipc.open_stream(raws[0]).read_all().to_pylist()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_worked_example_steps_through_the_formula(lang):
    """One step at a time, in the order the formula runs; each in the URL."""
    at = run_page(lang=lang, example_step="inputs")
    assert not at.exception and not warnings(at)
    assert not chart_data(at) and len(at.dataframe) == 3  # Q, K and V
    at.segmented_control(key="example_step").set_value("scores").run()
    assert [sorted(_rows(c)[0]) for c in chart_data(at)] == [
        ["i", "j", "score"],
        ["i", "j", "logit"],
    ]
    assert at.query_params.get("example_step") in (None, [])  # the default step
    at.segmented_control(key="example_step").set_value("weights").run()
    assert len(chart_data(at)) == 2 and at.query_params["example_step"] in ("weights", ["weights"])
    for chart in chart_data(at):  # each row of weights sums to 1
        rows = _rows(chart)
        column = next(k for k in rows[0] if k.startswith("weight"))
        for i in (1, 2, 3):
            assert sum(r[column] for r in rows if r["i"] == i) == pytest.approx(1.0)
    at.segmented_control(key="example_step").set_value("output").run()
    assert not chart_data(at) and len(at.dataframe) == 2  # unscaled beside scaled
    assert not at.exception


def test_a_bad_example_d_k_warns_and_falls_back():
    at = run_page(example_d_k="5")
    assert not at.exception
    assert any("example_d_k" in w for w in warnings(at))
    assert at.radio(key="example_d_k").value == "4"


def _hist_x_axes(at) -> list[tuple[float, float] | None]:
    """The x-range each histogram (unscaled first) runs over exactly, or None where the
    axis fits its own data (rounded): with one shared axis, an invisible third layer
    holds the range's two ends as data."""
    ranges = []
    for chart in chart_data(at)[:2]:
        layers = chart["spec"]["layer"]
        if len(layers) == 2:
            assert layers[0]["encoding"]["x"]["scale"] == {}
            ranges.append(None)
            continue
        assert layers[0]["encoding"]["x"]["scale"] == {"nice": False}
        raw = chart["datasets"][layers[2]["data"]["name"]]
        ends = pa.ipc.open_stream(raw).read_all().column("x").to_pylist()
        ranges.append(tuple(ends))
    return ranges


def test_the_histograms_share_one_x_axis_by_default():
    """The unscaled histogram's range, for both: the scaled one is visibly narrower."""
    at = run_page("app_pages/variance.py", d_k="256")
    raw, scaled = _hist_x_axes(at)
    assert raw == scaled
    lo, hi = raw
    # the unscaled q·k at d_k = 256 has std 16: its histogram spans many of them
    assert lo < -40 and hi > 40
    at.radio(key="hist_axes").set_value("own").run()
    assert _hist_x_axes(at) == [None, None]
    assert at.query_params["hist_axes"] in ("own", ["own"])


def test_variance_short_path_leaves_go_deeper_closed():
    """The short path: the question, then the moments and the histograms; the sweep and
    the running sums are neither computed nor sent while "Go deeper" is closed."""
    at = run_page("app_pages/variance.py", reveal=False, deeper="false")
    assert not at.exception and not warnings(at)
    assert not chart_data(at)  # the histograms wait for the guess
    at.button(key="variance_std_skip").click().run()
    assert len(at.metric) == 4 and len(chart_data(at)) == 2
    panels = code_panels(at)  # under each drawn chart
    assert "variance_hist_raw_code" in panels and "variance_sweep_code" not in panels


def test_show_me_where_it_breaks():
    """The break sets d_k = 4096 on one shared axis: q·k spreads 64 times wider than
    q·k/√d_k."""
    at = run_page("app_pages/variance.py", hist_axes="own")
    at.button(key="break_it").click().run()
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_k").value == 4096
    assert at.radio(key="hist_axes").value == "shared"
    assert at.query_params["d_k"] in ("4096", ["4096"])
    metric = {m.label: m.value for m in at.metric}
    assert float(metric["Std of q·k"]) == pytest.approx(64, rel=0.02)
    raw, scaled = _hist_x_axes(at)
    assert raw == scaled and raw[1] > 200


@pytest.mark.parametrize("hist_axes", ["shared", "own"])
def test_a_new_d_k_sends_the_histograms_spec_unchanged(hist_axes):
    """The histograms are drawn with ``swap_data``: a new d_k sends the same spec, byte for
    byte (the browser updates their data in place instead of embedding them anew), and
    new data."""
    runs = [run_page("app_pages/variance.py", d_k=d, hist_axes=hist_axes) for d in ("64", "100")]
    first, second = ([c.proto for c in at.get("vega_lite_chart")][:2] for at in runs)
    for before, after in zip(first, second, strict=True):
        assert_swapped_in_place(before, after)
