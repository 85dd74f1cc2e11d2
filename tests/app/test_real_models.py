"""The "In real models" page through AppTest, in both languages."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core import real_models as rm
from tests.app.helpers import assert_page_in, chart_data, run_page, warnings
from ui.common import i18n

SCRIPT = "app_pages/real-models.py"
#: std grid, entropy grid, histogram; the chosen sentence's std and entropy grids, one head;
#: entropy by layer, collapsed by layer
N_CHARTS = 8
GRID_STD, GRID_ENTROPY, HIST, SENTENCE_STD, SENTENCE_ENTROPY, HEAD, CF_ENTROPY, CF_COLLAPSED = (
    range(N_CHARTS)
)


def open_page(reveal: bool = True, **params: str | list[str]) -> AppTest:
    return run_page(SCRIPT, reveal=reveal, **params)


def head_rows(at: AppTest) -> pd.DataFrame:
    (raw,) = chart_data(at)[HEAD]["datasets"].values()
    return pa.ipc.open_stream(io.BytesIO(raw)).read_pandas()


def independent_figures() -> dict[str, np.ndarray]:
    """The page's headline figures, recomputed here with plain NumPy from the file."""
    with np.load(rm_path(), allow_pickle=False) as f:
        n_layers, n_heads, d_k = int(f["n_layers"]), int(f["n_heads"]), int(f["d_k"])
        offsets, tokens, logits = f["logit_offsets"], f["n_tokens"], f["logits"]
        std, ent = [], []
        for s, t in enumerate(tokens):
            z = logits[offsets[s] : offsets[s + 1]].astype(np.float64)
            z = z.reshape(n_layers, n_heads, t, t)
            std.append(z.reshape(n_layers, n_heads, -1).std(-1))
            per = []
            for m in (math.sqrt(d_k), 1.0, 1 / math.sqrt(d_k)):
                e = np.exp(m * z - (m * z).max(-1, keepdims=True))
                p = e / e.sum(-1, keepdims=True)
                per.append(-(p * np.log(np.where(p > 0, p, 1))).sum(-1).mean(-1))
            ent.append(np.stack(per, -1))
    return {"std": np.stack(std), "entropy": np.stack(ent)}


def rm_path():
    from ui.real_models.data import DATA_FILE

    return DATA_FILE


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_with_every_chart(lang):
    at = open_page(lang=lang)
    assert_page_in(at, lang, N_CHARTS)
    assert at.selectbox(key="sentence").value == 0
    assert at.number_input(key="layer").value == 0
    assert at.number_input(key="head").value == 5
    assert at.radio(key="divide_by").value == "sqrt_d_k"
    assert len(at.dataframe) == 1  # the counterfactual table
    assert len(at.table) == 1  # the field guide
    assert len(at.metric) == 5


def test_field_guide_is_a_wrapping_table_with_a_link_per_row():
    """A static table (cells wrap, nothing is cut to "…"), every row with its source as a
    Markdown link that shows the host."""
    from ui.real_models.field_guide import ROWS

    at = open_page()
    guide = at.table[0].value
    assert list(guide.index) == [
        i18n.catalog("en")[f"real_models.guide_{r.id}_model"] for r in ROWS
    ]
    assert list(guide.columns) == ["d_k", "factor c on q·k", "extras", "source"]
    for row, cell in zip(ROWS, guide["source"], strict=True):
        host = row.source.split("/")[2].removeprefix("www.")
        assert cell == f"[{host}]({row.source})"


def test_numbers_on_the_page_match_an_independent_computation():
    at = open_page()
    ref = independent_figures()
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    metric = {m.label: m.value for m in at.metric}
    shown = metric["per-head std, mean of 72 heads × 17 sentences"]
    # to the two decimals printed: within half a unit (the independent mean may differ
    # from the page's in the last bit, which could flip a rounding at …5)
    assert abs(float(shown) - ref["std"].mean()) <= 0.005
    assert f"**{shown}**" in text  # the myth card and the prediction
    collapsed = (ref["entropy"] < 0.1).mean(axis=(0, 1, 2))
    table = at.dataframe[0].value
    assert table["collapsed (< 0.1 nats)"].tolist() == [f"{100 * v:.1f} %" for v in collapsed]
    assert table["mean entropy (nats)"].tolist() == pytest.approx(
        ref["entropy"].mean(axis=(0, 1, 2)), abs=6e-4
    )
    assert table["collapsed (< 0.1 nats)"].tolist() == ["35.5 %", "1.4 %", "0.0 %"]
    # the std heatmap: mean over sentences per head, to float16 rounding of the logits
    (raw,) = chart_data(at)[GRID_STD]["datasets"].values()
    grid = pa.ipc.open_stream(io.BytesIO(raw)).read_pandas()
    assert grid["std"].to_numpy() == pytest.approx(ref["std"].mean(0).ravel(), rel=1e-12)
    assert "layer 0, head 2" in text


def test_every_control_changes_the_head_chart():
    at = open_page()
    before = head_rows(at)
    seen = [before]
    for kind, key, value in (
        ("selectbox", "sentence", 3),
        ("number_input", "layer", 4),
        ("number_input", "head", 9),
        ("radio", "divide_by", "none"),
    ):
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception
        rows = head_rows(at)
        assert not any(rows.equals(old) for old in seen), key
        seen.append(rows)
    assert at.query_params["sentence"] in ("3", ["3"])  # the index, not the text
    # sentence 3 has 17 tokens; the counterfactual logits are the trained ones × √d_k
    assert len(rows) == 17 * 17
    assert rows["logit"].to_numpy() == pytest.approx(rows["trained"].to_numpy() * math.sqrt(32))
    # section 1's grids follow the divisor alone, not the sentence, layer or head
    assert (
        chart_data(at)[GRID_STD]["raw"] == chart_data(open_page(divide_by="none"))[GRID_STD]["raw"]
    )
    assert chart_data(at)[GRID_STD]["raw"] != chart_data(open_page())[GRID_STD]["raw"]


def test_divisor_none_saturates_and_d_k_flattens_the_same_head():
    values = {}
    for divisor in rm.DIVISORS:
        at = open_page(divide_by=divisor, layer="1", head="8")
        metric = {m.label: float(m.value) for m in at.metric if m.label.startswith("mean")}
        values[divisor] = metric["mean row entropy (nats)"]
    assert values["none"] < values["sqrt_d_k"] < values["d_k"]


def test_url_sets_the_controls():
    at = open_page(sentence="12", layer="5", head="11", divide_by="d_k")
    assert not warnings(at)
    assert at.selectbox(key="sentence").value == 12
    assert (at.number_input(key="layer").value, at.number_input(key="head").value) == (5, 11)
    assert at.radio(key="divide_by").value == "d_k"
    rows = head_rows(at)
    assert rows["query_token"].iloc[0] == "[CLS]"


@pytest.mark.parametrize(
    ("key", "value"),
    [("sentence", "17"), ("sentence", "abc"), ("sentence", "-1"), ("layer", "6"),
     ("head", "12"), ("head", "2.5"), ("divide_by", "sqrt"), ("divide_by", "d_model")],
)  # fmt: skip
def test_bad_values_fall_back_with_a_warning(key, value):
    at = open_page(reveal=False, **{key: value})
    assert not at.exception
    warned = " ".join(warnings(at))
    assert f"`{key}`" in warned
    defaults = {"sentence": 0, "layer": 0, "head": 5, "divide_by": "sqrt_d_k"}
    widget = {"sentence": at.selectbox, "divide_by": at.radio}.get(key, at.number_input)
    assert widget(key=key).value == defaults[key]


def test_order_one_claims_name_the_head_that_is_not():
    """Layer 0, head 2 has a logit std near 11, about 2 √d_k: the reveal says "of order
    one" only for most heads and names that one; the myth card speaks of the typical head."""
    from ui.real_models import data

    fig = data.figures(data.corpus())
    layer, head = fig["std_hi_head"]
    assert fig["std_hi"] > 32**0.5
    at = open_page()
    texts = " ".join(m.value for m in at.markdown)
    assert f"The exception is layer {layer}, head {head}, with std {fig['std_hi']:.2f}" in texts
    assert "the typical head's logits are of order one" in texts
    assert "of the (head, sentence) pairs collapse" in " ".join(c.value for c in at.caption)


def test_predict_then_reveal_and_myths():
    at = open_page(reveal=False)
    # before the guess: the grids and the histogram wait; the head and the summary show
    assert len(chart_data(at)) == N_CHARTS - 3
    at.radio(key="real_models_std_guess").set_value(1).run()  # "about 1"
    at.button(key="real_models_std_reveal").click().run()
    assert len(chart_data(at)) == N_CHARTS
    verdict = " ".join(m.value for m in at.markdown)
    assert "You guessed **about 1 (0.8–1.25)**; the measurement says **larger: 1.25–3**" in verdict
    assert "Question:" in verdict and "N(0, 1)" in verdict
    assert "ever put all its weight on one token?" in verdict and "**1.000**" in verdict


def test_presenter_steps():
    at = open_page(present="1", step="2")
    assert not at.exception
    assert len(chart_data(at)) == 6  # grids, histogram, the sentence's grids, one head
    at = open_page(present="1", step="3")
    assert len(chart_data(at)) == N_CHARTS
    assert len(at.dataframe) == 1 and not at.table  # the field guide waits for step 4


def test_the_short_path_is_the_glance_under_the_chosen_divisor():
    """Go deeper closed: the question on the trained std, then section 1's charts alone;
    section 2's controls are not drawn (the divisor sits at the top)."""
    at = open_page(reveal=False, deeper="false")
    assert not at.exception and not warnings(at)
    assert not at.get("vega_lite_chart")
    assert [h.value for h in at.header] == ["1 · The trained heads at a glance"]
    assert at.radio(key="divide_by").value == "sqrt_d_k"
    assert not [w for w in at.number_input if w.key in ("layer", "head")]
    at = open_page(deeper="false")
    assert len(chart_data(at)) == 3  # the two grids and the pooled histogram


def test_show_me_where_it_breaks_drops_the_scale():
    """The button sets the divisor to none: section 1's entropy grid is the independent
    recomputation without the scale, a third of the (head, sentence) pairs collapse, and
    section 2's default head puts most of each row on one key."""
    at = open_page()
    trained = {m.label: float(m.value) for m in at.metric}["mean largest weight"]
    at.button(key="break_it").click().run()
    assert not at.exception and not warnings(at)
    assert at.radio(key="divide_by").value == "none"
    assert at.query_params["divide_by"] in ("none", ["none"])
    (raw,) = chart_data(at)[GRID_ENTROPY]["datasets"].values()
    grid = pa.ipc.open_stream(io.BytesIO(raw)).read_pandas()
    want = independent_figures()["entropy"][..., 0].mean(axis=0)  # (layers, heads), ÷1
    got = grid.pivot(index="layer", columns="head", values="entropy").to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9)
    collapsed = float((independent_figures()["entropy"][..., 0] < rm.COLLAPSE_NATS).mean())
    assert collapsed > 0.3
    assert f"{100 * collapsed:.1f} %" in " ".join(m.value for m in at.markdown)
    broken = {m.label: float(m.value) for m in at.metric}["mean largest weight"]
    assert trained < 0.5 < 0.85 < broken  # layer 0, head 5 of sentence 0
