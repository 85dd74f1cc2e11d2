"""Every technical term a page uses is defined on that page.

A term is found by its forms (the catalogs' ``[glossary.<term>]`` tables,
:func:`ui.common.glossary.terms_in`) in what the page shows with every question answered
and "Go deeper" open: its markdown, captions, headings, tables and widget labels (the
session's shared runs, :func:`tests.app.helpers.page_run`). The page must declare it
(``PageSpec.terms``), which puts its definition under "Terms on this page".
"""

from __future__ import annotations

import pytest

from tests.app.helpers import SCRIPTS, page_run
from ui.common import i18n
from ui.common.glossary import TERMS, terms_in
from ui.common.pages import PAGES

LANGS = ("en", "zh")
#: Pages by url path; the glossary itself defines every term.
PAGE_SPECS = {p.url_path or "home": p for p in PAGES if p.name != "glossary"}


def definition(term: str, lang: str) -> str:
    """A term's line in "Terms on this page"."""
    cat = i18n.catalog(lang)
    return cat["glossary.line"].format(
        name=cat[f"glossary.{term}.name"], text=cat[f"glossary.{term}.text"]
    )


def paragraphs(run) -> list[str]:
    """The paragraphs of every element a page run drew ("Terms on this page" draws its
    definitions as one element, a paragraph a term)."""
    return [para for _, text in run.elements for para in text.split("\n\n")]


def shown_text(page: str, lang: str) -> str:
    """What ``page`` shows in ``lang`` with every question answered and "Go deeper"
    open, but the definitions themselves."""
    run = page_run(page, lang, deeper="true")
    assert not run.exceptions, run.exceptions
    definitions = {definition(term, lang) for term in TERMS}
    texts = [para for para in paragraphs(run) if para not in definitions]
    return "\n".join([*texts, *run.labels, *run.tables])


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", list(PAGE_SPECS))
def test_every_term_a_page_uses_is_defined_on_it(page, lang):
    spec = PAGE_SPECS[page]
    used = terms_in(shown_text(page, lang), lang)
    missing = sorted(used - set(spec.terms))
    assert not missing, f"{page} ({lang}) uses {missing} without defining them (PageSpec.terms)"
    run = page_run(page, lang, deeper="true")
    shown = set(paragraphs(run))
    assert {definition(term, lang) for term in spec.terms} <= shown


def test_the_glossary_defines_every_term_in_both_languages():
    assert len(TERMS) >= 20
    for lang in LANGS:
        cat = i18n.catalog(lang)
        for term in TERMS:
            assert cat[f"glossary.{term}.name"] and cat[f"glossary.{term}.text"]
            forms = cat[f"glossary.{term}.forms"].split("|")
            assert all(forms), term
            # a term's own name, and its definition, name it
            assert terms_in(cat[f"glossary.{term}.name"], lang) >= {term}, (lang, term)
    scripts = SCRIPTS["glossary"]
    assert scripts == "app_pages/glossary.py"


def test_terms_are_found_by_their_forms():
    assert terms_in("The softmax Jacobian J = diag(p) − ppᵀ", "en") >= {"softmax", "jacobian"}
    assert terms_in("雅可比矩阵与 Frobenius 范数", "zh") >= {"jacobian", "frobenius"}
    # whole words only in English: "head" is not "multi-head", "nation" is not "nat"
    assert "entropy" not in terms_in("a nation of heads", "en")
    assert terms_in("multi-head attention", "en") >= {"multi_head"}
