"""Data of the "In real models" page: the shipped MiniLM attention file, loaded once, its
summaries computed once from the logits (:mod:`core.real_models`), and chart frames.

The file is read with ``allow_pickle=False`` into read-only arrays held by
``st.cache_resource`` (one copy per process, shared by every session); the frames are
small (≤ 400 rows) and built from those arrays. Labels are added by the page.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from core import real_models as rm

DATA_FILE = Path(__file__).resolve().parents[2] / "data" / "minilm_attention.npz"

#: Bin edges of the pooled histogram (scaled logits): 0.25 wide over [−8, 8].
HIST_EDGES = np.linspace(-8.0, 8.0, 65)


@dataclass(frozen=True)
class Corpus:
    """The data file and everything the page derives from it (read-only arrays).

    ``logits[s]`` (n_layers, n_heads, T_s, T_s) float64, q·k/√d_k; ``summary`` as
    :func:`core.real_models.corpus_summaries` with the divisors of
    :data:`core.real_models.DIVISORS`; ``hist`` as :func:`core.real_models.pooled_histogram`.
    """

    model_name: str
    d_k: int
    n_layers: int
    n_heads: int
    sentences: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]
    logits: tuple[np.ndarray, ...]
    summary: dict[str, np.ndarray]
    hist: dict[str, object]

    @property
    def mean_log_tokens(self) -> float:
        """Mean over sentences of ln T_s: the entropy of uniform attention, averaged."""
        return float(np.log(self.summary["n_tokens"]).mean())


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@st.cache_resource(show_spinner=False)
def corpus() -> Corpus:
    """Load the data file and compute every summary (about 0.2 s, once per process)."""
    with np.load(DATA_FILE, allow_pickle=False) as f:
        raw = {name: f[name] for name in f.files}
    n_layers, n_heads, d_k = (int(raw[k]) for k in ("n_layers", "n_heads", "d_k"))
    logits = rm.split_logits(
        raw["logits"], raw["logit_offsets"], raw["n_tokens"], n_layers, n_heads
    )
    mult = [rm.logit_multiplier(name, d_k) for name in rm.DIVISORS]
    summary = {k: _frozen(v) for k, v in rm.corpus_summaries(logits, mult).items()}
    offsets = raw["token_offsets"]
    tokens = tuple(tuple(raw["tokens"][a:b].tolist()) for a, b in itertools.pairwise(offsets))
    return Corpus(
        model_name=str(raw["model_name"]),
        d_k=d_k,
        n_layers=n_layers,
        n_heads=n_heads,
        sentences=tuple(raw["sentences"].tolist()),
        tokens=tokens,
        logits=tuple(_frozen(z) for z in logits),
        summary=summary,
        hist=rm.pooled_histogram(logits, HIST_EDGES),
    )


def divisor_index(name: str) -> int:
    return rm.DIVISORS.index(name)


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


@st.cache_data(max_entries=1, show_spinner=False)
def head_grid() -> pd.DataFrame:
    """One row per (layer, head): ``layer``, ``head``, ``std`` (per-head std of q·k/√d_k,
    mean over sentences), ``std_min``, ``std_max`` (over sentences), ``entropy`` (mean
    row entropy with √d_k, mean over sentences, nats), ``entropy_min``, ``entropy_max``."""
    s = corpus().summary
    std = s["std"]
    h = s["entropy"][..., divisor_index("sqrt_d_k")]
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
    """One head of one sentence under ``divisor``: one row per (query, key) pair.

    Columns ``query``, ``key`` (token positions), ``query_token``, ``key_token``,
    ``trained`` (q·k/√d_k), ``logit`` (q·k/c), ``weight``, ``row_entropy`` (nats) and
    ``row_max`` of the query's row.
    """
    c = corpus()
    z = c.logits[sentence][layer, head]
    out = rm.head_attention(z, rm.logit_multiplier(divisor, c.d_k))
    t = z.shape[0]
    tokens = np.array(c.tokens[sentence], dtype=object)
    q, k = np.divmod(np.arange(t * t), t)
    return pd.DataFrame(
        {
            "query": q,
            "key": k,
            "query_token": tokens[q],
            "key_token": tokens[k],
            "trained": z.ravel(),
            "logit": out["logits"].ravel(),
            "weight": out["weights"].ravel(),
            "row_entropy": out["entropy"][q],
            "row_max": out["max_weight"][q],
        }
    )


@st.cache_data(max_entries=1, show_spinner=False)
def layer_frame() -> pd.DataFrame:
    """Section 3: one row per (divisor, layer): ``divisor``, ``layer``, ``entropy``,
    ``max_weight`` (means over sentences and heads) and ``collapsed`` (share of
    head × sentence cells with mean row entropy < 0.1 nats)."""
    s = corpus().summary
    h, m = s["entropy"], s["max_weight"]  # (S, L, H, M)
    collapsed = (h < rm.COLLAPSE_NATS).mean(axis=(0, 2))  # (L, M)
    n_layers = h.shape[1]
    rows = []
    for i, name in enumerate(rm.DIVISORS):
        rows.append(
            pd.DataFrame(
                {
                    "divisor": name,
                    "layer": np.arange(n_layers),
                    "entropy": h[..., i].mean(axis=(0, 2)),
                    "max_weight": m[..., i].mean(axis=(0, 2)),
                    "collapsed": collapsed[:, i],
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


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
