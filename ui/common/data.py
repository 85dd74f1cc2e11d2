"""``st.cache_data`` wrappers around the core experiments.

Every wrapper takes only hashable primitives (the cache key is the whole input) and
returns small, chart-ready numeric frames — never raw samples — so that a bounded
``max_entries`` keeps memory small on a 690 MB host. Labels are added by the page,
so one cached result serves both languages.

Each chart draws from its own stream, ``np.random.default_rng([seed, stream])``:
moving one chart's control never changes another chart's random picture.

This module holds what several pages share (the random streams and the saturation
sweep behind the saturation, gradients and √d_k-vs-d_k pages, cached once for all of
them); each page's own wrappers live in ``ui/<page>/data.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from ui.common.controls import ALPHA_PRESETS

SWEEP_D = 2 ** np.arange(13)  # d_k = 1, 2, 4, …, 4096


def rng_for(seed: int, stream: int) -> np.random.Generator:
    """The generator of one random picture: independent streams from one seed."""
    return np.random.default_rng([int(seed), int(stream)])


#: Stream numbers are unique across the app: 1–4 variance, 10 the shared saturation
#: sweep, 20s saturation, 30s gradients, 40s √d_k-vs-d_k, 50s which-d. A new page takes
#: the next free decade for its ``STREAM_*`` constants.
STREAM_SATURATION_SWEEP = 10


#: Rows per (d_k, α) cell of a sweep: 4,000 at n_keys ≤ 20, fewer for more keys, so a
#: cell costs ≤ 80,000 softmax entries. Every page uses this one rule, so a sweep
#: computed for one page is a cache hit on the others.
SWEEP_ROWS, SWEEP_ROW_KEY_BUDGET = 4_000, 80_000


def sweep_rows(n_keys: int) -> int:
    """Rows per cell of every saturation sweep at this n_keys."""
    return int(min(SWEEP_ROWS, SWEEP_ROW_KEY_BUDGET // max(1, int(n_keys))))


def sweep_row_limits() -> dict[str, str]:
    """For texts: ``cap`` (rows × n_keys at most) and ``above`` (n_keys beyond which the
    rows per cell shrink), formatted."""
    return {
        "cap": f"{SWEEP_ROW_KEY_BUDGET:,}",
        "above": f"{SWEEP_ROW_KEY_BUDGET // SWEEP_ROWS}",
    }


@st.cache_data(max_entries=16, show_spinner=False)
def saturation_sweep(
    n_keys: int,
    alphas: tuple[float, ...],
    rho: float,
    seed: int,
    n_rows: int = 20_000,
    d_values: tuple[int, ...] = tuple(int(d) for d in SWEEP_D),
) -> pd.DataFrame:
    """:func:`core.experiments.saturation_sweep` as a tidy frame.

    Returns
    -------
    DataFrame, one row per (alpha, d_k): columns ``alpha``, ``d`` and every statistic
    of :class:`core.experiments.SaturationStats` (e.g. ``entropy_mean``, ``entropy_se``,
    ``jacobian_fro_median``, ``dead_fraction``, ``relevant_weight_mean``).
    """
    from core.experiments import saturation_sweep as sweep

    out = sweep(
        list(d_values),
        n_keys,
        list(alphas),
        rng=rng_for(seed, STREAM_SATURATION_SWEEP),
        n_rows=n_rows,
        rho=rho,
    )
    return pd.DataFrame({name: np.asarray(values).ravel() for name, values in out.items()})


def is_preset(alpha: float, presets: tuple[float, ...] = ALPHA_PRESETS) -> bool:
    """Whether α is one of ``presets`` (default 0, ½, 1: drawn as fixed series)."""
    return any(math.isclose(alpha, a, abs_tol=1e-9) for a in presets)


def alpha_sweep(
    n_keys: int, alpha: float, rho: float, seed: int, n_rows: int | None = None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """:func:`saturation_sweep` of the presets α = 0, ½, 1 and, if ``alpha`` is none of
    them, of ``alpha`` alone (else None): two cache entries, so moving α recomputes one
    exponent only. Both draw the same rows (same seed and stream). ``n_rows``: default
    :func:`sweep_rows`."""
    rows = sweep_rows(n_keys) if n_rows is None else n_rows
    fixed = saturation_sweep(n_keys, ALPHA_PRESETS, rho, seed, rows)
    mine = None if is_preset(alpha) else saturation_sweep(n_keys, (float(alpha),), rho, seed, rows)
    return fixed, mine
