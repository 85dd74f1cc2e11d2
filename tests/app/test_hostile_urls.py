"""Hostile and malformed links: every page falls back with a warning, echoes nothing.

Each page's own query parameters come from ui.common.pages, so new pages are covered too.
"""

from __future__ import annotations

import pytest

from tests.app.helpers import page_params, run_page, warnings
from ui.common.controls import SEED_MAX, parse_int
from ui.common.pages import APP_PARAMS, PAGES

HOSTILE_VALUES = [
    "abc",
    "",
    " ",
    "-1",
    "0",
    "-0",
    "1e999",
    "9" * 40,
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "0x10",
    "1,5",
    "1_000",
    "3.5.1",
    "１２",  # full-width digits: Python reads them as 12; out of range or coerced, never echoed
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(1)",
    "**bold** [link](http://example.invalid)",
    "`code`",
    "$$\\frac{1}{0}$$",
    "{d_k}",
    "%00",
    "\u202e1",
    "😀",
    "中文",
    "x" * 5000,
    "' OR 1=1 --",
    "../../etc/passwd",
]
PAGE_SCRIPTS = [p.script for p in PAGES if p.url_path]


def _page_text(at) -> str:
    parts = [m.value for m in at.markdown] + warnings(at) + [c.value for c in at.caption]
    return " ".join(parts)


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=range(len(HOSTILE_VALUES)))
def test_hostile_value_in_every_page_param(script, value):
    """The same hostile value in every parameter of the page at once (its controls)."""
    params = page_params(script)
    at = run_page(script, reveal=False, **dict.fromkeys(params, value), seed=value, lang=value)
    assert not at.exception, [e.value for e in at.exception]
    text = _page_text(at)
    for fragment in ("<script", "<img", "javascript:", "onerror", "etc/passwd", "x" * 100):
        assert fragment not in text
    # every parameter whose value the page cannot use is named in a warning
    warned = " ".join(warnings(at))
    assert "`lang`" in warned
    assert ("`seed`" in warned) == (parse_int([value], 0, SEED_MAX) is None)
    assert at.get("vega_lite_chart") or not params


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_repeated_and_unknown_keys(script):
    params = page_params(script)
    query = {name: ["1", "2"] for name in params} | {"utm_source": "x", "<b>": "1", "d" * 300: "1"}
    at = run_page(script, reveal=False, **query)
    assert not at.exception
    warned = " ".join(warnings(at))
    assert "utm_source" in warned
    assert "<b>" not in warned and "d" * 300 not in warned
    for name in params:
        assert f"`{name}`" in warned


def test_every_app_param_is_known_on_every_page():
    for page in PAGES:
        at = run_page(page.script if page.url_path else None, reveal=False, lang="zh", seed="3")
        assert not at.exception
        assert not any("unknown" in w.lower() or "用不到" in w for w in warnings(at)), page.name
        assert APP_PARAMS <= {"lang", "seed"}
