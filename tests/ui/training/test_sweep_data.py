"""The conclusions the training page draws from its LR sweep (data/training_sweep.json):
the verdicts recomputed from the shipped numbers with the stated thresholds, the rule
that the grids are wide enough, the per-task headline, and a fixed handful of cells
recomputed.

What is reproducible. A sweep run is deterministic given its seed, but runs at large
learning rates amplify the last bit of exp/log/sums and BLAS products, which depends on
the CPU's kernels (measured on the previous sweep, 2026-12-02: trajectories part by
1e-9 relative from step 4 on, and a seed's final loss can move 50×). The losses at step
0 and the runs at the two lowest rates of each grid at d_k = 16 do not separate, so the
six recomputed cells here (d_k = 16, seed 0, each task and optimizer: the page's own
"Compute now" path, the same call as scripts/precompute_training.py, about 15 s of CPU)
must give ℓ₀ and those rates' final losses to the file's 4 significant digits.
Everything else is checked on the shipped numbers themselves.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from core.training import LR_GRIDS, uniform_loss
from ui.story import lr_sweep
from ui.training import data, runs, sections, sweep

SEEDS = data.PRECOMPUTED_SEEDS
STEPS = data.PRECOMPUTED_STEPS
DIGITS_RTOL = 5e-4  # the file's 4 significant digits
STEADY_RATES = 2  # the lowest rates of each grid: runs that do not separate at d_k = 16
#: The shipped file's variants (α = 0, ½, 1; the page computes the other two on demand).
SHIPPED = ("alpha_0", "alpha_half", "alpha_1")


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(data.SWEEP_FILE.read_text(encoding="utf-8"))


def _finals(doc: dict, mi: int, oi: int) -> np.ndarray:
    """Final losses of one (m, optimizer): (d_k, variant, seed, lr), NaN where diverged."""
    obj = np.array(doc["final_loss"][mi][oi], dtype=object)
    return np.where(obj == None, np.nan, obj).astype(float)  # noqa: E711


def _initial(doc: dict, mi: int, oi: int) -> np.ndarray:
    return np.array(doc["initial_loss"][mi][oi], dtype=float)  # (d_k, variant, seed)


def _median(finals: np.ndarray) -> np.ndarray:
    """Median over the seed axis (−2) with a diverged seed counted as +∞."""
    return np.median(np.where(np.isnan(finals), np.inf, finals), axis=-2)


def _task_best(doc: dict, mi: int) -> float:
    """ℓ*, written out: the lowest median-over-seeds final loss of the task (NaN skipped)."""
    best = math.inf
    for oi in range(len(doc["optimizers"])):
        with np.errstate(all="ignore"):
            med = np.nanmedian(_finals(doc, mi, oi), axis=-2)
        best = min(best, float(np.nanmin(med)))
    return best


def test_layout(doc):
    assert doc["dims"] == ["m", "optimizer", "d_k", "variant", "seed", "lr"]
    assert doc["m"] == list(runs.M_OPTIONS) == [1, 2, 4]
    # seeds 0 … k − 1 of the script's 0 … 4 (a file written with --seeds from a --resume run)
    assert doc["seeds"] == list(range(len(doc["seeds"]))) == list(SEEDS)
    assert 1 <= len(SEEDS) <= 5
    assert doc["d_k"] == list(data.SWEEP_D_KS)
    assert [v["name"] for v in doc["variants"]] == list(SHIPPED)
    assert_allclose(doc["uniform_loss"], [0.46875, 0.21875, 0.09375], rtol=0)
    for opt in ("sgd", "adam"):
        assert_allclose(doc["lrs"][opt], LR_GRIDS[opt], rtol=1e-6)


def test_thresholds_table_states_the_scale():
    table = data.thresholds(2).to_pandas()
    best, u = data.task_best(2), uniform_loss(2, 16)
    learn, fail = best + 0.1 * (u - best), best + 0.9 * (u - best)
    assert list(table.index) == ["learns", "partly", "fails", "diverged"]
    column = table.columns[-1]
    assert table.loc["learns", column] == f"≤ {learn:.3g}"
    assert table.loc["fails", column] == f"≥ {fail:.3g}"
    assert "worse than uniform attention" in table.loc["fails", table.columns[0]]


@pytest.mark.parametrize("mi", [0, 1, 2])
def test_verdicts_recomputed_from_the_shipped_data(doc, mi):
    """Every verdict the page shows, from the raw numbers with the stated thresholds:
    gap left g = (ℓ − ℓ*)/(ℓ_u − ℓ*) of the median over the seeds; learns g ≤ 0.1, fails
    g ≥ 0.9 (so every median worse than uniform attention fails), diverged if most seeds
    diverged."""
    m = doc["m"][mi]
    best, u = _task_best(doc, mi), uniform_loss(m, 16)
    assert data.task_best(m) == pytest.approx(best, rel=1e-12)
    assert 0 < best < u
    for oi, opt in enumerate(doc["optimizers"]):
        finals = _finals(doc, mi, oi)
        gap = np.median(np.where(np.isnan(finals), np.inf, (finals - best) / (u - best)), axis=-2)
        expected = np.where(
            ~np.isfinite(gap),
            "diverged",
            np.where(gap <= 0.1, "learns", np.where(gap >= 0.9, "fails", "partly")),
        )
        worse = _median(finals) > u
        assert (expected[worse] == "fails").all() | (expected[worse] == "diverged").all()
        for di, d_k in enumerate(doc["d_k"]):
            cells = [data.precomputed()[(m, opt, d_k, s, STEPS)] for s in SEEDS]
            per = data.conclusions(cells, m)
            for vi, name in enumerate(SHIPPED):
                assert per[name]["verdicts"] == list(expected[di, vi]), (m, opt, d_k, name)
                assert per[name]["beats_uniform"] == bool((_median(finals)[di, vi] < u).any())


@pytest.mark.parametrize("mi", [0, 1, 2])
def test_grids_are_wide_enough(doc, mi):
    """One grid per optimizer for every variant, wide enough on both sides: a variant that
    beats uniform attention somewhere has its best rate (lowest median final loss)
    strictly inside the grid, with a worse rate on each side; one that never does barely
    moves from ℓ₀ at the lowest rate (median final ≥ 0.9 ℓ₀) and fails or diverges at
    the highest."""
    m = doc["m"][mi]
    best, u = _task_best(doc, mi), uniform_loss(m, 16)
    for oi, opt in enumerate(doc["optimizers"]):
        med = _median(_finals(doc, mi, oi))  # (d_k, variant, lr)
        ell0 = np.median(_initial(doc, mi, oi), axis=-1)  # (d_k, variant)
        for di, d_k in enumerate(doc["d_k"]):
            for vi, name in enumerate(SHIPPED):
                row, where = med[di, vi], (m, opt, d_k, name)
                if (row < u).any():
                    k = int(np.argmin(row))
                    assert 0 < k < row.size - 1, where
                    assert row[k - 1] > row[k] and row[k + 1] > row[k], where
                else:
                    assert row[0] >= data.BARELY_MOVES * ell0[di, vi], where
                    top = row[-1]
                    assert not math.isfinite(top) or (top - best) / (u - best) >= 0.9, where


@pytest.mark.parametrize("m", [1, 2, 4])
def test_headline_follows_the_data(doc, m):
    """The headline's case, recomputed: "fails" wherever α = 0 beats uniform attention at
    no rate (naming those settings), else "learns" if it learns somewhere at every
    setting, else "partly"; and the ratio of α = 0's best final loss to the task's best
    it quotes."""
    mi = doc["m"].index(m)
    best, u = _task_best(doc, mi), uniform_loss(m, 16)
    failing, learning, ratios = [], [], []
    for oi, opt in enumerate(doc["optimizers"]):
        med = _median(_finals(doc, mi, oi))
        for di, d_k in enumerate(doc["d_k"]):
            zero = med[di, 0]
            if not (zero < u).any():
                failing.append((opt, d_k))
            learning.append(((zero - best) / (u - best) <= 0.1).any())
            if d_k >= 64:
                ratios.append(zero.min() / best)
    text = sections.headline(m)
    assert f"m = {m}" in text
    if failing:
        assert "fails" in text and "uniform attention" in text
        for _opt, d_k in failing:
            assert str(d_k) in text
    elif all(learning):
        assert "learns at every d_k" in text
        assert f"{min(ratios):.1f}–{max(ratios):.1f}×" in text
    else:
        assert "learns only at" in text


def test_the_home_page_says_what_the_data_say(doc):
    """The home page's training sentence: without the scale the model fails the tasks
    whose answer is an average (m = 2, 4) from d_k = 64 on (up to 1024: no rate beats
    uniform attention, with either optimizer), while on m = 1 it learns at some rate at
    every setting, and from d_k = 64 on at fewer rates than with 1/√d_k (and to a best
    final loss at least twice as high)."""
    from ui.common.i18n import t

    text = t("home.step_training_text")
    assert "fails to average 2 or 4 keys from d_k = 64 on" in text
    assert doc["d_k"][1:] == [64, 256, 1024]
    for m in (2, 4):
        mi = doc["m"].index(m)
        u = uniform_loss(m, 16)
        for oi in range(2):
            unscaled = _median(_finals(doc, mi, oi))[1:, 0]  # d_k 64 … 1024, every rate
            assert not (unscaled < u).any(), (m, oi)
    best, u = _task_best(doc, 0), uniform_loss(1, 16)
    assert "learns a single key at fewer rates" in text
    for oi in range(2):
        med = _median(_finals(doc, 0, oi))  # (d_k, variant, lr)
        zero, half = med[:, 0], med[:, 1]
        learns = (zero - best) / (u - best) <= 0.1
        assert learns.any(axis=-1).all()  # at every d_k, some rate
        wide = slice(1, None)  # d_k 64 … 1024
        learns_half = (half - best) / (u - best) <= 0.1
        assert (learns[wide].sum(axis=-1) < learns_half[wide].sum(axis=-1)).all()
        ratio = zero.min(axis=-1)[wide] / half.min(axis=-1)[wide]
        assert (ratio >= 2).all(), ratio


# --- a fixed handful of cells, recomputed ------------------------------------------------------
@pytest.fixture(scope="module")
def recomputed() -> dict[tuple, pd.DataFrame]:
    """d_k = 16, seed 0, each (m, optimizer): six cells computed now (~15 s of CPU)."""
    return {
        (m, opt): data.sweep_cell.__wrapped__(m, opt, 16, 0, STEPS, SHIPPED)
        for m in (1, 2, 4)
        for opt in ("sgd", "adam")
    }


@pytest.mark.parametrize("m", [1, 2, 4])
@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_what_does_not_separate_regenerates(recomputed, opt, m):
    new = recomputed[(m, opt)]
    old = data.precomputed()[(m, opt, 16, 0, STEPS)].reset_index(drop=True)
    assert list(new["variant"]) == list(old["variant"])
    assert_allclose(new["lr"], old["lr"], rtol=1e-6)
    assert_allclose(new["initial_loss"], old["initial_loss"], rtol=DIGITS_RTOL)
    steady = new["lr"] <= LR_GRIDS[opt][STEADY_RATES - 1]
    assert steady.sum() == STEADY_RATES * len(SHIPPED)
    assert_allclose(new["final_loss"][steady], old["final_loss"][steady], rtol=DIGITS_RTOL)
    assert (old["diverged_at"][steady] == -1).all()


# --- the derivation, by hand ---------------------------------------------------------------
@pytest.fixture
def unit_scale(monkeypatch):
    """A task whose uniform-attention loss is 1 and best loss 0: gap left = final loss (in
    the page's conclusions and in the sweep's gap left, which the page re-exports)."""
    for module in (data, lr_sweep):
        monkeypatch.setattr(module, "task_best", lambda m: 0.0)
        monkeypatch.setattr(module, "uniform", lambda m: 1.0)


def _cell(finals: list[float], initial: float = 1.5, name: str = "alpha_0") -> pd.DataFrame:
    lrs = [0.1, 1.0, 10.0][: len(finals)]
    return pd.DataFrame(
        {
            "variant": name,
            "lr": lrs,
            "final_loss": finals,
            "final_accuracy": 0.5,
            "diverged_at": [-1 if math.isfinite(f) else 3 for f in finals],
            "initial_loss": initial,
        }
    )


def test_conclusions_by_hand(unit_scale):
    # three seeds, three rates; ℓ_u = 1 and ℓ* = 0, so final loss = gap left. ℓ₀ = 1.5
    # (an inflated start) plays no part in the verdicts.
    cells = [
        _cell([0.05, 0.02, 0.95]),
        _cell([0.08, 0.03, np.nan]),
        _cell([0.12, 0.04, 0.85]),
    ]
    e = data.conclusions(cells, 1)["alpha_0"]
    assert e["verdicts"] == ["learns", "learns", "fails"]
    assert_allclose(e["ratio"], [0.08, 0.03, 0.95])
    assert_allclose(e["ratio_lo"], [0.05, 0.02, 0.85])
    assert e["ratio_hi"][2] == math.inf  # the diverged seed
    # 0.1 lies in 0.05–0.12 and 0.9 in 0.85–∞: borderline; 0.02–0.04 is clear
    assert e["borderline"] == [True, False, True]
    assert e["best_lr"] == 1.0 and e["best"] == pytest.approx(0.03)
    assert (e["best_lo"], e["best_hi"]) == (0.02, 0.04)
    assert e["rivals"] == []  # the median at 0.1 (0.08) lies above 0.04
    assert e["initial"] == 1.5 and e["beats_uniform"]
    # per seed: mean of min(ℓ, ℓ_u) − ℓ* over the rates (a diverged run counts as ℓ_u)
    per_seed = [
        (0.03 + 0 + 0.93) / 3,
        (0.05 + 0 + 0.97) / 3,
        (0.08 + 0 + 0.81) / 3,
    ]
    assert e["sensitivity"] == pytest.approx(np.median(per_seed), rel=1e-12)
    assert e["sensitivity_lo"] == pytest.approx(min(per_seed), rel=1e-12)
    assert e["sensitivity_hi"] == pytest.approx(max(per_seed), rel=1e-12)
    close = data.conclusions([_cell([0.05, 0.04]), _cell([0.05, 0.045]), _cell([0.2, 0.05])], 1)
    assert close["alpha_0"]["best_lr"] == 1.0 and close["alpha_0"]["rivals"] == [0.1]


def test_worse_than_uniform_fails_whatever_the_start(unit_scale):
    # ℓ₀ = 3: a final loss of 1.2 is 40 % of the start, but worse than uniform attention
    e = data.conclusions([_cell([1.2, 0.5], initial=3.0)] * 3, 1)["alpha_0"]
    assert e["verdicts"] == ["fails", "partly"] and e["beats_uniform"]
    assert data.verdict(1.2, 1) == "fails" and data.verdict(0.05, 1) == "learns"
    assert not data.conclusions([_cell([1.2, 1.1], initial=3.0)] * 3, 1)["alpha_0"]["beats_uniform"]


def test_every_seed_diverged_is_diverged(unit_scale):
    e = data.conclusions([_cell([0.05, np.nan])] * 3, 1)["alpha_0"]
    assert e["verdicts"] == ["learns", "diverged"]
    assert e["borderline"] == [False, False]
    assert e["best_lr"] == 0.1


def test_the_table_and_caption_show_the_spread_of_borderline_results(unit_scale):
    cells = [_cell([0.05, 0.02, 0.95]), _cell([0.08, 0.03, 0.5]), _cell([0.12, 0.04, 0.85])]
    per = data.conclusions(cells, 1)
    table = sweep.sensitivity_table(per).to_pandas()
    row = table.loc["none (α = 0)"]
    assert row["learns at"] == "0.1?, 1"
    assert row["fails at"] == "none"  # 10: median 0.85, partly
    e = per["alpha_0"]
    assert row["LR sensitivity"] == (
        f"{e['sensitivity']:.3f} ({e['sensitivity_lo']:.3f}–{e['sensitivity_hi']:.3f})"
    )
    assert row["best final loss @ rate"] == "0.03 @ 1"
    caption = sweep.borderline_caption(per)
    assert caption.startswith(
        f"? Borderline: a threshold lies inside the spread over the {data.SWEEP_SEEDS} seeds"
    )
    assert "none (α = 0) at rate 0.1: gap left from 5 % to 12 % over the seeds, median 8 %" in (
        caption
    )
    assert "at rate 10: gap left from 50 % to 95 %" in caption
    assert sweep.borderline_caption(data.conclusions([_cell([0.05, 0.5])] * 3, 1)) is None
    rival = data.conclusions([_cell([0.05, 0.04]), _cell([0.05, 0.045]), _cell([0.2, 0.05])], 1)
    assert (
        sweep.sensitivity_table(rival).to_pandas().iloc[0]["best final loss @ rate"] == "0.045 @ 1?"
    )
    assert "best rate 1, its final loss from 0.04 to 0.05 over the seeds" in (
        sweep.borderline_caption(rival)
    )
