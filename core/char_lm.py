"""NumPy forward pass and sampler for the small character-level language models.

The models are GPT-2-style decoders (Radford et al. 2019): pre-LayerNorm, causal
self-attention, learned positions, a GELU MLP (tanh form) of width 4·d_model, an untied
output layer. They differ in one line, the attention logit of head h:

* ``sqrt``  — q·k / √d_h (Vaswani et al. 2017);
* ``none``  — q·k;
* ``mup``   — q·k / d_h (Yang et al. 2021);
* ``qk_ln`` — LN(q)·LN(k) / √d_h, LayerNorm without bias and with learned gains on q and k
  (Dehghani et al. 2023; Wortsman et al. 2023).

The weights are those written by ``scripts/train_char_lm.py`` (its docstring documents the
layout). At a fixed d_model the models of one head size have identical shapes, so M models
are stacked on a leading axis and run as one batch: every function here takes ``params``
whose arrays carry that model axis first, and per model its ``scales`` and ``qk_norm``.

Shapes: M models, B sequences, T positions (≤ the context C), d = d_model, H heads of
d_h = d / H, V = 84 characters, L layers. Logits are in nats (natural-log softmax).
"""

from __future__ import annotations

import math

import numpy as np

from core.validation import check_positive_int, check_real, check_rng

__all__ = [
    "VARIANT_SCALES",
    "VOCAB",
    "decode",
    "empty_cache",
    "encode",
    "forward",
    "generate",
    "lr_sensitivity",
    "models_for_head_size",
    "stack_models",
]

#: The 84 characters the models know, in code-point order (index = token id).
VOCAB = "\n !\"&'()*,-./0123456789:;?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz{}"
_INDEX = {ch: i for i, ch in enumerate(VOCAB)}
LN_EPS = 1e-5
#: Logit scale of each variant as a function of the head size d_h.
VARIANT_SCALES = {
    "sqrt": lambda d_h: 1.0 / math.sqrt(d_h),
    "none": lambda d_h: 1.0,
    "mup": lambda d_h: 1.0 / d_h,
    "qk_ln": lambda d_h: 1.0 / math.sqrt(d_h),
}
_NAMES = (
    "wte wpe ln1_g ln1_b w_qkv b_qkv q_g k_g w_o b_o ln2_g ln2_b w_fc b_fc w_proj b_proj"
    " lnf_g lnf_b w_head b_head"
).split()


def encode(text: str) -> tuple[np.ndarray, int]:
    """Token ids of the characters of ``text`` that are in ``VOCAB``.

    Parameters
    ----------
    text : str
        Any text; characters outside the 84-character vocabulary (other letters, tabs,
        Chinese, emoji, ``#``, ``$`` …) are dropped.

    Returns
    -------
    ids : numpy.ndarray of int64, shape (n,)
        The kept characters' ids.
    dropped : int
        How many characters were dropped.

    Raises
    ------
    ValueError
        If ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    ids = [_INDEX[ch] for ch in text if ch in _INDEX]
    return np.asarray(ids, dtype=np.int64), len(text) - len(ids)


def decode(ids) -> str:
    """The text of token ids.

    Parameters
    ----------
    ids : array_like of int, shape (n,)
        Ids in [0, 84).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If an id is outside [0, 84).
    """
    ids = np.asarray(ids, dtype=np.int64).ravel()
    if ids.size and (ids.min() < 0 or ids.max() >= len(VOCAB)):
        raise ValueError(f"ids must lie in [0, {len(VOCAB)})")
    return "".join(VOCAB[i] for i in ids)


def stack_models(models: list[dict]) -> dict:
    """Stack M models' weights (same shapes) on a new leading axis, in float32.

    Parameters
    ----------
    models : list of dict
        Each maps the names of the layout (``wte`` … ``b_head``) to arrays (float16 as
        shipped, or float32).

    Returns
    -------
    dict
        The same names, each an array of shape (M, ...) in float32.

    Raises
    ------
    ValueError
        If ``models`` is empty, a name is missing, or the shapes differ between models.
    """
    if not models:
        raise ValueError("models must hold at least one model")
    out = {}
    for name in _NAMES:
        if any(name not in m for m in models):
            raise ValueError(f"models: every model needs the array {name!r}")
        shapes = {np.shape(m[name]) for m in models}
        if len(shapes) != 1:
            raise ValueError(f"models: {name!r} has different shapes {sorted(shapes)}")
        out[name] = np.stack([np.asarray(m[name], dtype=np.float32) for m in models])
    return out


def _ln(x: np.ndarray, g, b) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + LN_EPS) * g + b


def _gelu(x: np.ndarray) -> np.ndarray:
    # x * x * x, not x**3: NumPy's float32 power is ~50× slower than two products
    cube = x * x * x
    return 0.5 * x * (1.0 + np.tanh(np.float32(math.sqrt(2.0 / math.pi)) * (x + 0.044715 * cube)))


def empty_cache(params: dict, n_heads: int, batch: int) -> dict:
    """An empty key/value cache for ``forward``.

    Parameters
    ----------
    params : dict
        Stacked weights (``stack_models``).
    n_heads : int
        Heads per layer H (d_model must be a multiple).
    batch : int
        Sequences per model B.

    Returns
    -------
    dict
        ``k``, ``v``: zeros of shape (M, L, B, H, C, d_h), float32; ``length``: 0.

    Raises
    ------
    ValueError
        If ``n_heads`` does not divide d_model or ``batch`` < 1.
    """
    M, C, d = params["wpe"].shape
    L = params["w_qkv"].shape[1]
    n_heads = check_positive_int("n_heads", n_heads, hi=d)
    if d % n_heads:
        raise ValueError(f"n_heads must divide d_model = {d}, got {n_heads}")
    batch = check_positive_int("batch", batch)
    shape = (M, L, batch, n_heads, C, d // n_heads)
    return {"k": np.zeros(shape, np.float32), "v": np.zeros(shape, np.float32), "length": 0}


def forward(
    params: dict,
    tokens,
    *,
    n_heads: int,
    scales,
    qk_norm,
    cache: dict | None = None,
) -> np.ndarray:
    """Next-character logits of M models for a batch of sequences.

    Parameters
    ----------
    params : dict
        Stacked weights (``stack_models``), float32, model axis first.
    tokens : array_like of int, shape (B, T) or (M, B, T)
        Token ids: the same input for every model, or each model its own. With a cache
        they continue the cached positions.
    n_heads : int
        Heads per layer H (all M models share it).
    scales : array_like of float, shape (M,)
        Each model's logit factor (``VARIANT_SCALES[variant](d_h)``).
    qk_norm : array_like of bool, shape (M,)
        Whether each model LayerNorms q and k (``qk_ln``).
    cache : dict or None
        From ``empty_cache`` (updated in place: keys, values and ``length``); ``None`` runs
        the sequences from position 0 without one.

    Returns
    -------
    numpy.ndarray of float32, shape (M, B, T, V)
        Logits in nats (log-softmax gives log-probabilities).

    Raises
    ------
    ValueError
        If the tokens are not a (B, T) or (M, B, T) array of ids, if the positions pass the
        context C, or if ``scales``/``qk_norm`` do not have one entry per model.
    """
    tokens = np.asarray(tokens)
    M, C, d = params["wpe"].shape
    V = params["wte"].shape[1]
    L = params["w_qkv"].shape[1]
    if tokens.ndim == 2:
        tokens = np.broadcast_to(tokens, (M, *tokens.shape))
    if tokens.ndim != 3 or tokens.shape[0] != M or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(
            f"tokens must be a (batch, positions) or ({M}, batch, positions) integer array,"
            f" got shape {tokens.shape}"
        )
    if tokens.size and (tokens.min() < 0 or tokens.max() >= V):
        raise ValueError(f"tokens must lie in [0, {V})")
    _, B, T = tokens.shape
    start = 0 if cache is None else int(cache["length"])
    if T < 1 or start + T > C:
        raise ValueError(f"positions {start}..{start + T - 1} must lie in [0, {C}) (context)")
    if d % n_heads:
        raise ValueError(f"n_heads must divide d_model = {d}, got {n_heads}")
    dh = d // n_heads
    scales = np.asarray(scales, dtype=np.float32).reshape(-1)
    qk_norm = np.asarray(qk_norm, dtype=bool).reshape(-1)
    if scales.shape != (M,) or qk_norm.shape != (M,):
        raise ValueError(f"scales and qk_norm need one entry per model ({M})")
    if cache is not None and cache["k"].shape[2] != B:
        raise ValueError(f"tokens has {B} sequences, the cache {cache['k'].shape[2]}")

    emb = np.take_along_axis(params["wte"], tokens.reshape(M, B * T, 1), axis=1)
    x = emb.reshape(M, B, T, d) + params["wpe"][:, None, start : start + T]  # (M, B, T, d)
    total = start + T
    # Causal mask over the total positions: query i (absolute start + i) sees keys ≤ it.
    allowed = np.arange(total)[None, :] <= (start + np.arange(T))[:, None]  # (T, total)
    norm = qk_norm[:, None, None, None, None]
    for l in range(L):  # noqa: E741
        h = _ln(x, params["ln1_g"][:, l, None, None], params["ln1_b"][:, l, None, None])
        qkv = h @ params["w_qkv"][:, l, None] + params["b_qkv"][:, l, None, None]

        q, k, v = (
            qkv[..., i * d : (i + 1) * d].reshape(M, B, T, n_heads, dh).transpose(0, 1, 3, 2, 4)
            for i in range(3)
        )  # each (M, B, H, T, d_h)
        gq = params["q_g"][:, l].reshape(M, 1, n_heads, 1, dh)
        gk = params["k_g"][:, l].reshape(M, 1, n_heads, 1, dh)
        q = np.where(norm, _ln(q, gq, 0.0), q)
        k = np.where(norm, _ln(k, gk, 0.0), k)
        if cache is not None:
            cache["k"][:, l, :, :, start:total] = k
            cache["v"][:, l, :, :, start:total] = v
            k = cache["k"][:, l, :, :, :total]
            v = cache["v"][:, l, :, :, :total]
        s = (q @ k.swapaxes(-1, -2)) * scales[:, None, None, None, None]  # (M, B, H, T, total)
        s = np.where(allowed, s, -np.inf)
        s = s - s.max(-1, keepdims=True)
        a = np.exp(s)
        a /= a.sum(-1, keepdims=True)
        o = (a @ v).transpose(0, 1, 3, 2, 4).reshape(M, B, T, d)
        x = x + o @ params["w_o"][:, l, None] + params["b_o"][:, l, None, None]
        h = _ln(x, params["ln2_g"][:, l, None, None], params["ln2_b"][:, l, None, None])
        f = _gelu(h @ params["w_fc"][:, l, None] + params["b_fc"][:, l, None, None])
        x = x + f @ params["w_proj"][:, l, None] + params["b_proj"][:, l, None, None]
    if cache is not None:
        cache["length"] = total
    h = _ln(x, params["lnf_g"][:, None, None], params["lnf_b"][:, None, None])
    return (h @ params["w_head"][:, None] + params["b_head"][:, None, None]).astype(np.float32)


def generate(
    params: dict,
    prompt,
    n_new: int,
    *,
    n_heads: int,
    scales,
    qk_norm,
    temperature: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Continue one prompt with each of M models, sampling at a temperature.

    The M models run as one batch with a key/value cache, each on its own text. When the
    context C is full, the cache restarts from the last C // 2 characters (positions are
    learned, so a window cannot slide one step at a time): every character is predicted
    from at least C // 2 before it (or the whole prompt, if shorter). Character t of
    model m is drawn by inverse CDF from softmax(logits / temperature) with one
    ``rng.random()`` per model and character: the same seed gives the same text.

    Parameters
    ----------
    params : dict
        Stacked weights (``stack_models``).
    prompt : array_like of int, shape (n,)
        Token ids, n ≥ 1; only its last C are used.
    n_new : int
        Characters to generate, 1 … 10 000.
    n_heads : int
        Heads per layer (shared by the M models).
    scales, qk_norm : array_like, shape (M,)
        As in ``forward``.
    temperature : float
        In (0, 10]: < 1 sharpens the distribution, > 1 flattens it.
    rng : numpy.random.Generator
        The source of the draws.

    Returns
    -------
    numpy.ndarray of int64, shape (M, n_new)
        The generated ids per model.

    Raises
    ------
    ValueError
        If the prompt is empty or not ids, ``n_new`` or ``temperature`` out of range, or
        ``rng`` is not a Generator.
    """
    prompt = np.asarray(prompt).reshape(-1)
    if prompt.size == 0 or not np.issubdtype(prompt.dtype, np.integer):
        raise ValueError("prompt must hold at least one token id")
    n_new = check_positive_int("n_new", n_new, hi=10_000)
    temperature = check_real("temperature", temperature, 0.0, 10.0, lo_open=True)
    rng = check_rng("rng", rng)
    M, C, _ = params["wpe"].shape
    keep = C // 2
    history = np.tile(prompt[-C:].astype(np.int64), (M, 1))  # (M, n)
    out = np.empty((M, n_new), np.int64)
    cache = empty_cache(params, n_heads, 1)
    run = {"n_heads": n_heads, "scales": scales, "qk_norm": qk_norm, "cache": cache}
    logits = forward(params, history[:, None, :], **run)[:, 0, -1]  # (M, V)
    for t in range(n_new):
        z = logits.astype(np.float64) / temperature
        z -= z.max(-1, keepdims=True)
        cdf = np.cumsum(np.exp(z), -1)
        u = rng.random(M)[:, None] * cdf[:, -1:]
        nxt = np.minimum((cdf <= u).sum(-1), cdf.shape[-1] - 1)
        out[:, t] = nxt
        if t == n_new - 1:
            break
        history = np.concatenate([history, nxt[:, None]], axis=1)
        if cache["length"] >= C:
            history = history[:, -keep:]
            cache = run["cache"] = empty_cache(params, n_heads, 1)
            logits = forward(params, history[:, None, :], **run)[:, 0, -1]
        else:
            logits = forward(params, nxt[:, None, None], **run)[:, 0, -1]
    return out


def lr_sensitivity(final_loss, initial_loss) -> tuple[float, np.ndarray]:
    """Learning-rate sensitivity of Wortsman et al. 2023 (arXiv 2309.14322, with their Figure 1).

    ``E_η[min(ℓ(η), ℓ₀) − min_η ℓ(η)]`` over the rates η of the grid: the mean excess of
    the final loss over the best one, a diverged run (NaN) or one ending above its initial
    loss ℓ₀ counting as ℓ₀. Seeds are averaged first (after the clipping).

    Parameters
    ----------
    final_loss : array_like, shape (R, S)
        Final loss (nats) per rate and seed; NaN where the run diverged.
    initial_loss : array_like, shape (R, S) or scalar
        ℓ₀, the loss at step 0 (nats).

    Returns
    -------
    sensitivity : float
        In nats; 0 when every rate reaches the best loss.
    clipped : numpy.ndarray, shape (R,)
        The seed-mean of min(ℓ, ℓ₀) per rate.

    Raises
    ------
    ValueError
        If ``final_loss`` is not two-dimensional with at least one rate and seed, or ℓ₀ is
        not finite.
    """
    loss = np.asarray(final_loss, dtype=np.float64)
    if loss.ndim != 2 or 0 in loss.shape:
        raise ValueError(f"final_loss must have shape (rates, seeds), got {loss.shape}")
    l0 = np.broadcast_to(np.asarray(initial_loss, dtype=np.float64), loss.shape)
    if not np.isfinite(l0).all():
        raise ValueError("initial_loss must be finite")
    clipped = np.where(np.isfinite(loss), np.minimum(loss, l0), l0).mean(axis=1)
    return float(np.mean(clipped - clipped.min())), clipped


def models_for_head_size(weights, meta: dict, d_h: int) -> dict:
    """The shipped models of one head size, stacked for ``forward`` and ``generate``.

    Parameters
    ----------
    weights : mapping
        Name → array, as in ``data/char_lm_weights.npz`` (keys ``{variant}/{d_h}/{name}``).
    meta : dict
        That file's ``meta`` (JSON-decoded): ``models`` lists variant, d_h, n_heads, rate,
        seed and final validation loss per model.
    d_h : int
        The head size.

    Returns
    -------
    dict
        ``variants`` (list of str, the model order), ``params`` (``stack_models``),
        ``n_heads`` (int), ``scales`` (M,) float32, ``qk_norm`` (M,) bool, ``models`` (the
        meta entries, same order).

    Raises
    ------
    ValueError
        If no model has head size ``d_h``.
    """
    entries = [m for m in meta["models"] if m["d_h"] == d_h]
    if not entries:
        sizes = sorted({m["d_h"] for m in meta["models"]})
        raise ValueError(f"d_h must be one of {sizes}, got {d_h}")
    variants = [m["variant"] for m in entries]
    params = stack_models(
        [{name: weights[f"{v}/{d_h}/{name}"] for name in _NAMES} for v in variants]
    )
    return {
        "variants": variants,
        "params": params,
        "n_heads": entries[0]["n_heads"],
        "scales": np.array([VARIANT_SCALES[v](d_h) for v in variants], np.float32),
        "qk_norm": np.array([v == "qk_ln" for v in variants]),
        "models": entries,
    }
