"""Closed-form charts redraw in the browser (ui/common/live.py): a drag of one of their
inputs moves the chart with no websocket frame sent to the server, and after the drag
pauses the URL holds the new value.

Outside a room (a room's polls send frames of their own). The drag is a run of ``input``
events, one per two animation frames (~33 ms apart: well under the 150 ms pause after
which Streamlit reports a selection), dispatched on the slider Vega draws under the chart;
every frame the page sends is time-stamped by an init script that wraps
``WebSocket.prototype.send``.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import SENT_JS

#: Drags input ``index`` of the chart under ``.st-key-<key>`` through ``values``: returns
#: how many steps redrew the chart, the frames sent during the drag and its time per input.
DRAG_JS = """
async ({key, index, values}) => {
  const root = document.querySelector('.st-key-' + key);
  const input = root.querySelectorAll('.vega-bind input[type=range]')[index];
  const drawn = () => {
    const canvas = root.querySelector('canvas');
    return canvas ? canvas.toDataURL() : root.querySelector('svg.marks').outerHTML;
  };
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  let last = drawn();
  let redrawn = 0;
  const t0 = performance.now();
  for (const v of values) {
    input.value = String(v);
    input.dispatchEvent(new Event('input', {bubbles: true}));
    await frame();
    const now = drawn();
    if (now !== last) redrawn += 1;
    last = now;
  }
  const t1 = performance.now();
  return {
    redrawn,
    sent: window.__sent.filter((t) => t >= t0 && t <= t1).length,
    ms_per_input: (t1 - t0) / values.length,
    shown: input.value,
  };
}
"""

CASES = [
    # page, the chart's element key, input index, its URL key, the drag's values
    ("saturation", "saturation_playground", 0, "score_1", [9.5, 9, 8.5, 8, 7.5, 7, 6.5, 6]),
    ("saturation", "saturation_playground", 1, "score_2", [4.5, 4, 3.5, 3, 2.5, 2, 1.5, 1]),
    ("saturation", "saturation_playground", 2, "divisor", [7, 6, 5, 4, 3, 2.5, 2, 1.5]),
    ("saturation", "saturation_gauss_limit", 0, "logit_std", [7.5, 7, 6.5, 6, 5.5, 5, 4.5, 4]),
    ("gradients", "gradients_gap", 0, "gap", [7, 8, 9, 10, 11, 12, 13, 14]),
    ("sqrt-vs-d", "sqrt_vs_d_theory", 0, "alignment", [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]),
]


@pytest.mark.parametrize(("page", "key", "index", "param", "values"), CASES)
def test_a_drag_redraws_in_the_browser_and_the_url_follows_the_pause(
    make_app, page, key, index, param, values
):
    app = make_app(init_script=SENT_JS)
    app.open(page, "deeper=true")
    app.page.locator(f".st-key-{key}").scroll_into_view_if_needed()
    app.wait_charts_rendered()
    app.page.locator(f".st-key-{key} svg.marks, .st-key-{key} canvas").first.wait_for()
    got = app.page.evaluate(DRAG_JS, {"key": key, "index": index, "values": values})
    assert got["sent"] == 0, f"{got['sent']} websocket frames sent while the drag moved on"
    # every step redraws the chart (a step of the slider changes a number drawn in it)
    assert got["redrawn"] == len(values), got
    assert float(got["shown"]) == values[-1]
    want = f"{param}={values[-1]:g}"
    app.page.wait_for_function(f"() => location.search.includes({want!r})", timeout=15_000)
    app.wait_idle()
    app.assert_healthy()
