"""Data of the "In real models" page: the shipped MiniLM attention file, loaded once, its
summaries computed once from the logits (:mod:`core.real_models`; the file, its summaries
and the entropy per layer are :mod:`ui.story.real_models`', shared with the recap), and
chart frames.

The file is read with ``allow_pickle=False`` into read-only arrays held by
``st.cache_resource`` (one copy per process, shared by every session); the frames are
small (≤ 400 rows) and built from those arrays. Labels are added by the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core import real_models as rm
from core.softmax import softmax_entropy
from ui.real_models import model as mm
from ui.story.real_models import (  # noqa: F401  (re-exported: shared with the recap)
    DATA_FILE,
    HIST_EDGES,
    Corpus,
    corpus,
    divisor_index,
    layer_frame,
)


def figures(c: Corpus) -> dict[str, object]:
    """The numbers the texts quote, all from the live summaries.

    ``std_mean`` (mean per-head std), ``std_layers`` (per layer), ``std_lo``/``std_hi``
    (extremes of the per-head std averaged over sentences) and their heads, ``entropy``,
    ``max_weight``, ``collapsed`` (per divisor), ``pooled_std``, ``pooled_mean``,
    ``log_t``, and ``collapsed_heads``: (layer, head) pairs collapsed with √d_k in every
    sentence.
    """
    s = c.summary
    per_head = s["std"].mean(axis=0)  # (L, H)
    lo = np.unravel_index(np.argmin(per_head), per_head.shape)
    hi = np.unravel_index(np.argmax(per_head), per_head.shape)
    trained = s["entropy"][..., divisor_index("sqrt_d_k")] < rm.COLLAPSE_NATS
    return {
        "std_mean": float(s["std"].mean()),
        "std_layers": s["std"].mean(axis=(0, 2)),
        "std_lo": float(per_head[lo]),
        "std_lo_head": (int(lo[0]), int(lo[1])),
        "std_hi": float(per_head[hi]),
        "std_hi_head": (int(hi[0]), int(hi[1])),
        "entropy": s["entropy"].mean(axis=(0, 1, 2)),
        "max_weight": s["max_weight"].mean(axis=(0, 1, 2)),
        "collapsed": rm.collapsed_share(s["entropy"]),
        "collapsed_trained_cells": int(trained.sum()),
        "collapsed_heads": [tuple(int(i) for i in x) for x in np.argwhere(trained.all(axis=0))],
        "pooled_std": float(c.hist["std"]),
        "pooled_mean": float(c.hist["mean"]),
        "pooled_min": float(c.hist["min"]),
        "pooled_max": float(c.hist["max"]),
        "outside": float(c.hist["below"]) + float(c.hist["above"]),
        "log_t": c.mean_log_tokens,
        "n_sentences": len(c.sentences),
    }


@st.cache_data(max_entries=3, show_spinner=False)
def head_grid(divisor: str = "sqrt_d_k") -> pd.DataFrame:
    """One row per (layer, head) with the logits q·k/c of ``divisor`` c: ``layer``,
    ``head``, ``std`` (per-head std of q·k/c, mean over sentences), ``std_min``,
    ``std_max`` (over sentences), ``entropy`` (mean row entropy, mean over sentences,
    nats), ``entropy_min``, ``entropy_max``."""
    c = corpus()
    s = c.summary
    std = rm.logit_multiplier(divisor, c.d_k) * s["std"]
    h = s["entropy"][..., divisor_index(divisor)]
    n_layers, n_heads = std.shape[1:]
    return pd.DataFrame(
        {
            "layer": np.repeat(np.arange(n_layers), n_heads),
            "head": np.tile(np.arange(n_heads), n_layers),
            "std": std.mean(axis=0).ravel(),
            "std_min": std.min(axis=0).ravel(),
            "std_max": std.max(axis=0).ravel(),
            "entropy": h.mean(axis=0).ravel(),
            "entropy_min": h.min(axis=0).ravel(),
            "entropy_max": h.max(axis=0).ravel(),
        }
    )


@st.cache_data(max_entries=1, show_spinner=False)
def histogram_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pooled histogram (``x0``, ``x1``, ``density``) and N(0, 1) on a grid (``x``,
    ``density``) over the same range."""
    hist = corpus().hist
    bars = pd.DataFrame(
        {"x0": HIST_EDGES[:-1], "x1": HIST_EDGES[1:], "density": np.asarray(hist["density"])}
    )
    x = np.linspace(HIST_EDGES[0], HIST_EDGES[-1], 161)
    return bars, pd.DataFrame({"x": x, "density": rm.standard_normal_pdf(x)})


@st.cache_data(max_entries=64, show_spinner=False)
def head_frame(sentence: int, layer: int, head: int, divisor: str) -> pd.DataFrame:
    """One head of shipped sentence ``sentence`` under ``divisor``: :func:`attention_frame`."""
    c = corpus()
    return attention_frame(c.logits[sentence][layer, head], c.tokens[sentence], divisor, c.d_k)


def attention_frame(z: np.ndarray, tokens: tuple[str, ...], divisor: str, d_k: int) -> pd.DataFrame:
    """One head under ``divisor``: one row per (query, key) pair of its logits ``z`` (T, T).

    Columns ``query``, ``key`` (token positions, int16), ``query_token``, ``key_token``
    (categorical), ``trained`` (q·k/√d_k), ``logit`` (q·k/c), ``weight``, ``row_entropy``
    (nats) and ``row_max`` of the query's row (float32: the page prints 3–4 decimals).
    Compact so that a 64-token text's map stays small: 78 kB of chart data (271 kB with
    int64, float64 and string columns), 110 kB pickled in a cache.
    """
    out = rm.head_attention(z, rm.logit_multiplier(divisor, d_k))
    t = z.shape[0]
    labels = np.array(tokens, dtype=object)
    q, k = np.divmod(np.arange(t * t), t)
    return pd.DataFrame(
        {
            "query": q.astype(np.int16),
            "key": k.astype(np.int16),
            "query_token": pd.Categorical(labels[q]),
            "key_token": pd.Categorical(labels[k]),
            "trained": z.ravel().astype(np.float32),
            "logit": out["logits"].ravel().astype(np.float32),
            "weight": out["weights"].ravel().astype(np.float32),
            "row_entropy": out["entropy"][q].astype(np.float32),
            "row_max": out["max_weight"][q].astype(np.float32),
        }
    )


def grid_range(heads: SentenceHeads, divisor: str, d_k: int, value: str) -> tuple[float, float]:
    """Smallest and largest ``value`` ("std" or "entropy") over the heads of
    :func:`sentence_grid` (``heads`` under ``divisor``), from the arrays: no frame."""
    if value == "std":
        cells = rm.logit_multiplier(divisor, d_k) * heads.std
    else:
        cells = heads.entropy[..., divisor_index(divisor)]
    return float(cells.min()), float(cells.max())


def head_metrics(frame: pd.DataFrame) -> dict[str, float]:
    """Mean row entropy, mean row max, std of the logits and ln T of one head's frame."""
    rows = frame.drop_duplicates("query")
    t = len(rows)
    return {
        "entropy": float(rows["row_entropy"].mean()),
        "max_weight": float(rows["row_max"].mean()),
        "std": float(frame["logit"].std(ddof=0)),
        "log_t": math.log(t),
        "t": t,
    }


# --- one sentence, shipped or typed ---------------------------------------------------------
# Sizes in a cache (pickled) at 64 tokens, the most a text gives, and at 20; the bounds
# keep the worst case, with the weights (about 100 MiB), within 150 MB of the app without
# them (benchmarks/minilm.py --server).
#: Typed texts whose tokens and per-head summaries are kept (9 kB each, 8 kB at 20 tokens):
#: a text seen again draws its grids without the model.
TYPED_SUMMARIES = 256
#: Typed texts whose logits are kept (596 kB each, 63 kB at 20 tokens): another head of
#: a recent text without the model. An older text runs through the model again.
TYPED_LOGITS = 8
#: One head of a typed text under one divisor, as drawn (110 kB each, 16 kB at 20 tokens).
TYPED_FRAMES = 32


@dataclass(frozen=True)
class SentenceHeads:
    """Every head of one sentence, as section 2 draws it, for a shipped or a typed text.

    ``text`` the sentence; ``tokens`` its T WordPiece tokens; ``std``, ``lo``, ``hi``
    (n_layers, n_heads): std (the page's summary), smallest and largest trained logit
    q·k/√d_k of each head; ``entropy`` (n_layers, n_heads, M): mean row entropy under each
    divisor of :data:`core.real_models.DIVISORS` (the page's summary), ``entropy_lo``,
    ``entropy_hi``: its lowest and highest row; ``typed``: what the tokenizer made of a
    typed text (:class:`ui.real_models.model.Tokens`), None for a shipped sentence.
    """

    text: str
    tokens: tuple[str, ...]
    std: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    entropy: np.ndarray
    entropy_lo: np.ndarray
    entropy_hi: np.ndarray
    typed: mm.Tokens | None = None


def sentence_heads(
    text: str,
    tokens: tuple[str, ...],
    z: np.ndarray,
    summary: dict[str, np.ndarray],
    d_k: int,
    typed: mm.Tokens | None = None,
) -> SentenceHeads:
    """:class:`SentenceHeads` from a sentence's logits ``z`` (n_layers, n_heads, T, T) and
    its per-head ``summary`` (:func:`core.real_models.head_summaries` with the multipliers
    of DIVISORS)."""
    mult = np.array([rm.logit_multiplier(name, d_k) for name in rm.DIVISORS])
    rows = softmax_entropy(mult.reshape(-1, 1, 1, 1, 1) * z)  # (M, n_layers, n_heads, T)
    return SentenceHeads(
        text=text,
        tokens=tuple(tokens),
        std=np.asarray(summary["std"]),
        lo=z.min(axis=(-2, -1)),
        hi=z.max(axis=(-2, -1)),
        entropy=np.asarray(summary["entropy"]),
        entropy_lo=np.moveaxis(rows.min(axis=-1), 0, -1),
        entropy_hi=np.moveaxis(rows.max(axis=-1), 0, -1),
        typed=typed,
    )


@st.cache_data(max_entries=32, show_spinner=False)
def shipped_heads(sentence: int) -> SentenceHeads:
    """Every head of shipped sentence ``sentence``."""
    c = corpus()
    summary = {key: c.summary[key][sentence] for key in ("std", "entropy")}
    return sentence_heads(
        c.sentences[sentence], c.tokens[sentence], c.logits[sentence], summary, c.d_k
    )


def sentence_grid(heads: SentenceHeads, divisor: str, d_k: int) -> pd.DataFrame:
    """One row per (layer, head) of one sentence under ``divisor``: ``std``, ``std_min``,
    ``std_max`` (std, smallest and largest logit q·k/c), ``entropy``, ``entropy_min``,
    ``entropy_max`` (mean, lowest and highest row entropy, nats) — the columns
    :func:`ui.real_models.charts.head_grid_heatmap` takes."""
    m, i = rm.logit_multiplier(divisor, d_k), divisor_index(divisor)
    n_layers, n_heads = heads.std.shape
    return pd.DataFrame(
        {
            "layer": np.repeat(np.arange(n_layers), n_heads),
            "head": np.tile(np.arange(n_heads), n_layers),
            "std": m * heads.std.ravel(),
            "std_min": m * heads.lo.ravel(),
            "std_max": m * heads.hi.ravel(),
            "entropy": heads.entropy[..., i].ravel(),
            "entropy_min": heads.entropy_lo[..., i].ravel(),
            "entropy_max": heads.entropy_hi[..., i].ravel(),
        }
    )


@st.cache_resource(show_spinner=False)
def minilm() -> mm.MiniLM | mm.WeightsUnavailable:
    """The model, loaded once for the whole server (about 0.2 s of CPU and 95 MiB from
    the package or huggingface_hub's cache), or why it could not be: the failure is kept
    too, so a server that cannot reach the Hub finds it out once (within about 2 s,
    ``hub.hub_reachable``), not on every run. A server that gets the weights later
    needs a restart."""
    try:
        return mm.load_minilm()
    except mm.WeightsUnavailable as exc:
        return exc


# ``_model`` is always the one model of :func:`minilm` (its weights pinned by SHA-256): the
# text alone determines the result, so the model is left out of the cache key.
@st.cache_data(max_entries=TYPED_LOGITS, show_spinner=False)
def typed_logits(text: str, _model: mm.MiniLM) -> mm.SentenceLogits:
    """A typed text through the model (:func:`ui.real_models.model.sentence_logits`).

    Raises TextError for a text the model cannot read (not cached: it costs no forward)."""
    return mm.sentence_logits(text, _model)


@st.cache_data(max_entries=TYPED_SUMMARIES, show_spinner=False)
def typed_heads(text: str, _model: mm.MiniLM) -> SentenceHeads:
    """Every head of a typed text: its logits and the page's summaries, as for a shipped
    sentence. Raises TextError as :func:`typed_logits`."""
    r = typed_logits(text, _model)
    z = r.logits.astype(np.float64)
    return sentence_heads(text, r.tokens.tokens, z, r.summary, r.d_k, r.tokens)


@st.cache_data(max_entries=TYPED_FRAMES, show_spinner=False)
def typed_head_frame(
    text: str, layer: int, head: int, divisor: str, _model: mm.MiniLM
) -> pd.DataFrame:
    """One head of a typed text under ``divisor``: :func:`attention_frame`."""
    r = typed_logits(text, _model)
    return attention_frame(r.head_logits(layer, head), r.tokens.tokens, divisor, r.d_k)


def sentence_heads_of(sentence: int | None, text: str | None) -> SentenceHeads:
    """Every head of shipped sentence ``sentence``, or (``sentence`` None) of the typed
    ``text``, from the cache that holds them (the model only for a text not seen lately)."""
    return shipped_heads(sentence) if text is None else typed_heads(text, minilm())


def one_head(
    sentence: int | None, text: str | None, layer: int, head: int, divisor: str
) -> pd.DataFrame:
    """One head under ``divisor`` (:func:`attention_frame`) of shipped sentence
    ``sentence``, or (``sentence`` None) of the typed ``text``, from the cache that holds it."""
    if text is None:
        return head_frame(sentence, layer, head, divisor)
    return typed_head_frame(text, layer, head, divisor, minilm())


@st.cache_data(max_entries=256, show_spinner=False)
def head_stats(
    sentence: int | None, text: str | None, layer: int, head: int, divisor: str
) -> dict[str, float]:
    """:func:`head_metrics` of :func:`one_head` (plain numbers: a hit copies no frame)."""
    return head_metrics(one_head(sentence, text, layer, head, divisor))


@dataclass(frozen=True)
class Chosen:
    """The sentence section 2 shows: shipped sentence ``index``, or the learner's own text
    run through ``model``."""

    heads: SentenceHeads
    index: int | None = None
    model: mm.MiniLM | None = None

    @property
    def text(self) -> str | None:
        """The typed text (None for a shipped sentence): with ``index``, what names the
        sentence in a frame's plain arguments."""
        return None if self.model is None else self.heads.text

    def head_frame(self, layer: int, head: int, divisor: str) -> pd.DataFrame:
        """One head under ``divisor`` (:func:`attention_frame`), from the cache that holds it."""
        return one_head(self.index, self.text, layer, head, divisor)

    def head_stats(self, layer: int, head: int, divisor: str) -> dict[str, float]:
        """:func:`head_metrics` of :meth:`head_frame` (cached: :func:`head_stats`)."""
        return head_stats(self.index, self.text, layer, head, divisor)
