"""The home page's worked example and its picture: numbers, chart specs, the SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import altair as alt
import numpy as np
import pytest

from ui.common.charts import ChartText
from ui.common.pages import page
from ui.home import charts, data, diagram

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("d_k", [int(d) for d in page("home").param("example_d_k").options])
def test_the_example_is_softmax_of_the_scores_times_v(d_k):
    """Identities, up to rounding: the scores are Q Kᵀ, the logits those ÷√d_k, each weight
    row the softmax of its scores and each output row the weights times V."""
    q, k, v = data.example_vectors(d_k, seed=3)
    cells, outputs = data.worked_example(d_k, 3)
    scores = cells["score"].to_numpy().reshape(data.N_QUERIES, data.N_KEYS)
    np.testing.assert_allclose(scores, q @ k.T, rtol=1e-12, atol=1e-12)
    logits = cells["logit"].to_numpy().reshape(scores.shape)
    np.testing.assert_allclose(logits, scores / np.sqrt(d_k), rtol=1e-12, atol=1e-12)
    for name, z in (("weight_unscaled", scores), ("weight_scaled", logits)):
        w = cells[name].to_numpy().reshape(scores.shape)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        np.testing.assert_allclose(w, e / e.sum(axis=1, keepdims=True), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-12)
        out = outputs[f"out_{name.removeprefix('weight_')}"].to_numpy().reshape(-1, data.D_V)
        np.testing.assert_allclose(out, w @ v, rtol=1e-12, atol=1e-12)


def test_a_longer_d_k_keeps_v_and_draws_new_q_and_k():
    _, _, v4 = data.example_vectors(4, seed=0)
    q64, k64, v64 = data.example_vectors(64, seed=0)
    assert np.array_equal(v4, v64)  # V comes first from its own stream
    assert q64.shape == (3, 64) and k64.shape == (4, 64)
    assert np.array_equal(v4, np.round(v4, 1))  # printed in full


def test_without_the_scale_the_rows_saturate_as_d_k_grows():
    """Over 200 seeds (600 rows): at d_k = 1024 the unscaled scores have std √d_k = 32, so
    the largest of a row's four weights is ≈ 1; scaled, the logits are N(0, 1) and the
    largest weight averages ≈ 0.55 (for four iid N(0, 1) logits; s.e. of the mean over
    600 rows ≈ 0.007). The bounds sit > 10 s.e. from either value."""
    top_u, top_s = [], []
    for seed in range(200):
        cells, _ = data.worked_example(1024, seed)
        top_u.append(cells.groupby("i")["weight_unscaled"].max().to_numpy())
        top_s.append(cells.groupby("i")["weight_scaled"].max().to_numpy())
    assert np.mean(top_u) > 0.97
    assert 0.45 < np.mean(top_s) < 0.65


def test_vector_tables_show_four_entries_and_the_norm():
    table = data.vector_table(64, 0, "q")
    assert list(table.index) == ["q₁", "q₂", "q₃"]
    assert list(table.columns) == ["1", "2", "3", "4", "…", "‖·‖"]
    q, _, _ = data.example_vectors(64, 0)
    assert table.loc["q₂", "‖·‖"] == f"{np.linalg.norm(q[1]):.1f}"
    small = data.vector_table(4, 0, "k")
    assert "…" not in small.columns and len(small) == 4
    v = data.vector_table(4, 0, "v")
    assert list(v.columns) == ["1", "2"] and not any("-0.0" == x for x in v.to_numpy().ravel())


def _matrix(value, diverging):
    text = ChartText.of(
        title="Scores", subtitle="sub", x="key", y="query", color="score", alt="alt text"
    )
    return charts.matrix_cells(
        data.example_cells(16, 0),
        text,
        value=value,
        domain=(-5.0, 5.0) if diverging else (0.0, 1.0),
        diverging=diverging,
    )


@pytest.mark.parametrize(("value", "diverging"), [("score", True), ("weight_scaled", False)])
def test_matrix_cells_spec(value, diverging):
    spec = _matrix(value, diverging).to_dict()
    alt.LayerChart.from_dict(spec)  # validates
    rect, text = spec["layer"]
    assert rect["encoding"]["color"]["field"] == value
    scale = rect["encoding"]["color"]["scale"]
    assert scale["scheme"] == ("blueorange" if diverging else "blues")
    assert scale["domain"] == ([-5.0, 5.0] if diverging else [0.0, 1.0])
    assert [t["title"] for t in rect["encoding"]["tooltip"]] == ["query", "key", "score"]
    assert text["mark"]["tooltip"] is False
    assert text["encoding"]["text"]["field"] == value
    assert spec["description"] == "alt text"
    assert spec["title"]["text"] == "Scores" and spec["title"]["subtitle"] == "sub"
    # the frame holds the whole example (its CSV); the chart ships the drawn column only
    (rows,) = spec["datasets"].values()
    assert len(rows) == data.N_QUERIES * data.N_KEYS
    assert set(rows[0]) == {"i", "j", value}
    assert rect["encoding"]["x"]["axis"]["grid"] is False
    assert rect["encoding"]["y"]["axis"]["grid"] is False


def test_example_summary_quotes_the_cells():
    cells, _ = data.worked_example(64, 2)
    summary = data.example_summary(64, 2)
    assert summary["reach"] == np.abs(cells["score"]).max()
    assert summary["spread"] == cells["score"].std(ddof=0)
    for name in ("unscaled", "scaled"):
        top = cells.pivot(index="i", columns="j", values=f"weight_{name}").max(axis=1)
        assert summary[f"top_{name}"] == tuple(top)


def _labels(**overrides):
    labels = {key: f"label {key}" for key, *_ in diagram.BOXES}
    labels.update(title="One layer", description="What it shows", attention="attention")
    labels.update(overrides)
    return labels


def test_the_picture_is_svg_text_in_the_page_colour():
    svg = diagram.layer_svg(_labels(q="queries\nQ = X·W_Q"))
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}title").text == "One layer"
    assert root.find(f"{SVG}desc").text == "What it shows"
    texts = ["".join(el.itertext()) for el in root.iter(f"{SVG}text")]
    for key, *_ in diagram.BOXES:
        if key != "q":
            assert f"label {key}" in texts
    assert "queriesQ = X·W_Q" in texts  # two lines, two tspans
    assert "attention" in texts
    for el in root.iter(f"{SVG}text"):
        assert el.get("fill") == "currentColor"
    highlighted = [r for r in root.iter(f"{SVG}rect") if r.get("fill") not in (None, "none")]
    assert len(highlighted) == 1  # the ÷√d_k box


def test_the_picture_escapes_its_labels():
    svg = diagram.layer_svg(_labels(scale='<script>alert("x")</script> & ÷'))
    assert "<script>" not in svg
    root = ET.fromstring(svg)  # still well-formed
    assert any(
        '<script>alert("x")</script> & ÷' == "".join(t.itertext()) for t in root.iter(f"{SVG}text")
    )


def test_every_box_fits_the_drawing():
    for _key, x, y, w, h in diagram.BOXES:
        assert 0 <= x and x + w <= diagram.WIDTH and 0 <= y and y + h <= diagram.HEIGHT
    for x1, y1, x2, y2 in diagram.ARROWS:
        assert all(0 <= c <= diagram.WIDTH for c in (x1, x2))
        assert all(0 <= c <= diagram.HEIGHT for c in (y1, y2))
