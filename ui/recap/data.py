"""What the recap draws and asks: each story page's answering chart and the cards of the
self-check, at each page's default settings (its table in the registry) and the session's
seed, the one setting every page shares.

The recap reads no page's widgets: each page keeps its own, and they are gone once its
page is left. So a small chart shows what its page shows when opened by its link with
the same seed, which is where the sentence's link leads.
"""

from __future__ import annotations

from typing import Any

from ui.common.pages import STORY, page
from ui.common.params import defaults
from ui.story import answers, cards
from ui.story.answers import Answer
from ui.story.lr_sweep import BASE_VARIANTS, SWEEP_SEEDS, cell_source, needed_cells

#: The story pages the recap sums up, in story order (every story page but itself).
PAGES = tuple(name for name in STORY if name != "recap")


def settings(name: str, seed: int) -> dict[str, Any]:
    """Page ``name``'s settings as its link opens it: its table's defaults, with the
    session's ``seed``."""
    return defaults(page(name).table) | {"seed": int(seed)}


def answer(name: str, seed: int) -> Answer:
    """The answering chart of story page ``name`` at its settings (:func:`settings`)."""
    v = settings(name, seed)
    if name == "variance":
        return answers.variance(v["d_k"], v["dist"], v["sigma_q"], v["sigma_k"], seed)
    if name == "saturation":
        return answers.saturation("max_weight", v["d_k"], v["n_keys"], v["alpha"], seed)
    if name == "gradients":
        return answers.gradients_dead(v["d_k"], v["n_keys"], v["alpha"], seed)
    if name == "sqrt_vs_d":
        d_lo, d_hi = sorted((int(v["d_min"]), int(v["d_max"])))
        return answers.logit_scale(
            "std", v["d_k"], v["n_keys"], v["alpha"], v["rho"], seed, d_lo, d_hi
        )
    if name == "training":
        return answers.training_sweep(*_training(v), seed)
    if name == "language_model":
        return answers.language_model_loss(int(v["d_h"]), float(v["rate"]))
    if name == "which_d":
        return answers.which_d_heads(
            "std", v["d_model"], int(v["n_heads"]), v["head_divisor"], v["w_init"], seed
        )
    if name == "real_models":
        return answers.real_model_entropy()
    raise KeyError(name)


def _training(v: dict[str, Any]) -> tuple[int, int, str, float, int, tuple[str, ...]]:
    """The training lab's sweep settings: m, d_k, optimizer, rate, steps, variants."""
    return (int(v["m"]), v["d_k"], v["optimizer"], float(v["lr"]), int(v["steps"]),
            BASE_VARIANTS)  # fmt: skip


def training_sweep_ready(seed: int) -> bool:
    """Whether every seed of the training lab's sweep at the recap's settings is at hand
    (shipped for sidebar seed 0, or computed on the training page in this session): the
    recap never trains."""
    m, d_k, optimizer, _, steps, variants = _training(settings("training", seed))
    here = needed_cells(m, optimizer, d_k, seed, steps)[:SWEEP_SEEDS]  # its d_k's seeds
    return all(cell_source(cell, variants) is not None for cell in here)


#: The self-check: the page of each card (its prediction card's key is the card's own).
CARDS = ("saturation", "gradients", "sqrt_vs_d", "which_d")


def card(name: str, seed: int) -> dict | None:
    """The prediction card of story page ``name`` at its settings, as its page asks it
    (:mod:`ui.story.cards`); None where those settings leave nothing to ask."""
    v = settings(name, seed)
    if name == "saturation":
        return cards.saturation_mean_max(v["n_keys"], seed)
    if name == "gradients":
        return cards.gradients_dead_share(v["d_k"], v["n_keys"], v["alpha"], seed)
    if name == "sqrt_vs_d":
        return cards.sqrt_vs_d_max(v["n_keys"], v["rho"], seed)
    if name == "which_d":
        return cards.which_d_std(v["d_model"], int(v["n_heads"]), seed, v["w_init"])
    raise KeyError(name)
