"""The training page through AppTest, in both languages."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core.training import LR_GRIDS, Variant, final_loss, train_recall_variants
from tests.app.helpers import ROOT, assert_page_in, chart_data, reveal_all, run_page, warnings

SCRIPT = "app_pages/training.py"
#: Charts at a precomputed setting: 4 curves, the probe heatmap, the LR chart, 4 panels.
N_CHARTS = 10


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


def _myth(at: AppTest) -> str:
    texts = [m.value for m in at.markdown if ":material/check_circle:" in m.value]
    assert len(texts) == 1
    return texts[0]


def _ratios_in_file(optimizer: str, d_k: int, variant: str) -> np.ndarray:
    """final / ℓ₀ per (seed, rate) in the shipped sweep, ∞ for a diverged run."""
    doc = json.loads((ROOT / "data" / "training_sweep.json").read_text())
    o, d = doc["optimizers"].index(optimizer), doc["d_k"].index(d_k)
    v = [x["name"] for x in doc["variants"]].index(variant)
    final = np.array(doc["final_loss"][o][d][v], dtype=float)  # (seed, lr)
    initial = np.array(doc["initial_loss"][o][d][v])[:, None]
    return np.where(np.isnan(final), np.inf, final / initial)


def _learns_in_file(optimizer: str, d_k: int, variant: str) -> list[str]:
    """Learning rates at which ``variant`` learns in the shipped sweep (median over seeds of
    final / ℓ₀ at most 0.1), computed here from the file directly, as the page writes
    them: a rate where some seed lies across 0.1 or 0.9 from the median is marked "?"."""
    from ui.training.data import lr_text

    ratios = _ratios_in_file(optimizer, d_k, variant)
    lo, median, hi = ratios.min(axis=0), np.median(ratios, axis=0), ratios.max(axis=0)
    edge = ((lo <= 0.1) & (0.1 <= hi)) | ((lo <= 0.9) & (0.9 <= hi))
    return [
        lr_text(lr) + ("?" if e else "")
        for lr, m, e in zip(LR_GRIDS[optimizer], median, edge, strict=True)
        if m <= 0.1
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_default_page_in_both_languages(lang):
    at = open_page(lang=lang)
    assert_page_in(at, lang, N_CHARTS)
    assert len(at.table) == 2  # the single run's summary, the LR sensitivity table
    assert at.radio(key="optimizer").value == "adam"
    assert at.select_slider(key="lr").value == "0.01"
    # every sweep run at the defaults is shipped: no button
    assert not [b for b in at.button if b.key == "training_compute"]


def test_default_single_run_table_is_the_core_run():
    at = open_page()
    table = at.table[0].value
    histories = train_recall_variants(
        64, [Variant(0.0), Variant(0.5), Variant(1.0)], [0.01], optimizer="adam", seed=0,
        steps=300, snapshot_steps=(0, 10, 50), n_probe=4,
    )  # fmt: skip
    finals = [float(final_loss(h)[0]) for h in histories]
    shown = [float(x) for x in table["final loss"]]
    np.testing.assert_allclose(shown, finals, rtol=5e-3)  # 3 significant digits
    assert list(table.index) == ["none (α = 0)", "1/√dₖ (α = ½)", "1/dₖ (α = 1)"]


@pytest.mark.parametrize(("optimizer", "d_k"), [("adam", 64), ("sgd", 256)])
def test_myth_card_reports_the_measured_rates(optimizer, d_k):
    at = open_page(optimizer=optimizer, d_k=str(d_k))
    text = _myth(at)
    learns = _learns_in_file(optimizer, d_k, "alpha_0")
    assert learns, "the shipped sweep has the unscaled model learn here"
    assert f"learns at {len(learns)} of 9 rates" in text
    assert f"({', '.join(learns)};" in text
    assert "claim is too strong" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_borderline_results_are_marked_with_their_spread(lang):
    """At the defaults (Adam, d_k = 64) the unscaled model's verdict at rate 1e-4 sits on
    the 90 % threshold: its seeds end at 87–106 % of ℓ₀ (median 91 %, "fails"). The
    table marks it, the caption under it gives the spread over the seeds, the myth card
    says what the mark means; the LR sensitivity shows its spread over the seeds."""
    ratios = _ratios_in_file("adam", 64, "alpha_0")[:, 0]  # rate 1e-4
    assert ratios.min() < 0.9 < ratios.max() and np.median(ratios) >= 0.9
    at = open_page(lang=lang)
    table = at.table[1].value
    row = table.iloc[0]  # none (α = 0)
    assert row.iloc[4].split(", ")[0] == "0.0001?"  # "fails at"
    assert re.fullmatch(r"\d\.\d{3} \(\d\.\d{3}–\d\.\d{3}\)", row.iloc[0])  # sensitivity
    spread = f"{100 * ratios.min():.0f} %", f"{100 * ratios.max():.0f} %"
    caption = [c.value for c in at.caption if c.value.startswith("? ")]
    assert len(caption) == 1
    if lang == "en":
        assert caption[0].startswith("? Borderline: a threshold lies inside the spread")
        assert (
            f"none (α = 0) at rate 0.0001: final / ℓ₀ from {spread[0]} to {spread[1]}"
            in (caption[0])
        )
        assert "Rates marked ? are borderline" in _myth(at)
    else:
        assert caption[0].startswith("? 处于临界：")
        assert (
            f"不缩放（α = 0）在学习率 0.0001：各种子的最终损失 / ℓ₀ 从 {spread[0]} 到 {spread[1]}"
            in (caption[0])
        )
        assert "标有 ? 的学习率处于临界" in _myth(at)


@pytest.mark.parametrize("d_k", [16, 256])
def test_myth_card_says_saturated_start_only_when_rows_start_dead(d_k):
    """At d_k = 16 no unscaled row is dead at step 0: the card must not credit learning
    "from a saturated start" there; at d_k = 256 it quotes the dead share it started from."""
    at = open_page(d_k=str(d_k))
    dead_0 = at.table[0].value.loc["none (α = 0)", "dead rows: step 0 → end"].split(" → ")[0]
    text = _myth(at)
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
    table = at.table[0].value
    assert len(table) == 5
    # at lr 1000 with SGD the unscaled model does not learn in 100 steps
    assert table.loc["none (α = 0)", "verdict"] in ("fails", "partly", "diverged")
    # steps = 100 is not shipped: the sweep waits for its button, and the card says so
    assert [b for b in at.button if b.key == "training_compute"]
    assert "has not been computed yet" in _myth(at)
    assert len(chart_data(at)) == 5  # curves and heatmap only


def test_largest_d_k_and_most_steps():
    at = open_page(d_k="1024", lr="0.0001")
    assert not at.exception and not warnings(at)
    assert len(chart_data(at)) == N_CHARTS  # d_k = 1024 is shipped
    at = open_page(d_k="16", steps="1000")
    assert not at.exception and not warnings(at)
    assert len(chart_data(at)) == 5
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
    ]
    for name, move in moves:
        move()
        at.run()
        reveal_all(at)
        assert not at.exception, name
        now = _charts(at)
        assert now - base, f"{name} changed no chart"
        base = now
    assert len(at.table[0].value) == 5


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
    ],
)
def test_malformed_params_warn_and_fall_back(params, name):
    at = open_page(reveal=False, **params)
    assert not at.exception
    assert [w for w in warnings(at) if f"`{name}`" in w], warnings(at)
    assert at.number_input(key="d_k").value == 64
    assert at.select_slider(key="lr").value == "0.01"
    assert not at.toggle(key="folded").value and not at.toggle(key="qk_norm").value


def test_sweep_button_runs_to_the_end_with_progress():
    """d_k = 32 is not shipped: three runs (one per seed) are computed on demand."""
    at = open_page(d_k="32")
    assert len(chart_data(at)) == 9  # the LR chart at d_k = 32 waits; the panels are shipped
    info = [i.value for i in at.info if "not shipped" in i.value]
    assert info and "3 of the 15 runs" in info[0]
    at.button(key="training_compute").click().run(timeout=300)  # ~6 s of CPU; a loaded CI is slower
    assert not at.exception
    progress = at.get("progress")
    assert progress, "no progress bar"
    assert "Done: 3 runs" in progress[-1].proto.text
    assert progress[-1].proto.value == 100
    reveal_all(at)
    assert len(chart_data(at)) == N_CHARTS
    assert any("12 precomputed" in c.value and "3 computed now" in c.value for c in at.caption)
    assert "dₖ = 32, Adam" in " ".join(map(str, _titles(at)))
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
    assert any("d_k = 24 became 32" in w for w in warnings(at))  # linked: in the warning
    at.number_input(key="d_k").set_value(33).run()  # the input's +
    assert at.number_input(key="d_k").value == 64
    assert not any("became" in c.value for c in at.caption)  # a step needs no note
    at.number_input(key="d_k").set_value(63).run()  # its −
    assert at.number_input(key="d_k").value == 32
    at.number_input(key="d_k").set_value(182).run()  # typed: log2 182 = 7.51 -> 256
    assert at.number_input(key="d_k").value == 256
    assert any("d_k = 182 became 256" in c.value for c in at.caption)
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
