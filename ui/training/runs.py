"""The training lab's shipped single runs: data/training_runs.npz (NumPy only).

``scripts/precompute_runs.py`` trains α = 0, ½ and 1 side by side at the page's
default settings (300 steps, seed 0, each optimizer at its default learning rate) for
every task (m ∈ ``M_OPTIONS``) and d_k the page offers, and stores what
:func:`ui.training.data.single_run` reads (per-step records and probe weights as
float32, which the page draws anyway; ℓ₀ in float64).
A run at those settings is then read, not trained: the same arrays, so the same
charts and numbers, without the 0.5–1.5 s of CPU a new run costs the server.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np

from core.training import DEFAULT_LRS, TrainingHistory, train_recall_variants
from ui.common.pages import TRAINING_D_KS
from ui.story.lr_sweep import BASE_VARIANTS, VARIANTS

RUNS_FILE = Path(__file__).resolve().parents[2] / "data" / "training_runs.npz"
FORMAT_VERSION = 2
#: Targets per row the page offers (core.training's ``m``): the answer is one key, or the
#: mean of the values of 2 or 4 keys.
M_OPTIONS = (1, 2, 4)

#: Steps at which the probe rows' weights are recorded (the last step is added).
SNAPSHOTS = (0, 10, 50)
N_PROBE = 4
#: d_k values the page trains at: powers of two, so that a workshop's learners share a
#: handful of runs (each new one costs 0.5–1.5 s of server CPU; benchmarks/load.py).
D_K_POWERS = TRAINING_D_KS  # 16 … 1024
#: The shipped runs' settings.
STEPS, SEED = 300, 0
#: Per-step records of a TrainingHistory, stored as (steps, variants).
PER_STEP = ("loss", "accuracy", "entropy", "dead_fraction", "grad_norm", "logit_std")

_TASK = {
    name: p.default
    for name, p in inspect.signature(train_recall_variants).parameters.items()
    if name in ("n_keys", "d_in", "d_v", "batch", "noise")
}


def load(path: Path = RUNS_FILE) -> dict[str, np.ndarray]:
    """Every array of the runs file, read-only."""
    with np.load(path, allow_pickle=False) as npz:
        out = {name: npz[name] for name in npz.files}
    for value in out.values():
        value.setflags(write=False)
    return out


def shipped(
    runs: dict[str, np.ndarray],
    d_k: int,
    optimizer: str,
    lr: float,
    steps: int,
    variants: tuple[str, ...],
    seed: int,
    m: int = 1,
) -> tuple[TrainingHistory, ...] | None:
    """The histories of a shipped run at these settings (one per variant, one learning
    rate each, as ``train_recall_variants`` returns them), or None if not shipped."""
    prefix = f"m{m}/{optimizer}/{d_k}/"
    if (
        (steps, seed, tuple(variants)) != (STEPS, SEED, BASE_VARIANTS)
        or lr != DEFAULT_LRS.get(optimizer)
        or f"{prefix}loss" not in runs
    ):
        return None
    lrs = np.array([float(lr)])
    lrs.setflags(write=False)
    out = []
    for i, name in enumerate(variants):
        v = VARIANTS[name]
        out.append(
            TrainingHistory(
                d_k=int(d_k),
                alpha=v.alpha,
                lrs=lrs,
                optimizer=optimizer,
                init=v.init,
                qk_norm=v.qk_norm,
                steps=STEPS,
                seed=SEED,
                m=int(m),
                initial_loss=float(runs[prefix + "initial_loss"][i]),
                **_TASK,
                **{f: runs[prefix + f][:, i : i + 1].astype(np.float64) for f in PER_STEP},
                gain=None,
                diverged_at=runs[prefix + "diverged_at"][i : i + 1].astype(int),
                snapshot_steps=runs["snapshot_steps"].astype(int),
                probe_weights=runs[prefix + "probe_weights"][:, i : i + 1].astype(np.float64),
                probe_target=runs[f"m{m}/probe_target"].astype(int),
            )
        )
    return tuple(out)
