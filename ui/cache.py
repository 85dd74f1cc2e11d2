"""``st.cache_data`` wrappers around the core experiments.

Every wrapper takes only hashable primitives (the cache key is the whole input) and
returns small, chart-ready numeric frames — never raw samples — so that a bounded
``max_entries`` keeps memory small on a 690 MB host. Labels are added by the page,
so one cached result serves both languages.

Each chart draws from its own stream, ``np.random.default_rng([seed, stream])``:
moving one chart's control never changes another chart's random picture.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core import variance as var_core
from core.sampling import dot_products, sample_qk

SWEEP_D = 2 ** np.arange(13)  # d_k = 1, 2, 4, …, 4096
SWEEP_SAMPLES = 20_000
#: Uniform components have no exact O(1) sampler: their q·k is summed over d_k
#: products. These caps bound one rerun's work (2²⁵ products ≈ 0.3 s on one core).
MAX_UNIFORM_PRODUCTS = 2**25
MAX_UNIFORM_SWEEP_PRODUCTS = 2**24


def samples_for(dist: str, d_k: int, n_samples: int, budget: int = MAX_UNIFORM_PRODUCTS) -> int:
    """How many q·k samples a picture draws: all of them, except uniform beyond the budget."""
    if dist != "uniform":
        return n_samples
    return max(1_000, min(n_samples, budget // d_k))


N_PATHS = 20
MAX_TERMS_SHOWN = 256

# one stream per random picture
STREAM_HISTOGRAM, STREAM_SWEEP, STREAM_PATHS, STREAM_TERMS = 1, 2, 3, 4


def rng_for(seed: int, stream: int) -> np.random.Generator:
    """The generator of one random picture: independent streams from one seed."""
    return np.random.default_rng([int(seed), int(stream)])


@st.cache_data(max_entries=64, show_spinner=False)
def score_histograms(
    d_k: int, n_samples: int, dist: str, sigma_q: float, sigma_k: float, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Binned q·k and q·k/√d_k with exact and Gaussian laws, and the sample moments.

    Returns
    -------
    raw, scaled : DataFrame (≤ 61 rows each)
        Columns x0, x1, x, density, exact, gauss.
    moments : dict
        :func:`core.variance.sample_moments` of the unscaled samples.
    """
    s = dot_products(
        d_k,
        samples_for(dist, d_k, n_samples),
        rng=rng_for(seed, STREAM_HISTOGRAM),
        dist=dist,
        sigma_q=sigma_q,
        sigma_k=sigma_k,
    )
    edges = var_core.histogram_edges(d_k, dist, sigma_q, sigma_k)
    density = var_core.histogram_density(s, edges)
    exact = var_core.expected_density(edges, d_k, dist, sigma_q, sigma_k)
    sd = math.sqrt(d_k) * sigma_q * sigma_k
    centre = 0.5 * (edges[1:] + edges[:-1])
    gauss = np.exp(-0.5 * (centre / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    raw = pd.DataFrame(
        {
            "x0": edges[:-1],
            "x1": edges[1:],
            "x": centre,
            "density": density,
            "exact": exact,
            "gauss": gauss,
        }
    )
    root = math.sqrt(d_k)
    # dividing s by √d_k divides every x by √d_k and multiplies every density by √d_k
    scaled = raw.assign(
        x0=raw.x0 / root,
        x1=raw.x1 / root,
        x=raw.x / root,
        density=raw.density * root,
        exact=raw.exact * root,
        gauss=raw.gauss * root,
    )
    return raw, scaled, var_core.sample_moments(s)


@st.cache_data(max_entries=8, show_spinner=False)
def variance_sweep(dist: str, seed: int) -> pd.DataFrame:
    """Var(q·k) at unit σ over d_k = 1…4096, unscaled and divided by √d_k.

    Returns
    -------
    DataFrame, 26 rows: d, scaled (bool), var, lo, hi, theory — for σ_q = σ_k = 1;
    multiply var, lo, hi, theory by σ_q²σ_k² for other scales.
    """
    sw = var_core.variance_sweep(
        SWEEP_D,
        SWEEP_SAMPLES,
        rng=rng_for(seed, STREAM_SWEEP),
        dist=dist,
        max_products=MAX_UNIFORM_SWEEP_PRODUCTS,
    )
    raw = pd.DataFrame({k: sw[k] for k in ("d", "var", "lo", "hi", "theory")}).assign(scaled=False)
    scaled = raw.assign(
        var=raw["var"] / raw.d, lo=raw.lo / raw.d, hi=raw.hi / raw.d, theory=1.0, scaled=True
    )
    return pd.concat([raw, scaled], ignore_index=True)


@st.cache_data(max_entries=32, show_spinner=False)
def running_sums(
    d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Partial sums of q_i k_i for ``N_PATHS`` pairs (≤ 200 points each) and envelopes.

    Returns
    -------
    paths : DataFrame with i, path, sum; i = 0 (sum 0) starts every path.
    envelope : DataFrame with i, k (1 or 2 standard deviations), lo, hi = ±k √i σ_qσ_k.
    """
    i, sums = var_core.running_sums(
        d_k, N_PATHS, rng=rng_for(seed, STREAM_PATHS), dist=dist, sigma_q=sigma_q, sigma_k=sigma_k
    )
    # every path starts at the origin (the empty sum), so even d_k = 1 draws a segment
    i = np.concatenate([[0], i])
    sums = np.hstack([np.zeros((N_PATHS, 1)), sums])
    paths = pd.DataFrame(
        {
            "i": np.tile(i, N_PATHS),
            "path": np.repeat(np.arange(1, N_PATHS + 1), i.size),
            "sum": sums.ravel(),
        }
    )
    grid = i
    sd = np.sqrt(grid) * sigma_q * sigma_k
    envelope = pd.concat(
        [pd.DataFrame({"i": grid, "k": k, "lo": -k * sd, "hi": k * sd}) for k in (1, 2)],
        ignore_index=True,
    )
    return paths, envelope


@st.cache_data(max_entries=32, show_spinner=False)
def pair_terms(
    d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int
) -> tuple[pd.DataFrame, float]:
    """The products q_i k_i of one sampled pair (first ``MAX_TERMS_SHOWN``) and their full sum."""
    q, k = sample_qk(
        1, d_k, rng=rng_for(seed, STREAM_TERMS), dist=dist, sigma_q=sigma_q, sigma_k=sigma_k
    )
    terms = q[0] * k[0]
    shown = terms[:MAX_TERMS_SHOWN]
    df = pd.DataFrame({"i": np.arange(1, shown.size + 1), "term": shown, "positive": shown >= 0})
    return df, float(terms.sum())


# --- saturation experiments (saturation, gradients and √d_k-vs-d_k pages) -------------
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


# --- sqrt_vs_d page ---
STREAM_SQRT_VS_D_HEATMAP, STREAM_SQRT_VS_D_AT_D = 40, 41
#: α grid of the (d_k, α) heatmap: 0, 0.05, …, 1.5 (31 values).
HEATMAP_ALPHAS = tuple(round(0.05 * i, 2) for i in range(31))


def sqrt_vs_d_rows(n_keys: int) -> int:
    """Rows per cell of the lines against d_k: :func:`sweep_rows`."""
    return sweep_rows(n_keys)


def sqrt_vs_d_heatmap_rows(n_keys: int) -> int:
    """Rows per heatmap cell: 600 at n_keys ≤ 10, fewer for longer rows (≤ 6k scores).

    The cell's colour is a mean entropy share, whose standard error at 600 rows is
    below 0.01 — finer than the colour scale resolves.
    """
    return min(600, max(40, 6_000 // int(n_keys)))


@st.cache_data(max_entries=16, show_spinner=False)
def sqrt_vs_d_heatmap(n_keys: int, rho: float, seed: int) -> pd.DataFrame:
    """Mean entropy / ln n_keys over d_k = 1…4096 × α = 0, 0.05, …, 1.5.

    Independent of the page's α and d_k controls, so moving them never recomputes it.
    About 0.03 s of CPU at any n_keys (600 rows per cell at n_keys = 10).

    Returns
    -------
    DataFrame, 13 × 31 = 403 rows: ``d``, ``alpha``, ``share`` (mean H / ln n_keys),
    ``share_se``.
    """
    from core.experiments import saturation_sweep as sweep

    out = sweep(
        [int(d) for d in SWEEP_D],
        n_keys,
        list(HEATMAP_ALPHAS),
        rng=rng_for(seed, STREAM_SQRT_VS_D_HEATMAP),
        n_rows=sqrt_vs_d_heatmap_rows(n_keys),
        rho=rho,
    )
    ln_n = math.log(n_keys)
    return pd.DataFrame(
        {
            "d": out["d"].ravel(),
            "alpha": out["alpha"].ravel(),
            "share": out["entropy_mean"].ravel() / ln_n,
            "share_se": out["entropy_se"].ravel() / ln_n,
        }
    )


@st.cache_data(max_entries=64, show_spinner=False)
def sqrt_vs_d_at_d(
    d_k: int, n_keys: int, alphas: tuple[float, ...], rho: float, seed: int
) -> pd.DataFrame:
    """Saturation statistics at one d_k for a few α (the page's summary table).

    Returns
    -------
    DataFrame, one row per alpha: ``alpha`` and every statistic of
    :class:`core.experiments.SaturationStats`.
    """
    from core.experiments import saturation_sweep as sweep

    out = sweep(
        [int(d_k)],
        n_keys,
        list(alphas),
        rng=rng_for(seed, STREAM_SQRT_VS_D_AT_D),
        n_rows=sqrt_vs_d_rows(n_keys),
        rho=rho,
    )
    return pd.DataFrame({name: np.asarray(values).ravel() for name, values in out.items()})


# --- gradients page ---------------------------------------------------------------------
STREAM_JACOBIAN_ROW, STREAM_QUERY_GRAD = 30, 31
#: Keys shown in a Jacobian heatmap (the largest scores when a row has more).
HEATMAP_MAX_KEYS = 32
#: Rows per cell of the gradient sweeps and of the ∂L/∂q histogram, and the cap on
#: rows × n_keys that keeps a recomputation small.

#: Gap explorer grid (logit units) and histogram geometry (decades).
GAP_GRID = tuple(float(g) for g in np.arange(0.0, 30.0 + 1e-9, 0.5))  # the slider's steps
HIST_BIN, HIST_SPAN = 0.25, 24.0
#: log y-axes stop here; smaller values (never reached for d_k ≤ 4096) sit on the floor.
LOG_FLOOR = 1e-40
#: Statistics of the gradient sweeps.
GRADIENT_SWEEP_FIELDS = (
    "jacobian_fro_mean",
    "jacobian_fro_median",
    "jacobian_fro_q10",
    "jacobian_fro_q90",
    "grad_fro_mean",
    "grad_fro_median",
    "grad_fro_q10",
    "grad_fro_q90",
    "dead_fraction",
    "dead_fraction_se",
)


def gradient_rows(n_keys: int) -> int:
    """Rows per cell at ``n_keys``: :func:`sweep_rows`."""
    return sweep_rows(n_keys)


def gradient_sweep(n_keys: int, alpha: float, seed: int) -> pd.DataFrame:
    """Jacobian statistics against d_k for α = 0, ½, 1 and ``alpha``, from two cached calls.

    The fixed exponents and the chosen one are separate :func:`saturation_sweep`
    calls, so moving α recomputes one exponent only (none when α is 0, ½ or 1).

    Returns
    -------
    DataFrame, one row per (alpha, d): ``alpha``, ``d`` and ``GRADIENT_SWEEP_FIELDS``.
    """
    n_rows = gradient_rows(n_keys)
    frames = [saturation_sweep(n_keys, (0.0, 0.5, 1.0), 0.0, seed, n_rows)]
    if round(float(alpha), 6) not in (0.0, 0.5, 1.0):
        frames.append(saturation_sweep(n_keys, (float(alpha),), 0.0, seed, n_rows))
    return pd.concat(frames, ignore_index=True)[["alpha", "d", *GRADIENT_SWEEP_FIELDS]]


def gradient_sweep_frames(n_keys: int, alpha: float, seed: int) -> dict[str, pd.DataFrame]:
    """:func:`gradient_sweep` as chart frames (labels are added by the page).

    Returns
    -------
    dict with ``"jac"`` (‖J‖_F), ``"grad"`` (‖∂p/∂s‖_F) — columns ``alpha``, ``d``,
    ``value`` (median), ``lo``, ``hi`` (10 % and 90 % quantiles), ``mean``, all at least
    ``LOG_FLOOR`` for a log axis — and ``"dead"``: ``value`` (share of rows with
    ‖J‖_F < 10⁻³), ``lo``, ``hi`` (±2 s.e., within [0, 1]).
    """
    sw = gradient_sweep(n_keys, alpha, seed)
    out = {}
    for name, stat in (("jac", "jacobian_fro"), ("grad", "grad_fro")):
        cols = {"value": "median", "lo": "q10", "hi": "q90", "mean": "mean"}
        out[name] = sw[["alpha", "d"]].assign(
            **{k: sw[f"{stat}_{v}"].clip(lower=LOG_FLOOR) for k, v in cols.items()}
        )
    share, se = sw["dead_fraction"], sw["dead_fraction_se"]
    out["dead"] = sw[["alpha", "d"]].assign(
        value=share, lo=(share - 2 * se).clip(0, 1), hi=(share + 2 * se).clip(0, 1)
    )
    return out


def gradient_at(d_k: int, n_keys: int, alpha: float, seed: int) -> pd.DataFrame:
    """The gradient statistics at the current d_k: columns ``unscaled`` (α = 0), ``scaled``.

    Rows: ``jacobian_fro_median``, ``jacobian_fro_mean``, ``grad_fro_median``,
    ``grad_fro_mean``, ``dead_fraction``.
    """
    at = saturation_sweep(
        n_keys, (0.0, float(alpha)), 0.0, seed, gradient_rows(n_keys), (int(d_k),)
    )
    rows = ["jacobian_fro_median", "jacobian_fro_mean", "grad_fro_median", "grad_fro_mean"]
    rows.append("dead_fraction")
    return pd.DataFrame(
        {"unscaled": at.iloc[0][rows].to_numpy(), "scaled": at.iloc[-1][rows].to_numpy()},
        index=rows,
    )


@st.cache_data(max_entries=64, show_spinner=False)
def jacobian_row(
    d_k: int, n_keys: int, alpha: float, seed: int
) -> tuple[pd.DataFrame, dict[str, dict[str, float]]]:
    """J = ∂p/∂z of one sampled query row, unscaled (α = 0) and at ``alpha``.

    Returns
    -------
    cells : DataFrame (≤ 2 × 32² rows)
        ``which`` ("unscaled" / "scaled"), ``i``, ``j`` (1-based key numbers),
        ``value`` (J_ij), ``p_i``, ``p_j`` — for the ``HEATMAP_MAX_KEYS`` keys with the
        largest scores when the row is longer.
    summary : dict
        Per ``which``: ``p_top``, ``rest`` (1 − p_top, summed from the small weights),
        ``fro`` (‖J‖_F over all keys), ``max_abs`` (largest |J_ij|), ``c`` (d_k^−α).
    """
    from core.experiments import sample_scores
    from core.gradients import jacobian_from_logits
    from core.softmax import jacobian_norm

    scores = sample_scores(d_k, n_keys, rng=rng_for(seed, STREAM_JACOBIAN_ROW))[0]
    shown = np.sort(np.argsort(-scores, kind="stable")[:HEATMAP_MAX_KEYS])
    frames, summary = [], {}
    for which, a in (("unscaled", 0.0), ("scaled", float(alpha))):
        c = float(d_k) ** -a
        p, jac = jacobian_from_logits(c * scores)
        top = int(np.argmax(p))
        summary[which] = {
            "p_top": float(p[top]),
            "rest": float(np.delete(p, top).sum()),
            "fro": float(jacobian_norm(p)),
            "max_abs": float(np.abs(jac).max()),
            "c": c,
        }
        sub = jac[np.ix_(shown, shown)]
        ii, jj = np.meshgrid(shown, shown, indexing="ij")
        frames.append(
            pd.DataFrame(
                {
                    "which": which,
                    "i": ii.ravel() + 1,
                    "j": jj.ravel() + 1,
                    "value": sub.ravel(),
                    "p_i": p[ii.ravel()],
                    "p_j": p[jj.ravel()],
                }
            )
        )
    return pd.concat(frames, ignore_index=True), summary


#: The gap explorer draws and prints a law only within this relative error of the exact value.
GAP_LAW_TOLERANCE = 0.25


def gap_law_holds(p_top, law, exact):
    """Where a gap-explorer law is shown (chart and formula alike): the top key holds at
    least half the weight (Σε ≤ 1, where the laws are leading-order expansions) and the
    law is within ``GAP_LAW_TOLERANCE`` of the exact value. Scalars or arrays."""
    p_top, law, exact = np.asarray(p_top), np.asarray(law), np.asarray(exact)
    with np.errstate(divide="ignore", invalid="ignore"):
        near = np.abs(law / exact - 1) <= GAP_LAW_TOLERANCE
    return (p_top >= 0.5) & (exact > 0) & near


@st.cache_data(max_entries=64, show_spinner=False)
def gap_curves(n_keys: int, gap2: float | None) -> pd.DataFrame:
    """‖J‖_F and the largest off-diagonal |J_ij| against the gap g, exact and law.

    Returns
    -------
    DataFrame (≤ 4 × 61 rows): ``g``, ``quantity`` ("fro" / "offdiag"), ``kind``
    ("exact" / "law"), ``value``. Laws only where the top key holds at least half the
    weight (Σε ≤ 1), the regime in which they are leading-order expansions, and where
    they are within ``GAP_LAW_TOLERANCE`` of the exact value.
    """
    from core.gradients import gap_curve

    cur = gap_curve(GAP_GRID, n_keys, gap2)
    frames = []
    for quantity in ("fro", "offdiag"):
        frames.append(pd.DataFrame({"g": cur["g"], "kind": "exact", "value": cur[quantity]}))
        law, exact = cur[f"{quantity}_law"], cur[quantity]
        valid = gap_law_holds(cur["p_top"], law, exact)
        frames.append(pd.DataFrame({"g": cur["g"][valid], "kind": "law", "value": law[valid]}))
        frames[-2]["quantity"] = frames[-1]["quantity"] = quantity
    return pd.concat(frames, ignore_index=True)


def gap_point(g: float, n_keys: int, gap2: float | None) -> dict[str, float]:
    """:func:`core.gradients.gap_curve` at one gap (microseconds: not cached)."""
    from core.gradients import gap_curve

    return {k: float(v[0]) for k, v in gap_curve([g], n_keys, gap2).items()}


@st.cache_data(max_entries=256, show_spinner=False)
def scaled_overflow_chance(d_k: int, n_keys: int) -> float:
    """:func:`core.softmax.scaled_overflow_chance` in float16 (a 40,000-step quadrature,
    ≈ 4 ms: cached per d_k and n_keys)."""
    from core.softmax import scaled_overflow_chance as chance

    return chance(d_k, n_keys)


@st.cache_data(max_entries=32, show_spinner=False)
def query_grad_median(d_k: int, n_keys: int, alpha: float, seed: int) -> float:
    """Median ‖∂L/∂q‖ at exponent ``alpha`` over the rows of :func:`query_grad_histogram`
    (same seed stream: the same rows)."""
    from core.gradients import query_grad_norms

    rng = rng_for(seed, STREAM_QUERY_GRAD)
    return float(
        np.median(
            query_grad_norms(d_k, n_keys, float(alpha), rng=rng, n_rows=gradient_rows(n_keys))
        )
    )


@st.cache_data(max_entries=32, show_spinner=False)
def query_grad_histogram(
    d_k: int, n_keys: int, alpha: float, seed: int
) -> tuple[pd.DataFrame, dict[str, dict[str, float]], dict[str, float]]:
    """Histogram of log10 ‖∂L/∂q‖ over random rows, unscaled (α = 0) and at ``alpha``.

    Both series use the same rows (same seed stream), so they differ only by the
    scaling. Bins are ``HIST_BIN`` decades wide over at most ``HIST_SPAN`` decades
    below the largest value; rows further down are counted in the leftmost bin.

    Returns
    -------
    bins : DataFrame (≤ 2 × 97 rows): ``which``, ``x0``, ``x1``, ``share`` (% of rows).
    stats : dict per ``which``: ``median``, ``median_log10``, ``mean``, ``q10``, ``q90``,
        ``clipped`` (share of rows below the leftmost edge, %).
    geometry : dict: ``lo``, ``hi`` (outer edges, decades; ``lo`` a whole decade), ``n_rows``.
    """
    from core.gradients import query_grad_norms

    n_rows = gradient_rows(n_keys)
    norms = {
        which: query_grad_norms(d_k, n_keys, a, rng=rng_for(seed, STREAM_QUERY_GRAD), n_rows=n_rows)
        for which, a in (("unscaled", 0.0), ("scaled", float(alpha)))
    }
    logs = {w: np.log10(np.maximum(x, 1e-300)) for w, x in norms.items()}
    top = max(float(v.max()) for v in logs.values())
    bottom = min(float(v.min()) for v in logs.values())
    hi = math.ceil(top / HIST_BIN) * HIST_BIN
    lo = float(max(math.floor(bottom), math.ceil(hi - HIST_SPAN)))  # a whole decade
    edges = np.arange(lo, hi + HIST_BIN / 2, HIST_BIN)
    if edges.size < 2:
        edges = np.array([lo, lo + HIST_BIN])
    frames, stats = [], {}
    for which, lx in logs.items():
        counts, _ = np.histogram(np.clip(lx, edges[0], edges[-1]), bins=edges)
        frames.append(
            pd.DataFrame(
                {"which": which, "x0": edges[:-1], "x1": edges[1:], "share": 100 * counts / n_rows}
            )
        )
        x = norms[which]
        stats[which] = {
            "median": float(np.median(x)),
            "median_log10": float(np.log10(max(np.median(x), 1e-300))),
            "mean": float(x.mean()),
            "q10": float(np.quantile(x, 0.1)),
            "q90": float(np.quantile(x, 0.9)),
            "clipped": float(100 * np.mean(lx < edges[0])),
        }
    geometry = {"lo": float(edges[0]), "hi": float(edges[-1]), "n_rows": n_rows}
    return pd.concat(frames, ignore_index=True), stats, geometry


# --- saturation page ----------------------------------------------------------------
STREAM_SAT_ROW, STREAM_SAT_HEATMAP, STREAM_SAT_ROWMAX, STREAM_SAT_OVERFLOW = 20, 21, 22, 23
#: Rows × keys per overflow-sweep cell (n_rows = min(5_000, budget // n_keys)).
OVERFLOW_BUDGET = 25_000
#: d_k grid of the overflow chart: 2**(k/2) rounded, k = 0…24 (half octaves, 1…4096);
#: float16 exp runs in software, so every point costs.
OVERFLOW_D = tuple(sorted({round(2 ** (k / 2)) for k in range(25)}))
#: Replicates of the toy experiment: entries of the score tensors ≤ budget, 50…2000 of them.
ROWMAX_BUDGET = 1 << 20
ROWMAX_BINS = np.linspace(0.0, 1.0, 51)


def sat_sweep_rows(n_keys: int) -> int:
    """Rows per cell of the saturation sweep: :func:`sweep_rows`."""
    return sweep_rows(n_keys)


def overflow_rows(n_keys: int) -> int:
    """Rows per cell of the overflow sweep: 5,000, fewer for many keys."""
    return int(min(5_000, OVERFLOW_BUDGET // n_keys))


def rowmax_replicates(batch: int, seq_len: int) -> int:
    """Replicates of the toy experiment drawn for its row-max distribution."""
    return int(min(2000, max(50, ROWMAX_BUDGET // (batch * seq_len * seq_len))))


@st.cache_data(max_entries=32, show_spinner=False)
def one_row(d_k: int, n_keys: int, alpha: float, seed: int) -> tuple[pd.DataFrame, dict]:
    """One query against ``n_keys`` keys (q, K ~ N(0, 1), explicit), unscaled and scaled.

    Returns
    -------
    frame : DataFrame, 2 × n_keys rows
        ``key`` (1-based), ``scaled`` (False: α = 0; True: the given α), ``score``
        (q·k), ``logit``, ``weight``.
    stats : dict
        ``max_unscaled``, ``entropy_unscaled``, ``max_scaled``, ``entropy_scaled``
        (entropy in nats), ``score_std`` (sample std of the scores).
    """
    from core.attention import attention_logits
    from core.softmax import softmax, softmax_entropy

    rng = rng_for(seed, STREAM_SAT_ROW)
    q = rng.standard_normal((1, d_k))  # (n_q = 1, d_k)
    k = rng.standard_normal((n_keys, d_k))  # (n_keys, d_k)
    scores = attention_logits(q, k, alpha=0.0)[0]  # (n_keys,)
    frames, stats = [], {"score_std": float(scores.std())}
    for scaled, a in ((False, 0.0), (True, alpha)):
        logits = scores * float(d_k) ** -a
        p = softmax(logits)
        name = "scaled" if scaled else "unscaled"
        stats[f"max_{name}"] = float(p.max())
        stats[f"entropy_{name}"] = float(softmax_entropy(logits))
        frames.append(
            pd.DataFrame(
                {
                    "key": np.arange(1, n_keys + 1),
                    "scaled": scaled,
                    "score": scores,
                    "logit": logits,
                    "weight": p,
                }
            )
        )
    return pd.concat(frames, ignore_index=True), stats


@st.cache_data(max_entries=32, show_spinner=False)
def classic_heatmap(seq_len: int, d_k: int, seed: int) -> pd.DataFrame:
    """softmax(Q Kᵀ) and softmax(Q Kᵀ/√d_k) of one batch element, Q, K ~ N(0, 1) (seq_len, d_k).

    Returns
    -------
    DataFrame, 2 · seq_len² rows: ``scaled`` (bool), ``i`` (query, 1-based), ``j``
    (key), ``score``, ``logit``, ``weight``, ``is_max`` (the row's largest weight),
    ``row_max`` (that weight, repeated along the row).
    """
    from core.attention import attention_logits
    from core.softmax import softmax

    rng = rng_for(seed, STREAM_SAT_HEATMAP)
    q = rng.standard_normal((seq_len, d_k))
    k = rng.standard_normal((seq_len, d_k))
    scores = attention_logits(q, k, alpha=0.0)  # (seq_len, seq_len)
    i, j = np.meshgrid(np.arange(1, seq_len + 1), np.arange(1, seq_len + 1), indexing="ij")
    frames = []
    for scaled, a in ((False, 0.0), (True, 0.5)):
        logits = scores * float(d_k) ** -a
        p = softmax(logits)
        is_max = j == (np.argmax(p, axis=1) + 1)[:, None]
        row_max = np.broadcast_to(p.max(axis=1)[:, None], p.shape)
        frames.append(
            pd.DataFrame(
                {
                    "scaled": scaled,
                    "i": i.ravel(),
                    "j": j.ravel(),
                    "score": scores.ravel(),
                    "logit": logits.ravel(),
                    "weight": p.ravel(),
                    "is_max": is_max.ravel(),
                    "row_max": row_max.ravel(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@st.cache_data(max_entries=32, show_spinner=False)
def classic_rowmax(
    batch: int, seq_len: int, d_k: int, seed: int
) -> tuple[pd.DataFrame, dict[bool, dict[str, float]]]:
    """Distribution of the row max of the toy experiment over many replicates.

    Returns
    -------
    hist : DataFrame, 100 rows
        ``scaled`` (bool), ``x0``, ``x1`` (bin edges on [0, 1], width 0.02), ``share``
        (fraction of all rows in the bin).
    summary : dict
        {False: unscaled, True: divided by √d_k} -> :func:`core.classic.rowmax_summary`.
    """
    from core.classic import classic_rowmax as rowmax
    from core.classic import rowmax_summary

    n_rep = rowmax_replicates(batch, seq_len)
    out = rowmax(
        batch, seq_len, d_k, n_rep, rng=rng_for(seed, STREAM_SAT_ROWMAX), alphas=(0.0, 0.5)
    )  # (2, n_rep, batch, seq_len)
    frames, summary = [], {}
    for scaled, values in zip((False, True), out, strict=True):
        counts, _ = np.histogram(values, bins=ROWMAX_BINS)
        frames.append(
            pd.DataFrame(
                {
                    "scaled": scaled,
                    "x0": ROWMAX_BINS[:-1],
                    "x1": ROWMAX_BINS[1:],
                    "share": counts / values.size,
                }
            )
        )
        summary[scaled] = rowmax_summary(values)
    return pd.concat(frames, ignore_index=True), summary


@st.cache_data(max_entries=32, show_spinner=False)
def overflow_sweep(n_keys: int, alphas: tuple[float, ...], seed: int) -> pd.DataFrame:
    """Share of rows whose naive softmax overflows, float16 and float32, over ``OVERFLOW_D``.

    Both dtypes and every α see the same rows (same stream, common random numbers).

    Returns
    -------
    DataFrame, one row per (dtype, alpha, d): ``dtype`` ("float16"/"float32"),
    ``alpha``, ``d``, ``rate``, ``se`` (√(f(1 − f)/n_rows)).
    """
    from core.experiments import naive_overflow_sweep

    n_rows = overflow_rows(n_keys)
    frames = []
    for dtype in ("float16", "float32"):
        rates = naive_overflow_sweep(
            OVERFLOW_D,
            n_keys,
            alphas,
            np.dtype(dtype),
            rng=rng_for(seed, STREAM_SAT_OVERFLOW),
            n_rows=n_rows,
        )  # (n_alpha, n_d)
        for a, rate in zip(alphas, rates, strict=True):
            frames.append(
                pd.DataFrame(
                    {
                        "dtype": dtype,
                        "alpha": float(a),
                        "d": OVERFLOW_D,
                        "rate": rate,
                        "se": np.sqrt(rate * (1 - rate) / n_rows),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


# --- which-d page ---------------------------------------------------------------------
STREAM_WHICH_D_HEADS, STREAM_WHICH_D_CROSS, STREAM_WHICH_D_QK = 50, 51, 52
#: Tokens per sequence (queries = keys) in the which-d experiments.
WHICH_D_TOKENS = 64
#: Heads computed at most (heads are exchangeable: the first 8 show the spread).
WHICH_D_MAX_HEADS = 8
#: Heads of the cross-attention experiment and of the QK-LayerNorm sweep.
WHICH_D_CROSS_HEADS, WHICH_D_QK_HEADS = 4, 4
#: Input scales of the QK-LayerNorm sweep (also the options of its slider).
WHICH_D_X_SCALES = ("0.125", "0.25", "0.5", "1", "2", "4", "8", "16", "32", "64")


def _divisor_frame(
    raw: np.ndarray,
    divisor_values: dict[str, float],
    factors: dict[str, float],
    theory_sd: dict[str, float],
) -> pd.DataFrame:
    """Per-head statistics of ``raw`` (n_heads, n_q, n_k; divisor 1, fan-in) rescaled per
    init (``factors``) and divided per divisor: one row per (init, divisor, head), with
    ``theory_std`` = theory_sd[init] / divisor."""
    from core.which_d import head_statistics

    combos = [(i, d) for i in factors for d in divisor_values]
    mult = np.array([factors[i] / divisor_values[d] for i, d in combos])
    n_heads = raw.shape[0]
    live = mult != 0  # W_q = 0: every logit is exactly 0, one zero head stands for all
    stats = head_statistics((mult[live, None, None, None] * raw).reshape(-1, *raw.shape[1:]))
    zero = head_statistics(np.zeros((1, *raw.shape[1:])))
    columns = {}
    for key, values in stats.items():
        full = np.empty((len(combos), n_heads))
        full[live] = values.reshape(-1, n_heads)
        full[~live] = zero[key][0]
        columns[key] = full.ravel()
    return pd.DataFrame(
        {
            "init": np.repeat([i for i, _ in combos], n_heads),
            "divisor": np.repeat([d for _, d in combos], n_heads),
            "head": np.tile(np.arange(1, n_heads + 1), len(combos)),
            **columns,
            "theory_std": np.repeat([theory_sd[i] / divisor_values[d] for i, d in combos], n_heads),
        }
    )


@st.cache_data(max_entries=32, show_spinner=False)
def which_d_heads(d_model: int, n_heads: int, seed: int) -> tuple[pd.DataFrame, dict[str, float]]:
    """Multi-head self-attention on random tokens, every init × divisor from one draw.

    x (64, d_model) iid N(0, 1); fan-in projections drawn once for the first
    ``min(n_heads, 8)`` heads of width d_k = d_model / n_heads; std-1 and W_q = 0
    inits are the same draw rescaled (the scores are bilinear in W_q, W_k).

    Returns
    -------
    frame : DataFrame, one row per (init, divisor, head)
        ``init``, ``divisor`` (d_k, d_model, none), ``head``, ``std``, ``entropy``,
        ``max_weight``, ``theory_std`` (√Var(q·k) / divisor, REFERENCE-style theory).
    extras : dict
        ``d_k``, ``heads_shown``, ``quarter_gap`` (max |difference| of d_k^-¼ on q and k
        against 1/√d_k on q·kᵀ, head 1, fan-in).
    """
    from core.which_d import (
        DIVISORS_SELF,
        INITS,
        divisor_value,
        init_stds,
        projected_multi_head_logits,
        projected_qk,
        quarter_scaling_gap,
        score_variance,
    )

    d_k = d_model // n_heads
    shown = min(n_heads, WHICH_D_MAX_HEADS)
    rng = rng_for(seed, STREAM_WHICH_D_HEADS)
    x = rng.standard_normal((WHICH_D_TOKENS, d_model))
    raw, _ = projected_multi_head_logits(x, shown, d_k, rng=rng, divisor=1.0)
    fan = d_model**-0.5
    stds = {init: init_stds(init, d_model, d_model) for init in INITS}
    factors = {init: sq * sk / fan**2 for init, (sq, sk) in stds.items()}
    values = {
        name: divisor_value(name, d_k=d_k, d_q=d_model, d_kv=d_model) for name in DIVISORS_SELF
    }
    sd = {init: math.sqrt(score_variance(d_k, d_model, d_model, *s)) for init, s in stds.items()}
    frame = _divisor_frame(raw, values, factors, sd)
    q, k = projected_qk(x, d_k, rng=rng)
    extras = {"d_k": d_k, "heads_shown": shown, "quarter_gap": quarter_scaling_gap(q, k)}
    return frame, extras


@st.cache_data(max_entries=32, show_spinner=False)
def which_d_cross(d_q_in: int, d_kv_in: int, d_proj: int, seed: int) -> pd.DataFrame:
    """Cross-attention (64 queries of width d_q_in, 64 keys of width d_kv_in, 4 heads of
    width d_proj), every init × divisor (√d_k, √d_q, √d_kv) from one draw.

    Returns
    -------
    DataFrame, one row per (init, divisor, head): as :func:`which_d_heads`.
    """
    from core.which_d import (
        DIVISORS_CROSS,
        INITS,
        divisor_value,
        init_stds,
        projected_cross_attention_logits,
        score_variance,
    )

    rng = rng_for(seed, STREAM_WHICH_D_CROSS)
    x_q = rng.standard_normal((WHICH_D_TOKENS, d_q_in))
    x_kv = rng.standard_normal((WHICH_D_TOKENS, d_kv_in))
    raw, _ = projected_cross_attention_logits(
        x_q, x_kv, WHICH_D_CROSS_HEADS, d_proj, rng=rng, divisor=1.0
    )
    fan = d_q_in**-0.5 * d_kv_in**-0.5
    stds = {init: init_stds(init, d_q_in, d_kv_in) for init in INITS}
    factors = {init: sq * sk / fan for init, (sq, sk) in stds.items()}
    values = {
        name: divisor_value(name, d_k=d_proj, d_q=d_q_in, d_kv=d_kv_in) for name in DIVISORS_CROSS
    }
    sd = {init: math.sqrt(score_variance(d_proj, d_q_in, d_kv_in, *s)) for init, s in stds.items()}
    return _divisor_frame(raw, values, factors, sd)


@st.cache_data(max_entries=32, show_spinner=False)
def which_d_qk_sweep(d_model: int, n_heads: int, seed: int) -> pd.DataFrame:
    """Logit std and entropy (÷√d_k, fan-in) against the input scale, with and without QK
    LayerNorm: one row per (scale, layernorm) for the scales of ``WHICH_D_X_SCALES``.

    Returns
    -------
    DataFrame: ``scale``, ``layernorm`` (bool), ``std``, ``entropy``, ``theory_std``
    (s² without LayerNorm; √(d_k/(d_k − 1)) with it, 0 at d_k = 1 where LayerNorm maps
    every vector to 0).
    """
    from core.which_d import input_scale_sweep, layernorm_logit_std

    d_k = d_model // n_heads
    rng = rng_for(seed, STREAM_WHICH_D_QK)
    x = rng.standard_normal((WHICH_D_TOKENS, d_model))
    scales = np.array([float(s) for s in WHICH_D_X_SCALES])
    sw = input_scale_sweep(
        x, min(n_heads, WHICH_D_QK_HEADS), d_k, scales, rng=rng, divisor=math.sqrt(d_k)
    )
    ln_std = layernorm_logit_std(d_k) if d_k >= 2 else 0.0
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "scale": scales,
                    "layernorm": ln,
                    "std": sw[f"std_{tag}"],
                    "entropy": sw[f"entropy_{tag}"],
                    "theory_std": np.full_like(scales, ln_std) if ln else scales**2,
                }
            )
            for ln, tag in ((False, "raw"), (True, "ln"))
        ],
        ignore_index=True,
    )
