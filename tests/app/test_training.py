"""The training page through AppTest, in both languages."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core.training import LR_GRIDS, Variant, final_loss, train_recall_variants
from tests.app.helpers import (
    ROOT,
    assert_page_in,
    assert_swapped_in_place,
    chart_data,
    reveal_all,
    run_page,
    warnings,
)

SCRIPT = "app_pages/training.py"
#: Charts at a precomputed setting: the LR chart, 4 curves, 3 probe heatmaps (one per
#: scaling), 4 panels.
N_CHARTS = 12
#: The single run's charts (4 curves and a probe heatmap per scaling) with the 3 scalings.
RUN_CHARTS = 7


def open_page(reveal: bool = True, **params: str | list[str]) -> AppTest:
    return run_page(SCRIPT, reveal=reveal, **params)


def _charts(at: AppTest) -> set[bytes]:
    """Every chart's serialised proto (spec and data)."""
    return {c.proto.SerializeToString() for c in at.get("vega_lite_chart")}


def _titles(at: AppTest) -> list[str]:
    out = []
    for chart in chart_data(at):
        title = chart["spec"].get("title")
        out.append(title["text"] if isinstance(title, dict) else title)
    return out


def _run_table(at: AppTest):
    """The single run's summary table (the one with a "final loss" column)."""
    return next(x.value for x in at.table if "final loss" in x.value.columns)


def _sensitivity_table(at: AppTest):
    """The LR sweep's table (the one with an "LR sensitivity" column)."""
    return next(x.value for x in at.table if "LR sensitivity" in x.value.columns)


def _myth(at: AppTest) -> str:
    texts = [m.value for m in at.markdown if ":material/check_circle:" in m.value]
    assert len(texts) == 1
    return texts[0]


def _gaps_in_file(m: int, optimizer: str, d_k: int, variant: str) -> np.ndarray:
    """Gap left (ℓ − ℓ*)/(ℓ_u − ℓ*) per (seed, rate) in the shipped sweep, ∞ for a
    diverged run, with ℓ_u = ½(1/m − 1/16) and ℓ* the task's best median final loss."""
    from ui.training.data import task_best

    doc = json.loads((ROOT / "data" / "training_sweep.json").read_text())
    i, o, d = doc["m"].index(m), doc["optimizers"].index(optimizer), doc["d_k"].index(d_k)
    v = [x["name"] for x in doc["variants"]].index(variant)
    final = np.array(doc["final_loss"][i][o][d][v], dtype=float)  # (seed, lr)
    best, u = task_best(m), 0.5 * (1 / m - 1 / 16)
    return np.where(np.isnan(final), np.inf, (final - best) / (u - best))


def _learns_in_file(m: int, optimizer: str, d_k: int, variant: str) -> list[str]:
    """Learning rates at which ``variant`` learns in the shipped sweep (median gap left
    over the seeds at most 0.1), computed here from the file directly, as the page writes
    them: a rate where some seed lies across 0.1 or 0.9 from the median is marked "?"."""
    from ui.training.data import lr_text

    gaps = _gaps_in_file(m, optimizer, d_k, variant)
    lo, median, hi = gaps.min(axis=0), np.median(gaps, axis=0), gaps.max(axis=0)
    edge = ((lo <= 0.1) & (0.1 <= hi)) | ((lo <= 0.9) & (0.9 <= hi))
    return [
        lr_text(lr) + ("?" if e else "")
        for lr, g, e in zip(LR_GRIDS[optimizer], median, edge, strict=True)
        if g <= 0.1
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_default_page_in_both_languages(lang):
    at = open_page(lang=lang)
    assert_page_in(at, lang, N_CHARTS)
    assert len(at.table) == 3  # the LR sensitivity, the single run's summary, the thresholds
    assert at.radio(key="m").value == "2"
    assert at.radio(key="optimizer").value == "adam"
    assert at.select_slider(key="lr").value == "0.01"
    # every sweep run at the defaults is shipped: no button
    assert not [b for b in at.button if b.key == "training_compute"]


def test_default_single_run_table_is_the_core_run():
    at = open_page()
    table = _run_table(at)
    histories = train_recall_variants(
        64, [Variant(0.0), Variant(0.5), Variant(1.0)], [0.01], optimizer="adam", seed=0,
        steps=300, snapshot_steps=(0, 10, 50), n_probe=4, m=2,
    )  # fmt: skip
    finals = [float(final_loss(h)[0]) for h in histories]
    shown = [float(x) for x in table["final loss"]]
    # 3 significant digits; the unscaled run fails on this task, and a failing run is
    # chaotic (the shipped run's float32 records and another CPU's last bits move it by
    # about 1 %): its verdict must agree
    np.testing.assert_allclose(shown[1:], finals[1:], rtol=5e-3)
    np.testing.assert_allclose(shown[0], finals[0], rtol=3e-2)
    assert list(table["verdict"]) == ["fails", "learns", "learns"]
    assert list(table.index) == ["none (α = 0)", "1/√dₖ (α = ½)", "1/dₖ (α = 1)"]


@pytest.mark.parametrize(
    ("m", "optimizer", "d_k"), [(1, "adam", 64), (2, "sgd", 256), (4, "adam", 1024)]
)
def test_myth_card_reports_the_measured_rates(m, optimizer, d_k):
    at = open_page(m=str(m), optimizer=optimizer, d_k=str(d_k))
    text = _myth(at)
    learns = _learns_in_file(m, optimizer, d_k, "alpha_0")
    n = len(LR_GRIDS[optimizer])
    assert f"task m = {m}" in text
    if learns:
        assert f"learns at {len(learns)} of {n} rates" in text
        assert f"({', '.join(learns)};" in text
        assert "claim is too strong" in text
    else:
        assert f"learns at none of the {n} rates" in text
        assert "the claim holds on this grid" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_borderline_results_are_marked_with_their_spread(lang):
    """Every borderline verdict at m = 1, Adam, d_k = 64 — a threshold inside the seeds'
    spread of the gap left — is listed under the table with that spread, and the myth
    card says what the mark means when α = 0 or α = ½ has one."""
    from ui.training.data import lr_text

    at = open_page(lang=lang, m="1")
    caption = [c.value for c in at.caption if c.value.startswith("? ")]
    row = at.table[0].value.iloc[0]  # the sweep's table comes first: none (α = 0)
    assert re.fullmatch(r"\d\.\d{3} \(\d\.\d{3}–\d\.\d{3}\)", row.iloc[0])  # sensitivity
    marked = []
    for variant in ("alpha_0", "alpha_half", "alpha_1"):
        gaps = _gaps_in_file(1, "adam", 64, variant)
        lo, hi = gaps.min(axis=0), gaps.max(axis=0)
        for j, lr in enumerate(LR_GRIDS["adam"]):
            if lo[j] <= 0.1 <= hi[j] or lo[j] <= 0.9 <= hi[j]:
                marked.append((variant, lr_text(lr), lo[j], hi[j]))
    if not marked:
        assert not caption
        return
    assert len(caption) == 1
    for _variant, lr, lo, hi in marked:
        spread = f"{100 * lo:.0f} %", "∞" if not np.isfinite(hi) else f"{100 * hi:.0f} %"
        if lang == "en":
            assert f"at rate {lr}: gap left from {spread[0]} to {spread[1]}" in caption[0]
        else:
            assert f"在学习率 {lr}：各种子的剩余差距从 {spread[0]} 到 {spread[1]}" in caption[0]
    if any(v in ("alpha_0", "alpha_half") for v, *_ in marked):
        mark = "Rates marked ? are borderline" if lang == "en" else "标有 ? 的学习率处于临界"
        assert mark in _myth(at)


@pytest.mark.parametrize("d_k", [16, 256])
def test_myth_card_says_saturated_start_only_when_rows_start_dead(d_k):
    """At d_k = 16 no unscaled row is dead at step 0: the card must not credit learning
    "from a saturated start" there; at d_k = 256 it quotes the dead share it started from."""
    at = open_page(d_k=str(d_k), m="1")
    dead_0 = _run_table(at).loc["none (α = 0)", "dead rows: step 0 → end"].split(" → ")[0]
    text = _myth(at)
    if not _learns_in_file(1, "adam", d_k, "alpha_0"):
        assert "claim holds on this grid" in text
        return
    assert "claim is too strong" in text
    if dead_0 == "0 %":
        assert d_k == 16
        assert "saturated did not stop" not in text
        assert "none of its rows is dead at step 0" in text
    else:
        assert d_k == 256
        assert f"{dead_0} of its rows dead at step 0" in text


def test_half_width_charts_stack_their_legend_in_one_column():
    """The curves and the d_k panels sit two to a row: at 800 px a chart is about 210 px
    wide, and a two-column legend cut "1/√dₖ (α = ½)" to "1/√d"."""
    at = open_page()
    half = {"Loss", "Retrieval accuracy", "Attention entropy", "Dead rows"}
    half |= {f"dₖ = {d}" for d in (16, 64, 256, 1024)}
    seen = set()
    for chart in chart_data(at):
        title = chart["spec"]["title"]["text"]
        if isinstance(title, str) and title in half:
            seen.add(title)
            legends = [
                layer["encoding"]["color"]["legend"]
                for layer in chart["spec"]["layer"]
                if "legend" in layer.get("encoding", {}).get("color", {})
            ]
            assert legends and all(leg["columns"] == 1 for leg in legends), title
    assert seen == half


def test_extreme_settings_run():
    at = open_page(d_k="16", optimizer="sgd", lr="1000", steps="100", folded="true", qk_norm="true")
    assert not at.exception and not warnings(at)
    table = _run_table(at)
    assert len(table) == 5
    # at lr 1000 with SGD the unscaled model does not learn in 100 steps
    assert table.loc["none (α = 0)", "verdict"] in ("fails", "partly", "diverged")
    # steps = 100 is not shipped: the sweep waits for its button, and the card says so
    assert [b for b in at.button if b.key == "training_compute"]
    assert "has not been computed yet" in _myth(at)
    assert len(chart_data(at)) == 4 + 5  # curves and a heatmap per scaling only


def test_largest_d_k_and_most_steps():
    at = open_page(d_k="1024", lr="0.0001")
    assert not at.exception and not warnings(at)
    assert len(chart_data(at)) == N_CHARTS  # d_k = 1024 is shipped
    at = open_page(d_k="16", steps="1000")
    assert not at.exception and not warnings(at)
    assert len(chart_data(at)) == RUN_CHARTS
    loss = next(c for c in chart_data(at) if c["spec"]["title"]["text"] == "Loss")
    rows = max(pa.ipc.open_stream(v).read_all().num_rows for v in loss["datasets"].values())
    assert rows <= 3 * (100 + 1)  # thinned to at most 100 points per line (and the last)


def test_each_control_changes_the_charts():
    at = open_page()
    base = _charts(at)
    moves = [
        ("d_k", lambda: at.number_input(key="d_k").set_value(256)),
        ("lr", lambda: at.select_slider(key="lr").set_value("0.00316")),
        ("optimizer", lambda: at.radio(key="optimizer").set_value("sgd")),
        ("steps", lambda: at.select_slider(key="steps").set_value("500")),
        ("folded", lambda: at.toggle(key="folded").set_value(True)),
        ("qk_norm", lambda: at.toggle(key="qk_norm").set_value(True)),
        ("seed", lambda: at.number_input(key="seed").set_value(3)),
        ("m", lambda: at.radio(key="m").set_value("4")),
    ]
    for name, move in moves:
        move()
        at.run()
        reveal_all(at)
        assert not at.exception, name
        now = _charts(at)
        assert now - base, f"{name} changed no chart"
        base = now
    assert len(_run_table(at)) == 5


def test_changing_the_optimizer_resets_the_learning_rate():
    at = open_page(lr="0.0316")
    assert at.select_slider(key="lr").value == "0.0316"
    at.radio(key="optimizer").set_value("sgd").run()
    assert at.select_slider(key="lr").value == "1"
    at.select_slider(key="lr").set_value("10").run()
    at.radio(key="optimizer").set_value("adam").run()
    assert at.select_slider(key="lr").value == "0.01"


def test_a_deep_link_keeps_its_learning_rate():
    at = open_page(optimizer="sgd", lr="3.16")
    assert at.select_slider(key="lr").value == "3.16"
    assert "learning rate **3.16**" in at.markdown[2].value or any(
        "**3.16**" in m.value for m in at.markdown
    )


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"d_k": "abc"}, "d_k"),
        ({"d_k": "2048"}, "d_k"),
        ({"d_k": "8"}, "d_k"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"lr": "0.02"}, "lr"),
        ({"lr": "inf"}, "lr"),
        ({"steps": "7"}, "steps"),
        ({"folded": "yes"}, "folded"),
        ({"qk_norm": ["true", "false"]}, "qk_norm"),
        ({"m": "3"}, "m"),
    ],
)
def test_malformed_params_warn_and_fall_back(params, name):
    at = open_page(reveal=False, **params)
    assert not at.exception
    assert [w for w in warnings(at) if f"`{name}`" in w], warnings(at)
    assert at.number_input(key="d_k").value == 64
    assert at.select_slider(key="lr").value == "0.01"
    assert not at.toggle(key="folded").value and not at.toggle(key="qk_norm").value
    assert at.radio(key="m").value == "2"


def test_sweep_button_runs_to_the_end_with_progress():
    """d_k = 32 is not shipped: one run per seed is computed on demand."""
    from ui.training.data import SWEEP_SEEDS as n

    at = open_page(d_k="32", m="2")
    # the LR chart at d_k = 32 waits; the single run and the panels are shipped
    assert len(chart_data(at)) == RUN_CHARTS + 4
    info = [i.value for i in at.info if "not shipped" in i.value]
    assert info and f"{n} of the {5 * n} runs" in info[0]
    at.button(key="training_compute").click().run(timeout=600)  # ~3 s of CPU a run
    assert not at.exception
    progress = at.get("progress")
    assert progress, "no progress bar"
    assert f"Done: {n} runs" in progress[-1].proto.text
    assert progress[-1].proto.value == 100
    reveal_all(at)
    assert len(chart_data(at)) == N_CHARTS
    assert any(
        f"{4 * n} precomputed" in c.value and f"{n} computed now" in c.value for c in at.caption
    )
    assert "at the chosen dₖ, Adam, task m = 2" in " ".join(map(str, _titles(at)))
    # computed results stay for the session: a rerun shows them without the button
    at.run()
    assert not [b for b in at.button if b.key == "training_compute"]
    assert "d_k = 32 with Adam" in _myth(at)


def test_d_k_is_a_power_of_two():
    """The page trains at 16, 32, …, 1024 only: a link, a typed value and another page's
    d_k move to the nearest power (log scale) with a note; − / + step to the next one."""
    at = open_page(reveal=False, d_k="24")
    assert at.number_input(key="d_k").value == 32
    assert at.query_params["d_k"] in ("32", ["32"])
    assert any("dₖ = 24 became 32" in w for w in warnings(at))  # linked: in the warning
    at.number_input(key="d_k").set_value(33).run()  # the input's +
    assert at.number_input(key="d_k").value == 64
    assert not any("became" in c.value for c in at.caption)  # a step needs no note
    at.number_input(key="d_k").set_value(63).run()  # its −
    assert at.number_input(key="d_k").value == 32
    at.number_input(key="d_k").set_value(182).run()  # typed: log2 182 = 7.51 -> 256
    assert at.number_input(key="d_k").value == 256
    assert any("dₖ = 182 became 256" in c.value for c in at.caption)
    at.number_input(key="d_k").set_value(180).run()  # log2 180 = 7.49 -> 128
    assert at.number_input(key="d_k").value == 128
    assert not at.exception


@pytest.mark.parametrize(
    ("value", "previous", "want"),
    [(16, None, 16), (1024, 7, 1024), (4096, None, 1024), (1, None, 16), (22, None, 16),
     (23, None, 32), (65, 64, 128), (127, 128, 64), (65, 32, 64), (700, None, 512)],
)  # fmt: skip
def test_snap_d_k(value, previous, want):
    from ui.training.sections import snap_d_k

    assert snap_d_k(value, previous) == want


def test_the_short_path_is_the_sweep_question_and_trains_nothing(monkeypatch):
    """Go deeper closed: the sweep's question, then (answered) its chart alone; no single
    run is trained or read, and the deeper sections are not drawn."""
    from ui.training import one_run

    calls = []
    real = one_run.run_stats
    monkeypatch.setattr(one_run, "run_stats", lambda *a, **k: calls.append(a) or real(*a, **k))
    at = open_page(reveal=False, deeper="false")
    assert not at.exception and not warnings(at)
    assert [h.value for h in at.header] == ["Does it learn at any rate?"]
    assert not chart_data(at)  # the question first
    assert [b for b in at.button if b.key == "training_learns_skip"]
    reveal_all(at)
    assert _titles(at) == [
        ["Final loss against learning rate", "at the chosen dₖ, Adam, task m = 2"]
    ]
    assert [h.value for h in at.header] == ["Does it learn at any rate?"]
    assert not calls


def test_a_shipped_d_k_sends_the_sweep_chart_spec_unchanged():
    """The sweep's chart is drawn with ``swap_data``: moving d_k among the shipped ones
    sends the same spec, byte for byte (one loss axis for them all), and new data, so the
    browser moves the lines instead of embedding the chart anew."""
    first, second = (
        open_page(deeper="false", d_k=d).get("vega_lite_chart")[0].proto for d in ("64", "256")
    )
    assert_swapped_in_place(first, second)


def test_the_default_task_is_where_the_scale_decides():
    """m = 2 at d_k = 64 with Adam: no rate learns without the scale, three do with
    1/√d_k (the shipped sweep), and the card's right answer is "at none"."""
    at = open_page(reveal=False, deeper="false")
    assert not _learns_in_file(2, "adam", 64, "alpha_0")
    assert len(_learns_in_file(2, "adam", 64, "alpha_half")) == 3
    at.radio(key="training_learns_guess").set_value(0).run()
    at.button(key="training_learns_reveal").click().run()
    shown = " ".join(m.value for m in at.markdown)
    assert "learns at none of the 13 rates, with 1/√d_k at 3" in shown
    assert "right" in shown.lower()


def test_where_neither_scaling_learns_the_page_does_not_judge_the_claim():
    """m = 2 at d_k = 16 with Adam: no rate learns, with or without the scale (the shipped
    sweep). The sweep cannot tell them apart there: its takeaway, the claim's takeaway and
    the myth card say so instead of "the claim holds"."""
    assert not _learns_in_file(2, "adam", 16, "alpha_0")
    assert not _learns_in_file(2, "adam", 16, "alpha_half")
    at = open_page(d_k="16", m="2")
    assert not at.exception and not warnings(at)
    shown = " ".join(m.value for m in at.markdown)
    assert "does not tell them apart" in shown and "holds" not in shown
    assert "this grid cannot judge the claim" in shown
    assert "learns at none of the 13 rates, with or without the scale" in shown
    # one d_k up, 1/√d_k learns and unscaled does not: there the claim holds
    assert _learns_in_file(2, "adam", 64, "alpha_half") and not _learns_in_file(
        2, "adam", 64, "alpha_0"
    )
    at = open_page(d_k="64", m="2")
    assert "the popular claim holds on this grid" in " ".join(m.value for m in at.markdown)


def test_show_me_where_it_breaks_lands_on_shipped_runs():
    """The button sets m = 4, d_k = 1024, Adam at 0.01, 300 steps and no extra variant:
    the sweep and the single run are shipped (no button to compute, nothing trained), and
    without the scale the model ends worse than uniform attention with no row on target."""
    from ui.training import data, runs

    at = open_page(optimizer="sgd", lr="3.16", steps="100", folded="true")
    at.button(key="break_it").click().run()
    reveal_all(at)
    assert not at.exception and not warnings(at)
    assert at.radio(key="m").value == "4" and at.number_input(key="d_k").value == 1024
    assert at.radio(key="optimizer").value == "adam"
    assert at.select_slider(key="lr").value == "0.01"
    assert at.select_slider(key="steps").value == "300" and not at.toggle(key="folded").value
    assert at.query_params["m"] in ("4", ["4"]) and at.query_params["d_k"] in ("1024", ["1024"])
    assert runs.shipped(data.shipped_runs(), 1024, "adam", 0.01, 300, data.BASE_VARIANTS, 0, 4)
    assert not [b for b in at.button if b.key == "training_compute"]
    assert len(chart_data(at)) == N_CHARTS
    row = _run_table(at).loc["none (α = 0)"]
    assert row["verdict"] == "fails" and float(row["accuracy"]) < 0.01
    assert float(row["final loss"]) > data.uniform(4) * 5  # five times a model that does nothing
    assert "learns at none of the 13 rates" in _myth(at)


def test_presenter_steps_keep_their_sections():
    """The sweep opens the page: ``step=1`` shows it alone, ``step=2`` adds the single run,
    and ``step=4`` the best rate per d_k (the steps as the screen counts them)."""
    at = open_page(present="1", step="1")
    assert [h.value for h in at.header] == ["Does it learn at any rate?"]
    at = open_page(present="1", step="2")
    assert [h.value for h in at.header] == ["Does it learn at any rate?", "One run, side by side"]
    at = open_page(present="1", step="4")
    assert at.header[-1].value.startswith("Does the best learning rate move with d_k?")
