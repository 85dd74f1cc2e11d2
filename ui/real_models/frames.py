"""The "In real models" page's chart frames, from plain values (the deferred ``frame`` of
:func:`ui.common.workshop.chart`): each reads the page's caches (:mod:`ui.real_models.data`).
A sentence is named by its index among the shipped ones, or (index None) by the text
the learner typed."""

from __future__ import annotations

import pandas as pd

from ui.real_models import data
from ui.story.frames import layers  # noqa: F401  (shared with the recap)

#: The columns of one sentence's grid that hold a head's extremes, by what they are: the
#: std's the smallest and largest logit, the entropy's the lowest and highest row.
SENTENCE_EXTREMES = {
    "std": ("logit_min", "logit_max"),
    "entropy": ("row_entropy_min", "row_entropy_max"),
}


def head_grid(value: str, divisor: str = "sqrt_d_k") -> pd.DataFrame:
    """Section 1's layer × head grid of ``value`` ("std" or "entropy") over the sentences
    under ``divisor`` (:func:`ui.real_models.data.head_grid`) with its range over them."""
    return data.head_grid(divisor)[["layer", "head", value, f"{value}_min", f"{value}_max"]]


def histogram() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pooled histogram of the scaled logits and N(0, 1) over its range."""
    return data.histogram_frames()


def sentence_grid(sentence: int | None, text: str | None, divisor: str, value: str) -> pd.DataFrame:
    """One sentence's layer × head grid of ``value`` under ``divisor``
    (:func:`ui.real_models.data.sentence_grid`), its extremes named as in
    :data:`SENTENCE_EXTREMES`."""
    heads = data.sentence_heads_of(sentence, text)
    grid = data.sentence_grid(heads, divisor, data.corpus().d_k)
    lo, hi = SENTENCE_EXTREMES[value]
    frame = grid[["layer", "head", value, f"{value}_min", f"{value}_max"]]
    return frame.rename(columns={f"{value}_min": lo, f"{value}_max": hi})


def head_map(
    sentence: int | None, text: str | None, layer: int, head: int, divisor: str
) -> pd.DataFrame:
    """One head's attention under ``divisor`` (:func:`ui.real_models.data.one_head`)."""
    return data.one_head(sentence, text, layer, head, divisor)
