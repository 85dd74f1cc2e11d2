"""Data of the training page: the cached single run, the LR sweep (shipped and computed).

A single run trains α = 0, ½, 1 (and, when switched on, the folded initialisation and
QK-norm) on one data stream at one learning rate (:func:`single_run`); it is cached per
(d_k, optimizer, lr, steps, variants, seed) and returns small frames only: curves thinned
to at most ``CURVE_POINTS`` points per variant, the probe rows' attention weights and one
summary row per variant.

The LR sweep is cut into cells, one :func:`core.training.train_recall_variants` call
per (optimizer, d_k, seed, steps, variants) over the optimizer's 9-point grid
(:func:`sweep_cell`, cached). Cells of the shipped configuration are read from
``data/training_sweep.json`` (``scripts/precompute_training.py``); the page computes
the others on demand and keeps them in the session. The sweep's three seeds are the
sidebar seed, seed + 1 and seed + 2: the file holds seeds 0, 1, 2, i.e. sidebar seed 0.
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

from core.training import DEFAULT_LRS, LR_GRIDS, final_loss, train_recall_variants
from ui.common.charts import COLORS, alpha_color
from ui.common.controls import alpha_label
from ui.common.i18n import t
from ui.common.pages import lr_text, page
from ui.training import runs
from ui.training.runs import BASE_VARIANTS, N_PROBE, SNAPSHOTS, VARIANTS

SWEEP_FILE = Path(__file__).resolve().parents[2] / "data" / "training_sweep.json"

#: Task settings (the issue's defaults; the page does not change them).
N_KEYS, LAST = 16, 30
#: Steps the page offers, and the d_k of the small multiples.
STEPS_OPTIONS = page("training").param("steps").options
SWEEP_D_KS = (16, 64, 256, 1024)
SWEEP_SEEDS = 3
#: Largest number of points per variant on a curve (the rest is thinned out).
CURVE_POINTS = 100
#: Window of the moving average drawn over the per-batch values, steps (centred).
SMOOTH = 10
#: A run "learns" if its final loss is at most LEARN_RATIO · ℓ₀ and "fails" if it is at
#: least FAIL_RATIO · ℓ₀ (little or no progress, or worse); in between it "partly" learns.
LEARN_RATIO, FAIL_RATIO = 0.1, 0.9
METRICS = ("loss", "accuracy", "entropy", "dead_fraction")


#: Learning rates of the control (the page's table): quarter decades from 1e-4 to 1e3,
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


# --- one run -------------------------------------------------------------------------------
def smooth(values: np.ndarray, window: int = SMOOTH) -> np.ndarray:
    """Centred moving average (window ``window``, shorter at the ends); NaN stays NaN."""
    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(v)
    kernel = np.ones(window)
    total = np.convolve(np.where(ok, v, 0.0), kernel, mode="same")
    count = np.convolve(ok.astype(float), kernel, mode="same")
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total / count
    out[~ok] = np.nan
    return out


def thinned_steps(steps: int, points: int = CURVE_POINTS) -> np.ndarray:
    """Every k-th step (k = ⌈steps / points⌉) and the last one."""
    stride = max(1, math.ceil(steps / points))
    return np.unique(np.r_[np.arange(0, steps, stride), steps - 1])


@st.cache_resource(show_spinner=False)
def shipped_runs() -> dict[str, np.ndarray]:
    """The shipped runs (:mod:`ui.training.runs`), read once per server."""
    return runs.load()


@st.cache_data(max_entries=64, show_spinner=False)
def single_run(
    d_k: int, optimizer: str, lr: float, steps: int, variants: tuple[str, ...], seed: int
) -> dict[str, pd.DataFrame]:
    """Train ``variants`` side by side at one learning rate; small frames of the result.

    Read from the shipped runs instead at their settings (:func:`ui.training.runs.shipped`).

    Returns
    -------
    dict with
        ``curves``: per metric of ``METRICS`` a frame ``step``, ``variant``, ``raw`` (the
        training batch's value), ``smooth`` (moving average, ``SMOOTH`` steps) at the
        thinned steps, float32;
        ``probe``: ``snapshot`` (step), ``variant``, ``row``, ``key``, ``weight``,
        ``target`` (1 on each probe row's target key);
        ``summary``: one row per variant: ``variant``, ``initial_loss``, ``final_loss``
        (mean of the last 30 steps), ``accuracy``, ``entropy`` and ``dead`` (last 30
        steps), ``dead_0``, ``entropy_0`` (step 0), ``diverged_at`` (−1 if never).
    """
    histories = runs.shipped(
        shipped_runs(), d_k, optimizer, lr, steps, variants, seed
    ) or train_recall_variants(
        d_k,
        [VARIANTS[v] for v in variants],
        [lr],
        optimizer=optimizer,
        steps=steps,
        seed=seed,
        snapshot_steps=SNAPSHOTS,
        n_probe=N_PROBE,
    )
    keep = thinned_steps(steps)
    last = min(LAST, steps)
    curves = {}
    for metric in METRICS:
        parts = []
        for name, h in zip(variants, histories, strict=True):
            series = getattr(h, metric)[:, 0]
            part = pd.DataFrame(
                {
                    "step": keep.astype(np.int32),
                    "variant": name,
                    "raw": series[keep].astype(np.float32),
                    "smooth": smooth(series)[keep].astype(np.float32),
                }
            )
            parts.append(part.dropna(subset=["raw"]))
        curves[metric] = pd.concat(parts, ignore_index=True)
    probe = []
    for name, h in zip(variants, histories, strict=True):
        w = h.probe_weights[:, 0]  # (S, n_probe, n_keys)
        _, R, K = w.shape
        snap, row, key = np.meshgrid(h.snapshot_steps, np.arange(R), np.arange(K), indexing="ij")
        probe.append(
            pd.DataFrame(
                {
                    "snapshot": snap.ravel().astype(np.int32),
                    "variant": name,
                    "row": row.ravel().astype(np.int8),
                    "key": key.ravel().astype(np.int8),
                    "weight": w.ravel().astype(np.float32),
                    "target": (key == h.probe_target[None, :, None]).ravel().astype(np.int8),
                }
            )
        )
    summary = pd.DataFrame(
        {
            "variant": list(variants),
            "initial_loss": [h.initial_loss for h in histories],
            "final_loss": [float(final_loss(h, last)[0]) for h in histories],
            "accuracy": [float(h.accuracy[-last:, 0].mean()) for h in histories],
            "entropy": [float(h.entropy[-last:, 0].mean()) for h in histories],
            "dead": [float(h.dead_fraction[-last:, 0].mean()) for h in histories],
            "dead_0": [float(h.dead_fraction[0, 0]) for h in histories],
            "entropy_0": [float(h.entropy[0, 0]) for h in histories],
            "diverged_at": [int(h.diverged_at[0]) for h in histories],
        }
    )
    return {"curves": curves, "probe": pd.concat(probe, ignore_index=True), "summary": summary}


def verdict(final: float, initial: float) -> str:
    """ "learns", "partly", "fails" (see ``LEARN_RATIO``) or "diverged" (non-finite)."""
    if not math.isfinite(final):
        return "diverged"
    ratio = final / initial
    return "learns" if ratio <= LEARN_RATIO else "fails" if ratio >= FAIL_RATIO else "partly"


def labelled(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with ``series`` (legend label) and ``color`` columns from ``variant``."""
    names = df["variant"].to_numpy()
    labels = {v: variant_label(v) for v in pd.unique(names)}
    colors = {v: variant_color(v) for v in labels}
    return df.assign(series=[labels[v] for v in names], color=[colors[v] for v in names])


@st.cache_data(max_entries=32, show_spinner=False)
def shipped_multiples(
    optimizer: str, seed: int, steps: int, variants: tuple[str, ...]
) -> dict[int, pd.DataFrame]:
    """Per d_k of ``SWEEP_D_KS`` the :func:`summarise` of its seeds, when every cell is
    shipped (else {}): the small multiples."""
    cells = precomputed()
    out = {}
    for d_k in SWEEP_D_KS:
        keys = [(optimizer, d_k, s, steps) for s in sweep_seeds(seed)]
        if not all(k in cells for k in keys):
            return {}
        frames = [cells[k][cells[k]["variant"].isin(variants)] for k in keys]
        out[d_k] = sweep_summary(frames)
    return out


# --- the LR sweep --------------------------------------------------------------------------
#: Columns of a sweep cell: one row per (variant, lr).
CELL_COLUMNS = ("variant", "lr", "final_loss", "final_accuracy", "diverged_at", "initial_loss")
#: The shipped file's configuration: sidebar seed 0 (seeds 0, 1, 2), 300 steps.
PRECOMPUTED_STEPS, PRECOMPUTED_SEEDS = 300, (0, 1, 2)


@st.cache_resource(show_spinner=False)
def precomputed() -> dict[tuple, pd.DataFrame]:
    """The shipped sweep as cells: {(optimizer, d_k, seed, steps): frame (CELL_COLUMNS)}.

    Read once per process and shared (``cache_resource``: no copy per rerun); callers
    never modify the frames.
    """
    doc = json.loads(SWEEP_FILE.read_text(encoding="utf-8"))
    steps = int(doc["params"]["steps"])
    names = [v["name"] for v in doc["variants"]]
    out = {}
    for oi, opt in enumerate(doc["optimizers"]):
        lrs = np.asarray(doc["lrs"][opt], dtype=float)
        for di, d_k in enumerate(doc["d_k"]):
            for si, seed in enumerate(doc["seeds"]):
                rows = []
                for vi, name in enumerate(names):
                    final = np.array(doc["final_loss"][oi][di][vi][si], dtype=float)
                    rows.append(
                        pd.DataFrame(
                            {
                                "variant": name,
                                "lr": lrs,
                                "final_loss": final,  # null (diverged) -> NaN
                                "final_accuracy": np.array(
                                    doc["final_accuracy"][oi][di][vi][si], dtype=float
                                ),
                                "diverged_at": np.array(doc["diverged_at"][oi][di][vi][si]),
                                "initial_loss": float(doc["initial_loss"][oi][di][vi][si]),
                            }
                        )
                    )
                out[(opt, int(d_k), int(seed), steps)] = pd.concat(rows, ignore_index=True)
    return out


@st.cache_data(max_entries=128, show_spinner=False)
def sweep_cell(
    optimizer: str, d_k: int, seed: int, steps: int, variants: tuple[str, ...]
) -> pd.DataFrame:
    """One cell of the LR sweep, computed: ``variants`` × the optimizer's 9-rate grid.

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
    """The sweep's seeds for a sidebar seed: seed, seed + 1, seed + 2."""
    return tuple(seed + i for i in range(SWEEP_SEEDS))


def needed_cells(optimizer: str, d_k: int, seed: int, steps: int) -> list[tuple]:
    """Cells the sweep section needs: the learner's d_k first, then the small multiples."""
    d_ks = [d_k] + [d for d in SWEEP_D_KS if d != d_k]
    return [(optimizer, d, s, steps) for d in d_ks for s in sweep_seeds(seed)]


#: Relative CPU cost of one sweep cell by d_k (measured: 1.9 s at 16, 18 s at 1024 for 3
#: variants, 300 steps); the estimate of time left scales it by what has been measured.
def cell_cost(d_k: int, steps: int, n_variants: int) -> float:
    """Rough CPU seconds of one sweep cell (for the estimate before anything ran)."""
    return (1.6 + 0.0164 * d_k) * steps / 300 * n_variants / 3


#: Session-state entry: {(optimizer, d_k, seed, steps): frame} computed in this session.
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
    """The shipped cell ``cell`` restricted to ``variants`` (None if not shipped)."""
    frame = precomputed().get(cell)
    return None if frame is None else frame[frame["variant"].isin(variants)]


@st.cache_data(max_entries=64, show_spinner=False)
def shipped_sweep(
    optimizer: str, d_k: int, seed: int, steps: int, variants: tuple[str, ...]
) -> tuple[pd.DataFrame, dict] | None:
    """:func:`sweep_summary` and :func:`conclusions` of the shipped cells at one d_k (its
    seeds' cells), or None unless every one of them is shipped."""
    cells = [shipped_cell((optimizer, d_k, s, steps), variants) for s in sweep_seeds(seed)]
    if any(cell is None for cell in cells):
        return None
    return sweep_summary(cells), conclusions(cells)


def store(cell: tuple, variants: tuple[str, ...], frame: pd.DataFrame) -> None:
    st.session_state.setdefault(COMPUTED, {})[(*cell, variants)] = frame


def sweep_summary(cells: list[pd.DataFrame]) -> pd.DataFrame:
    """Seeds combined: per (variant, lr) the median, min and max final loss, the median
    ratio final / ℓ₀ (a diverged seed counts as ∞), ℓ₀ (median) and diverged seeds."""
    df = pd.concat([c.assign(seed=i) for i, c in enumerate(cells)], ignore_index=True)
    df["ratio"] = np.where(
        np.isfinite(df["final_loss"]), df["final_loss"] / df["initial_loss"], np.inf
    )
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


def ratio_verdict(ratio: float) -> str:
    """:func:`verdict` of a ratio final / ℓ₀ (∞ or NaN: "diverged")."""
    return verdict(ratio, 1.0)


def conclusions(cells: list[pd.DataFrame]) -> dict[str, dict]:
    """What the sweep section concludes from one (optimizer, d_k), and how firmly.

    Parameters
    ----------
    cells : list of DataFrame
        One cell (``CELL_COLUMNS``) per seed, each with the same variants and rates.

    Returns
    -------
    dict
        Per variant, in the cells' order:

        - ``lrs``: the rates of the grid;
        - ``ratio``, ``ratio_lo``, ``ratio_hi``: median, min and max over the seeds of
          final / ℓ₀ (a diverged seed counts as ∞), per rate;
        - ``verdicts``: per rate, :func:`verdict` of the median ratio ("diverged" when
          the median is ∞, i.e. most seeds diverged);
        - ``borderline``: per rate, whether ``LEARN_RATIO`` or ``FAIL_RATIO`` lies inside
          [ratio_lo, ratio_hi]: some seed falls on the other side of the threshold from
          the median, so another seed, or another CPU, can give another verdict;
        - ``best_lr``, ``best``: the rate with the lowest median final loss, and that
          median; ``best_lo``, ``best_hi``: min and max over the seeds of the final loss
          there; ``rivals``: the other rates whose median lies inside [best_lo, best_hi]
          (empty: the best rate is clear);
        - ``initial``: ℓ₀, median over the seeds;
        - ``sensitivity``, ``sensitivity_lo``, ``sensitivity_hi``: median, min and max
          over the seeds of :func:`core.training.lr_sensitivity` of the seed's final
          losses against its ℓ₀.

    The chaotic runs (a failed run, or the unscaled model at a large rate) amplify
    last-bit rounding, so a seed's final loss can differ by tens of per cent on another
    CPU; the medians and the flags above are what the page shows for that reason.
    """
    from core.training import lr_sensitivity

    out = {}
    for name in pd.unique(cells[0]["variant"]):
        rows = [c[c["variant"] == name] for c in cells]
        lrs = rows[0]["lr"].to_numpy()
        final = np.stack([r["final_loss"].to_numpy(dtype=float) for r in rows])  # (seeds, lrs)
        initial = np.array([float(r["initial_loss"].iloc[0]) for r in rows])
        ratio = np.where(np.isnan(final), np.inf, final / initial[:, None])
        lo, median, hi = ratio.min(axis=0), np.median(ratio, axis=0), ratio.max(axis=0)
        values = pd.DataFrame(final).median(axis=0).to_numpy()  # NaN (diverged) skipped
        best = int(np.nanargmin(values))
        best_lo, best_hi = np.nanmin(final[:, best]), np.nanmax(final[:, best])
        sens = [lr_sensitivity(f, i) for f, i in zip(final, initial, strict=True)]
        out[name] = {
            "lrs": [float(x) for x in lrs],
            "ratio": median,
            "ratio_lo": lo,
            "ratio_hi": hi,
            "verdicts": [ratio_verdict(r) for r in median],
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
            "initial": float(np.median(initial)),
            "sensitivity": float(np.median(sens)),
            "sensitivity_lo": float(min(sens)),
            "sensitivity_hi": float(max(sens)),
        }
    return out
