"""Chart-ready frames of the language-model page, from plain values.

Each function makes one chart's data (the deferred ``frame`` of
:func:`ui.common.workshop.chart`) from plain arguments and the cached results of
:mod:`ui.language_model.data`. Words come in as arguments (``labels``: (variant, legend
label) pairs in the page's language), never from the current language: the chart's cache
key holds them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.language_model import data
from ui.story.frames import loss_against_rate  # noqa: F401  (shared with the recap)
from ui.story.language_model import VARIANT_COLORS


def shown_char(ch: str, names: tuple[str, str]) -> str:
    """A character as an axis label: ``names`` (the words for a space and a newline, in
    the page's language) for the two a label cannot show, else the character itself."""
    return {" ": names[0], "\n": names[1]}.get(ch, ch)


def logits_at_start(d_h: int, labels: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """The step-0 logit histogram of every variant at ``d_h`` (both seeds and layers
    pooled), as shares of its logits, over the bins from the first to the last one any
    variant fills (a bin on either side).

    Returns
    -------
    DataFrame, one row per (variant, bin): ``series``, ``color``, ``x`` (bin centre),
    ``x0``, ``x1`` (edges), ``share``.
    """
    names = dict(labels)
    counts = {v: data.logit_histogram(v, d_h) for v in names}
    edges = next(iter(counts.values()))[1]
    filled = np.flatnonzero(np.sum([c for c, _ in counts.values()], axis=0))
    lo, hi = max(0, filled[0] - 1), min(len(edges) - 2, filled[-1] + 1)
    frames = []
    for v, (c, _) in counts.items():
        share = c / c.sum()
        frames.append(
            pd.DataFrame(
                {
                    "series": names[v],
                    "color": VARIANT_COLORS[v],
                    "x": (edges[lo : hi + 1] + edges[lo + 1 : hi + 2]) / 2,
                    "x0": edges[lo : hi + 1],
                    "x1": edges[lo + 1 : hi + 2],
                    "share": share[lo : hi + 1],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def over_training(
    d_h: int, lr: float, name: str, layer: int | None, labels: tuple[tuple[str, str], ...]
) -> pd.DataFrame:
    """One recorded quantity against the training step, every variant at ``d_h`` and
    rate ``lr`` (:func:`ui.language_model.data.curve`); ``layer``: 0-based, for the
    per-layer quantities.

    Returns
    -------
    DataFrame, one row per (variant, recorded step) with a value: ``series``, ``color``,
    ``step``, ``value`` (seed mean), ``lo``, ``hi`` (seed min and max); for ``max_logit``
    also ``onehot``, the seed mean share of rows whose largest weight is ≥ 0.99.
    """
    frames = []
    for v, label in labels:
        c = data.curve(v, d_h, lr, name, layer)
        frame = pd.DataFrame(
            {
                "series": label,
                "color": VARIANT_COLORS[v],
                "step": c["step"],
                "value": c["mean"],
                "lo": c["lo"],
                "hi": c["hi"],
            }
        )
        if name == "max_logit":
            frame["onehot"] = data.curve(v, d_h, lr, "onehot_share", layer)["mean"]
        frames.append(frame[np.isfinite(frame["value"])])
    return pd.concat(frames, ignore_index=True)


def next_chars(
    prompt: str,
    d_h: int,
    temperature: float,
    labels: tuple[tuple[str, str], ...],
    names: tuple[str, str],
) -> pd.DataFrame:
    """The likeliest next characters of every variant after ``prompt`` (already read)
    at ``temperature`` (:func:`ui.language_model.data.next_char`); ``names``: the words
    for a space and a newline (:func:`shown_char`).

    Returns
    -------
    DataFrame, one row per (variant, character): ``series``, ``color``, ``char`` (as
    :func:`shown_char` names it), ``p``, ``rank``.
    """
    df = data.next_char(prompt, d_h, temperature)
    return pd.DataFrame(
        {
            "series": df["variant"].map(dict(labels)),
            "color": df["variant"].map(VARIANT_COLORS),
            "char": df["char"].map(lambda ch: shown_char(ch, names)),
            "p": df["p"],
            "rank": df["rank"],
        }
    )
