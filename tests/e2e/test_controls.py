"""Controls in a real browser: d_k's − / + step through powers of two and the URL follows;
a translated option keeps its identifier in the URL, so a link works in both languages; a
page's control reruns the page alone, not the sidebar (see conftest.py for the harness)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

pytestmark = pytest.mark.e2e


def _checked(app, key: str):
    return app.widget(key).locator("[data-testid='stRadioOption']:has(input:checked)")


def _open_sampling(app) -> None:
    sampling = app.page.locator("[data-testid='stExpander']").filter(has=app.widget("dist"))
    if not sampling.locator("details").evaluate("d => d.open"):
        sampling.locator("summary").click()
    expect(app.widget("dist")).to_be_visible()


def test_d_k_plus_and_minus_step_through_powers_of_two(app):
    app.open("saturation", "deeper=true")  # Go deeper open: charts that follow d_k
    box = app.widget("d_k").locator("input")
    expect(box).to_have_value("64")
    app.interact(app.widget("d_k").locator("[data-testid='stNumberInputStepUp']").click)
    expect(box).to_have_value("128", timeout=10_000)
    app.page.wait_for_function("() => location.search.includes('d_k=128')", timeout=10_000)

    def type_100():
        box.fill("100")
        box.press("Enter")

    app.interact(type_100)  # a typed value is kept, and linked
    app.page.wait_for_function("() => location.search.includes('d_k=100')", timeout=10_000)
    app.interact(app.widget("d_k").locator("[data-testid='stNumberInputStepDown']").click)
    expect(box).to_have_value("64", timeout=10_000)
    app.assert_healthy()


def test_a_translated_option_keeps_its_identifier_in_the_url(app):
    app.open("variance", "lang=zh&dist=uniform")  # a link made on an English page
    _open_sampling(app)  # the choice sits in the sampling settings, a closed expander
    expect(_checked(app, "dist")).to_contain_text("均匀")
    option = app.widget("dist").locator("[data-testid='stRadioOption']")
    # the short path's charts wait for its card: no chart to change, the link tells
    app.interact(option.filter(has_text="Rademacher").click, expect_chart_change=False)
    app.page.wait_for_function("() => location.search.includes('dist=rademacher')")
    # switch the page to English: the choice stays, and so does the link
    app.interact(
        lambda: app.widget("lang").get_by_text("en", exact=True).click(),
        expect_chart_change=False,
    )
    _open_sampling(app)  # its label changed with the language: drawn closed again
    expect(_checked(app, "dist")).to_contain_text("Rademacher")
    option = app.widget("dist").locator("[data-testid='stRadioOption']")
    expect(option.first).to_contain_text("normal")
    assert "dist=rademacher" in app.page.evaluate("() => location.search")
    app.interact(option.first.click, expect_chart_change=False)  # the default leaves the URL
    app.page.wait_for_function("() => !location.search.includes('dist=')")
    app.assert_healthy()


#: ``delta_path[0]`` of an element in the page's main area and in its sidebar.
MAIN, SIDEBAR = 0, 1


def _drawn_during(app, action) -> tuple[list[list[int]], int]:
    """The delta paths of the elements the server sent while ``action`` ran its rerun,
    and the number of navigation messages (the sidebar's page list)."""
    start = len(app.received)
    app.interact(action, expect_chart_change=False)
    messages = [ForwardMsg.FromString(frame) for frame in app.received[start:]]
    paths = [list(m.metadata.delta_path) for m in messages if m.HasField("delta")]
    return paths, sum(m.HasField("navigation") for m in messages)


@pytest.mark.parametrize("present", [False, True], ids=["learner", "presenting"])
def test_a_pages_control_reruns_the_page_alone(app, present):
    """``workshop.page_body``: moving d_k redraws the page under its title, not the sidebar,
    the navigation or the title; while presenting (the controls are in the sidebar) the
    whole app reruns."""
    app.open("saturation", "reveal=1" + ("&present=1" if present else ""))
    box = app.widget("d_k").locator("input")

    def type_128():
        box.fill("128")
        box.press("Enter")

    paths, navigation = _drawn_during(app, type_128)
    expect(box).to_have_value("128")
    assert paths, "the change drew nothing"
    if present:
        assert navigation == 1 and any(p[0] == SIDEBAR for p in paths)
        return
    assert navigation == 0
    assert all(p[0] == MAIN for p in paths), sorted({tuple(p[:2]) for p in paths})
    # one block: the page's body, below the title, the lead and the terms (main's 0–3)
    assert len({p[1] for p in paths}) == 1 and paths[0][1] > 3, paths[:3]
