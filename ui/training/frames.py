"""The training page's chart frames, from plain values (the deferred ``frame`` of
:func:`ui.common.workshop.chart`).

Each reads the page's caches (:mod:`ui.training.data`) and labels the variants with the
legend texts it is given (``labels``: (variant, text) pairs in the page's language,
:func:`ui.training.data.variant_labels`), never with the current language: the texts are
part of the chart's cache key.
"""

from __future__ import annotations

import pandas as pd

from ui.story.frames import lr_panel, lr_sweep  # noqa: F401  (the sweep: shared with the recap)
from ui.training import data

#: (variant, legend text) pairs.
Labels = tuple[tuple[str, str], ...]


def curve(
    metric: str,
    d_k: int,
    optimizer: str,
    lr: float,
    steps: int,
    variants: tuple[str, ...],
    seed: int,
    m: int,
    labels: Labels,
) -> pd.DataFrame:
    """One per-step statistic of the single run (``metric`` of ``data.METRICS``), one
    curve per variant: ``step``, ``variant``, ``raw``, ``smooth``, ``series``, ``color``."""
    run = data.single_run(d_k, optimizer, lr, steps, variants, seed, m)
    return data.labelled(run["curves"][metric], dict(labels))


def probe(
    d_k: int,
    optimizer: str,
    lr: float,
    steps: int,
    variants: tuple[str, ...],
    seed: int,
    m: int,
    shorts: Labels,
    variant: str,
) -> pd.DataFrame:
    """The probe rows' attention weights of one ``variant`` of the single run, ``series``
    its short label (``shorts``)."""
    weights = data.single_run(d_k, optimizer, lr, steps, variants, seed, m)["probe"]
    weights = weights[weights["variant"] == variant].reset_index(drop=True)
    return weights.assign(series=weights["variant"].map(dict(shorts)))
