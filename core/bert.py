"""A BERT encoder forward pass in NumPy that exposes every head's q, k and logits.

The architecture is the post-LayerNorm encoder of Devlin et al. 2019 (as in
Hugging Face ``BertModel``), which is what sentence-transformers
all-MiniLM-L6-v2 runs. For each layer ``l`` with input ``x`` (n_batch, T, H)::

    q, k, v  = x W_qᵀ + b_q, x W_kᵀ + b_k, x W_vᵀ + b_v      split into heads (d_k = H / n_heads)
    logits   = q kᵀ / √d_k                                     (n_batch, n_heads, T, T)
    weights  = softmax(logits + mask bias)                     over keys
    a        = LayerNorm(x + concat_heads(weights v) W_oᵀ + b_o)
    x_next   = LayerNorm(a + GELU(a W_1ᵀ + b_1) W_2ᵀ + b_2)

and the input of layer 0 is LayerNorm(word + position + token-type embeddings).
Weight matrices keep the checkpoint's (out_features, in_features) layout.

Shapes::

    input_ids        (n_batch, T)              int token ids
    attention_mask   (n_batch, T)              bool or 0/1, True/1 = real token, False/0 = padding
    hidden_states    (n_layers + 1, n_batch, T, H)
    q, k             (n_layers, n_batch, n_heads, T, d_k)   before scaling
    logits           (n_layers, n_batch, n_heads, T, T)     q kᵀ / √d_k, mask not added
    weights          (n_layers, n_batch, n_heads, T, T)     softmax over keys, padded keys 0

References
----------
Devlin et al. 2019, *BERT*, §3 and the reference code ``google-research/bert``
``modeling.py`` (``attention_layer``: logits × 1/√size_per_head; mask adder).
Vaswani et al. 2017, *Attention Is All You Need*, eq. (1).
Hendrycks & Gimpel 2016, *Gaussian Error Linear Units* (exact GELU x Φ(x)).
Ba et al. 2016, *Layer Normalization*.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from core.softmax import softmax
from core.validation import check_float_dtype, check_positive, check_positive_int

__all__ = [
    "BertConfig",
    "BertLayerWeights",
    "BertOutput",
    "BertWeights",
    "bert_forward",
    "bert_weights_from_state_dict",
    "erf",
    "gelu",
    "layer_norm",
]


@dataclass(frozen=True)
class BertConfig:
    """Sizes of a BERT encoder (the fields of a Hugging Face ``config.json``).

    Attributes
    ----------
    vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
    intermediate_size, max_position_embeddings, type_vocab_size : int
        As in ``config.json``; ``hidden_size`` must be divisible by
        ``num_attention_heads``.
    layer_norm_eps : float
        ε added to the variance in every LayerNorm (1e-12 for BERT).
    """

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    def __post_init__(self) -> None:
        for name in (
            "vocab_size",
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
            "max_position_embeddings",
            "type_vocab_size",
        ):
            check_positive_int(name, getattr(self, name))
        check_positive("layer_norm_eps", self.layer_norm_eps)
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                f"({self.num_attention_heads})"
            )

    @property
    def head_dim(self) -> int:
        """d_k = hidden_size / num_attention_heads, the length of each dotted q and k."""
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, config: Mapping[str, object]) -> BertConfig:
        """Build from a parsed ``config.json``, ignoring fields the forward does not use.

        Parameters
        ----------
        config : mapping of str to object
            The parsed ``config.json`` of a Hugging Face BERT checkpoint.

        Returns
        -------
        BertConfig

        Raises
        ------
        ValueError
            If a required field is missing, if ``hidden_act`` is present and not
            ``"gelu"`` (exact GELU), if ``position_embedding_type`` is present
            and not ``"absolute"``, or if a size is invalid (see the class).

        References
        ----------
        The fields of Hugging Face ``transformers.BertConfig``.
        """
        act = config.get("hidden_act", "gelu")
        if act != "gelu":
            raise ValueError(f"hidden_act must be 'gelu' (exact GELU), got {act!r}")
        pos = config.get("position_embedding_type", "absolute")
        if pos != "absolute":
            raise ValueError(f"position_embedding_type must be 'absolute', got {pos!r}")
        required = (
            "vocab_size",
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
        )
        missing = [name for name in required if name not in config]
        if missing:
            raise ValueError(f"config is missing the field(s) {', '.join(missing)}")
        optional = ("max_position_embeddings", "type_vocab_size", "layer_norm_eps")
        kwargs = {name: config[name] for name in (*required, *optional) if name in config}
        return cls(**kwargs)  # type: ignore[arg-type]


@dataclass(frozen=True)
class BertLayerWeights:
    """Parameters of one encoder layer; matrices are (out_features, in_features).

    Attributes
    ----------
    query_w, key_w, value_w, attn_out_w : ndarray, shape (H, H)
    query_b, key_b, value_b, attn_out_b : ndarray, shape (H,)
    attn_ln_gamma, attn_ln_beta : ndarray, shape (H,)
        LayerNorm after the attention residual.
    inter_w : ndarray, shape (I, H)
    inter_b : ndarray, shape (I,)
    out_w : ndarray, shape (H, I)
    out_b : ndarray, shape (H,)
    out_ln_gamma, out_ln_beta : ndarray, shape (H,)
        LayerNorm after the feed-forward residual.
    """

    query_w: np.ndarray
    query_b: np.ndarray
    key_w: np.ndarray
    key_b: np.ndarray
    value_w: np.ndarray
    value_b: np.ndarray
    attn_out_w: np.ndarray
    attn_out_b: np.ndarray
    attn_ln_gamma: np.ndarray
    attn_ln_beta: np.ndarray
    inter_w: np.ndarray
    inter_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    out_ln_gamma: np.ndarray
    out_ln_beta: np.ndarray


@dataclass(frozen=True)
class BertWeights:
    """All parameters of a BERT encoder (the pooler is not used).

    Attributes
    ----------
    word_embeddings : ndarray, shape (vocab_size, H)
    position_embeddings : ndarray, shape (max_position_embeddings, H)
    token_type_embeddings : ndarray, shape (type_vocab_size, H)
    emb_ln_gamma, emb_ln_beta : ndarray, shape (H,)
    layers : tuple of BertLayerWeights, length num_hidden_layers
    """

    word_embeddings: np.ndarray
    position_embeddings: np.ndarray
    token_type_embeddings: np.ndarray
    emb_ln_gamma: np.ndarray
    emb_ln_beta: np.ndarray
    layers: tuple[BertLayerWeights, ...]


@dataclass(frozen=True)
class BertOutput:
    """What :func:`bert_forward` returns (shapes in the module docstring).

    Attributes
    ----------
    hidden_states : ndarray, shape (n_layers + 1, n_batch, T, H)
        Index 0 is the embedding output, index l + 1 the output of layer l.
    q, k : ndarray, shape (n_layers, n_batch, n_heads, T, d_k)
        Per-head queries and keys before any scaling.
    logits : ndarray, shape (n_layers, n_batch, n_heads, T, T)
        q kᵀ / √d_k, rows queries and columns keys, without the mask bias.
    weights : ndarray, shape (n_layers, n_batch, n_heads, T, T)
        softmax over keys of logits plus the mask bias; padded keys get 0.
    """

    hidden_states: np.ndarray
    q: np.ndarray
    k: np.ndarray
    logits: np.ndarray
    weights: np.ndarray


_LAYER_NAMES = {
    "query_w": "attention.self.query.weight",
    "query_b": "attention.self.query.bias",
    "key_w": "attention.self.key.weight",
    "key_b": "attention.self.key.bias",
    "value_w": "attention.self.value.weight",
    "value_b": "attention.self.value.bias",
    "attn_out_w": "attention.output.dense.weight",
    "attn_out_b": "attention.output.dense.bias",
    "attn_ln_gamma": "attention.output.LayerNorm.weight",
    "attn_ln_beta": "attention.output.LayerNorm.bias",
    "inter_w": "intermediate.dense.weight",
    "inter_b": "intermediate.dense.bias",
    "out_w": "output.dense.weight",
    "out_b": "output.dense.bias",
    "out_ln_gamma": "output.LayerNorm.weight",
    "out_ln_beta": "output.LayerNorm.bias",
}


def bert_weights_from_state_dict(
    state: Mapping[str, np.ndarray], config: BertConfig, *, dtype=np.float64
) -> BertWeights:
    """Collect the arrays of a Hugging Face ``BertModel`` state dict.

    Parameters
    ----------
    state : mapping of str to ndarray
        Parameter name → array, e.g. what ``safetensors.numpy.load_file`` returns.
        Names may carry a ``"bert."`` prefix.
    config : BertConfig
    dtype : floating dtype
        Dtype the arrays are converted to (float64 for extraction, float32 for the
        app); an array already in ``dtype`` is used as it is, not copied.

    Returns
    -------
    BertWeights

    Raises
    ------
    ValueError
        If a parameter is missing or its shape disagrees with ``config``.

    References
    ----------
    The parameter names of Hugging Face ``transformers.BertModel``.
    """
    dt = check_float_dtype("dtype", dtype)
    h, i = config.hidden_size, config.intermediate_size
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in state else ""

    def get(name: str, shape: tuple[int, ...]) -> np.ndarray:
        key = prefix + name
        if key not in state:
            raise ValueError(f"state is missing the parameter {key!r}")
        arr = np.asarray(state[key])
        if arr.shape != shape:
            raise ValueError(f"parameter {key!r} has shape {arr.shape}, expected {shape}")
        return arr.astype(dt, copy=False)

    shapes = {
        "query_w": (h, h),
        "key_w": (h, h),
        "value_w": (h, h),
        "attn_out_w": (h, h),
        "inter_w": (i, h),
        "inter_b": (i,),
        "out_w": (h, i),
    }
    layers = tuple(
        BertLayerWeights(
            **{
                field: get(f"encoder.layer.{layer}.{name}", shapes.get(field, (h,)))
                for field, name in _LAYER_NAMES.items()
            }
        )
        for layer in range(config.num_hidden_layers)
    )
    return BertWeights(
        word_embeddings=get("embeddings.word_embeddings.weight", (config.vocab_size, h)),
        position_embeddings=get(
            "embeddings.position_embeddings.weight", (config.max_position_embeddings, h)
        ),
        token_type_embeddings=get(
            "embeddings.token_type_embeddings.weight", (config.type_vocab_size, h)
        ),
        emb_ln_gamma=get("embeddings.LayerNorm.weight", (h,)),
        emb_ln_beta=get("embeddings.LayerNorm.bias", (h,)),
        layers=layers,
    )


_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x) -> np.ndarray:
    """Error function erf(x) = 2/√π ∫₀ˣ exp(−t²) dt, elementwise, in float64.

    NumPy has no ``erf``; this applies the C library's double-precision
    ``erf`` (through :func:`math.erf`) to every element, so each value is
    correctly rounded to within an ulp. One Python call per element: meant for
    the small inputs of an extraction, not for large arrays.

    Parameters
    ----------
    x : array_like, any shape
        Real values (NaN propagates).

    Returns
    -------
    ndarray of float64, same shape as ``x``, in [−1, 1].

    Raises
    ------
    ValueError or TypeError
        If ``x`` cannot be converted to float64 (as ``np.asarray`` raises).

    References
    ----------
    Abramowitz & Stegun 1964, 7.1.1 (definition).
    """
    arr = np.asarray(x, dtype=np.float64)
    return np.asarray(_ERF(arr), dtype=np.float64).reshape(arr.shape)


def gelu(x) -> np.ndarray:
    """Exact GELU, x Φ(x) = x (1 + erf(x / √2)) / 2, elementwise.

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    ndarray, same shape as ``x``; float64, or the floating dtype of ``x``.

    Raises
    ------
    ValueError or TypeError
        As :func:`erf`.

    References
    ----------
    Hendrycks & Gimpel 2016, eq. for GELU(x) = x Φ(x) (not the tanh approximation).
    """
    arr = np.asarray(x)
    dt = arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float64)
    x64 = arr.astype(np.float64)
    return (0.5 * x64 * (1.0 + erf(x64 / math.sqrt(2.0)))).astype(dt)


def layer_norm(x, gamma, beta, eps: float) -> np.ndarray:
    """LayerNorm over the last axis: (x − mean) / √(var + eps) · gamma + beta.

    Parameters
    ----------
    x : ndarray, shape (..., H)
    gamma, beta : ndarray, shape (H,)
    eps : float
        Added to the (biased, 1/H) variance.

    Returns
    -------
    ndarray, shape (..., H)

    Raises
    ------
    ValueError
        If ``gamma`` or ``beta`` does not broadcast against ``x`` (from NumPy).

    References
    ----------
    Ba et al. 2016, *Layer Normalization*, §3.
    """
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * gamma + beta


def _linear(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return x @ w.T + b


def _split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    n_batch, t, h = x.shape
    return x.reshape(n_batch, t, n_heads, h // n_heads).transpose(0, 2, 1, 3)


def bert_forward(
    input_ids,
    weights: BertWeights,
    config: BertConfig,
    *,
    attention_mask=None,
    token_type_ids=None,
    dtype=np.float64,
) -> BertOutput:
    """Run the encoder and keep every layer's per-head q, k, logits and weights.

    Parameters
    ----------
    input_ids : array_like of int, shape (n_batch, T)
        Token ids in [0, vocab_size); 1 ≤ T ≤ max_position_embeddings.
    weights : BertWeights
    config : BertConfig
    attention_mask : array_like of bool or 0/1, shape (n_batch, T), optional
        True/1 for real tokens, False/0 for padding (keys that must get no
        weight). Every sequence needs at least one real token. Default: all real.
    token_type_ids : array_like of int, shape (n_batch, T), optional
        Segment ids in [0, type_vocab_size); default all 0.
    dtype : floating dtype
        Arithmetic precision (float64 for extraction).

    Returns
    -------
    BertOutput
        hidden_states (n_layers + 1, n_batch, T, H); q, k (n_layers, n_batch,
        n_heads, T, d_k); logits and weights (n_layers, n_batch, n_heads, T, T).

    Raises
    ------
    ValueError
        If ``input_ids`` is not 2-D with T in [1, max_position_embeddings],
        if an id or segment id is out of range, if ``attention_mask`` has a
        different shape, values other than 0/1, or a row with no real token.

    Notes
    -----
    Padded keys get the additive bias ``finfo(dtype).min``: after the row's
    maximum is subtracted, exp of it underflows to exactly 0, so padded keys
    get weight 0 and the real tokens' outputs do not depend on the padding.
    Position ids are 0, 1, …, T − 1 (right padding).

    References
    ----------
    Devlin et al. 2019, §3; ``google-research/bert`` ``modeling.py``; Vaswani et al.
    2017, eq. (1).
    """
    dt = check_float_dtype("dtype", dtype)
    ids = np.asarray(input_ids)
    if ids.ndim != 2 or ids.dtype.kind not in "iu":
        raise ValueError(
            f"input_ids must be an integer array of shape (n_batch, T), got "
            f"shape {ids.shape} and dtype {ids.dtype}"
        )
    n_batch, t = ids.shape
    if not 1 <= t <= config.max_position_embeddings:
        raise ValueError(
            f"input_ids must have 1 <= T <= {config.max_position_embeddings} tokens, got T = {t}"
        )
    if n_batch < 1:
        raise ValueError("input_ids must hold at least one sequence (n_batch >= 1)")
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise ValueError(f"input_ids must lie in [0, {config.vocab_size - 1}]")
    if token_type_ids is None:
        types = np.zeros_like(ids)
    else:
        types = np.asarray(token_type_ids)
        if types.shape != ids.shape or types.dtype.kind not in "iu":
            raise ValueError(
                f"token_type_ids must be an integer array of shape {ids.shape}, got "
                f"shape {types.shape} and dtype {types.dtype}"
            )
        if types.min() < 0 or types.max() >= config.type_vocab_size:
            raise ValueError(f"token_type_ids must lie in [0, {config.type_vocab_size - 1}]")
    if attention_mask is None:
        keep = np.ones(ids.shape, dtype=bool)
    else:
        m = np.asarray(attention_mask)
        if m.shape != ids.shape:
            raise ValueError(
                f"attention_mask must have the shape of input_ids {ids.shape}, got {m.shape}"
            )
        if m.dtype != np.bool_ and not np.isin(m, (0, 1)).all():
            raise ValueError("attention_mask must hold only 0/1 or False/True")
        keep = m.astype(bool)
        if not keep.any(axis=1).all():
            raise ValueError("attention_mask must keep at least one token in every sequence")

    n_heads, d_k, eps = config.num_attention_heads, config.head_dim, config.layer_norm_eps
    w = weights
    x = (
        w.word_embeddings[ids].astype(dt)
        + w.position_embeddings[:t].astype(dt)
        + w.token_type_embeddings[types].astype(dt)
    )
    x = layer_norm(x, w.emb_ln_gamma.astype(dt), w.emb_ln_beta.astype(dt), eps)
    # (n_batch, 1, 1, T): broadcast over heads and queries.
    bias = np.where(keep, 0.0, np.finfo(dt).min).astype(dt)[:, None, None, :]
    inv_sqrt_dk = 1.0 / math.sqrt(d_k)

    hidden, qs, ks, logits_all, weights_all = [x], [], [], [], []
    for lw in w.layers:
        p = {name: getattr(lw, name).astype(dt, copy=False) for name in _LAYER_NAMES}
        q = _split_heads(_linear(x, p["query_w"], p["query_b"]), n_heads)
        k = _split_heads(_linear(x, p["key_w"], p["key_b"]), n_heads)
        v = _split_heads(_linear(x, p["value_w"], p["value_b"]), n_heads)
        logits = (q @ k.swapaxes(-1, -2)) * dt.type(inv_sqrt_dk)
        attn = softmax(logits + bias, axis=-1)
        context = (attn @ v).transpose(0, 2, 1, 3).reshape(n_batch, t, config.hidden_size)
        a = layer_norm(
            x + _linear(context, p["attn_out_w"], p["attn_out_b"]),
            p["attn_ln_gamma"],
            p["attn_ln_beta"],
            eps,
        )
        ff = _linear(gelu(_linear(a, p["inter_w"], p["inter_b"])), p["out_w"], p["out_b"])
        x = layer_norm(a + ff, p["out_ln_gamma"], p["out_ln_beta"], eps)
        hidden.append(x)
        qs.append(q)
        ks.append(k)
        logits_all.append(logits)
        weights_all.append(attn)
    return BertOutput(
        hidden_states=np.stack(hidden),
        q=np.stack(qs),
        k=np.stack(ks),
        logits=np.stack(logits_all),
        weights=np.stack(weights_all),
    )
