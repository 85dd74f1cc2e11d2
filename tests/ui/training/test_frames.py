"""Training page: the charts' frames (from plain values) and the cached numbers the page
writes, against the frames and files they summarise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.training import LR_GRIDS
from ui.training import data, frames

#: A shipped single run (read, not trained) and the shipped sweep at sidebar seed 0.
RUN = (64, "adam", 0.01, 300, data.BASE_VARIANTS, 0, 2)
LABELS = (("alpha_0", "none"), ("alpha_half", "sqrt"), ("alpha_1", "linear"))


def test_run_stats_are_the_single_run_summary_and_its_probe_rows():
    run, stats = data.single_run(*RUN), data.run_stats(*RUN)
    assert list(stats["summary"]) == list(data.BASE_VARIANTS)
    probe = run["probe"]
    assert stats["last"] == 299 == probe["snapshot"].max()
    for row in run["summary"].itertuples():
        got = stats["summary"][row.variant]
        assert got["final_loss"] == row.final_loss and got["dead_0"] == row.dead_0
        assert got["diverged_at"] == row.diverged_at == -1
        mine = probe[probe["variant"] == row.variant]
        start = mine[mine["snapshot"] == 0]["weight"].to_numpy(np.float64)
        assert got["top_0"] == start.max()
        end = mine[(mine["snapshot"] == 299) & (mine["target"] == 1)]
        assert len(end) == 2 * data.N_PROBE  # m = 2 targets per probe row
        assert got["on_target"] == pytest.approx(end["weight"].mean(), rel=1e-6)
    # plain values only: a cache hit copies no frame
    assert all(type(v) in (int, float) for r in stats["summary"].values() for v in r.values())


def test_curve_and_probe_frames_label_the_variants_with_the_given_words():
    curve = frames.curve("loss", *RUN, LABELS)
    assert len(curve) == 3 * len(data.thinned_steps(300))  # 101 steps per variant
    assert list(pd.unique(curve["series"])) == ["none", "sqrt", "linear"]
    assert list(pd.unique(curve["color"])) == ["#D55E00", "#0072B2", "#009E73"]
    raw = data.single_run(*RUN)["curves"]["loss"]
    np.testing.assert_array_equal(curve["raw"], raw["raw"])
    shorts = (("alpha_0", "a"), ("alpha_half", "b"), ("alpha_1", "c"))
    for name, short in shorts:
        probe = frames.probe(*RUN, shorts, name)
        assert list(pd.unique(probe["series"])) == [short]
        assert list(pd.unique(probe["variant"])) == [name]
        assert len(probe) == 4 * data.N_PROBE * data.N_KEYS


def _cells(m, optimizer, d_k):
    return [data.precomputed()[(m, optimizer, d_k, s, 300)] for s in data.PRECOMPUTED_SEEDS]


def test_lr_frames_and_stats_summarise_the_shipped_seeds():
    args = (2, "sgd", 256, 0, 300, data.BASE_VARIANTS)
    summary, initial = frames.lr_sweep(*args, LABELS)
    cells = _cells(2, "sgd", 256)
    expected = data.sweep_summary(cells, 2)
    pd.testing.assert_frame_equal(summary.drop(columns=["series"]), expected)
    assert list(initial.columns) == ["series", "y"]  # drawn as they are: no colours
    assert len(summary) == 3 * len(LR_GRIDS["sgd"])
    # ℓ₀ of each variant: the median over the seeds of its start
    for name, label in LABELS:
        starts = [float(c[c["variant"] == name]["initial_loss"].iloc[0]) for c in cells]
        assert initial[initial["series"] == label]["y"].item() == np.median(starts)
    stats = data.sweep_stats(*args)
    assert stats["per"].keys() == data.conclusions(cells, 2).keys()
    assert stats["per"]["alpha_0"]["verdicts"] == data.conclusions(cells, 2)["alpha_0"]["verdicts"]
    assert stats["diverged"] == sum(int((c["diverged_at"] >= 0).sum()) for c in cells)


def test_multiples_share_one_range_and_name_each_best_rate():
    d_ks = data.SWEEP_D_KS
    found = data.multiples_stats(1, "adam", 0, 300, data.BASE_VARIANTS, d_ks)
    lows, highs = [], []
    for d_k in d_ks:
        finals = np.stack([c["final_loss"].to_numpy(float) for c in _cells(1, "adam", d_k)])
        lows.append(np.nanmin(finals))
        highs.append(np.nanmax(finals))
        median = pd.DataFrame(finals).median(axis=0).to_numpy()  # seeds × (variant, lr)
        lrs, n = _cells(1, "adam", d_k)[0]["lr"].to_numpy(), len(LR_GRIDS["adam"])
        best = [lrs[i * n + int(np.nanargmin(median[i * n : (i + 1) * n]))] for i in range(3)]
        assert found["best"][d_k] == tuple(zip(data.BASE_VARIANTS, best, strict=True))
    lo, hi = found["domain"]
    # whole decades around the bands with room: 0.8 × the lowest, 1.25 × the highest
    assert lo == 10.0 ** np.floor(np.log10(min(lows) * 0.8))
    assert hi == 10.0 ** np.ceil(np.log10(max(highs) * 1.25))
    assert lo < min(lows) and hi > max(highs)  # every panel's band inside the shared range


def test_the_sweep_chart_has_one_loss_axis_at_every_shipped_d_k():
    """The training lab's chart keeps its y-range as d_k moves among the shipped ones (one
    spec: the browser moves the lines), and the range holds every band it draws."""
    args = (2, "sgd")
    shipped = data.shipped_d_ks(*args, 0, 300, data.BASE_VARIANTS)
    assert shipped == data.SWEEP_D_KS
    domains = {data.sweep_domain(*args, d_k, 0, 300, data.BASE_VARIANTS) for d_k in shipped}
    assert len(domains) == 1
    ((lo, hi),) = domains
    assert (lo, hi) == data.loss_domain(*args, 0, 300, data.BASE_VARIANTS, shipped)
    for d_k in shipped:
        sweep = data.sweep_at(*args, d_k, 0, 300, data.BASE_VARIANTS)
        assert lo < sweep["lo"].min() and sweep["hi"].max() < hi
    # seed 1 or the folded initialisation: nothing shipped, the range is the d_k's own
    assert data.shipped_d_ks(*args, 1, 300, data.BASE_VARIANTS) == ()
    assert data.shipped_d_ks(*args, 0, 300, (*data.BASE_VARIANTS, "folded")) == ()


@pytest.mark.parametrize("m", [1, 2, 4])
def test_task_headline_counts_the_findings(m):
    found, head = data.task_findings(m), data.task_headline(m)
    unscaled = found[found["variant"] == "alpha_0"]
    assert head["n0"] == unscaled["n_learns"].sum() and head["total"] == unscaled["n_rates"].sum()
    assert head["every_d_k"] == len(unscaled) == 2 * len(data.SWEEP_D_KS)
    failing = unscaled[~unscaled["beats_uniform"]]
    assert sum(len(d_ks) for _, d_ks in head["failing"]) == len(failing)
    assert (head["half_best"] is None) == failing.empty
    wide = unscaled[unscaled["d_k"] >= 64]["vs_task_best"]
    assert head["r0"] == (wide.min(), wide.max())
    assert data.task_headline(3) is None  # not a shipped task
