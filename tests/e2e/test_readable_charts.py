"""Charts small enough to misread, checked where Vega draws them (SVG), on a 390-px phone
and at 1400 px:

- every log axis labels its ticks in one format (all 1e−N, or all plain numbers), and no
  two of its shown labels overlap (Vega hides a label it drops with opacity 0);
- the gradients page's gap explorer has a plot at least 200 px tall, at least 4 labelled
  decades, and both curves named beside them without overlapping;
- the training page's probe heatmap labels every key and every recorded step;
- on every page, in English and Chinese, no chart text is cut: none ends in Vega's "…",
  and none reaches past its chart's top or left edge (a title's glyphs, a vertical axis
  title), where the SVG's edge would cut it.

Each page is measured in the session's one pass per screen and language
(``tests/e2e/screens.py``, shared with the narrow-screen and accessibility suites);
screenshots of the log-axis pages go to artifacts/readable-<page>-<width>.png.
"""

from __future__ import annotations

import itertools
import re

import pytest

from tests.e2e.screens import LOG_PAGES, READABLE
from ui.common.pages import PAGES

pytestmark = pytest.mark.e2e

EXPONENT = re.compile(r"^\d(?:\.\d+)?e[−+]?\d+$")
PLAIN = re.compile(r"^[\d.,]+$")
#: A text's box may reach this far past the edge: the box is the font's full line
#: height, a glyph's ink sits inside it (measured: 0 px for every chart text once the
#: charts have their top and left padding, up to 13 px before).
CUT_SLACK_PX = 1.0


def _overlap(a: list[float], b: list[float], slack: float = 0.5) -> bool:
    return (
        a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack
    )


def _measured(page_pass, url_path: str, screen: str, lang: str = "en"):
    found = page_pass(url_path, screen, lang)
    found.stage("readable")
    return found


@pytest.mark.parametrize("screen", READABLE)
@pytest.mark.parametrize("url_path", LOG_PAGES)
def test_log_axes_label_in_one_format_without_collisions(page_pass, url_path, screen):
    assert url_path in {p.url_path for p in PAGES}
    charts = _measured(page_pass, url_path, screen).axes
    problems, log_axes = [], 0
    for i, axes in enumerate(charts):
        for axis in axes:
            shown = [label for label in axis["labels"] if label["shown"]]
            for a, b in itertools.combinations(shown, 2):
                if _overlap(a["box"], b["box"]):
                    problems.append(f"chart {i} {axis['name']!r}: {a['text']} over {b['text']}")
            if "log scale" not in axis["name"]:
                continue
            log_axes += 1
            texts = [label["text"] for label in shown]
            exponent = [bool(EXPONENT.match(t)) for t in texts]
            if any(exponent) and not all(exponent):
                problems.append(f"chart {i} {axis['name']!r}: formats mixed in {texts}")
            if not all(exponent) and not all(PLAIN.match(t) for t in texts):
                problems.append(f"chart {i} {axis['name']!r}: not a number format: {texts}")
            if any("-" in t for t in texts):
                problems.append(f"chart {i} {axis['name']!r}: hyphen for a minus in {texts}")
    assert log_axes, f"no log axis found on {url_path}"
    assert not problems, "\n".join(problems)


def _gap_chart(charts: list[list[dict]]) -> int:
    return next(
        i
        for i, axes in enumerate(charts)
        if any(a["name"].startswith("X-axis titled 'gap g") for a in axes)
    )


@pytest.mark.parametrize("screen", READABLE)
def test_gap_explorer_is_tall_labelled_and_its_curves_named(page_pass, screen):
    found = _measured(page_pass, "gradients", screen)
    charts = found.axes
    i = _gap_chart(charts)
    y = next(a for a in charts[i] if a["name"].startswith("Y-axis"))
    shown = [label for label in y["labels"] if label["shown"]]
    decades = [label for label in shown if EXPONENT.match(label["text"])]
    assert len(decades) >= 4, [label["text"] for label in shown]
    # the labels run from the bottom of the plot (1e−14) to its top (1e0)
    centres = [(label["box"][1] + label["box"][3]) / 2 for label in shown]
    assert max(centres) - min(centres) >= 200, f"plot {max(centres) - min(centres):.0f} px tall"
    names = found.mark_texts[i]
    texts = [n["text"] for n in names]
    assert "‖J‖_F" in texts and any(t.startswith("largest off-diagonal") for t in texts), texts
    assert not _overlap(names[0]["box"], names[1]["box"])


@pytest.mark.parametrize("screen", READABLE)
def test_probe_rows_label_every_key_and_step(page_pass, screen):
    charts = _measured(page_pass, "training", screen).axes
    probe = next(
        axes
        for axes in charts
        if any(a["name"].startswith("X-axis titled 'key'") for a in axes)
        and any(a["name"].startswith("Y-axis titled 'step'") for a in axes)
    )
    keys = {
        label["text"]
        for a in probe
        if a["name"].startswith("X-axis")
        for label in a["labels"]
        if label["shown"]
    }
    assert keys == {str(k) for k in range(16)}
    for axis in (a for a in probe if a["name"].startswith("Y-axis")):
        steps = [label["text"] for label in axis["labels"] if label["shown"]]
        assert steps == ["0", "10", "50", "299"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("screen", READABLE)
@pytest.mark.parametrize("url_path", [p.url_path for p in PAGES if p.url_path and p.story])
def test_no_chart_text_is_cut(page_pass, url_path, screen, lang):
    texts = _measured(page_pass, url_path, screen, lang).cut_texts
    assert texts, f"no chart text on {url_path}"
    problems = [
        f"chart {t['chart']}: {t['text']!r} "
        + ("ends in …" if t["text"].endswith("…") else f"{max(t['above'], t['left']):.0f} px out")
        for t in texts
        if t["shown"] and (t["text"].endswith("…") or max(t["above"], t["left"]) > CUT_SLACK_PX)
    ]
    assert not problems, "\n".join(problems)
