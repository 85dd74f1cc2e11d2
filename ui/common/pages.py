"""The app's pages in story order, and the query parameters each understands."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class PageSpec:
    """One page. Its script is named after its url_path, so a deep link finds the same
    page whether Streamlit resolves it by route or by file name (as AppTest does)."""

    name: str  # catalog section, e.g. "variance" -> "variance.nav"
    script: str  # path relative to the app root
    url_path: str  # "" for the home page
    icon: str
    params: frozenset[str]  # query parameters of this page's controls


#: Query parameters every page understands (sidebar controls).
APP_PARAMS = frozenset({"lang", "seed"})

_ALL_PAGES: tuple[PageSpec, ...] = (
    PageSpec("home", "app_pages/home.py", "", ":material/home:", frozenset()),
    PageSpec(
        "variance",
        "app_pages/variance.py",
        "variance",
        ":material/bar_chart:",
        frozenset({"d_k", "n_samples", "dist", "sigma_q", "sigma_k"}),
    ),
    PageSpec(
        "saturation",
        "app_pages/saturation.py",
        "saturation",
        ":material/compress:",
        frozenset(
            {
                "d_k",
                "n_keys",
                "alpha",
                "score_1",
                "score_2",
                "divisor",
                "classic_batch",
                "classic_seq",
                "classic_d_k",
            }
        ),
    ),
    PageSpec(
        "gradients",
        "app_pages/gradients.py",
        "gradients",
        ":material/trending_down:",
        frozenset({"d_k", "n_keys", "alpha", "gap", "gap2"}),
    ),
    PageSpec(
        "sqrt_vs_d",
        "app_pages/sqrt-vs-d.py",
        "sqrt-vs-d",
        ":material/balance:",
        frozenset({"d_k", "d_min", "d_max", "n_keys", "alpha", "rho"}),
    ),
    PageSpec(
        "training",
        "app_pages/training.py",
        "training",
        ":material/model_training:",
        frozenset({"d_k", "optimizer", "lr", "steps", "folded", "qk_norm"}),
    ),
    PageSpec(
        "which_d",
        "app_pages/which-d.py",
        "which-d",
        ":material/help:",
        frozenset(
            {
                "d_model",
                "n_heads",
                "head_divisor",
                "w_init",
                "d_q_in",
                "d_kv_in",
                "d_proj",
                "x_scale",
            }
        ),
    ),
    PageSpec(
        "real_models",
        "app_pages/real-models.py",
        "real-models",
        ":material/hub:",
        frozenset({"sentence", "layer", "head", "divide_by"}),
    ),
)

#: The pages whose scripts exist, in story order.
PAGES: tuple[PageSpec, ...] = tuple(p for p in _ALL_PAGES if (ROOT / p.script).exists())

#: The story in order (home page links): the four steps at initialisation, the training lab
#: that tests their claim, the practical question of which d, and what trained heads do.
STORY = ("variance", "saturation", "gradients", "sqrt_vs_d", "training", "which_d", "real_models")


def page(name: str) -> PageSpec | None:
    """The spec of page ``name``, or None if the app does not have it."""
    return next((p for p in PAGES if p.name == name), None)
