"""The app's pages in story order, each with its parameter table.

A page's query parameters are declared here once (:class:`ui.common.params.Param`): the
widgets (:mod:`ui.common.controls`), the check of the URL at the start of every run
(:func:`ui.common.params.read_query`), the share link, the tests and the benchmarks all
read them. :data:`APP_TABLE` declares the parameters of every page (language, seed,
presenter mode, rooms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from core.real_models import DIVISORS as RM_DIVISORS
from core.theory import DISTRIBUTIONS
from core.training import DEFAULT_LRS, OPTIMIZERS
from core.which_d import DIVISORS_SELF, INITS, divisors
from ui.common.params import OWN, POWERS, Param, nearest_power

ROOT = Path(__file__).resolve().parents[2]

#: Largest seed the sidebar accepts.
SEED_MAX = 2**31 - 1
#: A flag as a link writes it: presenter mode and revealed answers (``?present=1``).
ON_OFF = ("0", "1", "false", "true")


def _needs_present(param: Param, values: dict) -> Param | None:
    return param if values.get("present") else None


#: Parameters of every page, in the order they are read. ``step``'s range is the page's
#: presenter steps, counted as the page shows them (:meth:`PageSpec.table`).
APP_TABLE: tuple[Param, ...] = (
    Param("lang", "choice", "en", options=("en", "zh"), labelled=True),  # shown by name
    Param("seed", "int", 0, 0, SEED_MAX),
    Param("present", "flag", False, options=ON_OFF, labelled=True),  # the app writes it
    Param("step", "int", 1, 1, 1, given=_needs_present, needs="present", labelled=True),
    Param("reveal", "flag", False, options=ON_OFF),
    # "Go deeper" open (the expander writes the URL itself: true or false)
    Param("deeper", "flag", False, options=("false", "true")),
    Param("room", OWN),
    Param("learner", OWN),
    Param("room_key", OWN),
)
#: Query parameters every page understands.
APP_PARAMS = frozenset(p.key for p in APP_TABLE)


def lr_text(lr: float) -> str:
    """A learning rate as the training page writes it (3 significant digits, no exponent)."""
    return np.format_float_positional(
        float(lr), precision=3, unique=True, fractional=False, trim="-"
    )


#: Per-head width most models use; the default n_heads gives the d_k closest to it.
TYPICAL_D_K = 64


def default_heads(d_model: int) -> int:
    """The divisor of d_model whose per-head width d_model / n_heads is closest to 64."""
    return min(divisors(d_model), key=lambda h: (abs(math.log(d_model / h / TYPICAL_D_K)), h))


def _heads_of(param: Param, values: dict) -> Param:
    d_model = values["d_model"]
    return replace(
        param, options=tuple(str(h) for h in divisors(d_model)), default=str(default_heads(d_model))
    )


def _lr_of(param: Param, values: dict) -> Param:
    return replace(param, default=lr_text(DEFAULT_LRS[values["optimizer"]]))


def _d_k(default: int = 64, hi: int = 4096, key: str = "d_k", worst: str | None = "4096") -> Param:
    return Param(key, "int", default, 1, hi, step=POWERS, worst=worst)


def _n_keys() -> Param:
    return Param("n_keys", "int", 10, 2, 512, worst="512")


def _alpha(default: float = 0.5) -> Param:
    return Param("alpha", "float", default, 0.0, 1.5, step=0.05, worst="1.5")


#: Training runs at these d_k only (learners share the runs).
TRAINING_D_KS = tuple(2**i for i in range(4, 11))  # 16 … 1024
TRAINING = (
    # targets per query, the task: at m = 2 the scale decides (no rate learns without it at
    # d_k ≥ 64 in the shipped sweep; at m = 1 all three scalings learn)
    Param("m", "choice", "2", options=("1", "2", "4")),
    Param("d_k", "int", 64, 16, 1024, step=POWERS, changed="training.d_k_moved",
          snap=lambda v: nearest_power(v, 16, 1024)),
    Param("optimizer", "choice", "adam", options=OPTIMIZERS, labelled=True),
    Param("lr", "choice", lr_text(DEFAULT_LRS["adam"]),
          options=tuple(lr_text(10.0 ** (k / 4)) for k in range(-24, 17)),
          given=_lr_of, allowed="training.lr_allowed"),
    Param("steps", "choice", "300", options=("100", "200", "300", "500", "1000")),
    Param("folded", "flag", False, options=("false", "true")),
    Param("qk_norm", "flag", False, options=("false", "true")),
)  # fmt: skip


#: The language-model sweep's head sizes and learning rates (data/char_lm.npz; a test
#: checks them against the file).
LM_HEAD_SIZES = ("16", "64")
LM_RATES = ("0.001", "0.003", "0.01", "0.03", "0.1", "0.3")
LANGUAGE_MODEL = (
    Param("d_h", "choice", "64", options=LM_HEAD_SIZES),
    Param("rate", "choice", "0.03", options=LM_RATES),
    Param("prompt", "text", "ROMEO.\nBut soft, what light through yonder window br", hi=1_000),
    Param("temperature", "float", 0.8, 0.1, 2.0, step=0.1, worst="2"),
    Param("length", "choice", "200", options=("100", "200", "400"), worst="400"),
)


@dataclass(frozen=True)
class PageSpec:
    """One page: ``name`` (its catalog section and ``ui/<name>/`` package), ``url_path``
    ("" for the home page), its ``icon``, ``steps`` (its presenter steps), ``params``
    (its parameter table) and ``main``, the parameter a workshop moves most (the
    benchmarks and the all-pages tests move it). Its script is
    ``app_pages/<url_path>.py``, named after the url path so a deep link finds the same
    page whether Streamlit resolves it by route or by file name (as AppTest does).

    ``order``: the page's sections (step ids 1 … ``steps``) in the order the page shows
    them (default: 1, 2, …); a step's id stays its link (``&step=3``) whatever its place.
    ``short``: how many sections of ``order`` make the short path, the rest sitting
    under "Go deeper" (0: no such split). ``terms``: the glossary terms the page uses
    (:mod:`ui.common.glossary`), defined in its "Terms on this page". ``story``: whether
    the page is a step of the story (numbered in the navigation, linked from home and by
    presenter mode's "Next page"); the glossary is not. ``breaks``: the values of "Show
    me where it breaks" ((key, value) pairs of the table's parameters, as the widgets
    hold them): the setting where the page's point is plainest.
    """

    name: str
    url_path: str
    icon: str
    steps: int = 0
    params: tuple[Param, ...] = ()
    main: str | None = None
    order: tuple[int, ...] = ()
    short: int = 0
    terms: tuple[str, ...] = ()
    story: bool = True
    breaks: tuple[tuple[str, object], ...] = ()

    def __post_init__(self) -> None:
        if self.order and sorted(self.order) != list(range(1, self.steps + 1)):
            raise ValueError(f"{self.name}: order {self.order} is not a permutation of its steps")
        if not 0 <= self.short <= self.steps:
            raise ValueError(f"{self.name}: short {self.short} is not within 0 … {self.steps}")
        own = {p.key for p in self.params}
        if not {key for key, _ in self.breaks} <= own:
            raise ValueError(f"{self.name}: breaks {self.breaks} name parameters it lacks")

    @property
    def step_order(self) -> tuple[int, ...]:
        """The step ids in the order the page shows them."""
        return self.order or tuple(range(1, self.steps + 1))

    @property
    def script(self) -> str:
        """The page's script, relative to the app root."""
        return f"app_pages/{self.url_path or 'home'}.py"

    @cached_property
    def table(self) -> tuple[Param, ...]:
        """Every parameter of the page: the app's, then its own (made once: every control
        and link check of a run reads it)."""
        step = replace(APP_TABLE[3], hi=max(1, self.steps))  # "Step k of n", k from 1
        return (*APP_TABLE[:3], step, *APP_TABLE[4:], *self.params)

    def param(self, key: str) -> Param:
        """The page's parameter ``key`` (KeyError if it has none)."""
        for param in self.table:
            if param.key == key:
                return param
        raise KeyError(key)


PAGES: tuple[PageSpec, ...] = (
    PageSpec("home", "", ":material/home:", 0, (
        # the worked example's own d_k (the story's d_k is another parameter)
        Param("example_d_k", "choice", "4", options=("4", "16", "64", "256", "1024")),
        # its stage: Q, K, V; the scores and ÷√d_k; softmax; the weighted sum of V
        Param("example_step", "choice", "scores", options=("inputs", "scores", "weights", "output"),
              labelled=True),
    ), terms=("softmax", "logit", "saturation", "one_hot", "multi_head", "jacobian", "mup")),
    PageSpec("variance", "variance", ":material/bar_chart:", 4, (
        _d_k(),
        Param("n_samples", "choice", "20000", options=(
            "1000", "2000", "5000", "10000", "20000", "50000", "100000", "200000"),
            worst="200000"),
        Param("dist", "choice", "normal", options=DISTRIBUTIONS, labelled=True, worst="uniform"),
        Param("sigma_q", "float", 1.0, 0.25, 4.0, step=0.25, worst="4"),
        Param("sigma_k", "float", 1.0, 0.25, 4.0, step=0.25, worst="4"),
        Param("hist_axes", "choice", "shared", options=("shared", "own"), labelled=True),
    ), "d_k", short=2,
        terms=("variance_gamma", "excess_kurtosis", "rademacher", "standard_error"),
        breaks=(("d_k", 4096), ("hist_axes", "shared"))),
    PageSpec("saturation", "saturation", ":material/compress:", 5, (
        _d_k(), _n_keys(), _alpha(),
        Param("score_1", "float", 10.0, -20.0, 20.0, step=0.125, labelled=True),
        Param("score_2", "float", 5.0, -20.0, 20.0, step=0.125, labelled=True),
        Param("divisor", "float", 8.0, 0.25, 64.0, step=0.25, labelled=True),
        Param("logit_std", "float", 8.0, 1.0, 16.0, step=0.25, labelled=True),
        Param("classic_batch", "int", 4, 1, 16),
        Param("classic_seq", "int", 10, 2, 32),
        Param("classic_d_k", "int", 64, 1, 4096, worst="4096"),
    ), "d_k", order=(4, 2, 1, 3, 5), short=1,
        terms=("logit", "softmax", "saturation", "one_hot", "entropy", "temperature",
               "standard_error", "float16"),
        breaks=(("d_k", 4096), ("alpha", 0.0))),
    PageSpec("gradients", "gradients", ":material/trending_down:", 5, (
        # d_k = 512: most unscaled rows are dead there (57 %), none with 1/√d_k
        _d_k(512), _n_keys(), _alpha(),
        Param("gap", "float", 6.0, 0.0, 30.0, step=0.5, worst="30", labelled=True),
        Param("gap2", "choice", "none", options=("none", "1", "2", "4", "8"), labelled=True),
    ), "d_k", order=(3, 1, 2, 4, 5), short=1, terms=(
        "softmax", "logit", "saturation", "jacobian", "frobenius", "dead_row", "standard_error",
        "adam",
    ), breaks=(("d_k", 4096), ("alpha", 0.5))),
    PageSpec("sqrt_vs_d", "sqrt-vs-d", ":material/balance:", 6, (
        _d_k(),
        Param("d_min", "choice", "1", options=tuple(str(2**i) for i in range(13))),
        Param("d_max", "choice", "4096", options=tuple(str(2**i) for i in range(13))),
        _n_keys(), _alpha(0.75),
        # ρ = 0, independent q and k: only 1/√d_k holds; the aligned key is one click away
        Param("rho", "float", 0.0, 0.0, 0.95, step=0.05, worst="0.95"),
        Param("alignment", "float", 0.5, 0.05, 0.95, step=0.05, labelled=True),
    ), "d_k", order=(2, 1, 3, 4, 5, 6), short=1, terms=(
        "logit", "softmax", "saturation", "one_hot", "entropy", "jacobian", "frobenius",
        "standard_error", "mup",
    ), breaks=(("d_k", 4096), ("alpha", 1.0), ("rho", 0.0))),
    PageSpec("training", "training", ":material/model_training:", 5, TRAINING, "d_k",
             order=(3, 1, 2, 5, 4), short=1, terms=(
        "softmax", "logit", "saturation", "one_hot", "entropy", "jacobian", "dead_row", "adam",
        "fan_in", "lr_sensitivity", "held_out", "layernorm", "qk_norm",
    ), breaks=(  # the shipped runs of the task of 4 targets at the widest d_k
        ("m", "4"), ("d_k", 1024), ("optimizer", "adam"), ("lr", "0.01"), ("steps", "300"),
        ("folded", False), ("qk_norm", False),
    )),
    PageSpec("language_model", "language-model", ":material/auto_stories:", 5, LANGUAGE_MODEL,
             "temperature", order=(2, 1, 3, 4, 5), short=1, terms=(
        "logit", "softmax", "multi_head", "fan_in", "adam", "held_out", "unigram", "mup",
        "layernorm", "qk_norm", "lr_sensitivity", "one_hot", "entropy", "temperature",
    ), breaks=(("rate", "0.3"),)),  # the top rate: the logits grow and the loss climbs back
    PageSpec("which_d", "which-d", ":material/help:", 5, (
        Param("d_model", "int", 512, 64, 4096, step=POWERS, worst="4096"),
        # written by the app: its default follows d_model under a kept value
        Param("n_heads", "choice", "8", given=_heads_of, allowed="which_d.n_heads_allowed",
              labelled=True),
        Param("head_divisor", "choice", "d_k", options=DIVISORS_SELF, labelled=True),
        Param("w_init", "choice", "fan_in", options=INITS, labelled=True),
        Param("d_q_in", "int", 512, 1, 4096),
        Param("d_kv_in", "int", 1024, 1, 4096),
        _d_k(key="d_proj", hi=1024, worst=None),
        Param("x_scale", "choice", "1", options=(
            "0.125", "0.25", "0.5", "1", "2", "4", "8", "16", "32", "64"), worst="64"),
    ), "d_model", short=1, terms=(
        "multi_head", "cross_attention", "fan_in", "layernorm", "pre_ln", "qk_norm",
        "temperature", "softmax", "logit", "entropy", "saturation", "one_hot",
    ), breaks=(("d_model", 4096), ("n_heads", "64"), ("head_divisor", "d_model"))),
    PageSpec("real_models", "real-models", ":material/hub:", 4, (
        # the shipped corpus: 17 sentences, 6 layers of 12 heads (a test checks them)
        Param("sentence", "int", 0, 0, 16, labelled=True),
        Param("text", "text", "", hi=1_000),
        Param("layer", "int", 0, 0, 5),
        Param("head", "int", 5, 0, 11),
        Param("divide_by", "choice", "sqrt_d_k", options=RM_DIVISORS, labelled=True),
    ), "head", short=1, terms=(
        "softmax", "logit", "one_hot", "entropy", "multi_head", "mup", "layernorm", "qk_norm",
        "soft_capping", "rope", "yarn",
    ), breaks=(("divide_by", "none"),)),  # the same trained q·k without the scale
    # the story's close: one sentence and one small chart per page, then a self-check
    PageSpec("recap", "recap", ":material/checklist:", 2, terms=(
        "softmax", "logit", "saturation", "one_hot", "entropy", "dead_row", "multi_head",
        "fan_in", "layernorm", "qk_norm",
    )),
    PageSpec("glossary", "glossary", ":material/menu_book:", story=False),
)  # fmt: skip

_missing = [p.script for p in PAGES if not (ROOT / p.script).exists()]
if _missing:
    raise FileNotFoundError(f"pages without a script (app_pages/<url_path>.py): {_missing}")

#: The story in order (home page links): the four steps at initialisation, the training lab
#: that tests their claim, a language model trained with and without the scale, the
#: practical question of which d, what trained heads do, and the recap.
STORY = tuple(p.name for p in PAGES if p.url_path and p.story)


def page(name: str) -> PageSpec | None:
    """The spec of page ``name``, or None if the app does not have it."""
    return next((p for p in PAGES if p.name == name), None)


def next_in_story(spec: PageSpec) -> PageSpec | None:
    """The story page after ``spec`` (home leads to the first), or None after the last."""
    names = ("home", *STORY)
    if spec.name not in names or spec.name == names[-1]:
        return None
    return page(names[names.index(spec.name) + 1])


def by_url(url_path: str) -> PageSpec:
    """The spec of the page at ``url_path`` (KeyError if none)."""
    spec = next((p for p in PAGES if p.url_path == url_path), None)
    if spec is None:
        raise KeyError(url_path)
    return spec
