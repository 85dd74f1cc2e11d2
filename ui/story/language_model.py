"""The language model's learning-rate sweep, the answer of its page: ``data/char_lm.npz``
read once (``st.cache_resource``, read-only arrays), and each variant's final held-out
loss over the rate grid at each head size (:func:`cells`). The language-model page reads
it through :mod:`ui.language_model.data`; the recap draws the loss against the rate too.

Seeds are summarised as the mean and the min–max spread of the two seeds. A diverged run
(none in the shipped sweep) counts as its initial loss ℓ₀, as in Wortsman et al. 2023's
LR sensitivity (:func:`core.char_lm.lr_sensitivity`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from core import char_lm
from ui.common.charts import COLORS

#: ``scripts/train_char_lm.py``'s sweep: losses, logits and entropy over training, per variant ×
#: head size × rate × seed.
SWEEP_FILE = Path(__file__).resolve().parents[2] / "data" / "char_lm.npz"


#: The page's order of the variants (the file's order); their colours follow the app's
#: scalings: ÷1 as "none", ÷√dₕ as 1/√dₖ, ÷dₕ as 1/dₖ, QK-LayerNorm as the training
#: lab's QK-norm.
VARIANTS = ("sqrt", "none", "mup", "qk_ln")


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


# --- the shipped files ----------------------------------------------------------------
@dataclass(frozen=True)
class Sweep:
    """``data/char_lm.npz``: its arrays (read-only, indexed ``[variant, head, lr, seed,
    …]`` as the script writes them) and its ``meta`` (JSON-decoded)."""

    arrays: dict[str, np.ndarray]
    meta: dict

    @property
    def head_sizes(self) -> tuple[int, ...]:
        return tuple(self.meta["head_sizes"])

    @property
    def lrs(self) -> tuple[float, ...]:
        return tuple(self.meta["lrs"])

    @property
    def config(self) -> dict:
        return self.meta["config"]

    def variant(self, name: str) -> int:
        return self.meta["variants"].index(name)

    def head(self, d_h: int) -> int:
        return self.head_sizes.index(d_h)

    def rate(self, lr: float) -> int:
        return int(np.argmin([abs(math.log(r / lr)) for r in self.lrs]))


@st.cache_resource(show_spinner=False)
def sweep() -> Sweep:
    """The sweep's results, read once per process (48 KB)."""
    with np.load(SWEEP_FILE, allow_pickle=False) as f:
        arrays = {k: _frozen(f[k]) for k in f.files if k != "meta"}
        meta = json.loads(str(f["meta"]))
    if tuple(meta["variants"]) != VARIANTS:
        raise ValueError(f"{SWEEP_FILE.name}: variants {meta['variants']}, expected {VARIANTS}")
    return Sweep(arrays, meta)


# --- the sweep's figures ---------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One variant at one head size over the rate grid (R rates, S seeds).

    ``loss`` (R,): seed mean of min(ℓ, ℓ₀) (nats/character); ``lo``, ``hi`` (R,): its
    seed min and max; ``sensitivity``: Wortsman et al. 2023's LR sensitivity over the
    whole grid; ``best``: the index of the lowest ``loss``; ``initial``: mean ℓ₀.
    """

    loss: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    sensitivity: float
    best: int
    initial: float

    @property
    def best_loss(self) -> float:
        return float(self.loss[self.best])


def _cell(s: Sweep, variant: str, d_h: int) -> Cell:
    a, b = s.variant(variant), s.head(d_h)
    z = s.arrays
    seeds = (z["done"][a, b] == 1).all(axis=0)  # seeds finished at every rate
    final = z["final_val_loss"][a, b][:, seeds]  # (R, S)
    l0 = z["initial_val_loss"][a, b][:, seeds]
    sens, loss = char_lm.lr_sensitivity(final, l0)
    clipped = np.where(np.isfinite(final), np.minimum(final, l0), l0)
    return Cell(
        loss=loss,
        lo=clipped.min(axis=1),
        hi=clipped.max(axis=1),
        sensitivity=sens,
        best=int(np.argmin(loss)),
        initial=float(l0.mean()),
    )


@st.cache_resource(show_spinner=False)
def cells() -> dict[tuple[str, int], Cell]:
    """:class:`Cell` of every variant and head size, computed once."""
    s = sweep()
    return {(v, h): _cell(s, v, h) for v in VARIANTS for h in s.head_sizes}


#: Colour of each variant: the app's colours of none, 1/√dₖ and 1/dₖ, and the training
#: lab's QK-norm.
VARIANT_COLORS = {
    "sqrt": COLORS["sqrt"],
    "none": COLORS["unscaled"],
    "mup": COLORS["linear"],
    "qk_ln": COLORS["custom"],
}


def loss_domain() -> tuple[float, float]:
    """The y-range of the loss-against-rate charts, one for both head sizes: from the lowest
    seed of any cell less 0.05 to the highest seed or the unigram loss (the reference
    line), whichever is higher, plus 0.08."""
    every = list(cells().values())
    unigram = sweep().meta["unigram_val_loss"]
    return (
        min(float(c.lo.min()) for c in every) - 0.05,
        max(max(float(c.hi.max()) for c in every), unigram) + 0.08,
    )
