"""Data of the training page: the cached single run, the LR sweep (shipped and computed).

A single run trains α = 0, ½, 1 (and, when switched on, the folded initialisation and
QK-norm) on one data stream at one learning rate (:func:`single_run`); it is cached per
(d_k, optimizer, lr, steps, variants, seed, m) and returns small frames only: curves
thinned to at most ``CURVE_POINTS`` points per variant, the probe rows' attention
weights and one summary row per variant.

The LR sweep is cut into cells (:mod:`ui.story.lr_sweep`, shared with the recap), one
:func:`core.training.train_recall_variants` call per (m, optimizer, d_k, seed, steps,
variants) over the optimizer's grid (:func:`sweep_cell`, cached). Cells of the shipped
configuration are read from ``data/training_sweep.json``
(``scripts/precompute_training.py``: α = 0, ½, 1); the page computes the others on
demand, and the session notes which. The sweep's five seeds are the sidebar seed to
seed + 4: the file holds seeds 0 … 4, i.e. sidebar seed 0.

What the page writes comes from cached functions of plain values (:func:`run_stats`,
:func:`sweep_stats`, :func:`multiples_stats`, :func:`task_headline`), so a rerun with
settings already seen copies no frame; the charts' frames are made in
:mod:`ui.training.frames` when a chart is first drawn.

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

import functools
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from core.training import DEFAULT_LRS
from ui.common import pages
from ui.common.i18n import t
from ui.common.pages import page
from ui.common.specs import text_table
from ui.story.lr_sweep import (  # noqa: F401  (re-exported: the sweep, shared with the recap)
    BASE_VARIANTS,
    CELL_COLUMNS,
    COMPUTED,
    LAST,
    N_KEYS,
    PRECOMPUTED_SEEDS,
    PRECOMPUTED_STEPS,
    SHIPPED_BEST,
    SWEEP_D_KS,
    SWEEP_FILE,
    SWEEP_SEEDS,
    VARIANTS,
    cell_cost,
    cell_frames,
    cell_source,
    gap_left,
    labelled,
    lines_options,
    loss_domain,
    needed_cells,
    precomputed,
    shipped_cell,
    shipped_d_ks,
    store,
    sweep_at,
    sweep_cell,
    sweep_doc,
    sweep_domain,
    sweep_seeds,
    sweep_summary,
    task_best,
    uniform,
    variant_color,
    variant_label,
    variant_labels,
)
from ui.training.one_run import (  # noqa: F401  (re-exported: the page's data in one place)
    CURVE_POINTS,
    METRICS,
    SMOOTH,
    run_stats,
    shipped_runs,
    single_run,
    smooth,
    thinned_steps,
)
from ui.training.runs import N_PROBE, SNAPSHOTS  # noqa: F401

#: Steps the page offers.
STEPS_OPTIONS = page("training").param("steps").options
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
#: A learning rate as the page writes it (:func:`ui.common.pages.lr_text`), remembered: the
#: sweep's sentences and tables write the same few rates a hundred times a run.
lr_text = functools.lru_cache(maxsize=512)(pages.lr_text)
DEFAULT_LR_TEXT = {opt: lr_text(lr) for opt, lr in DEFAULT_LRS.items()}


def variant_names(folded: bool, qk_norm: bool) -> tuple[str, ...]:
    """The variants the page trains with these toggles, in legend order."""
    return BASE_VARIANTS + (("folded",) if folded else ()) + (("qk_norm",) if qk_norm else ())


def variant_short(name: str) -> str:
    """A short label (the probe heatmap's panel headers must fit a 390-px screen)."""
    if name in ("folded", "qk_norm"):
        return t(f"training.variant_{name}_short")
    return {"alpha_0": "α = 0", "alpha_half": "α = ½", "alpha_1": "α = 1"}[name]


def variant_shorts(variants: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(variant, short label) pairs in the current language (:func:`variant_short`)."""
    return tuple((name, variant_short(name)) for name in variants)


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


def thresholds(m: int) -> pa.Table:
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
    return text_table(
        [
            {
                t("training.col_verdict"): t(f"training.verdict_{v}"),
                t("training.col_rule"): rule,
                t("training.col_range", m=m): scale,
            }
            for v, rule, scale in rows
        ]
    )


def pct(x: float) -> str:
    return f"{100 * x:.1f} %" if 0 < x < 0.01 else f"{100 * x:.0f} %"


@st.cache_data(max_entries=64, show_spinner=False)
def sweep_stats(
    m: int, optimizer: str, d_k: int, seed: int, steps: int, variants: tuple[str, ...]
) -> dict:
    """What the page writes about the sweep at one d_k: ``per``, its
    :func:`conclusions`, and ``diverged``, the count of diverged runs (every rate and
    seed)."""
    cells = cell_frames(m, optimizer, d_k, seed, steps, variants)
    return {
        "per": conclusions(cells, m),
        "diverged": int(sweep_at(m, optimizer, d_k, seed, steps, variants)["diverged"].sum()),
    }


@st.cache_data(max_entries=32, show_spinner=False)
def multiples_stats(
    m: int,
    optimizer: str,
    seed: int,
    steps: int,
    variants: tuple[str, ...],
    d_ks: tuple[int, ...],
) -> dict:
    """The small multiples at ``d_ks`` (those available): ``domain``, the y-range they
    share, (lo, hi); ``best``, per d_k the (variant, rate) pairs of each variant's lowest
    median final loss, in legend order."""
    sweeps = {d_k: sweep_at(m, optimizer, d_k, seed, steps, variants) for d_k in d_ks}
    best = {
        d_k: tuple(
            (name, float(part.loc[part["value"].idxmin(), "lr"]))
            for name, part in frame.groupby("variant", sort=False)
        )
        for d_k, frame in sweeps.items()
    }
    return {"domain": loss_domain(m, optimizer, seed, steps, variants, d_ks), "best": best}


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


@st.cache_data(show_spinner=False)
def task_headline(m: int) -> dict | None:
    """The numbers of the page's answer for task m (:func:`task_findings`, α = 0 against
    α = ½ at every optimizer and d_k), or None if the task is not shipped.

    Returns
    -------
    dict with
        ``r0``, ``rh``: (min, max) of the best final loss over the task's best ℓ* at
        d_k ≥ 64, for α = 0 and α = ½; ``n0``, ``nh``: (setting, rate) pairs that learn,
        ``total``: pairs per variant; ``failing``, ``learning``: per optimizer (in the
        file's order) the d_k at which α = 0 ends better than uniform attention at no
        rate, and at which it learns at some rate; ``every_d_k``: how many (optimizer,
        d_k) settings there are; ``half_best``: (min, max) of α = ½'s best final loss
        where α = 0 fails (None if it fails nowhere).
    """
    found = task_findings(m)
    if found.empty:
        return None
    unscaled = found[found["variant"] == "alpha_0"].set_index(["optimizer", "d_k"])
    half = found[found["variant"] == "alpha_half"].set_index(["optimizer", "d_k"])
    wide = unscaled.index.get_level_values("d_k") >= 64
    r0, rh = unscaled["vs_task_best"][wide], half["vs_task_best"][wide]
    failing = ~unscaled["beats_uniform"]
    learning = unscaled["n_learns"] > 0
    there = half["best"][failing.to_numpy()]

    def where(mask: pd.Series) -> tuple[tuple[str, tuple[int, ...]], ...]:
        optimizers = dict.fromkeys(unscaled.index.get_level_values("optimizer"))
        return tuple(
            (opt, tuple(int(d) for (o, d), hit in mask.items() if o == opt and hit))
            for opt in optimizers
        )

    return {
        "r0": (float(r0.min()), float(r0.max())),
        "rh": (float(rh.min()), float(rh.max())),
        "n0": int(unscaled["n_learns"].sum()),
        "nh": int(half["n_learns"].sum()),
        "total": int(unscaled["n_rates"].sum()),
        "failing": where(failing),
        "learning": where(learning),
        "every_d_k": len(unscaled),
        "half_best": (float(there.min()), float(there.max())) if failing.any() else None,
    }
