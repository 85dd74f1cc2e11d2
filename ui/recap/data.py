"""What the recap draws and asks: each story page's answering chart and the cards of the
self-check, at each page's default settings (its table in the registry) and the session's
seed, the one setting every page shares.

The recap reads no page's widgets: each page keeps its own, and they are gone once its
page is left. So a small chart shows what its page shows when opened by its link with
the same seed, which is where the sentence's link leads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ui.common.pages import STORY, page
from ui.common.params import defaults
from ui.story import answers, cards
from ui.story.answers import Answer
from ui.story.lr_sweep import BASE_VARIANTS, SWEEP_SEEDS, cell_source, needed_cells

#: A page's settings (:func:`settings`): its parameters' values, and the seed.
Settings = dict[str, Any]


def settings(name: str, seed: int) -> Settings:
    """Page ``name``'s settings as its link opens it: its table's defaults, with the
    session's ``seed``."""
    return defaults(page(name).table) | {"seed": int(seed)}


def _sqrt_vs_d(v: Settings) -> Answer:
    d_lo, d_hi = sorted((int(v["d_min"]), int(v["d_max"])))
    return answers.logit_scale(
        "std", v["d_k"], v["n_keys"], v["alpha"], v["rho"], v["seed"], d_lo, d_hi
    )


def training_settings(v: Settings) -> tuple[int, int, str, float, int, tuple[str, ...]]:
    """The training lab's sweep settings: m, d_k, optimizer, rate, steps and variants (the
    three scalings, as its page trains them by default)."""
    return (int(v["m"]), v["d_k"], v["optimizer"], float(v["lr"]), int(v["steps"]),
            BASE_VARIANTS)  # fmt: skip


#: Each story page's answering chart at its settings, by page name, in story order.
ANSWERS: dict[str, Callable[[Settings], Answer]] = {
    "variance": lambda v: answers.variance(
        v["d_k"], v["dist"], v["sigma_q"], v["sigma_k"], v["seed"]
    ),
    "saturation": lambda v: answers.saturation(
        "max_weight", v["d_k"], v["n_keys"], v["alpha"], v["seed"]
    ),
    "gradients": lambda v: answers.gradients_dead(v["d_k"], v["n_keys"], v["alpha"], v["seed"]),
    "sqrt_vs_d": _sqrt_vs_d,
    "training": lambda v: answers.training_sweep(*training_settings(v), v["seed"]),
    "language_model": lambda v: answers.language_model_loss(int(v["d_h"]), float(v["rate"])),
    "which_d": lambda v: answers.which_d_heads(
        "std", v["d_model"], int(v["n_heads"]), v["head_divisor"], v["w_init"], v["seed"]
    ),
    "real_models": lambda v: answers.real_model_entropy(),
}
#: The story pages the recap sums up, in story order (tests/app/test_recap.py checks that
#: it is every story page but the recap).
PAGES = tuple(name for name in STORY if name in ANSWERS)


def answer(name: str, seed: int) -> Answer:
    """The answering chart of story page ``name`` at its settings (:func:`settings`)."""
    return ANSWERS[name](settings(name, seed))


def training_sweep_ready(seed: int) -> bool:
    """Whether every seed of the training lab's sweep at the recap's settings is at hand
    (shipped for sidebar seed 0, or computed on the training page in this session): the
    recap never trains."""
    m, d_k, optimizer, _, steps, variants = training_settings(settings("training", seed))
    here = needed_cells(m, optimizer, d_k, seed, steps)[:SWEEP_SEEDS]  # its d_k's seeds
    return all(cell_source(cell, variants) is not None for cell in here)


#: The self-check: the prediction card of each of these pages at its settings, as its page
#: asks it (:mod:`ui.story.cards`; None where the settings leave nothing to ask).
CARDS: dict[str, Callable[[Settings], dict | None]] = {
    "saturation": lambda v: cards.saturation_mean_max(v["n_keys"], v["seed"]),
    "gradients": lambda v: cards.gradients_dead_share(v["d_k"], v["n_keys"], v["alpha"], v["seed"]),
    "sqrt_vs_d": lambda v: cards.sqrt_vs_d_max(v["n_keys"], v["rho"], v["seed"]),
    "which_d": lambda v: cards.which_d_std(v["d_model"], int(v["n_heads"]), v["seed"], v["w_init"]),
}


def card(name: str, seed: int) -> dict | None:
    """The prediction card of story page ``name`` at its settings (:data:`CARDS`)."""
    return CARDS[name](settings(name, seed))
