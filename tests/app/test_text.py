"""What a learner reads, in both languages: each section opens with its one-sentence
takeaway, and no paragraph on a page runs past the limit of tests/text_measure.py.

The catalogs are checked string by string in tests/ui/common/test_catalogs.py; here
every page is run in English and in Chinese with its questions answered (the session's
shared runs, :func:`tests.app.helpers.page_run`), so the paragraphs composed in code (a
card that joins several catalog strings, a caption that lists items) are checked as they
are shown.
"""

from __future__ import annotations

import pytest

from tests.app.helpers import SCRIPTS, page_run
from tests.text_measure import LIMITS, length, paragraphs, sentence_count

CASES = [(page, lang) for page in SCRIPTS for lang in ("en", "zh")]
#: Elements whose text is read as paragraphs.
_PROSE = ("markdown", "caption", "info", "warning", "success", "error")


def _elements(page: str, lang: str) -> tuple[tuple[str, str], ...]:
    """The page's elements in reading order (blocks left out), as (type, text)."""
    run = page_run(page, lang)
    assert not run.exceptions, run.exceptions
    return run.elements


@pytest.mark.parametrize(("page", "lang"), CASES)
def test_every_section_opens_with_its_takeaway(page, lang):
    """Under every section heading, the first thing is one sentence in bold (the first
    paragraph of a Markdown element, which may go on with the section's lead)."""
    elements = _elements(page, lang)
    headings = [i for i, (kind, _) in enumerate(elements) if kind in ("header", "subheader")]
    if page not in ("home", "glossary"):
        assert headings, "a story page has sections"
    for i in headings:
        heading = elements[i][1]
        kind, markdown = elements[i + 1]
        assert kind == "markdown", (heading, kind, markdown[:60])
        text = paragraphs(markdown)[0]
        assert text.startswith("**") and text.endswith("**"), (heading, text[:60])
        assert sentence_count(text, lang) == 1, (heading, text)
        assert length(text, lang) <= LIMITS[lang] // 2, (heading, text)


@pytest.mark.parametrize(("page", "lang"), CASES)
def test_no_paragraph_on_the_page_is_too_long(page, lang):
    long = [
        (length(p, lang), p[:80])
        for kind, text in _elements(page, lang)
        if kind in _PROSE
        for p in paragraphs(text)
        if length(p, lang) > LIMITS[lang]
    ]
    assert not long, long
