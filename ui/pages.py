"""The app's pages in story order, and the query parameters each understands."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    name: str  # catalog section, e.g. "variance" -> "variance.nav"
    script: str  # path relative to the app root
    url_path: str  # "" for the home page
    icon: str
    params: frozenset[str]  # query parameters of this page's controls


#: Query parameters every page understands (sidebar controls).
APP_PARAMS = frozenset({"lang", "seed"})

PAGES: tuple[PageSpec, ...] = (
    PageSpec("home", "app_pages/home.py", "", ":material/home:", frozenset()),
    PageSpec(
        "variance",
        "app_pages/variance.py",
        "variance",
        ":material/bar_chart:",
        frozenset({"d_k", "n_samples", "dist", "sigma_q", "sigma_k"}),
    ),
)

#: The four steps of the story, in order (home page links), then the practical page.
STORY = ("variance", "saturation", "gradients", "sqrt_vs_d", "which_d")


def page(name: str) -> PageSpec | None:
    """The spec of page ``name``, or None if the app does not have it."""
    return next((p for p in PAGES if p.name == name), None)
