"""benchmarks/element_page.py draws what element_cost.py says it times: the one-chart
page's input and chart, and that many elements of one kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "benchmarks" / "element_page.py")
#: kind -> the AppTest accessor of its elements (a bordered card: its Markdown)
KINDS = {
    "markdown": "markdown",
    "changing": "markdown",
    "button": "button",
    "bordered": "markdown",
    "expander": "expander",
    "metric": "metric",
}


def run(monkeypatch, kind: str, count: int) -> AppTest:
    monkeypatch.setenv("ELEMENT_KIND", kind)
    monkeypatch.setenv("ELEMENT_COUNT", str(count))
    return AppTest.from_file(PAGE, default_timeout=30).run()


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_adds_its_count_of_elements(monkeypatch, kind):
    at = run(monkeypatch, kind, 7)
    assert not at.exception
    assert len(at.get(KINDS[kind])) == 7
    assert at.number_input(key="n").value == 50 and len(at.get("vega_lite_chart")) == 1


def test_the_changing_kinds_follow_the_input(monkeypatch):
    at = run(monkeypatch, "metric", 3)
    at.number_input(key="n").set_value(60).run()
    assert [m.value for m in at.metric] == ["0", "60", "120"]
    at = run(monkeypatch, "changing", 2)
    at.number_input(key="n").set_value(61).run()
    assert all("n = 61" in m.value for m in at.markdown)


def test_an_unknown_kind_is_refused(monkeypatch):
    at = run(monkeypatch, "table", 1)
    assert at.exception and "unknown ELEMENT_KIND" in at.exception[0].value
