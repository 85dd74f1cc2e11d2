"""Every page on a phone (390 x 844, touch), on a laptop with the sidebar open (800 px
of main area) and in an 800-px window with the sidebar open: nothing overflows sideways,
charts fit their boxes, no chart text or metric value is cut with an ellipsis, and the
page's main control works by tap.

Pages come from ui.common.pages.PAGES, so a page is covered once it is registered. Its
tap target is the ``×2`` button of its first halving input (``*_double``), or the one
named in ``screens.TAP_CONTROL``. Each page is measured in the session's one pass per
screen (``tests/e2e/screens.py``, shared with the readable-chart and accessibility
suites); screenshots go to artifacts/narrow-<page>-<width>.png.

Chart text is read where Vega draws it: the canvas renderer's ``fillText`` calls are
recorded per canvas (reset by the ``clearRect`` that starts each redraw), and an SVG
chart's ``<text>`` nodes are read directly. Vega marks a truncated title, legend or axis
label with "…", so any recorded text holding one was cut. An SVG chart's text that reaches
past the drawing's edge (two legends side by side, wider than a phone) is cut off there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.screens import LAPTOP_MAIN, NARROW
from ui.common.pages import PAGES

pytestmark = pytest.mark.e2e

#: Known narrow-screen defects, still to fix (the test reports them as xfail until then).
KNOWN_DEFECTS: dict[str, str] = {}


def _pages():
    return [
        pytest.param(
            p,
            id=p.name,
            marks=[pytest.mark.xfail(reason=KNOWN_DEFECTS[p.name], strict=True)]
            if p.name in KNOWN_DEFECTS
            else [],
        )
        for p in PAGES
    ]


def _check_page(found, spec, screen: str, artifacts: Path) -> None:
    found.stage("narrow")
    label = NARROW[screen]
    with open(artifacts / "narrow-measurements.jsonl", "a") as log:
        log.write(json.dumps({"page": spec.name, "at": label, **found.narrow}) + "\n")
    narrow = found.narrow
    assert all(v <= 0 for v in narrow["overflow"].values()), (
        f"{spec.name} at {label}: horizontal overflow {narrow['overflow']}; elements past the "
        f"right edge: {found.wide_elements}"
    )
    assert not narrow["too_wide"], f"{spec.name} at {label}: charts wider than their box " + str(
        narrow["too_wide"]
    )
    assert not narrow["cut"], f"{spec.name} at {label}: chart text cut with …: {narrow['cut']}"
    assert not narrow["off_edge"], (
        f"{spec.name} at {label}: chart text past the chart's edge: {narrow['off_edge']}"
    )
    if not narrow["charts"] or spec.main is None:  # nothing to rerun, or no control to move
        return
    found.stage("tap")
    tap = found.tap
    assert tap["found"], f"{spec.name}: no main control to tap"
    box = tap["box"]
    assert box and box["width"] >= 40 and box["height"] >= 32, f"tap target too small: {box}"
    assert tap["changed"], f"tapping the main control of {spec.name} changed no chart"


@pytest.mark.parametrize("spec", _pages())
def test_phone(page_pass, artifacts_dir, spec):
    found = page_pass(spec.url_path, "phone")
    found.assert_healthy()
    assert found.sidebar_open is False, "the sidebar covers the page on arrival on a phone"
    _check_page(found, spec, "phone", artifacts_dir)


@pytest.mark.parametrize("spec", _pages())
def test_laptop_with_sidebar(page_pass, artifacts_dir, spec):
    found = page_pass(spec.url_path, "laptop")
    found.assert_healthy()
    assert found.sidebar_open, "the sidebar should start open on a laptop"
    assert abs(found.main_width - LAPTOP_MAIN) <= 2, found.main_width
    _check_page(found, spec, "laptop", artifacts_dir)


@pytest.mark.parametrize("spec", _pages())
def test_800_px_window_with_sidebar(page_pass, artifacts_dir, spec):
    """An 800-px window with the sidebar open: the main area is about 500 px, and
    half-width charts side by side are narrower than a phone's."""
    found = page_pass(spec.url_path, "800-window")
    found.assert_healthy()
    assert found.sidebar_open, "the sidebar should start open in an 800-px window"
    _check_page(found, spec, "800-window", artifacts_dir)
