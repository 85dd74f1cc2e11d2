"""Presenter mode at 1400 px: the navigator's Next and Back at the top of the page bring
the new step's heading into view (the page does not stay scrolled where it was).

Screenshot: artifacts/presenter-step-next-1400.png (after the last Next).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

# The heading that follows step k's mark (ui/common/workshop.py) and its box in the
# window: [top, bottom, window height], or null without one.
_HEADING_BOX_JS = """
(step) => {
  const mark = document.querySelector(`.st-key-step_mark_${step}`);
  if (!mark) return null;
  const heading = Array.from(document.querySelectorAll(
    "[data-testid='stMain'] :is(h1, h2, h3)"
  )).find((h) => mark.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_FOLLOWING);
  if (!heading) return null;
  const box = heading.getBoundingClientRect();
  return [box.top, box.bottom, window.innerHeight, heading.innerText];
}
"""
_IN_VIEW_JS = f"""
(step) => {{
  const box = ({_HEADING_BOX_JS})(step);
  return !!box && box[0] >= 0 && box[1] <= box[2];
}}
"""


def _press(app, key: str, step: int) -> None:
    app.interact(app.button(key).click, expect_chart_change=False)
    app.page.wait_for_function(f"() => location.search.includes('step={step}')", timeout=10_000)
    # the script that scrolls runs once the run has ended; give it a moment to do so
    app.page.wait_for_function(_IN_VIEW_JS, arg=step, timeout=10_000, polling=100)
    top, bottom, height, text = app.page.evaluate(_HEADING_BOX_JS, step)
    assert 0 <= top and bottom <= height, (step, text, top, bottom, height)


def test_top_next_and_back_bring_the_steps_heading_into_view(app):
    app.open("variance", "present=1")
    app.interact(
        app.button("variance_std_skip").click, expect_chart_change=False
    )  # step 1's question: just show it
    for step in (2, 3, 4):
        _press(app, "step_next", step)
        # the page has scrolled: the top of the main area is out of sight
        assert (
            app.page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollTop")
            > 0
        )
    app.screenshot("presenter-step-next-1400", full_page=False)
    for step in (3, 2):
        _press(app, "step_prev", step)
    app.assert_healthy()
