"""The app's pages in story order.

A page's query parameters are not listed here: they are its controls
(:data:`ui.common.controls.PAGE_CONTROLS`, filled as the page draws them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class PageSpec:
    """One page: ``name`` (its catalog section and ``ui/<name>/`` package), ``url_path``
    ("" for the home page), its ``icon``, and ``main``, the control a workshop moves most
    (the benchmarks move it). Its script is ``app_pages/<url_path>.py``, named after the
    url path so a deep link finds the same page whether Streamlit resolves it by route or
    by file name (as AppTest does)."""

    name: str
    url_path: str
    icon: str
    main: str | None = None

    @property
    def script(self) -> str:
        """The page's script, relative to the app root."""
        return f"app_pages/{self.url_path or 'home'}.py"


#: Query parameters every page understands (sidebar controls).
APP_PARAMS = frozenset({"lang", "seed"})

_ALL_PAGES: tuple[PageSpec, ...] = (
    PageSpec("home", "", ":material/home:"),
    PageSpec("variance", "variance", ":material/bar_chart:", "d_k"),
    PageSpec("saturation", "saturation", ":material/compress:", "d_k"),
    PageSpec("gradients", "gradients", ":material/trending_down:", "d_k"),
    PageSpec("sqrt_vs_d", "sqrt-vs-d", ":material/balance:", "d_k"),
    PageSpec("training", "training", ":material/model_training:", "d_k"),
    PageSpec("which_d", "which-d", ":material/help:", "d_model"),
    PageSpec("real_models", "real-models", ":material/hub:", "head"),
)

#: The pages whose scripts exist, in story order.
PAGES: tuple[PageSpec, ...] = tuple(p for p in _ALL_PAGES if (ROOT / p.script).exists())

#: The story in order (home page links): the four steps at initialisation, the training lab
#: that tests their claim, the practical question of which d, and what trained heads do.
STORY = tuple(p.name for p in PAGES if p.url_path)


def page(name: str) -> PageSpec | None:
    """The spec of page ``name``, or None if the app does not have it."""
    return next((p for p in PAGES if p.name == name), None)
