"""Home and variance pages through AppTest, in both languages."""

import pytest

from tests.app.helpers import CJK, assert_page_in, chart_data, run_page, warnings


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_runs(lang):
    at = run_page(lang=lang)
    assert not at.exception
    assert at.title[0].value
    assert bool(CJK.search(at.title[0].value)) == (lang == "zh")
    assert len(at.get("page_link")) >= 1
    assert len(at.latex) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_variance_runs_with_every_chart(lang):
    at = run_page("app_pages/variance.py", lang=lang)
    assert_page_in(at, lang, 5, title=False)
    assert len(at.metric) == 4
    assert len(at.latex) == 5


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
    derivation = " ".join(x.value for x in at.latex)
    assert "4{,}096 \\cdot 256 = 1{,}048{,}576" in derivation and "e+" not in derivation
    kurt = next(m for m in at.metric if "kurtosis" in m.label.lower())
    assert "theory 0.001465 " in kurt.delta  # 6/4096, not rounded to 4 decimals


def test_the_worked_example_follows_its_own_d_k():
    at = run_page(example_d_k="256")
    assert not at.exception and not warnings(at)
    assert at.radio(key="example_d_k").value == "256"
    before = chart_data(at)
    at.radio(key="example_d_k").set_value("16").run()
    after = chart_data(at)
    assert len(before) == len(after) == 4
    for b, a in zip(before, after, strict=True):
        assert b["raw"] != a["raw"]
    # the story's d_k is another control
    assert "d_k" not in at.query_params


def test_a_bad_example_d_k_warns_and_falls_back():
    at = run_page(example_d_k="5")
    assert not at.exception
    assert any("example_d_k" in w for w in warnings(at))
    assert at.radio(key="example_d_k").value == "4"


def _hist_x_scales(at):
    charts = [c["spec"] for c in chart_data(at)[:2]]  # the two histograms, unscaled first
    return [c["layer"][0]["encoding"]["x"].get("scale", {}) for c in charts]


def test_the_histograms_share_one_x_axis_by_default():
    """The unscaled histogram's range, for both: the scaled one is visibly narrower."""
    at = run_page("app_pages/variance.py", d_k="256")
    raw, scaled = _hist_x_scales(at)
    assert raw["domain"] == scaled["domain"]
    lo, hi = raw["domain"]
    # the unscaled q·k at d_k = 256 has std 16: its histogram spans many of them
    assert lo < -40 and hi > 40
    at.radio(key="hist_axes").set_value("own").run()
    raw, scaled = _hist_x_scales(at)
    assert "domain" not in raw and "domain" not in scaled
    assert at.query_params["hist_axes"] in ("own", ["own"])
