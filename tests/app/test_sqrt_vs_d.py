"""The √d_k-vs-d_k page through AppTest, in both languages."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import core.experiments
from tests.app.helpers import (
    assert_page_in,
    chart_data,
    open_code_panels,
    reveal_all,
    run_page,
    warnings,
)
from ui.common.charts import title_text

SCRIPT = "app_pages/sqrt-vs-d.py"


def open_page(reveal: bool = True, **params: str | list[str]) -> AppTest:
    return run_page(SCRIPT, reveal=reveal, **params)


def _frame(arrow: bytes) -> pd.DataFrame:
    return pa.ipc.open_stream(arrow).read_all().to_pandas()


def _by_title(at: AppTest) -> dict[str, dict]:
    out = {}
    for chart in chart_data(at):
        out[title_text(chart["spec"].get("title"))] = chart
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("rho", "n_charts"), [("0.0", 6), ("0.5", 9)])
def test_runs_in_both_languages_with_every_chart(lang, rho, n_charts):
    at = open_page(lang=lang, rho=rho)
    assert_page_in(at, lang, n_charts)
    assert len(at.table) == 1
    assert len(at.latex) == 1
    # model note, + at ρ = 0 "raise ρ" for the mean logit and for the relevant-key question
    assert len(at.info) == (3 if rho == "0.0" else 1)


def test_reference_figures_reach_the_table():
    """n = 10, ρ = 0.5, d_k = 256 (docs/mathematics.md §2.3–§2.4): 1/d ≈ 0.155, 1/√d ≈ 0.99."""
    at = open_page(rho="0.5", d_k="256", alpha="1.0")
    table = at.table[0].value
    weights = dict(zip(table.index, table.iloc[:, -1].astype(float), strict=True))
    # the cells are 4,000-row means, s.e. below 0.0007: 0.003 is more than 4 s.e.
    limit = math.exp(0.5) / (math.exp(0.5) + 9)  # 1/d_k at every width: 0.1548
    assert weights["1/dₖ (α = 1)"] == pytest.approx(limit, abs=0.003)
    assert 0.9912 - 0.003 < weights["1/√dₖ (α = ½)"] < 0.9915 + 0.003  # bounds of §2.4
    assert len(table) == 3  # α = 1 is a preset: no fourth row


def test_changing_each_control_changes_the_charts():
    at = open_page(rho="0.5")
    base = _by_title(at)
    moves = [
        ("alpha", lambda: at.slider(key="alpha").set_value(1.25)),
        ("rho", lambda: at.slider(key="rho").set_value(0.8)),
        ("n_keys", lambda: at.number_input(key="n_keys").set_value(32)),
        ("d_min", lambda: at.select_slider(key="d_min").set_value("16")),
        ("d_k", lambda: at.number_input(key="d_k").set_value(512)),
    ]
    for name, move in moves:
        move()
        at.run()
        assert not at.exception, name
        now = _by_title(at)
        changed = [k for k in now if k in base and now[k]["raw"] != base[k]["raw"]]
        assert changed, f"{name} changed no chart"
        base = now


def test_range_filters_the_points():
    at = open_page(d_min="16", d_max="256", alpha="0.5", rho="0.5")
    weight = _by_title(at)["Weight given to the relevant key"]
    rows = max((_frame(b) for b in weight["datasets"].values()), key=len)
    assert sorted(rows["d"].unique()) == [16, 32, 64, 128, 256]
    assert len(rows) == 3 * 5


def test_swapped_range_is_reordered():
    at = open_page(d_min="1024", d_max="8")
    assert not at.exception
    assert any("8 to 1024" in c.value for c in at.caption)


def test_query_params_set_the_controls():
    at = open_page(d_k="256", d_min="4", d_max="1024", n_keys="16", alpha="1.25", rho="0.3")
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_k").value == 256
    assert at.select_slider(key="d_min").value == "4"
    assert at.select_slider(key="d_max").value == "1024"
    assert at.number_input(key="n_keys").value == 16
    assert at.slider(key="alpha").value == 1.25
    assert at.slider(key="rho").value == 0.3
    assert any("d_k = 256 (n_keys = 16, ρ = 0.3)" in h.value for h in at.header)


def test_rho_presets():
    at = open_page()
    assert at.slider(key="rho").value == 0.0  # the default: independent q and k
    assert len(chart_data(at)) == 6  # ρ = 0: no mean-logit chart, no relevant-key charts
    at.button(key="rho_aligned_preset").click().run()
    assert at.slider(key="rho").value == 0.5
    # the relevant key's question, which ρ = 0 left nothing to ask, holds its two charts
    assert len(chart_data(at)) == 7
    assert len(chart_data(reveal_all(at))) == 9
    at.button(key="rho_init_preset").click().run()
    assert at.slider(key="rho").value == 0.0
    assert len(chart_data(at)) == 6
    at.button(key="rho_aligned_disc").click().run()  # the button under the ρ = 0 note
    assert at.slider(key="rho").value == 0.5 and len(chart_data(at)) == 9


@pytest.mark.parametrize(
    ("params", "name", "default"),
    [
        ({"d_min": "3"}, "d_min", "1"),
        ({"d_max": "abc"}, "d_max", "4096"),
        ({"n_keys": "1"}, "n_keys", 10),
        ({"n_keys": "600"}, "n_keys", 10),
        ({"rho": "1.0"}, "rho", 0.0),
        ({"rho": "x"}, "rho", 0.0),
        ({"alpha": "2"}, "alpha", 0.75),
    ],
)
def test_malformed_params_warn_and_fall_back(params, name, default):
    at = open_page(reveal=False, **params)  # the warning shows on the first run only
    assert not at.exception
    assert [w for w in warnings(at) if f"`{name}`" in w], warnings(at)
    widget = {"d_min": at.select_slider, "d_max": at.select_slider, "n_keys": at.number_input}
    assert widget.get(name, at.slider)(key=name).value == default
    assert len(chart_data(reveal_all(at))) == 6  # ρ = 0: no mean-logit or relevant-key charts


def test_heatmap_is_cached_and_ignores_unrelated_controls(monkeypatch):
    calls = []
    real = core.experiments.saturation_sweep

    def counting(d_values, n_keys, alphas, **kwargs):
        calls.append(len(alphas))
        return real(d_values, n_keys, alphas, **kwargs)

    monkeypatch.setattr(core.experiments, "saturation_sweep", counting)
    at = open_page(seed="91", n_keys="12", rho="0.35")  # a fresh cache key
    heat = [c for c in calls if c == 31]
    assert heat == [31]
    for move in (
        lambda: at.slider(key="alpha").set_value(0.3),
        lambda: at.number_input(key="d_k").set_value(100),
        lambda: at.select_slider(key="d_max").set_value("512"),
    ):
        move()
        at.run()
        assert [c for c in calls if c == 31] == [31]
    at.slider(key="rho").set_value(0.4)
    at.run()
    assert [c for c in calls if c == 31] == [31, 31]


# --- workshop mode ---------------------------------------------------------------------------
def _measured(n_keys: int = 10, rho: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """The page's fixed-α sweep, recomputed here straight from core (same rng stream)."""
    from ui.common import data as common_data

    out = core.experiments.saturation_sweep(
        [int(d) for d in common_data.SWEEP_D],
        n_keys,
        [0.0, 0.5, 1.0],
        rng=common_data.rng_for(seed, common_data.STREAM_SATURATION_SWEEP),
        n_rows=common_data.sweep_rows(n_keys),
        rho=rho,
    )
    return pd.DataFrame({k: np.asarray(v).ravel() for k, v in out.items()})


def _at(df: pd.DataFrame, alpha: float, d: int, stat: str) -> float:
    return float(df[(df["alpha"] == alpha) & (df["d"] == d)][stat].iloc[0])


def _text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_presenter_mode_reveals_one_step_at_a_time():
    at = open_page(reveal=False, present="1")
    assert not at.exception
    assert at.toggle(key="present").value is True
    # the page's order is 2, 1, 3, 4, 5, 6: the short path first
    assert at.selectbox(key="step").value == 2
    # controls in the sidebar
    assert at.sidebar.number_input(key="d_k").value == 64
    assert at.sidebar.slider(key="rho").value == 0.0
    assert at.sidebar.button(key="rho_aligned_preset")
    # charts per step, predictions unanswered (ρ = 0: no mean-logit chart, and nothing to
    # predict or draw about the relevant key)
    counts, steps = [len(chart_data(at))], [2]
    for _ in range(5):
        at.button(key="step_next").click().run()
        assert not at.exception
        counts.append(len(chart_data(at)))
        steps.append(at.selectbox(key="step").value)
    assert steps == [2, 1, 3, 4, 5, 6]
    assert counts == [0, 1, 2, 2, 3, 4]
    assert at.button(key="step_next").disabled
    assert "sqrt_vs_d_max_guess" in [r.key for r in at.radio]
    at.button(key="step_prev").click().run()
    assert at.selectbox(key="step").value == 5
    assert len(at.get("vega_lite_chart")) == 3


@pytest.mark.parametrize(
    ("place", "step", "n_charts"), [("1", 2, 2), ("2", 1, 3), ("4", 4, 4), ("6", 6, 6)]
)
def test_step_from_the_url(place, step, n_charts):
    """The link's step is the one on the screen ("Step 2 of 6" is ``step=2``), whatever
    the id of the section it shows."""
    at = open_page(present="1", step=place, lang="zh")  # every question skipped
    assert not at.exception and not warnings(at)
    assert at.selectbox(key="step").value == step
    assert len(chart_data(at)) == n_charts


def test_bad_step_warns():
    at = open_page(reveal=False, present="1", step="7")
    assert any("`step`" in w for w in warnings(at))
    assert at.selectbox(key="step").value == 2  # the first in the page's order


def test_max_weight_prediction_is_recorded_and_compared():
    at = open_page(reveal=False, rho="0.0")
    assert len(chart_data(at)) == 4  # the max-weight question holds its charts back
    at.radio(key="sqrt_vs_d_max_guess").set_value(0).run()  # "rises toward 1"
    at.button(key="sqrt_vs_d_max_reveal").click().run()
    assert len(chart_data(at)) == 6
    df = _measured()
    text = _text(at)
    assert "**rises to 1 (one-hot)**" in text  # the guess
    assert "**falls to 1/n_keys = 0.1 (uniform)**" in text  # the measured answer
    end = _at(df, 1.0, 4096, "max_weight_mean")
    assert f"{end:.3f} at d_k = 4096" in text and end == pytest.approx(0.1, abs=0.01)
    assert f"{_at(df, 1.0, 1, 'max_weight_mean'):.3f} at d_k = 1" in text
    assert at.session_state["_predictions"] == {"sqrt_vs_d_max": 0}
    at.button(key="sqrt_vs_d_max_again").click().run()
    assert len(chart_data(at)) == 4


@pytest.mark.parametrize(
    ("params", "answer"),
    [
        ({"rho": "0.0"}, 2),  # independent keys: 1/d_k flattens to uniform
        # an aligned key: 1/d_k tends to softmax(ρ, 0, …, 0), neither uniform nor the start
        ({"rho": "0.5"}, 2),  # 0.27 → 0.155
        ({"rho": "0.8"}, 2),  # 0.27 → 0.198
        ({"n_keys": "4", "rho": "0.5"}, 2),  # falls to e^ρ/(e^ρ + 3) = 0.355
    ],
)
def test_max_weight_answer_follows_the_measurement(params, answer):
    at = open_page(reveal=False, **params)
    at.radio(key="sqrt_vs_d_max_guess").set_value(answer).run()
    at.button(key="sqrt_vs_d_max_reveal").click().run()
    assert "— right." in _text(at)


@pytest.mark.parametrize("params", [{"n_keys": "2", "rho": "0.95"}, {"n_keys": "3", "rho": "0.85"}])
def test_no_max_weight_question_when_start_and_limit_coincide(params):
    # 0.68 vs 0.721 and 0.53 vs 0.539: "stays" and "settles at the limit" are one answer
    at = open_page(reveal=False, **params)
    assert "sqrt_vs_d_max_guess" not in [r.key for r in at.radio]
    assert any("nothing to predict" in i.value for i in at.info)


def test_no_relevant_weight_question_when_no_key_is_special():
    at = open_page(reveal=False, rho="0.0")
    assert "sqrt_vs_d_relevant_guess" not in [r.key for r in at.radio]
    assert any("nothing to predict" in i.value for i in at.info)


@pytest.mark.parametrize(("rho", "answer"), [("0.5", 0), ("0.05", 0)])
def test_relevant_weight_answer_follows_the_measurement(rho, answer):
    at = open_page(reveal=False, rho=rho)
    at.radio(key="sqrt_vs_d_relevant_guess").set_value(answer).run()
    at.button(key="sqrt_vs_d_relevant_reveal").click().run()
    text = _text(at)
    assert "— right." in text
    df = _measured(rho=float(rho))
    a, b = (_at(df, 0.5, d, "relevant_weight_mean") for d in (16, 4096))
    assert f"{a:.3f} at d_k = 16, {b:.3f} at d_k = 4096" in text
    assert len(chart_data(at)) == 7


def test_wrong_relevant_guess_names_the_answer():
    at = open_page(reveal=False, rho="0.5", lang="zh")
    at.radio(key="sqrt_vs_d_relevant_guess").set_value(2).run()
    at.button(key="sqrt_vs_d_relevant_reveal").click().run()
    assert "实测结果是 **升向 1，注意力锁定这个键**" in _text(at)


@pytest.mark.parametrize(("n_keys", "rho"), [("10", "0.0"), ("32", "0.5")])
def test_myth_card_quotes_the_live_numbers(n_keys, rho):
    at = open_page(n_keys=n_keys, rho=rho)
    df = _measured(int(n_keys), float(rho))
    ln_n = math.log(int(n_keys))
    card = next(m.value for m in at.markdown if "different regime" in m.value)
    for alpha in (0.5, 1.0):
        assert f"**{_at(df, alpha, 4096, 'entropy_mean') / ln_n:.3f}**" in card
        assert f"**{_at(df, alpha, 4096, 'max_weight_mean'):.3f}**" in card
    if rho == "0.0":  # defaults: α = ½ keeps a peaked row, α = 1 is uniform
        assert "**0.836**" in card and "**1.000**" in card and "**0.102**" in card
    assert not any("A common misconception" in m.value for m in at.markdown)  # no duplicate


def test_show_code_expanders_hold_core_source():
    at = open_code_panels(open_page(rho="0.5"))
    sources = [c.value for c in at.code if c.value.startswith("def ")]
    for name in (
        "saturation_sweep",
        "independent_logit_std",
        "relevant_logit_mean",
        "linear_scaling_weight_limit",
        "logit_theory",
    ):
        assert any(s.startswith(f"def {name}(") for s in sources), name
    # one CSV download under each of the nine charts, named after the chart's key
    csv = {b.proto.id.rsplit("-", 1)[-1] for b in at.get("download_button")}
    names = ("std", "mean", "entropy", "max", "heatmap", "argmax", "weight", "grad", "theory")
    assert csv == {f"sqrt_vs_d_{n}_csv" for n in names}


def test_a_one_value_range_says_why_the_charts_are_a_column():
    at = open_page(d_min="64", d_max="64")
    assert any("are both 64" in i.value for i in at.info)
    assert not any("are both" in i.value for i in open_page().info)


# --- the short path, the defaults and "Show me where it breaks" ---------------------------
def test_short_path_is_the_softmax_question_and_its_charts():
    at = open_page(reveal=False, deeper="false")
    assert not at.exception
    assert [h.value for h in at.header] == ["None, √d_k or d_k?"]
    assert len(chart_data(at)) == 0 and not at.table and not at.info  # Go deeper: not computed
    at.button(key="sqrt_vs_d_max_skip").click().run()
    titles = list(_by_title(at))
    assert titles == [
        "Entropy of a row, as a share of its maximum ln n_keys",
        "Largest weight of a row",
    ]
    captions = " ".join(c.value for c in at.caption)
    assert "**α = ½** keeps both constant" in captions  # the main effect …
    assert "Press “ρ = 0.5 · aligned” above" in captions  # … and the caveat beside it


def test_defaults_show_that_only_sqrt_holds_for_independent_keys():
    """ρ = 0 (issue 35: ρ = 0.5 opened the page on the case where 1/d_k is the stable one):
    from d_k = 1 to 4096 no scaling saturates, 1/√d_k keeps its entropy, 1/d_k flattens."""
    at = open_page()
    assert at.slider(key="rho").value == 0.0 and at.slider(key="alpha").value == 0.75
    chart = _by_title(at)["Entropy of a row, as a share of its maximum ln n_keys"]
    entropy = _frame(max(chart["datasets"].values(), key=len))

    def share(alpha, d):
        return float(entropy[(entropy.alpha == alpha) & (entropy.d == d)].value.iloc[0])

    assert share(0.0, 4096) < 0.05 and share(1.0, 4096) > 0.99
    assert abs(share(0.5, 4096) - share(0.5, 16)) < 0.02
    assert share(0.75, 4096) > 0.99  # even α = 0.75 flattens: only ½ holds


def test_show_me_where_it_breaks():
    at = open_page(rho="0.5", alpha="0.5")
    at.button(key="break_it").click().run()
    assert not at.exception
    assert at.number_input(key="d_k").value == 4096
    assert at.slider(key="alpha").value == 1.0 and at.slider(key="rho").value == 0.0
    table = at.table[0].value
    row = table.loc["1/dₖ (α = 1)"]
    largest = next(float(v.split()[0]) for k, v in row.items() if k == "largest weight")
    assert largest == pytest.approx(0.1, abs=0.01)  # uniform over the 10 keys: no key stands out


def test_settings_popover_names_its_values():
    at = open_page(n_keys="16", rho="0.3", d_min="4", d_max="1024", deeper="false")
    labels = [p.proto.popover.label for p in at.get("popover")]
    assert "n_keys = 16 · ρ = 0.3 · dₖ 4–1024" in labels, labels
