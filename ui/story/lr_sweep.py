"""The training lab's learning-rate sweep, the answer of its page: the sweep's cells (NumPy,
pandas, the cache), the shipped ones, read once from ``data/training_sweep.json``, and
those computed on demand (:func:`sweep_cell`), with which of them this session has; each
rate's final loss over the seeds (:func:`sweep_at`), labelled with its variant's legend
text and colour (:func:`labelled`). Re-exported by :mod:`ui.training.data`, which holds
what the page concludes from them; the recap draws the sweep too.

A cell is one :func:`core.training.train_recall_variants` call per (m, optimizer, d_k,
seed, steps, variants) over the optimizer's grid. The sweep's seeds are the sidebar seed
to seed + SWEEP_SEEDS − 1: the file holds seeds 0 … 4, i.e. sidebar seed 0.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from core.training import LR_GRIDS, Variant, final_loss, train_recall_variants, uniform_loss
from ui.common.charts import COLORS, alpha_color
from ui.common.controls import alpha_label
from ui.common.i18n import t

#: Every variant the page can train, by the name the sweep file uses.
VARIANTS = {
    "alpha_0": Variant(0.0),
    "alpha_half": Variant(0.5),
    "alpha_1": Variant(1.0),
    "folded": Variant(0.0, "folded"),
    "qk_norm": Variant(0.5, "fan_in", True),
}


#: Always trained; the other two follow the page's toggles.
BASE_VARIANTS = ("alpha_0", "alpha_half", "alpha_1")


#: Steps averaged for a final value.
LAST = 30

SWEEP_FILE = Path(__file__).resolve().parents[2] / "data" / "training_sweep.json"
#: The d_k of the small multiples.
SWEEP_D_KS = (16, 64, 256, 1024)

#: Columns of a sweep cell: one row per (variant, lr).
CELL_COLUMNS = ("variant", "lr", "final_loss", "final_accuracy", "diverged_at", "initial_loss")


@st.cache_resource(show_spinner=False)
def sweep_doc() -> dict:
    """The shipped sweep file, parsed once per process."""
    return json.loads(SWEEP_FILE.read_text(encoding="utf-8"))


def _shipped() -> tuple[tuple[int, ...], frozenset[tuple], frozenset[str], dict[int, float]]:
    """What the page looks up in the shipped file on every run, read once as the module
    loads: its seeds, its cells (m, optimizer, d_k, seed, steps), its variants, and per
    task m the lowest median over the seeds of a final loss (any optimizer, d_k, variant
    and rate; a diverged run, null in the file, is skipped)."""
    doc = json.loads(SWEEP_FILE.read_text(encoding="utf-8"))
    steps = int(doc["params"]["steps"])
    cells = frozenset(
        (int(m), opt, int(d_k), int(seed), steps)
        for m in doc["m"]
        for opt in doc["optimizers"]
        for d_k in doc["d_k"]
        for seed in doc["seeds"]
    )
    best = {}
    for mi, m in enumerate(doc["m"]):
        lowest = []
        for oi in range(len(doc["optimizers"])):
            # (d_k, variant, seed, lr) -> per d_k: (seed, variant · lr), as the cells hold it
            final = np.array(doc["final_loss"][mi][oi], dtype=float)
            for per_d_k in final:
                by_seed = np.moveaxis(per_d_k, 1, 0).reshape(per_d_k.shape[1], -1)
                with np.errstate(all="ignore"):
                    lowest.append(np.nanmin(np.nanmedian(by_seed, axis=0)))
        best[int(m)] = float(min(lowest))
    variants = frozenset(v["name"] for v in doc["variants"])
    return tuple(doc["seeds"]), cells, variants, best


#: The shipped file's configuration: 300 steps, sidebar seed 0 (the file's seeds, 0 … 4);
#: the sweep takes as many seeds per point as the file holds. Its cells and variants, and
#: per task m the lowest median final loss (ℓ*, :func:`ui.training.data.task_best`).
PRECOMPUTED_STEPS = 300
PRECOMPUTED_SEEDS, SHIPPED_CELLS, SHIPPED_VARIANTS, SHIPPED_BEST = _shipped()
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


#: Session-state entry: the cells (m, optimizer, d_k, seed, steps, variants) computed in
#: this session (their frames are :func:`sweep_cell`'s, cached for the whole server).
COMPUTED = "_training_cells"


def cell_source(cell: tuple, variants: tuple[str, ...]) -> str | None:
    """Where the sweep cell ``cell`` with ``variants`` comes from: "precomputed" (the
    shipped file), "computed" (in this session), or None (not available yet)."""
    if cell in SHIPPED_CELLS and set(variants) <= SHIPPED_VARIANTS:
        return "precomputed"
    if (*cell, variants) in st.session_state.get(COMPUTED, ()):
        return "computed"
    return None


def store(cell: tuple, variants: tuple[str, ...]) -> None:
    """Note that ``cell`` with ``variants`` was computed (:func:`sweep_cell`) in this session."""
    st.session_state.setdefault(COMPUTED, set()).add((*cell, variants))


def shipped_cell(cell: tuple, variants: tuple[str, ...]) -> pd.DataFrame | None:
    """The shipped cell ``cell`` restricted to ``variants`` (None if not shipped, or if
    the file does not hold every one of ``variants``: the folded initialisation and
    QK-norm are computed on demand)."""
    frame = precomputed().get(cell)
    if frame is None or not set(variants) <= set(frame["variant"]):
        return None
    return frame[frame["variant"].isin(variants)]


def cell_frames(
    m: int, optimizer: str, d_k: int, seed: int, steps: int, variants: tuple[str, ...]
) -> list[pd.DataFrame]:
    """The sweep's cells at one d_k, one per seed of :func:`sweep_seeds`: shipped, else
    :func:`sweep_cell` (cached: the section computes a missing cell first, with progress)."""
    frames = []
    for s in sweep_seeds(seed):
        shipped = shipped_cell((m, optimizer, d_k, s, steps), variants)
        frames.append(
            sweep_cell(m, optimizer, d_k, s, steps, variants) if shipped is None else shipped
        )
    return frames


# --- the variants' words and colours, and the verdicts' scale ------------------------------
#: Task settings (the issue's defaults; the page does not change them but m).
N_KEYS = 16


def variant_label(name: str) -> str:
    """Legend text of a variant (the α names of the other pages for the three scalings)."""
    if name in ("folded", "qk_norm"):
        return t(f"training.variant_{name}")
    return alpha_label(VARIANTS[name].alpha)


def variant_labels(variants: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(variant, legend text) pairs in the current language: what a frame is labelled with."""
    return tuple((name, variant_label(name)) for name in variants)


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


def task_best(m: int) -> float:
    """ℓ*: the lowest median-over-seeds final loss of any variant, optimizer, d_k and rate
    in the shipped sweep for this m (0 for an m the file does not hold); read from the
    file as the page loads (``SHIPPED_BEST``), a lookup on every verdict."""
    return SHIPPED_BEST.get(m, 0.0)


def labelled(df: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """``df`` with ``series`` (legend label, ``labels`` of its ``variant``: see
    :func:`variant_labels`) and ``color`` columns."""
    names = df["variant"].to_numpy()
    colors = {v: variant_color(v) for v in pd.unique(names)}
    return df.assign(series=[labels[v] for v in names], color=[colors[v] for v in names])


# --- the LR sweep: what the page concludes from its cells ------------------------------
@st.cache_data(max_entries=64, show_spinner=False)
def sweep_at(
    m: int, optimizer: str, d_k: int, seed: int, steps: int, variants: tuple[str, ...]
) -> pd.DataFrame:
    """:func:`sweep_summary` of the sweep's seeds at one d_k (:func:`cell_frames`)."""
    return sweep_summary(cell_frames(m, optimizer, d_k, seed, steps, variants), m)


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


# --- what every view of the sweep shares ----------------------------------------------------
def lines_options(optimizer: str, labels: tuple[tuple[str, str], ...]) -> dict:
    """The options of :func:`ui.story.trained_charts.lr_lines` that every view of the sweep
    shares, whatever its data: ``series``, each variant's legend text (``labels``:
    (variant, text) pairs, :func:`variant_labels`) and colour, and ``lr_range``, the
    optimizer's grid."""
    grid = LR_GRIDS[optimizer]
    series = tuple((text, variant_color(name)) for name, text in labels)
    return {"series": series, "lr_range": (grid[0], grid[-1])}


def shipped_d_ks(
    m: int, optimizer: str, seed: int, steps: int, variants: tuple[str, ...]
) -> tuple[int, ...]:
    """The d_k of :data:`SWEEP_D_KS` whose every seed the shipped file holds at these
    settings (none unless sidebar seed 0, 300 steps and the file's variants)."""
    if not set(variants) <= SHIPPED_VARIANTS:
        return ()
    return tuple(
        d_k
        for d_k in SWEEP_D_KS
        if all((m, optimizer, d_k, s, steps) in SHIPPED_CELLS for s in sweep_seeds(seed))
    )


@st.cache_data(max_entries=64, show_spinner=False)
def loss_domain(
    m: int, optimizer: str, seed: int, steps: int, variants: tuple[str, ...], d_ks: tuple[int, ...]
) -> tuple[float, float]:
    """The final-loss range (lo, hi) of the sweep at each of ``d_ks`` (all available:
    shipped, or computed), with room above and below (×1.25, ×0.8), widened to whole
    decades (a log axis labelled at both ends) and lo at least 1e−5: one y-axis for the
    sweep at every d_k, so that moving d_k moves the lines, not the axis."""
    sweeps = [sweep_at(m, optimizer, d_k, seed, steps, variants) for d_k in d_ks]
    lo = min(float(s["lo"].min()) for s in sweeps)
    hi = max(float(s["hi"].max()) for s in sweeps)
    return (
        10.0 ** max(-5, math.floor(math.log10(lo * 0.8))),
        10.0 ** math.ceil(math.log10(hi * 1.25)),
    )


def sweep_domain(
    m: int, optimizer: str, d_k: int, seed: int, steps: int, variants: tuple[str, ...]
) -> tuple[float, float]:
    """:func:`loss_domain` of the shipped d_k and ``d_k`` (available: the caller draws its
    sweep): the same range at every shipped d_k."""
    d_ks = tuple(sorted({*shipped_d_ks(m, optimizer, seed, steps, variants), d_k}))
    return loss_domain(m, optimizer, seed, steps, variants, d_ks)
