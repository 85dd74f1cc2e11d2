"""Monte Carlo experiments on softmax saturation, one query row at a time.

Model (one "row" = one query against n_keys keys)::

    q ~ N(0, I_{d_k})
    k_0 = rho q + sqrt(1 − rho²) eps,  eps ~ N(0, I)   # the "relevant" key
    k_j ~ N(0, I_{d_k}),  j = 1 .. n_keys − 1          # independent keys
    scores s_j = q · k_j,  logits z_j = d_k**-alpha · s_j,  p = softmax(z)

Exact fast representation (no O(d_k) work per key): given q, with
r² = ‖q‖² ~ χ²_{d_k},

    s_j = r Z_j                          (j ≥ 1, Z_j iid N(0, 1))
    s_0 = rho r² + sqrt(1 − rho²) r Z_0

so a row costs one chi-square draw and n_keys normals whatever d_k is.
rho = 0 makes every key independent.

Memory: random numbers are drawn in chunks of at most 8 MB per float64
array (``_CHUNK_ELEMENTS`` entries) and the softmax work runs on cache-sized
blocks of 2 MB (``_BLOCK_ELEMENTS``); only per-row summaries (about
4 n_alpha + 6 floats per row) are kept whole, for medians and quantiles —
about 35 MB at n_rows = 200_000 with 4 alphas.

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, §3.2.1 footnote 4.
Yang et al. 2022, *Tensor Programs V* (μP: 1/d_k attention for aligned q, k).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields

import numpy as np

from core.attention import ALPHA_MAX, check_alpha
from core.softmax import row_overflows
from core.validation import check_float_dtype, check_int, check_real, check_rho, check_rng

__all__ = [
    "DEAD_THRESHOLD",
    "D_MAX",
    "N_KEYS_MAX",
    "N_ROWS_MAX",
    "STAT_FIELDS",
    "SaturationStats",
    "classic_experiment_rowmax",
    "naive_overflow_rate",
    "naive_overflow_sweep",
    "sample_scores",
    "saturation_samples",
    "saturation_stats",
    "saturation_sweep",
]

#: A row is "dead" when ‖J‖_F is below this (its logits barely move p).
DEAD_THRESHOLD = 1e-3
#: Largest d_k accepted.
D_MAX = 1 << 20
#: Largest n_keys accepted.
N_KEYS_MAX = 1 << 16
#: Largest n_rows accepted (bounds the work and memory of one call).
N_ROWS_MAX = 5_000_000
#: Entries per float64 temporary (8 MB); rows are processed in chunks of this size.
_CHUNK_ELEMENTS = 1 << 20
#: Entries of the (n_alpha, rows, n_keys) temporaries processed at once (2 MB, cache-sized).
_BLOCK_ELEMENTS = 1 << 18
#: Common random numbers Z are kept in memory up to this many entries (32 MB), else redrawn.
_Z_CACHE_ELEMENTS = 1 << 22

_NAN = math.nan


@dataclass(frozen=True)
class SaturationStats:
    """Summary of softmax saturation over many random query rows.

    Units: weights are probabilities, entropy in nats, logits dimensionless.
    ``*_se`` fields are Monte Carlo standard errors of the matching mean
    (sample std / sqrt(n_rows); for a share f, sqrt(f (1 − f) / n_rows)).
    Quantiles use NumPy's default linear interpolation.

    Attributes
    ----------
    max_weight_mean, max_weight_se : float
        Mean largest attention weight of a row (1/n_keys uniform … 1 one-hot).
    entropy_mean, entropy_se : float
        Mean entropy H(p) in nats (0 … ln n_keys).
    jacobian_fro_mean, jacobian_fro_median, jacobian_fro_q10, jacobian_fro_q90 : float
        ‖J‖_F of J = ∂p/∂z = diag(p) − p pᵀ (gradient w.r.t. the logits).
    dead_fraction : float
        Share of rows with ‖J‖_F < ``DEAD_THRESHOLD`` (1e-3).
    grad_fro_mean : float
        Mean ‖∂p/∂s‖_F = d_k**-alpha · ‖J‖_F (gradient w.r.t. raw scores s = q·k).
    jacobian_fro_se, dead_fraction_se, grad_fro_se : float
        Standard errors.
    grad_fro_median, grad_fro_q10, grad_fro_q90 : float
        Quantiles of ‖∂p/∂s‖_F.
    relevant_weight_mean, relevant_weight_se : float
        Mean weight of key 0 (the key correlated with q when rho ≠ 0).
    relevant_argmax_rate, relevant_argmax_se : float
        Share of rows in which key 0 has the largest weight (1/n_keys when
        rho = 0; independent of alpha, since scaling keeps the order).
    relevant_logit_mean, relevant_logit_se : float
        Mean logit of key 0; theory d_k**-alpha · rho · d_k.
    relevant_margin_mean, relevant_margin_se : float
        Mean of (logit of key 0 − largest other logit); NaN when n_keys = 1.
    logit_std, logit_std_se : float
        Pooled standard deviation of the independent keys' logits (all keys
        when rho = 0, keys 1.. otherwise; NaN when there are none); theory
        d_k**(½ − alpha). Its s.e. comes from the delta method over rows.
    d, n_keys, alpha, rho, n_rows :
        The parameters that produced these numbers.
    """

    max_weight_mean: float
    max_weight_se: float
    entropy_mean: float
    entropy_se: float
    jacobian_fro_mean: float
    jacobian_fro_median: float
    jacobian_fro_q10: float
    jacobian_fro_q90: float
    dead_fraction: float
    grad_fro_mean: float
    jacobian_fro_se: float = _NAN
    dead_fraction_se: float = _NAN
    grad_fro_se: float = _NAN
    grad_fro_median: float = _NAN
    grad_fro_q10: float = _NAN
    grad_fro_q90: float = _NAN
    relevant_weight_mean: float = _NAN
    relevant_weight_se: float = _NAN
    relevant_argmax_rate: float = _NAN
    relevant_argmax_se: float = _NAN
    relevant_logit_mean: float = _NAN
    relevant_logit_se: float = _NAN
    relevant_margin_mean: float = _NAN
    relevant_margin_se: float = _NAN
    logit_std: float = _NAN
    logit_std_se: float = _NAN
    d: int = 0
    n_keys: int = 0
    alpha: float = _NAN
    rho: float = _NAN
    n_rows: int = 0


#: Names of the statistics (every float field except the parameters).
STAT_FIELDS: tuple[str, ...] = tuple(
    f.name
    for f in fields(SaturationStats)
    if f.name not in {"d", "n_keys", "alpha", "rho", "n_rows"}
)


# --------------------------------------------------------------------------- checks


def _check_common(
    n_keys: object, rho: object, n_rows: object, rng: object
) -> tuple[int, float, int]:
    check_rng("rng", rng)
    return (
        check_int("n_keys", n_keys, 1, N_KEYS_MAX),
        check_rho("rho", rho),
        check_int("n_rows", n_rows, 1, N_ROWS_MAX),
    )


def _check_d_named(name: str, d: object) -> int:
    return check_int(name, d, 1, D_MAX)


def _check_d(d: object) -> int:
    return _check_d_named("d", d)


def _check_list(name: str, values: object, check) -> list:
    try:
        items = list(np.asarray(values).ravel().tolist())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a non-empty sequence, got {values!r}") from exc
    if not items:
        raise ValueError(f"{name} must be a non-empty sequence, got {values!r}")
    return [check(f"{name}[{i}]", v) for i, v in enumerate(items)]


def _chunk_rows(n_rows: int, row_elements: int) -> list[int]:
    """Split n_rows into chunk sizes with chunk * row_elements <= _CHUNK_ELEMENTS."""
    size = max(1, _CHUNK_ELEMENTS // max(1, row_elements))
    return [min(size, n_rows - start) for start in range(0, n_rows, size)]


# --------------------------------------------------------------------------- sampling


def _scores_from_normals(
    z: np.ndarray, r2: np.ndarray, rho: float
) -> np.ndarray:  # (rows, n_keys), (rows,) -> (rows, n_keys)
    r = np.sqrt(r2)
    scores = r[:, None] * z
    if rho != 0.0:
        scores[:, 0] = rho * r2 + math.sqrt(1.0 - rho * rho) * scores[:, 0]
    return scores


def sample_scores(
    d: int, n_keys: int, *, rng: np.random.Generator, n_rows: int = 1, rho: float = 0.0
) -> np.ndarray:
    """Raw scores q·k_j of random query rows, exact in distribution, O(n_keys) per row.

    Parameters
    ----------
    d : int
        d_k, the query/key dimension (1 … 2**20).
    n_keys : int
        Keys per row (1 … 65536).
    rng : numpy.random.Generator
    n_rows : int
        Number of independent query rows.
    rho : float
        corr(q_i, k_0i) of key 0, |rho| < 1; other keys independent.

    Returns
    -------
    ndarray, shape (n_rows, n_keys)
        Column 0 is the relevant key: mean rho d_k, variance d_k (1 + rho²).
        Other columns: mean 0, variance d_k.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it), or if
        n_rows * n_keys exceeds 2**24 (128 MB of float64).

    References
    ----------
    docs/mathematics.md §2.2 (the exact representation given ‖q‖).
    """
    d = _check_d(d)
    n_keys, rho, n_rows = _check_common(n_keys, rho, n_rows, rng)
    if n_rows * n_keys > 16 * _CHUNK_ELEMENTS:
        raise ValueError(
            f"n_rows * n_keys must be <= {16 * _CHUNK_ELEMENTS}, got {n_rows} * {n_keys}"
        )
    r2 = rng.chisquare(d, n_rows)
    return _scores_from_normals(rng.standard_normal((n_rows, n_keys)), r2, rho)


# --------------------------------------------------------------------------- per-row kernel


def row_quantities(scores: np.ndarray, scales: np.ndarray) -> dict[str, np.ndarray]:
    """Per-row saturation quantities for several scale factors at once.

    The kernel of :func:`saturation_sweep` (the pages show it as the code behind their
    sweep charts); :func:`summarise` turns its rows into statistics.

    Parameters
    ----------
    scores : ndarray, shape (rows, n_keys)
        Raw scores q·k.
    scales : ndarray, shape (n_alpha,)
        Positive factors c = d_k**-alpha (logits = c · scores).

    Returns
    -------
    dict of ndarray
        ``max_weight``, ``entropy`` (nats), ``jacobian_fro``, ``relevant_weight``:
        shape (n_alpha, rows). ``relevant_is_argmax`` (bool), ``relevant_score``,
        ``relevant_margin``: shape (rows,), raw score units (they scale with c and do
        not otherwise depend on alpha).

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D or ``scales`` not 1-D.

    Notes
    -----
    With gaps g_j = max s − s_j ≥ 0, e_j = exp(−c g_j) for the non-top keys
    (e_top = 1) and S = 1 + Σ e_j: max p = 1/S, H = ln S + c Σ e_j g_j / S,
    and ‖J‖_F² = p_m² r² + T₂ (1 + 2p_m² + T₂) − 2 T₃ with p_m = 1/S,
    r = Σ e_j / S, T_k = Σ e_j^k / S^k — the closed form of
    :func:`core.softmax.jacobian_norm`, free of cancellation.

    References
    ----------
    docs/mathematics.md §4.1 (the Jacobian's norm).
    """
    if scores.ndim != 2 or scales.ndim != 1:
        raise ValueError(
            f"scores must have shape (rows, n_keys) and scales (n_alpha,), got "
            f"{scores.shape} and {scales.shape}"
        )
    n_rows, n_keys = scores.shape
    rows = np.arange(n_rows)
    top = np.argmax(scores, axis=1)  # (rows,)
    s_top = scores[rows, top]
    gaps = s_top[:, None] - scores  # (rows, n_keys), 0 at the top key

    e = np.multiply(-scales[:, None, None], gaps)  # (n_alpha, rows, n_keys)
    np.exp(e, out=e)
    e[:, rows, top] = 0.0  # keep only the non-top keys
    ones = np.ones(n_keys)
    e_sum = e @ ones  # (n_alpha, rows); matmul sums a short last axis faster than .sum
    p_top = 1.0 / (1.0 + e_sum)
    r = e_sum * p_top
    e_sq = e * e
    t2 = (e_sq @ ones) * p_top**2
    t3 = np.einsum("...i,...i->...", e_sq, e) * p_top**3
    fro_sq = p_top**2 * r**2 + t2 * (1.0 + 2.0 * p_top**2 + t2) - 2.0 * t3
    entropy = np.log1p(e_sum) + scales[:, None] * np.einsum("...i,...i->...", e, gaps) * p_top
    relevant_is_argmax = top == 0
    relevant_weight = np.where(relevant_is_argmax, p_top, e[..., 0] * p_top)

    if n_keys > 1:
        others_max = np.where(relevant_is_argmax, np.max(scores[:, 1:], axis=1), s_top)
        relevant_margin = scores[:, 0] - others_max
    else:
        relevant_margin = np.full(n_rows, np.nan)
    return {
        "max_weight": p_top,
        "entropy": entropy,
        "jacobian_fro": np.sqrt(np.maximum(fro_sq, 0.0)),
        "relevant_weight": relevant_weight,
        "relevant_is_argmax": relevant_is_argmax,
        "relevant_score": scores[:, 0].copy(),
        "relevant_margin": relevant_margin,
    }


def _indep_moments(scores: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-row mean and mean square of the independent keys' scores, or None if none."""
    indep = scores if rho == 0.0 else scores[:, 1:]
    if indep.shape[1] == 0:
        return None
    return indep.mean(axis=1), np.einsum("ij,ij->i", indep, indep) / indep.shape[1]


def _normal_chunks(seed: int, sizes: list[int], n_keys: int) -> Iterator[np.ndarray]:
    z_rng = np.random.default_rng(seed)
    for size in sizes:
        yield z_rng.standard_normal((size, n_keys))


def _simulate_d(
    d: int,
    n_keys: int,
    scales: np.ndarray,
    rng: np.random.Generator,
    sizes: list[int],
    rho: float,
    z_chunks: list[np.ndarray] | None,
    z_seed: int,
) -> dict[str, np.ndarray]:
    """Per-row quantities for one d_k and all scales, shape (..., n_rows)."""
    normals = z_chunks if z_chunks is not None else _normal_chunks(z_seed, sizes, n_keys)
    n_rows = sum(sizes)
    out: dict[str, np.ndarray] = {}
    row = 0
    for size, z in zip(sizes, normals, strict=True):
        scores = _scores_from_normals(z, rng.chisquare(d, size), rho)
        # Kernel blocks of _BLOCK_ELEMENTS, small enough to stay in the CPU cache.
        block = max(1, _BLOCK_ELEMENTS // (n_keys * scales.shape[0]))
        for start in range(0, size, block):
            sub = scores[start : start + block]
            part = row_quantities(sub, scales)
            moments = _indep_moments(sub, rho)
            if moments is not None:
                part["indep_mean"], part["indep_sq"] = moments
            for key, value in part.items():
                if key not in out:
                    out[key] = np.empty((*value.shape[:-1], n_rows), dtype=value.dtype)
                out[key][..., row : row + sub.shape[0]] = value
            row += sub.shape[0]
    return out


def _mean_se(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error along the last axis (se NaN for one sample)."""
    n = x.shape[-1]
    mean = x.mean(axis=-1)
    if n < 2:
        return mean, np.full_like(mean, np.nan, dtype=float)
    return mean, x.std(axis=-1, ddof=1) / math.sqrt(n)


def _share_se(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = flags.shape[-1]
    share = flags.mean(axis=-1)
    return share, np.sqrt(share * (1.0 - share) / n)


def summarise(rows: dict[str, np.ndarray], scales: np.ndarray) -> dict[str, np.ndarray]:
    """Statistics of one d_k, per scale factor, from its per-row quantities.

    The step of :func:`saturation_sweep` after :func:`row_quantities` (the pages show
    both as the code behind their sweep charts).

    Parameters
    ----------
    rows : dict of ndarray
        :func:`row_quantities` of every row of one d_k, concatenated along the rows
        (plus ``indep_mean`` and ``indep_sq`` when the keys' moments were collected).
    scales : ndarray, shape (n_alpha,)
        The positive factors c = d_k**-alpha the rows were computed with.

    Returns
    -------
    dict of ndarray, each of shape (n_alpha,)
        Means with standard errors (``max_weight_mean``/``_se``, ``entropy_mean``/``_se``,
        ``jacobian_fro_mean``/``_se``, ``relevant_weight_mean``/``_se``, …), quantiles of
        ‖J‖_F (``jacobian_fro_median``, ``_q10``, ``_q90``), ``dead_fraction`` (share of
        rows with ‖J‖_F < ``DEAD_THRESHOLD``) with its s.e., and the same statistics of
        ‖∂p/∂s‖_F = c ‖J‖_F (``grad_fro_*``), exact since c > 0 is fixed per alpha.
        Entropy in nats; logits and margins in logit units (raw score units × c).

    Raises
    ------
    KeyError
        If ``rows`` lacks a quantity of :func:`row_quantities`.

    References
    ----------
    Standard errors: sample std / √n; for a share f, √(f (1 − f) / n); for the logit std,
    the delta method (van der Vaart 1998, *Asymptotic Statistics*, ch. 3).
    """
    out: dict[str, np.ndarray] = {}
    n_alpha = scales.shape[0]
    jac = rows["jacobian_fro"]
    out["max_weight_mean"], out["max_weight_se"] = _mean_se(rows["max_weight"])
    out["entropy_mean"], out["entropy_se"] = _mean_se(rows["entropy"])
    out["jacobian_fro_mean"], out["jacobian_fro_se"] = _mean_se(jac)
    q10, q50, q90 = np.quantile(jac, [0.1, 0.5, 0.9], axis=-1)
    out["jacobian_fro_median"], out["jacobian_fro_q10"], out["jacobian_fro_q90"] = q50, q10, q90
    out["dead_fraction"], out["dead_fraction_se"] = _share_se(jac < DEAD_THRESHOLD)
    # ‖∂p/∂s‖_F = c ‖J‖_F with c > 0 fixed per alpha: means and quantiles scale exactly.
    out["grad_fro_mean"] = scales * out["jacobian_fro_mean"]
    out["grad_fro_se"] = scales * out["jacobian_fro_se"]
    out["grad_fro_median"], out["grad_fro_q10"], out["grad_fro_q90"] = (
        scales * q50,
        scales * q10,
        scales * q90,
    )
    out["relevant_weight_mean"], out["relevant_weight_se"] = _mean_se(rows["relevant_weight"])
    rate, rate_se = _share_se(rows["relevant_is_argmax"])
    out["relevant_argmax_rate"] = np.full(n_alpha, rate)
    out["relevant_argmax_se"] = np.full(n_alpha, rate_se)
    logit_mean, logit_se = _mean_se(rows["relevant_score"])
    out["relevant_logit_mean"], out["relevant_logit_se"] = scales * logit_mean, scales * logit_se
    margin_mean, margin_se = _mean_se(rows["relevant_margin"])
    out["relevant_margin_mean"], out["relevant_margin_se"] = (
        scales * margin_mean,
        scales * margin_se,
    )
    if "indep_sq" in rows:
        m, u = rows["indep_mean"], rows["indep_sq"]
        m_bar = m.mean()
        variance = max(u.mean() - m_bar**2, 0.0)
        std = math.sqrt(variance)
        # Delta method: influence of each row on E[u] − E[m]² is u − 2 m̄ m.
        _, var_se = _mean_se(u - 2.0 * m_bar * m)
        std_se = float(var_se) / (2.0 * std) if std > 0 else _NAN
        out["logit_std"], out["logit_std_se"] = scales * std, scales * std_se
    else:
        out["logit_std"] = out["logit_std_se"] = np.full(n_alpha, np.nan)
    return out


def _run(
    d_values: list[int],
    n_keys: int,
    alphas: list[float],
    rng: np.random.Generator,
    n_rows: int,
    rho: float,
    per_row: bool,
) -> list[dict[str, np.ndarray]]:
    """Simulate every d_k in turn; return summaries (or per-row quantities) per d_k.

    The same standard normals Z (common random numbers) are reused for every
    d_k, and every alpha shares the same rows; only r² = ‖q‖² is drawn anew
    per d_k. Each cell is an exact sample of its own (d_k, alpha); cells are
    positively correlated, which makes curves over d_k and alpha smooth.
    """
    sizes = _chunk_rows(n_rows, n_keys)
    z_seed = int(rng.integers(0, 2**63 - 1))
    cache = n_rows * n_keys <= _Z_CACHE_ELEMENTS and len(d_values) > 1
    z_chunks = list(_normal_chunks(z_seed, sizes, n_keys)) if cache else None
    results = []
    for d in d_values:
        scales = np.array([float(d) ** -a for a in alphas])
        rows = _simulate_d(d, n_keys, scales, rng, sizes, rho, z_chunks, z_seed)
        results.append(rows if per_row else summarise(rows, scales))
    return results


# --------------------------------------------------------------------------- public API


def saturation_stats(
    d: int,
    n_keys: int,
    alpha: float,
    *,
    rng: np.random.Generator,
    n_rows: int = 20_000,
    rho: float = 0.0,
) -> SaturationStats:
    """Saturation statistics of softmax over random query rows (exact fast sampler).

    Parameters
    ----------
    d : int
        d_k, in [1, 2**20].
    n_keys : int
        Keys per row, in [1, 65536]. n_keys = 1 is allowed and trivial
        (p = 1, H = 0, J = 0).
    alpha : float
        Scaling exponent in [0, 4]: logits = d_k**-alpha · scores.
    rng : numpy.random.Generator
    n_rows : int
        Query rows simulated, in [1, 5_000_000] (standard errors are NaN for 1).
    rho : float
        Correlation of key 0 with the query, |rho| < 1 (0: all keys independent).

    Returns
    -------
    SaturationStats
        Weights as probabilities, entropy in nats (see the class).

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it and the range).

    References
    ----------
    Vaswani et al. 2017, §3.2.1 footnote 4; Yang et al. 2022 (rho ≠ 0, alpha = 1);
    the laws it is checked against: docs/mathematics.md §2–§4.
    """
    d = _check_d(d)
    n_keys, rho, n_rows = _check_common(n_keys, rho, n_rows, rng)
    alpha = check_alpha(alpha)
    stats = _run([d], n_keys, [alpha], rng, n_rows, rho, per_row=False)[0]
    values = {name: float(stats[name][0]) for name in STAT_FIELDS}
    return SaturationStats(**values, d=d, n_keys=n_keys, alpha=alpha, rho=rho, n_rows=n_rows)


def saturation_sweep(
    d_values: Sequence[int],
    n_keys: int,
    alphas: Sequence[float],
    *,
    rng: np.random.Generator,
    n_rows: int = 20_000,
    rho: float = 0.0,
) -> dict[str, np.ndarray]:
    """:func:`saturation_stats` over a grid of d_k and alpha, vectorised.

    Every alpha reuses the same rows, and every d_k the same standard normals
    (common random numbers: smooth curves, correlated errors); each cell on
    its own is an exact sample.

    Parameters
    ----------
    d_values : sequence of int, length n_d
        Values of d_k, each in [1, 2**20].
    n_keys : int
    alphas : sequence of float, length n_alpha
        Scaling exponents, each in [0, 4].
    rng : numpy.random.Generator
    n_rows : int
        Rows per cell.
    rho : float

    Returns
    -------
    dict of str -> ndarray, shape (n_alpha, n_d)
        One entry per statistic field of :class:`SaturationStats` (same
        names and units, e.g. ``"entropy_mean"`` in nats), plus ``"d"`` and ``"alpha"``
        grids.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    As :func:`saturation_stats`.
    """
    ds = _check_list("d_values", d_values, _check_d_named)
    n_keys, rho, n_rows = _check_common(n_keys, rho, n_rows, rng)
    alpha_list = _check_list("alphas", alphas, lambda name, v: check_real(name, v, 0.0, ALPHA_MAX))
    per_d = _run(ds, n_keys, alpha_list, rng, n_rows, rho, per_row=False)
    out = {name: np.stack([cell[name] for cell in per_d], axis=1) for name in STAT_FIELDS}
    out["d"], out["alpha"] = np.meshgrid(np.array(ds), np.array(alpha_list))
    return out


def saturation_samples(
    d: int,
    n_keys: int,
    alpha: float,
    *,
    rng: np.random.Generator,
    n_rows: int = 20_000,
    rho: float = 0.0,
) -> dict[str, np.ndarray]:
    """Per-row quantities behind :func:`saturation_stats` (for histograms).

    Parameters
    ----------
    As :func:`saturation_stats`.

    Returns
    -------
    dict of str -> ndarray, each shape (n_rows,)
        ``max_weight``, ``entropy`` (nats), ``jacobian_fro`` (‖J‖_F),
        ``grad_fro`` (d_k**-alpha ‖J‖_F), ``relevant_weight`` (weight of key
        0), ``relevant_is_argmax`` (bool), ``relevant_logit`` (logit of key 0).

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    As :func:`saturation_stats`.
    """
    d = _check_d(d)
    n_keys, rho, n_rows = _check_common(n_keys, rho, n_rows, rng)
    alpha = check_alpha(alpha)
    rows = _run([d], n_keys, [alpha], rng, n_rows, rho, per_row=True)[0]
    scale = float(d) ** -alpha
    return {
        "max_weight": rows["max_weight"][0],
        "entropy": rows["entropy"][0],
        "jacobian_fro": rows["jacobian_fro"][0],
        "grad_fro": scale * rows["jacobian_fro"][0],
        "relevant_weight": rows["relevant_weight"][0],
        "relevant_is_argmax": rows["relevant_is_argmax"],
        "relevant_logit": scale * rows["relevant_score"],
    }


def classic_experiment_rowmax(
    batch: int = 4,
    seq_len: int = 10,
    d_k: int = 64,
    n_replicates: int = 2000,
    *,
    rng: np.random.Generator,
    alpha: float,
) -> np.ndarray:
    """Row maxima of softmax(Q Kᵀ · d_k**-alpha) for the often-quoted toy experiment.

    Each replicate draws Q, K ~ N(0, 1) of shape (batch, seq_len, d_k)
    directly (no shortcut: rows of one tensor share K, so they are dependent)
    and records the largest weight of every query row.

    Parameters
    ----------
    batch, seq_len, d_k, n_replicates : int
        Shape of Q and K and number of independent replicates (each ≥ 1).
    rng : numpy.random.Generator
    alpha : float
        Scaling exponent in [0, 4] (0 unscaled, 0.5 divided by √d_k).

    Returns
    -------
    ndarray, shape (n_replicates, batch, seq_len)
        Max weight of each row. ``.max(axis=(1, 2))`` gives the per-tensor
        maximum (≈ 1 unscaled), which a printout of row maxima does not single
        out; the mean over rows is ≈ 0.86 unscaled at the defaults. Rows of one replicate are
        correlated: take standard errors over replicates.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    docs/mathematics.md §3.6; Vaswani et al. 2017, §3.2.1 footnote 4.
    """
    check_rng("rng", rng)
    batch = check_int("batch", batch, 1, 4096)
    seq_len = check_int("seq_len", seq_len, 1, 4096)
    d_k = check_int("d_k", d_k, 1, 65536)
    n_replicates = check_int("n_replicates", n_replicates, 1, 1_000_000)
    scale = float(d_k) ** -check_alpha(alpha)
    per_replicate = batch * seq_len * max(d_k, seq_len)
    out = np.empty((n_replicates, batch, seq_len))
    start = 0
    for size in _chunk_rows(n_replicates, per_replicate):
        q = rng.standard_normal((size, batch, seq_len, d_k))
        k = rng.standard_normal((size, batch, seq_len, d_k))
        logits = (q @ np.swapaxes(k, -1, -2)) * scale  # (size, batch, seq_len, seq_len)
        logits -= logits.max(axis=-1, keepdims=True)
        # max p = 1 / Σ exp(z − max z)
        out[start : start + size] = 1.0 / np.exp(logits).sum(axis=-1)
        start += size
    return out


def naive_overflow_rate(
    d: int,
    n_keys: int,
    alpha: float,
    dtype=np.float16,
    *,
    rng: np.random.Generator,
    n_rows: int = 20_000,
) -> float:
    """Share of query rows whose naive (no max subtraction) softmax overflows in ``dtype``.

    Rows are drawn with all keys independent (rho = 0) by the exact fast
    sampler; a row overflows when an exp(logit) or the row sum rounds to inf
    in ``dtype`` (see :func:`core.softmax.row_overflows`). Rows in which every
    exp underflows to 0 are not counted (a different failure).

    Parameters
    ----------
    d : int
        d_k, in [1, 2**20].
    n_keys : int
        In [1, 65536].
    alpha : float
        Scaling exponent in [0, 4].
    dtype : numpy floating dtype
        float16 overflows for logits ≥ 11.09, float32 ≥ 88.72.
    rng : numpy.random.Generator
    n_rows : int

    Returns
    -------
    float
        Overflow share in [0, 1]; its s.e. is sqrt(f (1 − f) / n_rows).
        For float16, n_keys = 10 and alpha = 0 it climbs through ½ once d_k
        is in the fifties; with alpha = ½ the true rate is below 1e-12 for
        d_k ≥ 16 (:func:`core.softmax.scaled_overflow_chance`), so the
        estimate is 0.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    docs/mathematics.md §5.
    """
    return float(naive_overflow_sweep([d], n_keys, [alpha], dtype, rng=rng, n_rows=n_rows)[0, 0])


def _may_overflow(top_logits: np.ndarray, n_keys: int, dtype: np.dtype) -> np.ndarray:
    """False for rows whose naive softmax in ``dtype`` cannot overflow (see
    :func:`naive_overflow_sweep`); ``top_logits``: each row's largest logit, shape (rows,)."""
    info = np.finfo(dtype)
    eps = float(info.eps)
    safe_below = math.log(float(info.max)) - math.log(n_keys) - (n_keys + 1) * eps
    return top_logits + np.abs(top_logits) * eps >= safe_below


def naive_overflow_sweep(
    d_values: Sequence[int],
    n_keys: int,
    alphas: Sequence[float],
    dtype=np.float16,
    *,
    rng: np.random.Generator,
    n_rows: int = 20_000,
) -> np.ndarray:
    """:func:`naive_overflow_rate` over a grid; returns shape (n_alpha, n_d).

    Every alpha shares the same rows, and every d_k the same standard normals
    (common random numbers, as in :func:`saturation_sweep`); each cell on its
    own is an exact sample. Only rows that can overflow are passed through the
    naive softmax in ``dtype``: a row whose largest logit m has
    m (1 + ε) + ln n_keys + (n_keys + 1) ε < ln(max finite) cannot, since the
    cast, each exp and each addition round up by a factor of at most 1 + ε
    (ε = the dtype's machine epsilon).

    Parameters
    ----------
    d_values : sequence of int, length n_d
        Values of d_k, each in [1, 2**20].
    n_keys : int
        In [1, 65536].
    alphas : sequence of float, length n_alpha
        Scaling exponents, each in [0, 4].
    dtype : numpy floating dtype
    rng : numpy.random.Generator
    n_rows : int
        Rows per cell, in [1, 5_000_000].

    Returns
    -------
    ndarray, shape (n_alpha, n_d)
        Overflow shares in [0, 1], as :func:`naive_overflow_rate`.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    docs/mathematics.md §5; IEEE Std 754-2019, §4.3 (rounding).
    """
    ds = _check_list("d_values", d_values, _check_d_named)
    n_keys, _, n_rows = _check_common(n_keys, 0.0, n_rows, rng)
    alpha_list = _check_list("alphas", alphas, lambda name, v: check_real(name, v, 0.0, ALPHA_MAX))
    dt = check_float_dtype("dtype", dtype)
    counts = np.zeros((len(alpha_list), len(ds)))
    sizes = _chunk_rows(n_rows, n_keys)
    z_seed = int(rng.integers(0, 2**63 - 1))
    cache = n_rows * n_keys <= _Z_CACHE_ELEMENTS and len(ds) > 1
    z_chunks = list(_normal_chunks(z_seed, sizes, n_keys)) if cache else None
    for j, d in enumerate(ds):
        normals = z_chunks if z_chunks is not None else _normal_chunks(z_seed, sizes, n_keys)
        for size, z in zip(sizes, normals, strict=True):
            scores = _scores_from_normals(z, rng.chisquare(d, size), 0.0)
            top = scores.max(axis=1)
            for i, a in enumerate(alpha_list):
                scale = float(d) ** -a
                can = _may_overflow(top * scale, n_keys, dt)
                if can.any():
                    logits = scores[can] * scale
                    counts[i, j] += np.count_nonzero(row_overflows(logits, dt))
    return counts / n_rows
