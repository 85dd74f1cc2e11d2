"""Saturation page through AppTest: both languages, controls, URL parameters, quoted figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from tests.app.helpers import (
    CJK,
    assert_page_in,
    chart_data,
    chart_inputs,
    open_code_panels,
    run_page,
    warnings,
)
from ui.saturation.charts import two_score_weight

ROOT = Path(__file__).resolve().parents[2]

PAGE = "app_pages/saturation.py"
# chart order on the page: the short path (the sweeps), then "Go deeper"
SWEEP_MAX, SWEEP_H, ROW_RAW, ROW_SCALED, PLAY, HEAT_RAW, HEAT_SCALED, ROWMAX, OVERFLOW, GAUSS = (
    range(10)
)
#: charts drawn before any prediction is answered: the row pair, the playground, overflow
#: and its Gaussian limit
N_UNGATED = 5
#: the inputs of the charts moved in the browser, and their chart's element key
LIVE = {"score_1": "saturation_playground", "score_2": "saturation_playground",
        "divisor": "saturation_playground", "logit_std": "saturation_gauss_limit"}  # fmt: skip


def _frames(chart: dict) -> list[pd.DataFrame]:
    """Every dataset of a chart (Arrow IPC bytes) as a DataFrame, largest first."""
    frames = [pa.ipc.open_stream(raw).read_all().to_pandas() for raw in chart["datasets"].values()]
    return sorted(frames, key=len, reverse=True)


def _rows(chart: dict) -> list[dict]:
    """The main data of a chart (its largest dataset) as records."""
    return _frames(chart)[0].to_dict("records")


def _main_data(chart: dict) -> list[bytes]:
    """Every dataset except one-row ones (the current-d_k marker, reference lines)."""
    return sorted(
        raw for raw in chart["datasets"].values() if pa.ipc.open_stream(raw).read_all().num_rows > 1
    )


def _series(chart: dict) -> set[str]:
    return {r["series"] for r in _rows(chart)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_with_every_chart(lang):
    at = run_page(PAGE, lang=lang)
    charts = assert_page_in(at, lang, 10)
    for chart in charts:
        title = chart["spec"]["title"]
        assert title
    assert len(at.table) == 1
    assert len(at.info) == 1 and "0.99" in at.info[0].value
    assert len(at.latex) == 8


@pytest.mark.parametrize(("lang", "nav"), [("en", "Saturation"), ("zh", "饱和")])
def test_navigation_title(lang, nav):
    """The navigation numbers the pages in the registry's story order: 2 · Saturation."""
    from ui.common.i18n import catalog
    from ui.common.pages import STORY

    assert catalog(lang)["saturation.nav"] == nav
    assert STORY.index("saturation") + 1 == 2


def test_reference_figures_shown():
    at = run_page(PAGE)
    # §2: softmax([10, 5]) and softmax([1.25, 0.625]) to 7 decimals, computed in the browser
    # from the chart's inputs (the expression is checked against softmax in tests/ui)
    play = chart_data(at)[PLAY]
    assert chart_inputs(play) == {"score_1": 10.0, "score_2": 5.0, "divisor": 8.0}
    rows = _rows(play)
    weights = two_score_weight().evaluate(
        {"k": [r["k"] for r in rows], "divided": [r["divided"] for r in rows], **chart_inputs(play)}
    )
    play = {(r["divided"], r["k"]): w for r, w in zip(rows, weights, strict=True)}
    assert play[0, 1] == pytest.approx(0.9933071, abs=5e-8)
    assert play[1, 1] == pytest.approx(0.6513549, abs=5e-8)
    assert play[1, 2] == pytest.approx(0.3486451, abs=5e-8)
    latex = " ".join(x.value for x in at.latex)
    assert "0.9933071" in latex and "0.6513549" in latex and "[1.25,\\ 0.625]" in latex
    # §4 thresholds
    assert "11.0901" in latex and "88.7228" in latex
    # §2 classic experiment: mean unscaled row max ≈ 0.865, scaled ≈ 0.32, tensor max ≈ 1
    table = at.table[0].value
    unscaled, scaled = table.iloc[:, 0], table.iloc[:, 1]
    assert 0.855 < float(unscaled.iloc[0]) < 0.875
    assert 0.31 < float(scaled.iloc[0]) < 0.33
    assert unscaled.iloc[5].startswith("1 − ")  # largest entry of a tensor: 1 − ε
    # §4: the unscaled float16 overflow share passes ½ with d_k in the fifties (n = 10)
    text = " ".join(m.value for m in at.markdown)
    half = int(re.search(r"½ at d_k ≈ (\d+)", text).group(1))
    assert 48 <= half <= 60
    rates = {(r["series"], r["dtype"], r["d"]): r["rate"] for r in _rows(chart_data(at)[OVERFLOW])}
    assert rates["none (α = 0)", "float16", 45] < 0.5 < rates["none (α = 0)", "float16", 64]
    assert all(v == 0 for (s, _, _), v in rates.items() if s.startswith("1/√dₖ"))


def test_d_k_changes_rows_and_only_the_sweep_markers():
    at = run_page(PAGE)
    before = chart_data(at)
    at.number_input(key="d_k").set_value(512).run()
    after = chart_data(at)
    assert not at.exception
    for i in (ROW_RAW, ROW_SCALED):
        assert _rows(before[i]) != _rows(after[i])
    for i in (SWEEP_MAX, SWEEP_H, OVERFLOW):
        assert before[i]["raw"] != after[i]["raw"]  # the d_k marker moved
        assert _main_data(before[i]) == _main_data(after[i])  # the curves did not
    for i in (PLAY, HEAT_RAW, HEAT_SCALED, ROWMAX):
        assert before[i]["raw"] == after[i]["raw"]


def test_n_keys_changes_rows_and_sweeps():
    at = run_page(PAGE)
    before = chart_data(at)
    at.number_input(key="n_keys").set_value(64).run()
    after = chart_data(at)
    assert not at.exception
    assert len(_rows(after[ROW_RAW])) == 64
    for i in (SWEEP_MAX, SWEEP_H, OVERFLOW):
        assert _main_data(before[i]) != _main_data(after[i])


def test_alpha_changes_scaled_row_and_adds_a_series():
    at = run_page(PAGE)
    before = chart_data(at)
    assert len(_series(before[SWEEP_MAX])) == 3
    at.slider(key="alpha").set_value(0.75).run()
    after = chart_data(at)
    assert not at.exception
    assert _rows(before[ROW_RAW]) == _rows(after[ROW_RAW])  # the unscaled side stays
    assert _rows(before[ROW_SCALED]) != _rows(after[ROW_SCALED])
    assert "α = 0.75" in _series(after[SWEEP_MAX]) and len(_series(after[SWEEP_MAX])) == 4
    assert "α = 0.75" in _series(after[OVERFLOW])
    # the preset buttons set α
    at.button(key="alpha_preset_2").click().run()
    assert at.slider(key="alpha").value == 1.0
    assert len(_series(chart_data(at)[SWEEP_MAX])) == 3


def test_sweeps_are_not_recomputed_by_unrelated_controls(monkeypatch):
    import core.experiments as experiments

    calls = {"sweep": 0, "overflow": 0}
    real_sweep, real_overflow = experiments.saturation_sweep, experiments.naive_overflow_sweep

    def sweep(*args, **kwargs):
        calls["sweep"] += 1
        return real_sweep(*args, **kwargs)

    def overflow(*args, **kwargs):
        calls["overflow"] += 1
        return real_overflow(*args, **kwargs)

    monkeypatch.setattr(experiments, "saturation_sweep", sweep)
    monkeypatch.setattr(experiments, "naive_overflow_sweep", overflow)
    at = run_page(PAGE, seed="918273")  # a seed no other test uses: cold caches
    assert calls == {"sweep": 1, "overflow": 2}  # α = 0, ½, 1; float16 and float32
    at.number_input(key="d_k").set_value(100).run()
    at.session_state["score_1"] = 3.0  # as the chart reports it when a drag pauses
    at.run()
    at.number_input(key="classic_seq").set_value(12).run()
    assert not at.exception
    assert calls == {"sweep": 1, "overflow": 2}
    at.slider(key="alpha").set_value(0.25).run()  # only the new α is simulated
    assert calls == {"sweep": 2, "overflow": 4}


def test_playground_inputs_set_elsewhere_reach_the_chart_and_the_formulas():
    """The playground's inputs move in the browser (tests/e2e/test_live_charts.py); a
    value set on the server (a link, Defaults, or a report of the chart) reaches the
    chart's starting values, the printed formulas and the URL."""
    at = run_page(PAGE)
    at.session_state["divisor"] = 1.0
    at.run()
    assert chart_inputs(chart_data(at)[PLAY]) == {"score_1": 10.0, "score_2": 5.0, "divisor": 1.0}
    latex = " ".join(x.value for x in at.latex)
    assert "\\mathrm{softmax}([10,\\ 5]) = [0.9933071" in latex  # dividing by 1 changes nothing
    assert at.query_params["divisor"] == "1"
    at.session_state["score_1"] = 5.0
    at.run()
    assert "= [0.5000000,\\ 0.5000000]" in " ".join(x.value for x in at.latex)  # ½, ½
    assert not at.exception


def test_classic_controls():
    at = run_page(PAGE)
    before = chart_data(at)
    at.number_input(key="classic_seq").set_value(16).run()
    after = chart_data(at)
    assert len(_rows(after[HEAT_RAW])) == 16 * 16
    assert after[ROWMAX]["raw"] != before[ROWMAX]["raw"]
    at.number_input(key="classic_batch").set_value(8).run()
    batch8 = chart_data(at)
    assert batch8[HEAT_RAW]["raw"] == after[HEAT_RAW]["raw"]  # the shown element is the same
    assert batch8[ROWMAX]["raw"] != after[ROWMAX]["raw"]
    at.number_input(key="classic_d_k").set_value(1024).run()
    big = chart_data(at)
    assert not at.exception
    assert _rows(big[HEAT_RAW]) != _rows(batch8[HEAT_RAW])
    # wider d_k: the unscaled rows saturate further, the scaled ones do not move much
    assert float(at.table[0].value.iloc[0, 0]) > 0.9


def test_query_params_set_the_controls():
    params = {
        "d_k": "256",
        "n_keys": "32",
        "alpha": "0.75",
        "score_1": "2.5",
        "score_2": "-1.0",
        "divisor": "2.0",
        "classic_batch": "2",
        "classic_seq": "6",
        "classic_d_k": "128",
    }
    at = run_page(PAGE, lang="zh", **params)
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_k").value == 256
    assert at.number_input(key="n_keys").value == 32
    assert at.slider(key="alpha").value == 0.75
    assert chart_inputs(chart_data(at)[PLAY]) == {"score_1": 2.5, "score_2": -1.0, "divisor": 2.0}
    assert at.number_input(key="classic_batch").value == 2
    assert at.number_input(key="classic_seq").value == 6
    assert at.number_input(key="classic_d_k").value == 128
    charts = chart_data(at)
    assert len(_rows(charts[ROW_RAW])) == 32
    assert len(_rows(charts[HEAT_RAW])) == 36


def test_page_params_are_its_controls():
    from tests.app.helpers import page_params

    assert set(page_params("app_pages/saturation.py")) == {
        "d_k",
        "n_keys",
        "alpha",
        "score_1",
        "score_2",
        "divisor",
        "logit_std",
        "classic_batch",
        "classic_seq",
        "classic_d_k",
    }


@pytest.mark.parametrize(
    ("params", "name", "default"),
    [
        ({"d_k": "abc"}, "d_k", 64),
        ({"n_keys": "1"}, "n_keys", 10),
        ({"n_keys": "513"}, "n_keys", 10),
        ({"alpha": "2"}, "alpha", 0.5),
        ({"alpha": "nan"}, "alpha", 0.5),
        ({"score_1": "x"}, "score_1", 10.0),
        ({"score_2": "99"}, "score_2", 5.0),
        ({"divisor": "0"}, "divisor", 8.0),
        ({"classic_batch": "-1"}, "classic_batch", 4),
        ({"classic_seq": "100"}, "classic_seq", 10),
        ({"classic_d_k": "1.5"}, "classic_d_k", 64),
    ],
)
def test_malformed_params_warn_and_fall_back(params, name, default):
    # the warning belongs to the first run (the page as opened from the link)
    at = run_page(PAGE, reveal=False, **params)
    assert not at.exception
    assert [w for w in warnings(at) if f"`{name}`" in w], warnings(at)
    if name in {"score_1", "score_2", "divisor"}:  # inputs of a chart moved in the browser
        (play,) = [
            c for c in at.get("vega_lite_chart") if c.proto.id.endswith("saturation_playground")
        ]
        assert chart_inputs({"spec": json.loads(play.proto.spec)})[name] == default
    else:
        widget = at.slider if name == "alpha" else at.number_input
        assert widget(key=name).value == default
    assert len(chart_data(at)) == N_UNGATED


def test_doubling_button():
    at = run_page(PAGE, d_k="100")
    at.button(key="d_k_double").click().run()
    assert at.number_input(key="d_k").value == 200
    assert not at.exception


# --- workshop mode ---------------------------------------------------------------------------
def _text(at) -> str:
    return " ".join(m.value for m in at.markdown)


def _answer(at, key: str, guess: int) -> None:
    at.radio(key=f"{key}_guess").set_value(guess).run()
    at.button(key=f"{key}_reveal").click().run()


def test_presenter_mode_reveals_one_step_at_a_time():
    at = run_page(PAGE, reveal=False, present="1")
    assert not at.exception
    assert at.selectbox(key="step").value == 4  # the short path's section comes first
    # the page's main controls sit in the sidebar; the playground keeps its own
    assert at.sidebar.number_input(key="d_k").value == 64
    assert at.sidebar.slider(key="alpha").value == 0.5
    counts = [len(chart_data(at))]
    for _ in range(4):
        at.button(key="step_next").click().run()
        counts.append(len(chart_data(at)))
    assert not at.exception
    # in the page's order (step ids keep their sections): 4 sweeps (ask first) · 2 the row
    # pair · 1 + playground · 3 classic (asks first) · 5 + overflow and its Gaussian limit
    assert counts == [0, 2, 3, 3, 5]
    assert at.selectbox(key="step").value == 5
    assert at.button(key="step_next").disabled
    at.button(key="step_prev").click().run()
    assert at.selectbox(key="step").value == 3
    assert len(chart_data(at)) == 3


def test_presenter_step_from_the_url():
    at = run_page(PAGE, present="1", step="4")  # predictions skipped; "Step 4 of 5"
    assert at.selectbox(key="step").value == 3  # its id
    # the sections before it in the page's order (sweeps, row pair, playground) and its own
    # (heatmaps, row-max histogram)
    assert len(chart_data(at)) == 8
    at = run_page(PAGE, present="1", step="3")  # the playground, "Step 3 of 5"
    assert [c["spec"]["description"].split(":")[0] for c in chart_data(at)][-1].startswith(
        "Grouped bar chart"
    )
    at = run_page(PAGE, present="1", step="5")
    assert len(chart_data(at)) == 10
    at = run_page(PAGE, reveal=False, present="1", step="4")
    assert at.button(key="saturation_median_reveal").disabled  # no guess yet


def test_median_prediction_is_recorded_and_compared():
    at = run_page(PAGE, reveal=False)
    assert len(chart_data(at)) == N_UNGATED
    options = at.radio(key="saturation_median_guess").options
    assert options[0] == "≈ 1 (≥ 0.99)" and options[-1].startswith("0.1 (uniform, 1/10)")
    _answer(at, "saturation_median", 0)  # the popular "≈ 1"
    assert not at.exception
    assert at.session_state["_predictions"] == {"saturation_median": 0}
    assert len(chart_data(at)) == N_UNGATED + 3  # heatmaps and histogram
    median = at.table[0].value.iloc[1, 0]  # the table's median unscaled row max
    assert 0.93 < float(median) < 0.97
    text = _text(at)
    assert "the measurement says **0.9 – 0.99**" in text and f"**{median}**" in text
    at.button(key="saturation_median_again").click().run()
    assert len(chart_data(at)) == N_UNGATED


@pytest.mark.parametrize(("classic_d_k", "right"), [("1", 3), ("16", 2), ("64", 1), ("1024", 0)])
def test_median_answer_follows_the_measurement(classic_d_k, right):
    at = run_page(PAGE, reveal=False, classic_d_k=classic_d_k)
    _answer(at, "saturation_median", right)
    assert "— right." in _text(at)


@pytest.mark.parametrize(("n_keys", "right"), [("10", 1), ("2", 0)])
def test_mean_max_prediction_at_the_largest_d_k(n_keys, right):
    # docs/mathematics.md §3.4: 1 − E[max p] ≈ ln 2 · e_n / σ at σ = √4096 = 64: 0.983 for
    # 10 keys, 0.994 for 2 keys (e₂ = 1/√π); relative error O(1/σ), hence the intervals
    at = run_page(PAGE, reveal=False, n_keys=n_keys)
    assert len(at.radio(key="saturation_mean_max_guess").options) == (4 if n_keys == "10" else 3)
    _answer(at, "saturation_mean_max", right)
    assert not at.exception
    assert "— right." in _text(at)
    assert len(chart_data(at)) == N_UNGATED + 2  # the two sweeps
    mean = float(re.search(r"mean largest weight is \*\*(0\.\d+)\*\*", _text(at)).group(1))
    assert (0.978 < mean < 0.99) if n_keys == "10" else (0.99 < mean < 0.998)


def test_myth_card_quotes_the_live_counter_example():
    at = run_page(PAGE)
    text = _text(at)
    assert "Question:" in text and "every row's largest weight ≈ 1" in text
    # the quoted printout's chance, shipped with its s.e. (data/classic_printout.json)
    doc = json.loads((ROOT / "data" / "classic_printout.json").read_text(encoding="utf-8"))
    assert f"about 1 in {round(1 / doc['chance'], -2):,.0f}" in text
    assert f"{doc['n_printouts']:,} printouts" in text
    assert "`np.max(attn, axis=-1)[0]`" in text and "typical rows" in text
    median, q10 = at.table[0].value.iloc[1, 0], at.table[0].value.iloc[2, 0]
    assert f"median unscaled row max is **{median}**" in text
    assert f"below **{float(q10):.2f}**" in text
    assert "1 − " in text  # … while the largest entry of a tensor is 1 − ε
    at.number_input(key="classic_d_k").set_value(16).run()
    assert at.table[0].value.iloc[1, 0] != median
    assert f"**{at.table[0].value.iloc[1, 0]}**" in _text(at)


def test_charts_have_csv_downloads_and_their_code():
    at = run_page(PAGE)
    assert not at.code and not at.get("download_button")  # closed panels draw nothing inside
    at = open_code_panels(at)
    keys = {b.key for b in at.get("download_button")}
    assert keys == {
        f"saturation_{k}_csv"
        for k in (
            "playground",
            "row_unscaled",
            "row_scaled",
            "heat_unscaled",
            "heat_scaled",
            "rowmax",
            "sweep_max_weight",
            "sweep_entropy",
            "overflow",
            "gauss_limit",
        )
    }
    sources = [c.value for c in at.code if c.value.startswith("def ")]
    for fn in (
        "softmax",
        "attention_logits",
        "classic_rowmax",
        "rowmax_summary",
        "saturation_sweep",
        "row_quantities",
        "naive_overflow_sweep",
    ):
        assert any(s.startswith(f"def {fn}(") for s in sources), fn


def test_presenter_mode_in_chinese():
    at = run_page(PAGE, lang="zh", present="1", step="5")
    assert not at.exception and not warnings(at)
    assert len(chart_data(at)) == 10
    assert CJK.search(" ".join(m.value for m in at.markdown))


def test_myth_card_agrees_with_the_claim_where_a_typical_row_is_saturated():
    at = run_page("app_pages/saturation.py", classic_d_k="512")
    card = next(m.value for m in at.markdown if "What the numbers show" in m.value)
    assert "it does:" in card and "**0.9999**" in card
    at = run_page("app_pages/saturation.py")  # the printout's d_k = 64: it does not
    card = next(m.value for m in at.markdown if "What the numbers show" in m.value)
    assert "it does:" not in card and "it shows typical rows" in card


def test_myth_card_when_not_even_the_tensor_max_is_near_one():
    # shape (4, 2, 1): two keys and d_k = 1 — the largest entry of a tensor is ≥ 0.99 rarely
    at = run_page("app_pages/saturation.py", classic_seq="2", classic_d_k="1")
    card = next(m.value for m in at.markdown if "What the numbers show" in m.value)
    assert "not even the largest entry" in card and "reliably ≈ 1" not in card
    share = int(card.split("at least 0.99 in ")[1].split("%")[0])
    assert share < 50


def test_overflow_text_quotes_the_exact_chance_at_the_users_d_k():
    at = run_page("app_pages/saturation.py")  # d_k = 64, n_keys = 10
    text = next(m.value for m in at.markdown if "overflows with chance" in m.value)
    detail = next(m.value for m in at.markdown if "Were the logits exactly Gaussian" in m.value)
    assert "7.0·10⁻¹⁹ at your d_k = 64" in text and "would be 7.0·10⁻²⁸" in detail
    assert detail.startswith("The chance 7.0·10⁻¹⁹ is exact")  # in the expander under it
    at = run_page("app_pages/saturation.py", d_k="4096", n_keys="512")
    text = next(m.value for m in at.markdown if "overflows with chance" in m.value)
    detail = next(m.value for m in at.markdown if "Were the logits exactly Gaussian" in m.value)
    assert "at your d_k = 4096" in text and "would be 3.6·10⁻²⁶" in detail


# --- the short path and "Show me where it breaks" ---------------------------------------------
def test_short_path_is_the_sweep_and_go_deeper_computes_nothing(monkeypatch):
    """Go deeper closed: the question on the far end of the sweep, then its two charts; no
    row, no playground, no classic experiment and no overflow sweep is computed or sent."""
    import core.experiments as experiments

    calls = {"overflow": 0}
    real_overflow = experiments.naive_overflow_sweep

    def overflow(*args, **kwargs):
        calls["overflow"] += 1
        return real_overflow(*args, **kwargs)

    monkeypatch.setattr(experiments, "naive_overflow_sweep", overflow)
    at = run_page(PAGE, reveal=False, deeper="false", seed="55443")  # a cold cache
    assert not at.exception and not warnings(at)
    assert not chart_data(at)  # the sweeps wait for the guess
    assert {r.key for r in at.radio} == {"lang", "saturation_mean_max_guess"}
    at.button(key="saturation_mean_max_skip").click().run()
    charts = chart_data(at)
    assert len(charts) == 2
    top = {(r["series"], r["d"]): r["value"] for r in _rows(charts[SWEEP_MAX])}
    assert top["none (α = 0)", 4096] > 0.97 and top["1/√dₖ (α = ½)", 4096] < 0.35
    assert calls["overflow"] == 0
    assert "saturation_playground" not in {c.key for c in at.get("vega_lite_chart")}


def test_show_me_where_it_breaks():
    """The break: d_k = 4096 and no scaling. One row is one-hot on both sides, and the
    sweep's own α is the unscaled one."""
    at = run_page(PAGE)
    at.button(key="break_it").click().run()
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_k").value == 4096
    assert at.slider(key="alpha").value == 0.0
    assert at.query_params["d_k"] in ("4096", ["4096"])
    charts = chart_data(at)
    for i in (ROW_RAW, ROW_SCALED):  # both sides unscaled now: the largest weight ≈ 1
        assert max(r["weight"] for r in _rows(charts[i])) > 0.999
    assert _series(charts[SWEEP_MAX]) == {"none (α = 0)", "1/√dₖ (α = ½)", "1/dₖ (α = 1)"}
    rates = {(r["series"], r["dtype"], r["d"]): r["rate"] for r in _rows(charts[OVERFLOW])}
    assert rates["none (α = 0)", "float16", 4096] > 0.99  # every row overflows in float16
