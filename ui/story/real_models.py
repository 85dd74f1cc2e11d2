"""The real model's attention, the answer of its page: the shipped MiniLM attention file
(``data/minilm_attention.npz``), loaded once with its summaries computed from the logits
(:mod:`core.real_models`), and the mean attention entropy per layer under each divisor
(:func:`layer_frame`). The "In real models" page reads it through
:mod:`ui.real_models.data`; the recap draws the entropy per layer too.

The file is read with ``allow_pickle=False`` into read-only arrays held by
``st.cache_resource`` (one copy per process, shared by every session).
"""

from __future__ import annotations

import itertools
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
