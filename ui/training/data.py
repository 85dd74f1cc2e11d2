"""Data of the training page: the cached single run, the LR sweep (shipped and computed).

A single run trains α = 0, ½, 1 (and, when switched on, the folded initialisation and
QK-norm) on one data stream at one learning rate (:func:`single_run`); it is cached per
(d_k, optimizer, lr, steps, variants, seed, m) and returns small frames only: curves
thinned to at most ``CURVE_POINTS`` points per variant, the probe rows' attention
weights and one summary row per variant.

The LR sweep is cut into cells, one :func:`core.training.train_recall_variants` call
per (m, optimizer, d_k, seed, steps, variants) over the optimizer's grid
(:func:`sweep_cell`, cached). Cells of the shipped configuration are read from
``data/training_sweep.json`` (``scripts/precompute_training.py``: α = 0, ½, 1); the
page computes the others on demand and keeps them in the session. The sweep's five
seeds are the sidebar seed to seed + 4: the file holds seeds 0 … 4, i.e. sidebar seed 0.

Verdicts (:func:`verdict`) put every variant of a task on one scale, from the loss of
uniform attention ℓ_u = ½(1/m − 1/16) (a model that does nothing) down to ℓ*, the best
final loss any variant reaches on that task in the shipped sweep (:func:`task_best`):
the *gap left* of a final loss ℓ is (ℓ − ℓ*)/(ℓ_u − ℓ*), 0 at the task's best, 1 at
uniform attention. ℓ₀, a variant's own start, does not enter the verdict (without the
scale it is inflated: attention starts peaked on the wrong keys).
The run's own randomness comes from :func:`core.training.training_streams` (seeded by
the integer seed), not from :func:`ui.common.data.rng_for`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from core.training import DEFAULT_LRS, LR_GRIDS, final_loss, train_recall_variants, uniform_loss
from ui.common.charts import COLORS, alpha_color
from ui.common.controls import alpha_label
from ui.common.i18n import t
from ui.common.pages import lr_text, page
from ui.training.one_run import (  # noqa: F401  (re-exported: the page's data in one place)
    CURVE_POINTS,
    LAST,
    METRICS,
    SMOOTH,
    shipped_runs,
    single_run,
    smooth,
    thinned_steps,
)
from ui.training.runs import BASE_VARIANTS, N_PROBE, SNAPSHOTS, VARIANTS  # noqa: F401

SWEEP_FILE = Path(__file__).resolve().parents[2] / "data" / "training_sweep.json"

#: Task settings (the issue's defaults; the page does not change them but m).
N_KEYS = 16
#: Steps the page offers, and the d_k of the small multiples.
STEPS_OPTIONS = page("training").param("steps").options
SWEEP_D_KS = (16, 64, 256, 1024)
#: The verdicts' thresholds, on the gap left g = (ℓ − ℓ*)/(ℓ_u − ℓ*) (module docstring):
#: "learns" if g ≤ LEARN_RATIO (within a tenth of the way from the task's best to
#: uniform attention), "fails" if g ≥ FAIL_RATIO — which includes every run that ends
#: worse than uniform attention (g > 1), whatever its start —, "partly" in between;
#: "diverged" if the loss is not finite. One table on the page (:func:`thresholds`).
LEARN_RATIO, FAIL_RATIO = 0.1, 0.9
#: A run "barely moves" if its final loss is at least BARELY_MOVES · ℓ₀: the low end of
#: a grid that is wide enough (tests/ui/training/test_sweep_data.py).
BARELY_MOVES = 0.9


#: Learning rates of the control (the page's table): quarter decades from 1e-6 to 1e4,
#: covering both optimisers' sweep grids (core.training.LR_GRIDS) and defaults.
LR_OPTIONS = page("training").param("lr").options
DEFAULT_LR_TEXT = {opt: lr_text(lr) for opt, lr in DEFAULT_LRS.items()}


def variant_names(folded: bool, qk_norm: bool) -> tuple[str, ...]:
    """The variants the page trains with these toggles, in legend order."""
    return BASE_VARIANTS + (("folded",) if folded else ()) + (("qk_norm",) if qk_norm else ())


def variant_label(name: str) -> str:
    """Legend text of a variant (the α names of the other pages for the three scalings)."""
    if name in ("folded", "qk_norm"):
        return t(f"training.variant_{name}")
    return alpha_label(VARIANTS[name].alpha)


def variant_short(name: str) -> str:
    """A short label (the probe heatmap's panel headers must fit a 390-px screen)."""
    if name in ("folded", "qk_norm"):
        return t(f"training.variant_{name}_short")
    return {"alpha_0": "α = 0", "alpha_half": "α = ½", "alpha_1": "α = 1"}[name]


def variant_color(name: str) -> str:
    return {"folded": COLORS["sky"], "qk_norm": COLORS["custom"]}.get(
        name, alpha_color(VARIANTS[name].alpha)
    )


def uniform(m: int) -> float:
    """ℓ_u: the loss of uniform attention on the task with m targets (16 keys)."""
    return uniform_loss(m, N_KEYS)


def gap_left(final, m: int):
    """(ℓ − ℓ*)/(ℓ_u − ℓ*): 0 at the task's best (:func:`task_best`), 1 at uniform
    attention, above 1 worse than it; NaN (diverged) becomes ∞. Float or array."""
    best = task_best(m)
    out = (np.asarray(final, dtype=float) - best) / (uniform(m) - best)
    out = np.where(np.isnan(out), np.inf, out)
    return float(out) if out.ndim == 0 else out


def verdict(final: float, m: int) -> str:
    """ "learns", "partly", "fails" (see ``LEARN_RATIO``) or "diverged" (non-finite), on
    the task's scale from uniform attention to its best loss (:func:`gap_left`)."""
    if not math.isfinite(final):
        return "diverged"
    return gap_verdict(gap_left(final, m))


def gap_verdict(gap: float) -> str:
    """:func:`verdict` of a gap left (∞ or NaN: "diverged")."""
    if not math.isfinite(gap):
        return "diverged"
    return "learns" if gap <= LEARN_RATIO else "fails" if gap >= FAIL_RATIO else "partly"


@st.cache_data(show_spinner=False)
def task_best(m: int) -> float:
    """ℓ*: the lowest median-over-seeds final loss of any variant, optimizer, d_k and rate
    in the shipped sweep for this m (0 for an m the file does not hold)."""
    per_setting: dict[tuple, list[np.ndarray]] = {}
    for (mm, opt, d_k, _seed, _steps), cell in precomputed().items():
        if mm == m:  # the seeds of one (optimizer, d_k) have the same rows in the same order
            per_setting.setdefault((opt, d_k), []).append(cell["final_loss"].to_numpy(float))
    if not per_setting:
        return 0.0
    with np.errstate(all="ignore"):
        medians = [np.nanmedian(np.stack(v), axis=0) for v in per_setting.values()]
    return float(min(np.nanmin(x) for x in medians))


def thresholds(m: int) -> pd.DataFrame:
    """The verdicts' table for the task with m targets: verdict, rule, final-loss range."""
    best, u = task_best(m), uniform(m)
    learn = best + LEARN_RATIO * (u - best)
    fail = best + FAIL_RATIO * (u - best)
    rows = [
        ("learns", t("training.rule_learns", g=pct(LEARN_RATIO)), f"≤ {learn:.3g}"),
        ("partly", t("training.rule_partly"), f"{learn:.3g} – {fail:.3g}"),
        ("fails", t("training.rule_fails", g=pct(FAIL_RATIO)), f"≥ {fail:.3g}"),
        ("diverged", t("training.rule_diverged"), "—"),
    ]
    table = pd.DataFrame(
        {
            t("training.col_verdict"): [t(f"training.verdict_{v}") for v, _, _ in rows],
            t("training.col_rule"): [r for _, r, _ in rows],
            t("training.col_range", m=m): [x for _, _, x in rows],
        }
    )
    return table.set_index(table.columns[0])


def pct(x: float) -> str:
    return f"{100 * x:.1f} %" if 0 < x < 0.01 else f"{100 * x:.0f} %"


def labelled(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with ``series`` (legend label) and ``color`` columns from ``variant``."""
    names = df["variant"].to_numpy()
    labels = {v: variant_label(v) for v in pd.unique(names)}
    colors = {v: variant_color(v) for v in labels}
    return df.assign(series=[labels[v] for v in names], color=[colors[v] for v in names])


@st.cache_data(max_entries=32, show_spinner=False)
def shipped_multiples(
    m: int, optimizer: str, seed: int, steps: int, variants: tuple[str, ...]
) -> dict[int, pd.DataFrame]:
    """Per d_k of ``SWEEP_D_KS`` the :func:`sweep_summary` of its seeds, when every cell
    is shipped (else {}): the small multiples."""
    out = {}
    for d_k in SWEEP_D_KS:
        frames = [shipped_cell((m, optimizer, d_k, s, steps), variants) for s in sweep_seeds(seed)]
        if any(f is None for f in frames):
            return {}
        out[d_k] = sweep_summary(frames, m)
    return out


# --- the LR sweep --------------------------------------------------------------------------
#: Columns of a sweep cell: one row per (variant, lr).
CELL_COLUMNS = ("variant", "lr", "final_loss", "final_accuracy", "diverged_at", "initial_loss")


@st.cache_resource(show_spinner=False)
def sweep_doc() -> dict:
    """The shipped sweep file, parsed once per process."""
    return json.loads(SWEEP_FILE.read_text(encoding="utf-8"))


#: The shipped file's configuration: 300 steps, sidebar seed 0 (the file's seeds, 0 … 4);
#: the sweep takes as many seeds per point as the file holds.
PRECOMPUTED_STEPS = 300
PRECOMPUTED_SEEDS = tuple(json.loads(SWEEP_FILE.read_text(encoding="utf-8"))["seeds"])
SWEEP_SEEDS = len(PRECOMPUTED_SEEDS)


@st.cache_resource(show_spinner=False)
def precomputed() -> dict[tuple, pd.DataFrame]:
    """The shipped sweep as cells: {(m, optimizer, d_k, seed, steps): frame (CELL_COLUMNS)}.

    Read once per process and shared (``cache_resource``: no copy per rerun); callers
    never modify the frames.
    """
    doc = sweep_doc()
    steps = int(doc["params"]["steps"])
    names = [v["name"] for v in doc["variants"]]
    diverged = {tuple(d[:-1]): d[-1] for d in doc["diverged"]}
    out = {}
    for mi, m in enumerate(doc["m"]):
        for oi, opt in enumerate(doc["optimizers"]):
            lrs = np.asarray(doc["lrs"][opt], dtype=float)
            n = lrs.size
            for di, d_k in enumerate(doc["d_k"]):
                for si, seed in enumerate(doc["seeds"]):
                    final = np.array(
                        [doc["final_loss"][mi][oi][di][vi][si] for vi in range(len(names))],
                        dtype=float,
                    )  # null (diverged) -> NaN
                    accuracy = np.array(
                        [doc["final_accuracy"][mi][oi][di][vi][si] for vi in range(len(names))],
                        dtype=float,
                    )
                    steps_at = np.array(
                        [
                            [diverged.get((mi, oi, di, vi, si, li), -1) for li in range(n)]
                            for vi in range(len(names))
                        ]
                    )
                    initial = [doc["initial_loss"][mi][oi][di][vi][si] for vi in range(len(names))]
                    out[(int(m), opt, int(d_k), int(seed), steps)] = pd.DataFrame(
                        {
                            "variant": np.repeat(names, n),
                            "lr": np.tile(lrs, len(names)),
                            "final_loss": final.ravel(),
                            "final_accuracy": accuracy.ravel(),
                            "diverged_at": steps_at.ravel(),
                            "initial_loss": np.repeat(np.asarray(initial, dtype=float), n),
                        }
                    )
    return out


@st.cache_data(max_entries=128, show_spinner=False)
def sweep_cell(
    m: int, optimizer: str, d_k: int, seed: int, steps: int, variants: tuple[str, ...]
) -> pd.DataFrame:
    """One cell of the LR sweep, computed: ``variants`` × the optimizer's grid.

    Same call as ``scripts/precompute_training.py`` (so a cell of the shipped
    configuration computed here equals the file's). Frame: ``CELL_COLUMNS``.
    """
    lrs = np.asarray(LR_GRIDS[optimizer])
    histories = train_recall_variants(
        d_k,
        [VARIANTS[v] for v in variants],
        lrs,
        optimizer=optimizer,
        steps=steps,
        seed=seed,
        snapshot_steps=(),
        n_probe=1,
        m=m,
    )
    last = min(LAST, steps)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "variant": name,
                    "lr": lrs,
                    "final_loss": final_loss(h, last),
                    "final_accuracy": h.accuracy[-last:].mean(axis=0),
                    "diverged_at": h.diverged_at,
                    "initial_loss": h.initial_loss,
                }
            )
            for name, h in zip(variants, histories, strict=True)
        ],
        ignore_index=True,
    )


def sweep_seeds(seed: int) -> tuple[int, ...]:
    """The sweep's seeds for a sidebar seed: seed … seed + SWEEP_SEEDS − 1."""
    return tuple(seed + i for i in range(SWEEP_SEEDS))


def needed_cells(m: int, optimizer: str, d_k: int, seed: int, steps: int) -> list[tuple]:
    """Cells the sweep section needs: the learner's d_k first, then the small multiples."""
    d_ks = [d_k] + [d for d in SWEEP_D_KS if d != d_k]
    return [(m, optimizer, d, s, steps) for d in d_ks for s in sweep_seeds(seed)]


#: Relative CPU cost of one sweep cell by d_k (measured on the shipped sweep's grids: 2 s
#: at 16, 14 s at 1024 for 3 variants, 300 steps, SGD); the estimate of time left scales
#: it by what has been measured.
def cell_cost(d_k: int, steps: int, n_variants: int) -> float:
    """Rough CPU seconds of one sweep cell (for the estimate before anything ran)."""
    return (1.8 + 0.012 * d_k) * steps / 300 * n_variants / 3


#: Session-state entry: {(m, optimizer, d_k, seed, steps, variants): frame} computed here.
COMPUTED = "_training_cells"


def available(cell: tuple, variants: tuple[str, ...]) -> tuple[pd.DataFrame, str] | None:
    """(frame restricted to ``variants``, "precomputed" | "computed") or None."""
    frame = shipped_cell(cell, variants)
    if frame is not None:
        return frame, "precomputed"
    stored = st.session_state.get(COMPUTED, {}).get((*cell, variants))
    if stored is None:
        return None
    return stored[stored["variant"].isin(variants)], "computed"


def shipped_cell(cell: tuple, variants: tuple[str, ...]) -> pd.DataFrame | None:
    """The shipped cell ``cell`` restricted to ``variants`` (None if not shipped, or if
    the file does not hold every one of ``variants``: the folded initialisation and
    QK-norm are computed on demand)."""
    frame = precomputed().get(cell)
    if frame is None or not set(variants) <= set(frame["variant"]):
        return None
    return frame[frame["variant"].isin(variants)]


@st.cache_data(max_entries=64, show_spinner=False)
def shipped_sweep(
    m: int, optimizer: str, d_k: int, seed: int, steps: int, variants: tuple[str, ...]
) -> tuple[pd.DataFrame, dict] | None:
    """:func:`sweep_summary` and :func:`conclusions` of the shipped cells at one d_k (its
    seeds' cells), or None unless every one of them is shipped."""
    cells = [shipped_cell((m, optimizer, d_k, s, steps), variants) for s in sweep_seeds(seed)]
    if any(cell is None for cell in cells):
        return None
    return sweep_summary(cells, m), conclusions(cells, m)


def store(cell: tuple, variants: tuple[str, ...], frame: pd.DataFrame) -> None:
    st.session_state.setdefault(COMPUTED, {})[(*cell, variants)] = frame


def sweep_summary(cells: list[pd.DataFrame], m: int) -> pd.DataFrame:
    """Seeds combined: per (variant, lr) the median, min and max final loss, the median
    gap left (:func:`gap_left`; a diverged seed counts as ∞), ℓ₀ (median) and the
    diverged seeds."""
    df = pd.concat([c.assign(seed=i) for i, c in enumerate(cells)], ignore_index=True)
    df["ratio"] = gap_left(df["final_loss"].to_numpy(dtype=float), m)
    g = df.groupby(["variant", "lr"], sort=False)
    out = g.agg(
        value=("final_loss", "median"),
        lo=("final_loss", "min"),
        hi=("final_loss", "max"),
        ratio=("ratio", "median"),
        initial_loss=("initial_loss", "median"),
        accuracy=("final_accuracy", "median"),
        diverged=("diverged_at", lambda s: int((s >= 0).sum())),
    ).reset_index()
    return out


def conclusions(cells: list[pd.DataFrame], m: int) -> dict[str, dict]:
    """What the sweep section concludes from one (m, optimizer, d_k), and how firmly.

    Parameters
    ----------
    cells : list of DataFrame
        One cell (``CELL_COLUMNS``) per seed, each with the same variants and rates.
    m : int
        The task's targets per row: the verdicts' scale (:func:`gap_left`).

    Returns
    -------
    dict
        Per variant, in the cells' order:

        - ``lrs``: the rates of the grid;
        - ``ratio``, ``ratio_lo``, ``ratio_hi``: median, min and max over the seeds of
          the gap left (a diverged seed counts as ∞), per rate;
        - ``verdicts``: per rate, :func:`gap_verdict` of the median gap ("diverged"
          when the median is ∞, i.e. most seeds diverged);
        - ``borderline``: per rate, whether ``LEARN_RATIO`` or ``FAIL_RATIO`` lies inside
          [ratio_lo, ratio_hi]: some seed falls on the other side of the threshold from
          the median, so another seed, or another CPU, can give another verdict;
        - ``best_lr``, ``best``: the rate with the lowest median final loss, and that
          median; ``best_lo``, ``best_hi``: min and max over the seeds of the final loss
          there; ``rivals``: the other rates whose median lies inside [best_lo, best_hi]
          (empty: the best rate is clear); ``vs_task_best``: best / ℓ* of the task;
        - ``beats_uniform``: whether some rate's median final loss is below ℓ_u;
        - ``initial``: ℓ₀, median over the seeds;
        - ``sensitivity``, ``sensitivity_lo``, ``sensitivity_hi``: median, min and max
          over the seeds of :func:`core.training.lr_sensitivity` of the seed's final
          losses against ℓ_u, the same reference for every variant.

    The chaotic runs (a failed run, or the unscaled model at a large rate) amplify
    last-bit rounding, so a seed's final loss can differ by tens of per cent on another
    CPU; the medians and the flags above are what the page shows for that reason.
    """
    from core.training import lr_sensitivity

    u, best_task = uniform(m), task_best(m)
    out = {}
    for name in pd.unique(cells[0]["variant"]):
        rows = [c[c["variant"] == name] for c in cells]
        lrs = rows[0]["lr"].to_numpy()
        final = np.stack([r["final_loss"].to_numpy(dtype=float) for r in rows])  # (seeds, lrs)
        initial = np.array([float(r["initial_loss"].iloc[0]) for r in rows])
        ratio = gap_left(final, m)
        lo, median, hi = ratio.min(axis=0), np.median(ratio, axis=0), ratio.max(axis=0)
        values = pd.DataFrame(final).median(axis=0).to_numpy()  # NaN (diverged) skipped
        best = int(np.nanargmin(values))
        best_lo, best_hi = np.nanmin(final[:, best]), np.nanmax(final[:, best])
        sens = [lr_sensitivity(f, u) for f in final]
        out[name] = {
            "lrs": [float(x) for x in lrs],
            "ratio": median,
            "ratio_lo": lo,
            "ratio_hi": hi,
            "verdicts": [gap_verdict(r) for r in median],
            "borderline": [
                bool(a <= LEARN_RATIO <= b or a <= FAIL_RATIO <= b)
                for a, b in zip(lo, hi, strict=True)
            ],
            "best_lr": float(lrs[best]),
            "best": float(values[best]),
            "best_lo": float(best_lo),
            "best_hi": float(best_hi),
            "rivals": [
                float(lrs[j]) for j in range(len(lrs)) if j != best and values[j] <= best_hi
            ],
            "vs_task_best": float(values[best] / best_task) if best_task > 0 else math.inf,
            "beats_uniform": bool(np.nanmin(values) < u),
            "initial": float(np.median(initial)),
            "sensitivity": float(np.median(sens)),
            "sensitivity_lo": float(min(sens)),
            "sensitivity_hi": float(max(sens)),
        }
    return out


@st.cache_data(show_spinner=False)
def task_findings(m: int) -> pd.DataFrame:
    """The shipped sweep's answer for one task, per (optimizer, d_k) and variant: best
    median final loss, its rate, its ratio to ℓ* and to ℓ_u, how many rates learn and
    whether any beats uniform attention. Empty if the task is not shipped."""
    rows = []
    doc = sweep_doc()
    if m not in doc["m"]:
        return pd.DataFrame()
    for opt in doc["optimizers"]:
        for d_k in doc["d_k"]:
            cells = [precomputed()[(m, opt, d_k, s, PRECOMPUTED_STEPS)] for s in doc["seeds"]]
            for name, e in conclusions(cells, m).items():
                rows.append(
                    {
                        "optimizer": opt,
                        "d_k": int(d_k),
                        "variant": name,
                        "best": e["best"],
                        "best_lr": e["best_lr"],
                        "vs_task_best": e["vs_task_best"],
                        "vs_uniform": e["best"] / uniform(m),
                        "n_learns": e["verdicts"].count("learns"),
                        "n_rates": len(e["verdicts"]),
                        "beats_uniform": e["beats_uniform"],
                    }
                )
    return pd.DataFrame(rows)
