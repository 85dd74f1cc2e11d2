"""Training one attention layer on associative recall: does it learn without √d_k?

The task (one example), with m targets (``m = 1``: recall one key)::

    x_1 … x_n ~ N(0, I_{d_in})                     # n = n_keys inputs, X (n, d_in)
    T ⊂ {0 … n − 1}, |T| = m, uniform              # target indices, distinct
    x_q = Σ_{t∈T} x_t / √m + noise · ε             # ε ~ N(0, I_{d_in}); same norm for every m
    v_1 … v_n ~ N(0, I_{d_v} / d_v)                # values, independent of the x
    target value v_T = (1/m) Σ_{t∈T} v_t           # the mean of the targets' values

For m = 1 the best attention is one-hot on the target; for m > 1 it is spread evenly
over the m targets (weight 1/m each), so the answer is an average. Uniform attention
(p_j = 1/n) has expected loss ½(1/m − 1/n) (:func:`uniform_loss`): 0.469, 0.219 and
0.094 for m = 1, 2, 4 at n = 16.

The model::

    q = x_q W_q,  k_j = x_j W_k                    # W_q, W_k (d_in, d_k), the only parameters
    z_j = d_k^(−alpha) · q·k_j                     # logits
    p = softmax(z),  o = Σ_j p_j v_j
    loss = ½ ‖o − v_T‖²,  averaged over the batch

Retrieval accuracy is the share of rows whose m largest attention weights are exactly
the m targets (top-m equals T; for m = 1, the largest weight is on the target).

Variant ``qk_norm``: q and k pass through a LayerNorm without learnable parameters
(LN(u) = (u − mean u) / √(var u + LN_EPS), mean and biased variance over the d_k
components) and the logits are z_j = g · d_k^(−alpha) · LN(q)·LN(k_j) with one learnable
scalar gain g (initialised to 1); the issue's variant is alpha = ½. Variant
``init="folded"`` (T5): W_q entries N(0, 1/(d_in·d_k)) instead of N(0, 1/d_in); with
alpha = 0 its logits at step 0 equal those of alpha = ½ (same draws), but training
differs.

Computation. The scores are a bilinear form of the inputs, q·k_j = x_q M x_jᵀ with
M = W_q W_kᵀ (d_in, d_in), so a step never forms q or K: the forward pass costs one
(d_in, d_k) × (d_k, d_in) product per configuration plus O(B·n·d_in) work, and the
backward pass ∂L/∂W_q = (∂L/∂M) W_k, ∂L/∂W_k = (∂L/∂M)ᵀ W_q two more. With QK-norm the
norms ‖LN(q)‖ and ‖LN(k_j)‖ come from the Gram matrices of the centred weights the same
way. Every array carries a leading configuration axis (one per learning rate), so a
sweep of learning rates is a handful of batched matrix products per step.

Gradients are derived by hand (float64) and checked against central finite
differences in ``tests/core/test_training.py``.

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, §3.2.1. https://arxiv.org/abs/1706.03762
Kingma & Ba 2015, *Adam*, Algorithm 1 (bias-corrected moments). https://arxiv.org/abs/1412.6980
Dehghani et al. 2023, *Scaling Vision Transformers to 22 Billion Parameters* (QK LayerNorm).
Raffel et al. 2020, *T5*, §2.1 and the Mesh TensorFlow initialisation (no 1/√d_k; W_q
initialised with std (d_model·d_kv)^−½).
Wortsman et al. 2023, *Small-scale proxies for large-scale Transformer training
instabilities*, §2–3 (LR sensitivity). https://arxiv.org/abs/2309.14322
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from core.attention import check_alpha
from core.experiments import DEAD_THRESHOLD
from core.softmax import jacobian_norm, softmax_entropy
from core.validation import check_choice, check_int, check_real, check_rng

__all__ = [
    "ADAM_BETA1",
    "ADAM_BETA2",
    "ADAM_EPS",
    "DEFAULT_LRS",
    "D_K_MAX",
    "INITS",
    "LN_EPS",
    "LR_GRIDS",
    "N_EVAL",
    "N_LRS_MAX",
    "OPTIMIZERS",
    "RecallBatch",
    "RecallGradients",
    "TrainingHistory",
    "Variant",
    "final_loss",
    "init_weights",
    "lr_sensitivity",
    "recall_batch",
    "recall_loss_and_grads",
    "train_recall",
    "train_recall_variants",
    "training_streams",
    "uniform_loss",
]

#: Adam's hyper-parameters (Kingma & Ba 2015 defaults).
ADAM_BETA1 = 0.9
ADAM_BETA2 = 0.999
ADAM_EPS = 1e-8
#: Epsilon inside the parameter-free LayerNorm of the QK-norm variant (PyTorch's default).
LN_EPS = 1e-5
#: Optimisers and initialisations accepted by :func:`train_recall`.
OPTIMIZERS = ("sgd", "adam")
INITS = ("fan_in", "folded")
#: Learning-rate grids of the LR-sensitivity sweep: half a decade apart, one fixed range
#: per optimiser shared by every task (m), d_k and variant, so that LR sensitivity
#: compares like with like. Wide enough on both sides (checked on the shipped sweep by
#: tests/ui/training/test_sweep_data.py): every variant that beats uniform attention
#: somewhere has its best rate strictly inside, and at the low end every variant barely
#: moves from ℓ₀ or learns less than at its best. Chosen from runs at d_k ∈ {16, 1024},
#: m ∈ {1, 2, 4}: with SGD the folded initialisation learns from 1e-3 at d_k = 1024 and
#: α = 1 still improves at 1000; with Adam the folded initialisation learns from 1e-5.
LR_GRIDS = {
    "sgd": tuple(float(x) for x in np.logspace(-3.0, 4.0, 15)),  # 0.001 … 10000
    "adam": tuple(float(x) for x in np.logspace(-6.0, 0.0, 13)),  # 1e-6 … 1
}
#: Default learning rate of a single run (on the grid): at d_k = 64 α = ½ reaches a
#: final loss of ≈ 1 % of ℓ₀ in 300 steps with either optimiser.
DEFAULT_LRS = {"sgd": 1.0, "adam": 1e-2}
#: Largest d_k accepted (cost per step grows linearly with d_k).
D_K_MAX = 1 << 14
#: Largest number of learning rates in one call.
N_LRS_MAX = 64
#: Rows of the evaluation batch that gives ℓ₀ (:attr:`TrainingHistory.initial_loss`):
#: the standard error of a 1024-row mean is ≈ 3 % of ℓ₀ (one 64-row batch: ≈ 12 %).
N_EVAL = 1024
#: Largest d_in, d_v; n_keys; batch; steps; probe rows.
_DIM_MAX = 1024
_N_KEYS_MAX = 4096
_BATCH_MAX = 1 << 16
_STEPS_MAX = 100_000
_N_PROBE_MAX = 64
#: Variants are batched together while their (configs, d_in, d_k) weights stay below this.
_GROUP_ELEMENTS = 1 << 16
#: Bound on the entries of one (configs, batch, keys) or (batch, keys, d_in + d_v) array.
_ELEMENTS_MAX = 1 << 23


class RecallBatch(NamedTuple):
    """One batch of the associative-recall task (see the module docstring).

    Attributes
    ----------
    x_q : ndarray, shape (B, d_in)
        Query inputs.
    X : ndarray, shape (B, n_keys, d_in)
        Key inputs.
    V : ndarray, shape (B, n_keys, d_v)
        Values.
    target : ndarray of int, shape (B, m)
        Indices of the m distinct keys whose values' mean is to be recalled.
    """

    x_q: np.ndarray
    X: np.ndarray
    V: np.ndarray
    target: np.ndarray


class RecallGradients(NamedTuple):
    """Gradients of the mean batch loss.

    Attributes
    ----------
    W_q, W_k : ndarray
        ∂loss/∂W_q and ∂loss/∂W_k, shapes of W_q and W_k.
    gain : ndarray, float or None
        ∂loss/∂g, shape of the gain; None without QK-norm.
    """

    W_q: np.ndarray
    W_k: np.ndarray
    gain: np.ndarray | float | None


@dataclass(frozen=True)
class TrainingHistory:
    """Per-step record of :func:`train_recall`, one column per learning rate.

    Arrays are read-only. Entries at and after a configuration's divergence step are NaN.

    Attributes
    ----------
    d_k, alpha, lrs, optimizer, init, qk_norm, steps, n_keys, d_in, d_v, batch, noise, seed, m
        The arguments of the run (``lrs`` as a float64 array of shape (L,)).
    initial_loss : float
        ℓ₀: the mean loss of the initial weights on ``N_EVAL`` (1024) rows of the run's
        evaluation stream (shared by every learning rate).
    loss : ndarray, shape (steps, L)
        Mean batch loss ½‖o − v_T‖² on the step's training batch, before that step's update.
    accuracy : ndarray, shape (steps, L)
        Share of rows whose m largest attention weights are exactly the m targets.
    entropy : ndarray, shape (steps, L)
        Mean attention entropy per row, nats (ln n_keys for uniform rows).
    dead_fraction : ndarray, shape (steps, L)
        Share of rows with ‖∂p/∂z‖_F < ``DEAD_THRESHOLD`` (1e-3).
    grad_norm : ndarray, shape (steps, L)
        √(‖∂L/∂W_q‖_F² + ‖∂L/∂W_k‖_F² (+ (∂L/∂g)²)), the gradient of that step.
    logit_std : ndarray, shape (steps, L)
        √(mean over rows of the within-row variance of the logits, ddof = 1): the spread
        softmax sees (a shift shared by a row does not change p).
    gain : ndarray, shape (steps, L), or None
        The QK-norm gain g used at each step; None without QK-norm.
    diverged_at : ndarray of int, shape (L,)
        First step whose parameters or loss were non-finite, −1 if none.
    snapshot_steps : ndarray of int, shape (S,)
        Steps at which ``probe_weights`` were taken (before that step's update).
    probe_weights : ndarray, shape (S, L, n_probe, n_keys)
        Attention weights of the fixed probe rows; NaN for a diverged configuration.
    probe_target : ndarray of int, shape (n_probe, m)
        Target keys of each probe row.
    """

    d_k: int
    alpha: float
    lrs: np.ndarray
    optimizer: str
    init: str
    qk_norm: bool
    steps: int
    n_keys: int
    d_in: int
    d_v: int
    batch: int
    noise: float
    seed: int
    m: int
    initial_loss: float
    loss: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    dead_fraction: np.ndarray
    grad_norm: np.ndarray
    logit_std: np.ndarray
    gain: np.ndarray | None
    diverged_at: np.ndarray
    snapshot_steps: np.ndarray
    probe_weights: np.ndarray
    probe_target: np.ndarray

    @property
    def diverged(self) -> np.ndarray:
        """Boolean (L,): which learning rates diverged."""
        return self.diverged_at >= 0


# --------------------------------------------------------------------------- data


def recall_batch(
    rng: np.random.Generator,
    *,
    batch: int,
    n_keys: int,
    d_in: int,
    d_v: int,
    noise: float,
    m: int = 1,
) -> RecallBatch:
    """Draw one batch of the associative-recall task with m targets per row.

    Parameters
    ----------
    rng : numpy.random.Generator
    batch : int
        Rows B ≥ 1.
    n_keys : int
        Keys per row, ≥ 2.
    d_in : int
        Input dimension, ≥ 1.
    d_v : int
        Value dimension, ≥ 1.
    noise : float
        Standard deviation of the query's perturbation, ≥ 0.
    m : int
        Targets per row, in [1, n_keys − 1] (1: today's one-key recall).

    Returns
    -------
    RecallBatch
        ``x_q`` (B, d_in), ``X`` (B, n_keys, d_in) with entries N(0, 1), ``V``
        (B, n_keys, d_v) with entries N(0, 1/d_v), ``target`` (B, m) int: m distinct
        keys, a uniform random subset in random order;
        ``x_q = Σ_i X[b, target[b, i]] / √m + noise · ε`` with ε ~ N(0, I).
        For m = 1 the draws are those of one target ``rng.integers(0, n_keys)`` per row.

    Raises
    ------
    ValueError
        For a bad argument (naming it and the allowed range).

    References
    ----------
    The task: docs/mathematics.md §6 and the module docstring.
    """
    rng = check_rng("rng", rng)
    batch, n_keys, d_in, d_v, noise, m = _check_task(batch, n_keys, d_in, d_v, noise, m)
    return _draw_batch(rng, batch, n_keys, d_in, d_v, noise, m)


def uniform_loss(m: int, n_keys: int) -> float:
    """Expected loss of uniform attention, ½(1/m − 1/n_keys): a model that does nothing.

    With p_j = 1/n, o − v_T = Σ_j c_j v_j with c_j = 1/n − 1/m on the m targets and 1/n
    elsewhere; the values are independent N(0, I/d_v), so E‖o − v_T‖² = Σ_j c_j² =
    1/m − 1/n whatever d_v.

    Parameters
    ----------
    m : int
        Targets per row, in [1, n_keys − 1].
    n_keys : int
        Keys per row, in [2, 4096].

    Returns
    -------
    float
        0.46875, 0.21875 and 0.09375 for m = 1, 2, 4 at n_keys = 16.

    Raises
    ------
    ValueError
        For m or n_keys out of range.
    """
    n_keys = check_int("n_keys", n_keys, 2, _N_KEYS_MAX)
    m = check_int("m", m, 1, n_keys - 1)
    return 0.5 * (1.0 / m - 1.0 / n_keys)


def _check_task(batch, n_keys, d_in, d_v, noise, m) -> tuple[int, int, int, int, float, int]:
    batch = check_int("batch", batch, 1, _BATCH_MAX)
    n_keys = check_int("n_keys", n_keys, 2, _N_KEYS_MAX)
    d_in = check_int("d_in", d_in, 1, _DIM_MAX)
    d_v = check_int("d_v", d_v, 1, _DIM_MAX)
    noise = check_real("noise", noise, 0.0, 1e3)
    m = check_int("m", m, 1, n_keys - 1)
    if batch * n_keys * (d_in + d_v) > _ELEMENTS_MAX:
        raise ValueError(
            f"batch · n_keys · (d_in + d_v) must be at most {_ELEMENTS_MAX}, "
            f"got {batch} · {n_keys} · {d_in + d_v}"
        )
    return batch, n_keys, d_in, d_v, noise, m


def _draw_batch(rng, batch, n_keys, d_in, d_v, noise, m=1) -> RecallBatch:
    X = rng.standard_normal((batch, n_keys, d_in))
    V = rng.standard_normal((batch, n_keys, d_v)) / math.sqrt(d_v)
    rows = np.arange(batch)
    if m == 1:
        target = rng.integers(0, n_keys, size=batch)[:, None]
        x_q = X[rows, target[:, 0]]
    else:  # a uniform random m-subset: the first m of a uniform random permutation
        target = np.argsort(rng.random((batch, n_keys)), axis=1)[:, :m]
        x_q = X[rows[:, None], target].sum(axis=1) / math.sqrt(m)
    x_q = x_q + noise * rng.standard_normal((batch, d_in))
    return RecallBatch(x_q, X, V, target)


def training_streams(seed: int) -> tuple[np.random.Generator, ...]:
    """The four independent generators of a run: (init, training data, probe, evaluation).

    ``np.random.SeedSequence(seed).spawn(4)``: the initial weights, the per-step
    training batches, the fixed probe batch and the ``N_EVAL`` rows that measure ℓ₀
    never share draws, so changing the number of probe rows or steps leaves the rest of
    the run unchanged (the first three are those of ``spawn(3)``).

    Parameters
    ----------
    seed : int
        In [0, 2**63 − 1].

    Returns
    -------
    tuple of 4 numpy.random.Generator
        (init, training data, probe rows, evaluation rows).

    Raises
    ------
    ValueError
        If ``seed`` is not an integer in range.
    """
    seed = check_int("seed", seed, 0, 2**63 - 1)
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4))


def init_weights(
    rng: np.random.Generator, *, d_k: int, d_in: int, init: str = "fan_in"
) -> tuple[np.ndarray, np.ndarray]:
    """Initial W_q, W_k of shape (d_in, d_k).

    W_q = Z_q · s_q, W_k = Z_k / √d_in with Z_q then Z_k standard normal draws (in that
    order); s_q = 1/√d_in for ``init="fan_in"`` (q, k components of variance
    Var(x) at init), s_q = 1/√(d_in·d_k) for ``init="folded"`` (T5: the 1/√d_k of the
    logits moved into W_q). The same rng state gives the same Z for both.

    Parameters
    ----------
    rng : numpy.random.Generator
    d_k : int
        Query/key dimension, in [1, 16384].
    d_in : int
        Input dimension, in [1, 1024].
    init : {"fan_in", "folded"}

    Returns
    -------
    W_q, W_k : ndarray, shape (d_in, d_k) each

    Raises
    ------
    ValueError
        For d_k, d_in out of range or an unknown ``init`` (allowed: fan_in, folded).

    References
    ----------
    Raffel et al. 2020 (T5) for ``"folded"``; docs/mathematics.md §6.
    """
    rng = check_rng("rng", rng)
    d_k = check_int("d_k", d_k, 1, D_K_MAX)
    d_in = check_int("d_in", d_in, 1, _DIM_MAX)
    init = check_choice("init", init, INITS)
    return _scale_init(*_draw_init(rng, d_in, d_k), init)


def _draw_init(rng, d_in: int, d_k: int) -> tuple[np.ndarray, np.ndarray]:
    z_q = rng.standard_normal((d_in, d_k))
    z_k = rng.standard_normal((d_in, d_k))
    return z_q, z_k


def _scale_init(z_q, z_k, init: str) -> tuple[np.ndarray, np.ndarray]:
    d_in, d_k = z_q.shape
    scale_q = 1.0 / math.sqrt(d_in * d_k) if init == "folded" else 1.0 / math.sqrt(d_in)
    return z_q * scale_q, z_k / math.sqrt(d_in)


# --------------------------------------------------------------------------- forward/backward


class _Pass(NamedTuple):
    loss: np.ndarray  # (L,)
    logits: np.ndarray  # (L, B, n)
    p: np.ndarray  # (L, B, n)
    g_q: np.ndarray | None  # (L, d_in, d_k)
    g_k: np.ndarray | None
    g_gain: np.ndarray | None  # (L,)


def _softmax_rows(z: np.ndarray) -> np.ndarray:
    e = z - z.max(axis=-1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


def _stacked(x: np.ndarray, M: np.ndarray) -> np.ndarray:
    """x (K, d_in) times each M[l] (L, d_in, d_out) in one GEMM -> (K, L, d_out)."""
    L, d_in, d_out = M.shape
    return (x @ M.transpose(1, 0, 2).reshape(d_in, L * d_out)).reshape(x.shape[0], L, d_out)


def _gram(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Σ_k x[k]ᵀ Y[k, l] for x (K, d_in), Y (K, L, d) in one GEMM -> (L, d_in, d)."""
    K, L, d = Y.shape
    return (x.T @ Y.reshape(K, L * d)).reshape(x.shape[1], L, d).transpose(1, 0, 2)


def _forward_backward(
    W_q: np.ndarray,
    W_k: np.ndarray,
    gain: np.ndarray | None,
    data: RecallBatch,
    scale: np.ndarray,
    *,
    grads: bool = True,
) -> _Pass:
    """Loss, logits, weights and (optionally) gradients for L configurations at once.

    W_q, W_k (L, d_in, d_k); gain (L,) or None (no QK-norm); scale (L,) = d_k^−alpha.
    No argument checks (callers check); non-finite values propagate. Work arrays are
    batch-first, (B, L, n), so that each product over the batch is one BLAS call per
    example (or one GEMM) rather than one per example and configuration.
    """
    x_q, X, V, target = data
    B, n, d_in = X.shape
    d_k = W_q.shape[-1]
    Xt = X.transpose(0, 2, 1)  # (B, d_in, n)
    sc = scale[None, :, None]
    if gain is None:
        M = W_q @ W_k.transpose(0, 2, 1)  # (L, d_in, d_in): q·k_j = x_q M x_jᵀ
        z = _stacked(x_q, M) @ Xt  # (B, L, n) scores
        z *= sc
    else:
        A = W_q - W_q.mean(axis=-1, keepdims=True)  # centred weights: LN's mean removal
        Bk = W_k - W_k.mean(axis=-1, keepdims=True)
        At, Bt = A.transpose(0, 2, 1), Bk.transpose(0, 2, 1)
        M, P, N = A @ Bt, A @ At, Bk @ Bt  # (L, d_in, d_in) each
        a = _stacked(x_q, M) @ Xt  # centred q · centred k_j, (B, L, n)
        r_q = np.einsum("bli,bi->bl", _stacked(x_q, P), x_q) / d_k + LN_EPS  # var q + eps
        Xf = X.reshape(B * n, d_in)
        r_k = np.einsum("kli,ki->kl", _stacked(Xf, N), Xf) / d_k + LN_EPS  # (B·n, L)
        r_k = r_k.reshape(B, n, -1).transpose(0, 2, 1)  # (B, L, n)
        inv = 1.0 / (np.sqrt(r_q)[..., None] * np.sqrt(r_k))  # 1/(σ_q σ_k)
        zn = a * inv
        zn *= sc  # d_k^−α LN(q)·LN(k_j)
        z = gain[None, :, None] * zn

    p = _softmax_rows(z)
    if target.shape[1] == 1:
        v_t = V[np.arange(B), target[:, 0]]  # (B, d_v)
    else:  # the mean of the m targets' values
        v_t = V[np.arange(B)[:, None], target].mean(axis=1)
    resid = p @ V  # o, (B, L, d_v)
    resid -= v_t[:, None, :]
    loss = 0.5 * np.einsum("blv,blv->l", resid, resid) / B
    if not grads:
        return _Pass(loss, z.transpose(1, 0, 2), p.transpose(1, 0, 2), None, None, None)

    dz = resid @ V.transpose(0, 2, 1)  # B · ∂L/∂p, (B, L, n)
    dz -= np.einsum("bln,bln->bl", p, dz)[..., None]
    dz *= p  # J (∂L/∂p), J = diag(p) − ppᵀ
    dz *= 1.0 / B
    logits, weights = z.transpose(1, 0, 2), p.transpose(1, 0, 2)
    if gain is None:
        dz *= sc  # ∂L/∂scores
        G = _gram(x_q, dz @ X)  # ∂L/∂M = Σ_b x_qᵀ Σ_j (∂L/∂s_j) x_j, (L, d_in, d_in)
        g_q = G @ W_k
        g_k = G.transpose(0, 2, 1) @ W_q
        return _Pass(loss, logits, weights, g_q, g_k, None)

    g_gain = np.einsum("bln,bln->l", dz, zn)
    h = dz * z  # z ∝ r_q^(−½) r_k^(−½)
    d_rq = -0.5 * h.sum(axis=-1) / r_q  # (B, L)
    d_rk = -0.5 * h / r_k  # (B, L, n)
    da = dz * inv
    da *= (gain * scale)[None, :, None]
    dM = _gram(x_q, da @ X)
    dP = _gram(x_q, d_rq[..., None] * x_q[:, None, :]) / d_k  # Σ_b d_rq x_qᵀ x_q / d_k
    d_rk = d_rk.transpose(0, 2, 1).reshape(B * n, -1)  # (B·n, L)
    dN = _gram(Xf, d_rk[..., None] * Xf[:, None, :]) / d_k
    dA = dM @ Bk + 2.0 * (dP @ A)  # P = A Aᵀ, dP symmetric
    dB = dM.transpose(0, 2, 1) @ A + 2.0 * (dN @ Bk)
    g_q = dA - dA.mean(axis=-1, keepdims=True)  # through the centring (C symmetric)
    g_k = dB - dB.mean(axis=-1, keepdims=True)
    return _Pass(loss, logits, weights, g_q, g_k, g_gain)


def _top_m_hits(p: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(L, B) bool: row b's m largest weights of p (L, B, n) are exactly target[b] (B, m).

    True when the smallest weight on a target exceeds the largest weight elsewhere (a
    tie counts as a miss); for m = 1, p.argmax() == target but for exact ties.
    """
    on = np.zeros(p.shape[-2:], dtype=bool)
    np.put_along_axis(on, target, True, axis=1)
    low_on = np.where(on, p, np.inf).min(axis=-1)
    high_off = np.where(on, -np.inf, p).max(axis=-1)
    return low_on > high_off


def _check_batch(data: object, d_in: int) -> RecallBatch:
    if not isinstance(data, tuple) or len(data) != 4:
        raise ValueError("data must be a tuple (x_q, X, V, target) as returned by recall_batch")
    x_q, X, V, target = (np.asarray(a) for a in data)
    if X.ndim != 3 or X.shape[1] < 2:
        raise ValueError(f"data X must have shape (B, n_keys ≥ 2, d_in), got {X.shape}")
    B, n, d = X.shape
    if d != d_in:
        raise ValueError(f"data X has d_in = {d}, but W_q, W_k have d_in = {d_in}")
    if x_q.shape != (B, d_in):
        raise ValueError(f"data x_q must have shape {(B, d_in)}, got {x_q.shape}")
    if V.ndim != 3 or V.shape[:2] != (B, n):
        raise ValueError(f"data V must have shape ({B}, {n}, d_v), got {V.shape}")
    if target.ndim != 2 or target.shape[0] != B or target.dtype.kind not in "iu":
        raise ValueError(f"data target must be integers of shape ({B}, m), got {target.shape}")
    if not 1 <= target.shape[1] < n:
        raise ValueError(f"data target must have m in [1, {n - 1}] columns, got {target.shape[1]}")
    if target.size and (target.min() < 0 or target.max() >= n):
        raise ValueError(f"data target must lie in [0, {n - 1}]")
    if target.shape[1] > 1 and (np.diff(np.sort(target, axis=1), axis=1) == 0).any():
        raise ValueError("data target must hold m distinct keys per row")
    arrays = [np.asarray(a, dtype=np.float64) for a in (x_q, X, V)]
    if not all(np.isfinite(a).all() for a in arrays):
        raise ValueError("data x_q, X, V must be finite")
    return RecallBatch(*arrays, target)


def recall_loss_and_grads(
    W_q, W_k, data: RecallBatch, *, alpha: float, qk_norm: bool = False, gain=1.0
) -> tuple[np.ndarray | float, RecallGradients, np.ndarray]:
    """Mean batch loss, its gradients and the attention weights (float64, by hand).

    Parameters
    ----------
    W_q, W_k : array_like, shape (d_in, d_k) or (L, d_in, d_k)
        Query and key projections; a leading axis holds L configurations evaluated on
        the same batch.
    data : RecallBatch or tuple (x_q, X, V, target)
        As returned by :func:`recall_batch`.
    alpha : float
        Scaling exponent in [0, 4]: logits d_k^−alpha q·k_j (0 none, ½ the Transformer's).
    qk_norm : bool
        Parameter-free LayerNorm (eps ``LN_EPS`` = 1e-5) on q and k, logits
        g · d_k^−alpha · LN(q)·LN(k_j).
    gain : float or array_like of shape (L,)
        The gain g (used only with ``qk_norm``).

    Returns
    -------
    loss : float, or ndarray (L,)
        ½‖o − v_T‖² averaged over the batch (v_T the mean of the m targets' values).
    grads : RecallGradients
        ∂loss/∂W_q, ∂loss/∂W_k (shapes of W_q, W_k) and ∂loss/∂g (shape of ``gain``; None
        without ``qk_norm``).
    p : ndarray, shape (B, n_keys) or (L, B, n_keys)
        Attention weights.

    Raises
    ------
    ValueError
        If shapes disagree, an input is not finite, or alpha is outside [0, 4].

    Notes
    -----
    Backward pass: ∂L/∂p_j = (o − v_T)·v_j / B, ∂L/∂z = J ∂L/∂p with J = diag(p) − ppᵀ,
    ∂L/∂M = d_k^−alpha Σ_b x_qᵀ Σ_j (∂L/∂z_j) x_j for M = W_q W_kᵀ, then
    ∂L/∂W_q = (∂L/∂M) W_k and ∂L/∂W_k = (∂L/∂M)ᵀ W_q. With QK-norm the chain also runs
    through σ_q² = ‖x_q W̃_q‖²/d_k + eps and σ_kj² (W̃ the centred weights).

    References
    ----------
    Vaswani et al. 2017, eq. (1); Dehghani et al. 2023 (QK LayerNorm); the softmax
    Jacobian of docs/mathematics.md §4.1.
    """
    alpha = check_alpha(alpha)
    wq = np.asarray(W_q, dtype=np.float64)
    wk = np.asarray(W_k, dtype=np.float64)
    if wq.ndim not in (2, 3) or wq.shape != wk.shape:
        raise ValueError(
            "W_q and W_k must have the same shape (d_in, d_k) or (L, d_in, d_k), "
            f"got {wq.shape} and {wk.shape}"
        )
    if not (np.isfinite(wq).all() and np.isfinite(wk).all()):
        raise ValueError("W_q and W_k must be finite")
    single = wq.ndim == 2
    if single:
        wq, wk = wq[None], wk[None]
    L, d_in, d_k = wq.shape
    batch = _check_batch(data, d_in)
    g = None
    if qk_norm:
        g = np.asarray(gain, dtype=np.float64)
        if not np.isfinite(g).all() or (g.shape != () and g.shape != (L,)):
            raise ValueError(f"gain must be a finite number or an array of shape ({L},)")
        g = np.broadcast_to(g, (L,)).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        res = _forward_backward(wq, wk, g, batch, np.full(L, float(d_k) ** -alpha))
    if single:
        g_gain = None if res.g_gain is None else float(res.g_gain[0])
        return float(res.loss[0]), RecallGradients(res.g_q[0], res.g_k[0], g_gain), res.p[0]
    g_gain = res.g_gain
    if g_gain is not None and np.ndim(gain) == 0:
        g_gain = g_gain.copy()
    return res.loss, RecallGradients(res.g_q, res.g_k, g_gain), res.p


# --------------------------------------------------------------------------- training


def _check_lrs(lrs: object) -> np.ndarray:
    message = (
        f"lrs must be a non-empty sequence of at most {N_LRS_MAX} finite numbers > 0, got {lrs!r}"
    )
    try:
        arr = np.asarray(lrs if isinstance(lrs, Sequence | np.ndarray) else [lrs], dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(message) from exc
    if arr.ndim != 1 or arr.size == 0 or arr.size > N_LRS_MAX:
        raise ValueError(message)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(message)
    return arr


def _check_snapshots(snapshot_steps: object, steps: int) -> np.ndarray:
    try:
        raw = [check_int("snapshot_steps entry", s, 0, None) for s in snapshot_steps]  # type: ignore[attr-defined]
    except TypeError as exc:
        raise ValueError(
            f"snapshot_steps must be a sequence of integers ≥ 0, got {snapshot_steps!r}"
        ) from exc
    kept = sorted({s for s in raw if s < steps} | {steps - 1})
    return np.asarray(kept, dtype=int)


class Variant(NamedTuple):
    """One model variant of :func:`train_recall_variants`.

    Attributes
    ----------
    alpha : float
        Scaling exponent in [0, 4].
    init : {"fan_in", "folded"}
        Initialisation of W_q (:func:`init_weights`).
    qk_norm : bool
        QK-norm with a learnable gain.
    """

    alpha: float
    init: str = "fan_in"
    qk_norm: bool = False


def train_recall(
    d_k: int,
    alpha: float,
    lrs,
    *,
    optimizer: str = "sgd",
    steps: int = 300,
    n_keys: int = 16,
    d_in: int = 32,
    d_v: int = 8,
    batch: int = 64,
    noise: float = 0.5,
    seed: int = 0,
    qk_norm: bool = False,
    init: str = "fan_in",
    snapshot_steps: Sequence[int] = (0, 10, 50),
    n_probe: int = 4,
    m: int = 1,
) -> TrainingHistory:
    """Train W_q, W_k on associative recall at several learning rates at once.

    Every learning rate starts from the same initial weights and sees the same batches
    (common random numbers), so differences between columns come from the learning
    rate alone. The three random streams are those of :func:`training_streams`; runs
    with the same seed share them whatever alpha, init or qk_norm.

    Parameters
    ----------
    d_k : int
        Query/key dimension, in [1, 16384].
    alpha : float
        Scaling exponent in [0, 4]: logits d_k^−alpha q·k (0 none, ½ 1/√d_k, 1 1/d_k).
    lrs : float or sequence of float
        Learning rates, each finite and > 0; at most 64.
    optimizer : {"sgd", "adam"}
        Plain SGD (W ← W − η g) or Adam (β₁ = 0.9, β₂ = 0.999, ε = 1e-8, bias-corrected:
        W ← W − η m̂/(√v̂ + ε)).
    steps : int
        Optimisation steps, in [1, 100000]; a fresh batch each step.
    n_keys, d_in, d_v, batch, noise
        The task (see :func:`recall_batch`).
    m : int
        Targets per row, in [1, n_keys − 1]: the query is the sum of m keys' inputs over
        √m (plus noise) and the target the mean of their values (1: recall one key).
    seed : int
        Seed ≥ 0 of the run.
    qk_norm : bool
        Parameter-free LayerNorm on q and k (eps ``LN_EPS`` = 1e-5) with a learnable
        gain g (init 1), trained by the same optimiser and learning rate.
    init : {"fan_in", "folded"}
        W_q entries N(0, 1/d_in), or N(0, 1/(d_in·d_k)) (T5: use with alpha = 0).
    snapshot_steps : sequence of int
        Steps (≥ 0) at which the probe rows' attention weights are recorded; entries
        ≥ ``steps`` are dropped and the last step, steps − 1, is always added.
    n_probe : int
        Probe rows, in [1, 64], drawn once from the run's probe stream.

    Returns
    -------
    TrainingHistory

    Raises
    ------
    ValueError
        Naming the argument and the allowed values, for any argument out of range.

    Notes
    -----
    Divergence: at each step, a configuration whose parameters or loss are non-finite
    is recorded as diverged at that step; from then on its entries are NaN and it is no
    longer updated, while the others go on. Nothing is clipped or repaired. (The loss
    itself is bounded — o is a convex combination of values — so this happens only when
    the weights overflow; a learning rate too large for this task usually shows as a
    loss stuck near ℓ₀ with saturated, dead rows instead.)

    References
    ----------
    Kingma & Ba 2015, Algorithm 1 (Adam); Dehghani et al. 2023 (QK-norm); Raffel et al.
    2020 (folded init); docs/mathematics.md §6.
    """
    (history,) = train_recall_variants(
        d_k,
        [Variant(alpha, init, qk_norm)],
        lrs,
        optimizer=optimizer,
        steps=steps,
        n_keys=n_keys,
        d_in=d_in,
        d_v=d_v,
        batch=batch,
        noise=noise,
        seed=seed,
        snapshot_steps=snapshot_steps,
        n_probe=n_probe,
        m=m,
    )
    return history


def _check_variants(variants: object) -> list[Variant]:
    message = (
        f"variants must be a non-empty sequence of Variant(alpha, init, qk_norm), got {variants!r}"
    )
    if not isinstance(variants, Sequence) or len(variants) == 0:
        raise ValueError(message)
    out = []
    for v in variants:
        if not isinstance(v, tuple) or not 1 <= len(v) <= 3:
            raise ValueError(message)
        v = Variant(*v)
        if not isinstance(v.qk_norm, bool | np.bool_):
            raise ValueError(f"qk_norm must be True or False, got {v.qk_norm!r}")
        out.append(
            Variant(check_alpha(v.alpha), check_choice("init", v.init, INITS), bool(v.qk_norm))
        )
    return out


class _Group:
    """Configurations trained by the same forward pass (all with or all without QK-norm)."""

    def __init__(self, cols, W_q, W_k, lr, scale, qk_norm, adam):
        self.cols = cols  # (G,) columns of the flat record
        self.W_q, self.W_k = W_q, W_k  # (G, d_in, d_k)
        self.lr, self.scale = lr, scale  # (G,)
        self.gain = np.ones(cols.size) if qk_norm else None
        self.live = np.ones(cols.size, dtype=bool)
        self.adam = adam
        if adam:
            self.m = [np.zeros_like(W_q), np.zeros_like(W_k), np.zeros(cols.size)]
            self.v = [np.zeros_like(W_q), np.zeros_like(W_k), np.zeros(cols.size)]
            self.buf = np.empty_like(W_q)


def _adam_inplace(w, m, v, g, eta, c1, c2, buf):
    """One bias-corrected Adam step on w, in place (m, v updated; buf scratch).

    w ← w − η · (m/c1) / (√(v/c2) + ε), m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g².
    eta broadcasts against w (one learning rate per configuration).
    """
    m *= ADAM_BETA1
    m += (1.0 - ADAM_BETA1) * g
    np.multiply(g, g, out=buf)
    buf *= 1.0 - ADAM_BETA2
    v *= ADAM_BETA2
    v += buf
    np.sqrt(v, out=buf)
    buf *= 1.0 / math.sqrt(c2)
    buf += ADAM_EPS
    np.divide(m, buf, out=buf)
    buf *= eta / c1
    w -= buf


def _group_step(grp: _Group, t: int, data: RecallBatch, probe, rec, snap_row, last: bool):
    idx = np.flatnonzero(grp.live)
    if idx.size == 0:
        return
    full = idx.size == grp.live.size
    sel = slice(None) if full else idx
    wq, wk = (grp.W_q, grp.W_k) if full else (grp.W_q[idx], grp.W_k[idx])
    gn = None if grp.gain is None else grp.gain[sel]
    scale = grp.scale[sel]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        res = _forward_backward(wq, wk, gn, data, scale)
        ok = (
            np.isfinite(res.loss)
            & np.isfinite(wq).all(axis=(1, 2))
            & np.isfinite(wk).all(axis=(1, 2))
        )
        if gn is not None:
            ok &= np.isfinite(gn)
        sq = np.einsum("lij,lij->l", res.g_q, res.g_q) + np.einsum("lij,lij->l", res.g_k, res.g_k)
        if res.g_gain is not None:
            sq += res.g_gain**2
    cols = grp.cols[idx]
    if not ok.all():
        rec["diverged_at"][cols[~ok]] = t
        grp.live[idx[~ok]] = False
        if not ok.any():
            return
    good = cols[ok]
    z, p = (res.logits, res.p) if ok.all() else (res.logits[ok], res.p[ok])
    rec["loss"][t, good] = res.loss[ok]
    rec["accuracy"][t, good] = _top_m_hits(p, data.target).mean(axis=-1)
    rec["entropy"][t, good] = softmax_entropy(z).mean(axis=-1)
    rec["dead_fraction"][t, good] = (jacobian_norm(p) < DEAD_THRESHOLD).mean(axis=-1)
    rec["logit_std"][t, good] = np.sqrt(z.var(axis=-1, ddof=1).mean(axis=-1))
    rec["grad_norm"][t, good] = np.sqrt(sq[ok])
    if gn is not None:
        rec["gain"][t, good] = gn[ok]
    if snap_row is not None:
        pw = _forward_backward(
            wq[ok], wk[ok], None if gn is None else gn[ok], probe, scale[ok], grads=False
        ).p
        rec["probe_weights"][snap_row, good] = pw
    if last:
        return
    # Update every configuration still live after this step; one that diverged now keeps
    # its parameters (they are never used again).
    keep = idx[ok]
    lr = grp.lr[keep]
    g_q, g_k, g_g = (
        (res.g_q, res.g_k, res.g_gain)
        if ok.all()
        else (res.g_q[ok], res.g_k[ok], None if res.g_gain is None else res.g_gain[ok])
    )
    in_place = keep.size == grp.live.size
    with np.errstate(over="ignore", invalid="ignore"):
        if grp.adam:
            c1 = 1.0 - ADAM_BETA1 ** (t + 1)
            c2 = 1.0 - ADAM_BETA2 ** (t + 1)
            m, v = grp.m, grp.v
            if in_place:
                eta = lr[:, None, None]
                _adam_inplace(grp.W_q, m[0], v[0], g_q, eta, c1, c2, grp.buf)
                _adam_inplace(grp.W_k, m[1], v[1], g_k, eta, c1, c2, grp.buf)
                if grp.gain is not None:
                    _adam_inplace(grp.gain, m[2], v[2], g_g, lr, c1, c2, np.empty_like(lr))
            else:
                arrays = [(grp.W_q, 0, g_q), (grp.W_k, 1, g_k)]
                if grp.gain is not None:
                    arrays.append((grp.gain, 2, g_g))
                for w, i, g in arrays:
                    ws, ms, vs = w[keep], m[i][keep], v[i][keep]
                    eta = lr.reshape((-1,) + (1,) * (ws.ndim - 1))
                    _adam_inplace(ws, ms, vs, g, eta, c1, c2, np.empty_like(ws))
                    w[keep], m[i][keep], v[i][keep] = ws, ms, vs
        elif in_place:
            eta = lr[:, None, None]
            grp.W_q -= eta * g_q
            grp.W_k -= eta * g_k
            if grp.gain is not None:
                grp.gain -= lr * g_g
        else:
            eta = lr[:, None, None]
            grp.W_q[keep] -= eta * g_q
            grp.W_k[keep] -= eta * g_k
            if grp.gain is not None:
                grp.gain[keep] -= lr * g_g


def train_recall_variants(
    d_k: int,
    variants: Sequence[Variant],
    lrs,
    *,
    optimizer: str = "sgd",
    steps: int = 300,
    n_keys: int = 16,
    d_in: int = 32,
    d_v: int = 8,
    batch: int = 64,
    noise: float = 0.5,
    seed: int = 0,
    snapshot_steps: Sequence[int] = (0, 10, 50),
    n_probe: int = 4,
    m: int = 1,
) -> tuple[TrainingHistory, ...]:
    """:func:`train_recall` for several variants (alpha, init, qk_norm) in one loop.

    The result equals one :func:`train_recall` call per variant with the same seed (the
    same initial draws, batches and probe rows; up to rounding in the last place where
    small variants are batched together), but each batch is drawn once and shared: this
    is how the page's side-by-side run and the sweeps are computed.

    Parameters
    ----------
    d_k : int
    variants : sequence of Variant
        Each ``Variant(alpha, init="fan_in", qk_norm=False)``; at least one.
    lrs, optimizer, steps, n_keys, d_in, d_v, batch, noise, seed, snapshot_steps, n_probe, m
        As in :func:`train_recall`, shared by every variant.

    Returns
    -------
    tuple of TrainingHistory, one per variant, in order.

    Raises
    ------
    ValueError
        As :func:`train_recall`; also for an empty or malformed ``variants``.

    References
    ----------
    As :func:`train_recall`.
    """
    d_k = check_int("d_k", d_k, 1, D_K_MAX)
    variants = _check_variants(variants)
    lr = _check_lrs(lrs)
    optimizer = check_choice("optimizer", optimizer, OPTIMIZERS)
    steps = check_int("steps", steps, 1, _STEPS_MAX)
    batch, n_keys, d_in, d_v, noise, m = _check_task(batch, n_keys, d_in, d_v, noise, m)
    n_probe = check_int("n_probe", n_probe, 1, _N_PROBE_MAX)
    seed = check_int("seed", seed, 0, 2**63 - 1)
    snaps = _check_snapshots(snapshot_steps, steps)
    L = lr.size
    C = L * len(variants)
    if C * batch * n_keys > _ELEMENTS_MAX:
        raise ValueError(
            f"len(variants) · len(lrs) · batch · n_keys must be at most {_ELEMENTS_MAX}, "
            f"got {len(variants)} · {L} · {batch} · {n_keys}"
        )
    rng_init, rng_data, rng_probe, rng_eval = training_streams(seed)
    z_q, z_k = _draw_init(rng_init, d_in, d_k)
    probe = _draw_batch(rng_probe, n_probe, n_keys, d_in, d_v, noise, m)
    initial = _initial_losses(z_q, z_k, variants, rng_eval, n_keys, d_in, d_v, noise, m)

    groups = []
    # Variants with the same qk_norm share one batched pass while their weight arrays
    # stay small (≤ _GROUP_ELEMENTS entries, cache-sized); larger ones get a group each,
    # since one pass over weights that spill out of the cache is slower than several
    # passes that fit. Every batch is drawn once and shared by all groups.
    per_variant = L * d_in * d_k
    for qk in (False, True):
        members = [i for i, v in enumerate(variants) if v.qk_norm == qk]
        size = max(1, _GROUP_ELEMENTS // per_variant)
        for start in range(0, len(members), size):
            chunk = members[start : start + size]
            inits = [_scale_init(z_q, z_k, variants[i].init) for i in chunk]
            groups.append(
                _Group(
                    np.concatenate([np.arange(i * L, (i + 1) * L) for i in chunk]),
                    np.concatenate([np.repeat(w[0][None], L, axis=0) for w in inits]),
                    np.concatenate([np.repeat(w[1][None], L, axis=0) for w in inits]),
                    np.tile(lr, len(chunk)),
                    np.repeat([float(d_k) ** -variants[i].alpha for i in chunk], L),
                    qk,
                    optimizer == "adam",
                )
            )

    rec = {k: np.full((steps, C), np.nan) for k in _PER_STEP}
    rec["gain"] = np.full((steps, C), np.nan)
    rec["diverged_at"] = np.full(C, -1, dtype=int)
    rec["probe_weights"] = np.full((snaps.size, C, n_probe, n_keys), np.nan)
    snap_row = {int(s): i for i, s in enumerate(snaps)}
    for t in range(steps):
        data = _draw_batch(rng_data, batch, n_keys, d_in, d_v, noise, m)
        for grp in groups:
            _group_step(grp, t, data, probe, rec, snap_row.get(t), t == steps - 1)

    def ro(a):
        a = np.ascontiguousarray(a)
        a.setflags(write=False)
        return a

    lr.setflags(write=False)
    out = []
    for i, v in enumerate(variants):
        c = slice(i * L, (i + 1) * L)
        out.append(
            TrainingHistory(
                d_k=d_k,
                alpha=v.alpha,
                lrs=lr,
                optimizer=optimizer,
                init=v.init,
                qk_norm=v.qk_norm,
                steps=steps,
                n_keys=n_keys,
                d_in=d_in,
                d_v=d_v,
                batch=batch,
                noise=noise,
                seed=seed,
                m=m,
                initial_loss=float(initial[i]),
                **{k: ro(rec[k][:, c]) for k in _PER_STEP},
                gain=ro(rec["gain"][:, c]) if v.qk_norm else None,
                diverged_at=ro(rec["diverged_at"][c]),
                snapshot_steps=ro(snaps),
                probe_weights=ro(rec["probe_weights"][:, c]),
                probe_target=ro(probe.target),
            )
        )
    return tuple(out)


def _initial_losses(z_q, z_k, variants, rng, n_keys, d_in, d_v, noise, m) -> np.ndarray:
    """ℓ₀ of each variant: mean loss of its initial weights on ``N_EVAL`` rows of ``rng``.

    The rows are drawn in chunks that respect ``_ELEMENTS_MAX``; every variant sees the
    same rows.
    """
    chunk = max(1, min(N_EVAL, _ELEMENTS_MAX // (n_keys * (d_in + d_v))))
    sizes = [min(chunk, N_EVAL - start) for start in range(0, N_EVAL, chunk)]
    batches = [_draw_batch(rng, b, n_keys, d_in, d_v, noise, m) for b in sizes]
    d_k = z_q.shape[1]
    out = np.zeros(len(variants))
    for i, v in enumerate(variants):
        W_q, W_k = _scale_init(z_q, z_k, v.init)
        gain = np.ones(1) if v.qk_norm else None
        scale = np.array([float(d_k) ** -v.alpha])
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            for b, data in zip(sizes, batches, strict=True):
                res = _forward_backward(W_q[None], W_k[None], gain, data, scale, grads=False)
                out[i] += res.loss[0] * b
    return out / N_EVAL


_PER_STEP = ("loss", "accuracy", "entropy", "dead_fraction", "grad_norm", "logit_std")


# --------------------------------------------------------------------------- summaries


def final_loss(history: TrainingHistory, last: int = 30) -> np.ndarray:
    """Mean loss over the last ``last`` steps, per learning rate.

    Parameters
    ----------
    history : TrainingHistory
    last : int
        Steps averaged, in [1, history.steps].

    Returns
    -------
    ndarray, shape (L,)
        NaN for a configuration that diverged (its last steps are NaN): a diverged run
        has no final loss. :func:`lr_sensitivity` counts NaN as ℓ₀.

    Raises
    ------
    ValueError
        If ``history`` is not a TrainingHistory or ``last`` is not an integer in
        [1, steps].
    """
    if not isinstance(history, TrainingHistory):
        raise ValueError(f"history must be a TrainingHistory, got {type(history).__name__}")
    last = check_int("last", last, 1, history.steps)
    return history.loss[-last:].mean(axis=0)


def lr_sensitivity(final_losses, initial_loss) -> np.ndarray | float:
    """LR sensitivity E_η[min(ℓ(η), ℓ₀) − ℓ*] over a grid of learning rates.

    Parameters
    ----------
    final_losses : array_like, shape (..., n_lrs)
        Final loss ℓ(η) at each learning rate of the grid (last axis); NaN marks a
        diverged run and counts as ℓ₀.
    initial_loss : float or array_like broadcastable to ``final_losses[..., 0]``
        ℓ₀, the reference loss (finite): the loss at initialisation, or — as the
        training page does, to put every variant of a task on one scale — the loss of
        uniform attention (:func:`uniform_loss`).

    Returns
    -------
    float or ndarray, shape (...)
        Mean over the grid of min(ℓ(η), ℓ₀) − ℓ*, with ℓ* = min over the grid of
        min(ℓ(η), ℓ₀) (the best final loss, or ℓ₀ if no rate improves on it). ≥ 0; 0 when
        every rate reaches the same loss — including when none improves on ℓ₀, so read
        it beside ℓ*. Lower = less sensitive.

    Raises
    ------
    ValueError
        If the grid is empty, a loss is ±inf or negative, or ℓ₀ is not finite.

    References
    ----------
    Wortsman et al. 2023, *Small-scale proxies for large-scale Transformer training
    instabilities*, §2–3; docs/mathematics.md §6.
    """
    ell = np.asarray(final_losses, dtype=np.float64)
    if ell.ndim == 0 or ell.shape[-1] == 0:
        raise ValueError("final_losses must have at least one learning rate on its last axis")
    if np.isinf(ell).any() or (ell < 0).any():
        raise ValueError("final_losses must be ≥ 0 and not ±inf (NaN marks a diverged run)")
    ell0 = np.asarray(initial_loss, dtype=np.float64)
    if not np.isfinite(ell0).all():
        raise ValueError(f"initial_loss must be finite, got {initial_loss!r}")
    ell0 = ell0[..., None]
    capped = np.where(np.isnan(ell), ell0, np.minimum(ell, ell0))
    best = capped.min(axis=-1, keepdims=True)
    out = (capped - best).mean(axis=-1)
    return float(out) if out.ndim == 0 else out
