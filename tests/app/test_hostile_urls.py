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
    assert APP_PARAMS == {
        "lang",
        "seed",
        "present",
        "step",
        "reveal",
        "deeper",
        "room",
        "learner",
        "room_key",
    }
    for page in PAGES:
        script = page.script if page.url_path else None
        at = run_page(script, reveal=False, lang="zh", seed="3", present="1", step="1")
        assert not at.exception
        assert not warnings(at), page.name


@pytest.mark.parametrize(
    ("script", "query", "said"),
    [
        ("app_pages/training.py", {"d_k": "100"}, ["dₖ = 100 became 128"]),
        ("app_pages/variance.py", {"step": "99"}, ["`step`", "present=1"]),
        ("app_pages/variance.py", {"d_k": ["8", "16"]}, ["`d_k`", "given 2 times"]),
        ("app_pages/saturation.py", {"foo": "1", "n_keys": "1"}, ["`foo`", "`n_keys`"]),
    ],
)
def test_each_fault_of_a_link_is_said_in_one_warning_at_the_top(script, query, said):
    """Every value the page changes or drops is said, in one warning drawn before
    anything else on the page (never after it has drawn), and the link is corrected."""
    at = run_page(script, reveal=False, **query)
    assert not at.exception
    (warning,) = warnings(at)
    for text in said:
        assert text in warning, (text, warning)
    assert next(el.type for el in at.main if el.type in ("warning", "title")) == "warning"
    for key in query:
        kept = at.query_params.get(key)
        assert kept in (None, "128"), (key, kept)
