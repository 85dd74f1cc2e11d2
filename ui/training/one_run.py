"""The training page's single run (NumPy, pandas, the cache): one side-by-side run at one
learning rate, read from the shipped runs at their settings, else trained
(:func:`single_run`); small frames only. Re-exported by :mod:`ui.training.data`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core.training import final_loss, train_recall_variants
from ui.story.lr_sweep import LAST
from ui.training import runs
from ui.training.runs import N_PROBE, SNAPSHOTS, VARIANTS

#: Largest number of points per variant on a curve (the rest is thinned out).
CURVE_POINTS = 100
#: Window of the moving average drawn over the per-batch values, steps (centred).
SMOOTH = 10
METRICS = ("loss", "accuracy", "entropy", "dead_fraction")


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
    d_k: int,
    optimizer: str,
    lr: float,
    steps: int,
    variants: tuple[str, ...],
    seed: int,
    m: int = 1,
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
        ``target`` (1 on each probe row's m target keys);
        ``summary``: one row per variant: ``variant``, ``initial_loss`` (ℓ₀ on 1024
        held-out rows), ``final_loss``
        (mean of the last 30 steps), ``accuracy``, ``entropy`` and ``dead`` (last 30
        steps), ``dead_0``, ``entropy_0`` (step 0), ``diverged_at`` (−1 if never).
    """
    histories = runs.shipped(
        shipped_runs(), d_k, optimizer, lr, steps, variants, seed, m
    ) or train_recall_variants(
        d_k,
        [VARIANTS[v] for v in variants],
        [lr],
        optimizer=optimizer,
        steps=steps,
        seed=seed,
        snapshot_steps=SNAPSHOTS,
        n_probe=N_PROBE,
        m=m,
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
        on_target = np.zeros((R, K), dtype=bool)
        np.put_along_axis(on_target, h.probe_target, True, axis=1)
        target = np.broadcast_to(on_target, w.shape)
        probe.append(
            pd.DataFrame(
                {
                    "snapshot": snap.ravel().astype(np.int32),
                    "variant": name,
                    "row": row.ravel().astype(np.int8),
                    "key": key.ravel().astype(np.int8),
                    "weight": w.ravel().astype(np.float32),
                    "target": target.ravel().astype(np.int8),
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


@st.cache_data(max_entries=64, show_spinner=False)
def run_stats(
    d_k: int,
    optimizer: str,
    lr: float,
    steps: int,
    variants: tuple[str, ...],
    seed: int,
    m: int = 1,
) -> dict:
    """The numbers the page writes about :func:`single_run` (same arguments), plain values
    only: a hit copies no frame.

    Returns
    -------
    dict with
        ``summary``: per variant, in the order of ``variants``, the columns of
        :func:`single_run`'s ``summary`` (``initial_loss``, ``final_loss``, ``accuracy``,
        ``entropy``, ``dead``, ``dead_0``, ``entropy_0``, ``diverged_at``), and of its
        probe rows ``top_0`` (the largest weight at step 0) and ``on_target`` (the mean
        weight on the targets at the last snapshot);
        ``last``: the last snapshot's step.
    """
    run = single_run(d_k, optimizer, lr, steps, variants, seed, m)
    probe = run["probe"]
    last = int(probe["snapshot"].max())
    top = probe.groupby(["variant", "snapshot"], sort=False)["weight"].max().groupby(level=0)
    top_0 = top.first()
    on_target = (
        probe[probe["target"] == 1].groupby(["variant", "snapshot"], sort=False)["weight"].mean()
    )
    summary = {}
    for row in run["summary"].to_dict("records"):
        name = row.pop("variant")
        summary[name] = {
            **{k: int(v) if k == "diverged_at" else float(v) for k, v in row.items()},
            "top_0": float(top_0[name]),
            "on_target": float(on_target[(name, last)]),
        }
    return {"summary": summary, "last": last}
