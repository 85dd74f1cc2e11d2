"""Data of the language-model page: the shipped sweep and weights, read once, the figures
the page quotes, the learner's prompt, and the continuations of the four models.

``data/char_lm.npz`` (``scripts/train_char_lm.py``: losses, max |logit|, entropy and
one-hot share per layer over training, step-0 logit histograms, per variant × head size
× rate × seed; read by :mod:`ui.story.language_model`, shared with the recap) and ``data/char_lm_weights.npz`` (each variant's best run per head size,
float16) are held by ``st.cache_resource`` as read-only arrays, one copy per process.
Everything else is derived from them here, in plain NumPy, and cached per input.

Seeds are summarised as the mean and the min–max spread of the two seeds. A diverged run
(none in the shipped sweep) counts as its initial loss ℓ₀, as in Wortsman et al. 2023's
LR sensitivity (:func:`core.char_lm.lr_sensitivity`), in the loss charts and in the
sensitivity alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from core import char_lm
from ui.common.data import rng_for
from ui.story.language_model import (  # noqa: F401  (re-exported: the sweep, shared with the recap)
    SWEEP_FILE,
    VARIANTS,
    Cell,
    Sweep,
    cells,
    loss_domain,
    sweep,
)

DATA = Path(__file__).resolve().parents[2] / "data"
WEIGHTS_FILE = DATA / "char_lm_weights.npz"
#: The training lab's shipped learning-rate sweep (the one-layer verdict compared here).
LAB_FILE = DATA / "training_sweep.json"

#: The sampler's random stream (:func:`ui.common.data.rng_for`).
STREAM_LM_SAMPLE = 70


#: Characters of the next-character chart: the most likely ones of each model.
TOP_CHARS = 5

#: Typographic characters typed or pasted for an ASCII one the models know.
LOOK_ALIKES = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u2026": "...", "\t": " ", "\u00a0": " ", "\r": "\n",
}  # fmt: skip
#: Chinese text: CJK ideographs, CJK punctuation and full-width forms (，。：).
_CHINESE = ((0x3000, 0x303F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
            (0xFF00, 0xFFEF))  # fmt: skip


@st.cache_resource(show_spinner=False)
def models(d_h: int, exact: bool = False) -> dict:
    """The shipped best model of every variant at head size ``d_h``, stacked for
    :func:`core.char_lm.generate` in the page's order (:data:`VARIANTS`).

    Parameters
    ----------
    d_h : int
        The head size.
    exact : bool
        Weights in float64 instead of float32 (the float16 weights either way, exactly):
        logits that come out the same on every CPU but for a last float32 rounding, for
        a chart's numbers; float32 is twice as fast, for sampling.

    Returns
    -------
    dict
        As :func:`core.char_lm.models_for_head_size`: ``variants``, ``params``, ``n_heads``,
        ``scales``, ``qk_norm``, ``models`` (rate, seed and final loss of each).
    """
    with np.load(WEIGHTS_FILE, allow_pickle=False) as f:
        weights = {k: f[k] for k in f.files if k != "meta"}
        meta = json.loads(str(f["meta"]))
    order = sorted(
        (m for m in meta["models"] if m["d_h"] == d_h), key=lambda m: VARIANTS.index(m["variant"])
    )
    m = char_lm.models_for_head_size(weights, {**meta, "models": order}, d_h)
    if exact:
        m["params"] = {name: a.astype(np.float64) for name, a in m["params"].items()}
    return m


def curve(variant: str, d_h: int, lr: float, name: str, layer: int | None = None) -> dict:
    """One recorded quantity of one variant over training, seeds summarised.

    Parameters
    ----------
    name : {"val_loss", "max_logit", "entropy", "onehot_share", "grad_norm"}
        The array of the sweep.
    layer : int or None
        0-based layer for the per-layer arrays.

    Returns
    -------
    dict
        ``step`` (E,), ``mean``, ``lo``, ``hi`` (E,) over the finished seeds (NaN after a
        divergence).
    """
    s = sweep()
    a, b, c = s.variant(variant), s.head(d_h), s.rate(lr)
    values = s.arrays[name][a, b, c]  # (S, E) or (S, E, L)
    if layer is not None:
        values = values[..., layer]
    values = values[s.arrays["done"][a, b, c] == 1]
    with np.errstate(invalid="ignore"):
        return {
            "step": s.arrays["eval_steps"],
            "mean": values.mean(axis=0),
            "lo": values.min(axis=0),
            "hi": values.max(axis=0),
        }


def logit_histogram(variant: str, d_h: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the step-0 logits of ``variant`` at ``d_h``, both seeds and both layers
    pooled, and the bin edges.

    Returns
    -------
    counts : ndarray, shape (n_bins,)
    edges : ndarray, shape (n_bins + 1,)
    """
    s = sweep()
    counts = s.arrays["logit_hist"][s.variant(variant), s.head(d_h)].sum(axis=(0, 1))
    return counts, s.arrays["logit_hist_edges"]


def uniform_entropy(context: int) -> float:
    """Mean entropy (nats) of causal attention spread evenly: row t sees t + 1 keys, so
    the mean over the T rows of ln(t + 1), t = 0 … T − 1."""
    return float(np.mean(np.log(np.arange(1, context + 1))))


@st.cache_data(max_entries=1, show_spinner=False)
def lab_verdict(d_k: int = 64, m: int = 1) -> dict[str, float]:
    """The one-layer training lab's shipped sweep at ``d_k`` (Adam, ``m`` target keys, 300
    steps): the best median final loss over its rate grid without the scale (α = 0) and
    with ÷√dₖ (α = ½), and the loss of uniform attention.

    Returns
    -------
    dict: ``none``, ``sqrt``, ``uniform`` (its loss ½‖o − v‖²), ``seeds``.
    """
    doc = json.loads(LAB_FILE.read_text(encoding="utf-8"))
    m, opt, d = doc["m"].index(m), doc["optimizers"].index("adam"), doc["d_k"].index(d_k)
    names = [v["name"] for v in doc["variants"]]
    best = {}
    for key, name in (("none", "alpha_0"), ("sqrt", "alpha_half")):
        runs = doc["final_loss"][m][opt][d][names.index(name)]  # (seeds, rates)
        loss = np.array([[np.nan if x is None else x for x in r] for r in runs], dtype=float)
        best[key] = float(np.nanmin(np.nanmedian(loss, axis=0)))
    return {**best, "uniform": float(doc["uniform_loss"][m]), "seeds": len(doc["seeds"])}


# --- the learner's prompt ----------------------------------------------------------------
@dataclass(frozen=True)
class Prompt:
    """What the models read of a prompt (:func:`read_prompt`).

    ``text``: the characters they read, 1 … context long; ``typed``: characters typed;
    ``chinese`` and ``other``: characters dropped (not among the 84), Chinese and other;
    ``replaced``: typographic characters read as their ASCII look-alike; ``cut``:
    characters left out at the front (past the context); ``empty``: nothing was left, so
    the models start from a newline.
    """

    text: str
    typed: int
    chinese: int
    other: int
    replaced: int
    cut: int
    empty: bool

    @property
    def dropped(self) -> int:
        return self.chinese + self.other


def is_chinese(ch: str) -> bool:
    """Whether ``ch`` is Chinese text: an ideograph, CJK punctuation or a full-width form."""
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CHINESE)


def read_prompt(text: str, context: int) -> Prompt:
    """The learner's text as the models read it: look-alikes replaced (curly quotes,
    dashes, tabs), every other character outside :data:`core.char_lm.VOCAB` dropped, the
    last ``context`` characters kept; a newline if nothing is left.

    Raises
    ------
    ValueError
        If ``context`` < 1.
    """
    if context < 1:
        raise ValueError(f"context must be at least 1, got {context}")
    text = text.replace("\r\n", "\n")
    kept, chinese, other, replaced = [], 0, 0, 0
    for ch in text:
        if ch in LOOK_ALIKES:
            kept.append(LOOK_ALIKES[ch])
            replaced += 1
        elif ch in char_lm.VOCAB:
            kept.append(ch)
        elif is_chinese(ch):
            chinese += 1
        else:
            other += 1
    read = "".join(kept)
    cut = max(0, len(read) - context)
    read = read[cut:]
    return Prompt(
        text=read or "\n",
        typed=len(text),
        chinese=chinese,
        other=other,
        replaced=replaced,
        cut=cut,
        empty=not read,
    )


# --- the models at work -------------------------------------------------------------------
@st.cache_data(max_entries=64, show_spinner=False)
def continuations(
    prompt: str, d_h: int, temperature: float, seed: int, length: int
) -> tuple[str, ...]:
    """Each variant's continuation of ``prompt`` (already read: :func:`read_prompt`),
    ``length`` characters drawn at ``temperature`` from the sidebar ``seed``'s stream, in
    the order of :data:`VARIANTS`."""
    m = models(d_h)
    ids, _ = char_lm.encode(prompt)
    out = char_lm.generate(
        m["params"],
        ids,
        length,
        n_heads=m["n_heads"],
        scales=m["scales"],
        qk_norm=m["qk_norm"],
        temperature=temperature,
        rng=rng_for(seed, STREAM_LM_SAMPLE),
    )  # (M, length)
    return tuple(char_lm.decode(row) for row in out)


@st.cache_data(max_entries=64, show_spinner=False)
def next_char(prompt: str, d_h: int, temperature: float) -> pd.DataFrame:
    """The distribution each variant draws the next character from after ``prompt``,
    softmax(logits / temperature): the :data:`TOP_CHARS` likeliest characters of every
    model, for every model. The forward pass runs in float64 (``models(d_h, exact=True)``):
    in float32 the order of a product's sums, which differs between CPUs and BLAS
    kernels, would move the last digits of every probability.

    Returns
    -------
    DataFrame, one row per (variant, character): ``variant``, ``char`` (as typed),
    ``p`` (probability), ``rank`` (of the character by its mean probability over the
    models, 0 first).
    """
    m = models(d_h, exact=True)
    ids, _ = char_lm.encode(prompt)
    logits = char_lm.forward(
        m["params"], ids[None, :], n_heads=m["n_heads"], scales=m["scales"], qk_norm=m["qk_norm"]
    )[:, 0, -1].astype(np.float64)  # (M, V)
    z = logits / temperature
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    top = np.unique(np.argsort(-p, axis=-1)[:, :TOP_CHARS])
    top = top[np.argsort(-p[:, top].mean(axis=0), kind="stable")]
    rows = [
        {"variant": v, "char": char_lm.VOCAB[c], "p": float(p[i, c]), "rank": r}
        for i, v in enumerate(m["variants"])
        for r, c in enumerate(top)
    ]
    return pd.DataFrame(rows)
