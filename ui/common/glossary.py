"""The glossary: every technical term the story uses, with its forms and a one-sentence
definition in each language (the catalogs' ``[glossary.<term>]`` tables: ``name``,
``forms``, ``text``).

A page declares the terms it uses (``PageSpec.terms``) and shows their definitions under
"Terms on this page" (:func:`ui.common.workshop.terms`); the glossary page lists them all.
:func:`terms_in` finds the terms a text uses, by their forms: the test that every term a
page uses is defined on that page reads it (tests/app/test_glossary.py).
"""

from __future__ import annotations

import functools
import re

from ui.common.i18n import CATALOGS, DEFAULT_LANGUAGE, t

#: Every term of the glossary, in the order the glossary page lists them.
TERMS: tuple[str, ...] = tuple(
    dict.fromkeys(
        key.split(".")[1]
        for key in CATALOGS[DEFAULT_LANGUAGE]
        if key.startswith("glossary.") and key.count(".") == 2
    )
)


@functools.cache
def _patterns(lang: str) -> dict[str, re.Pattern]:
    """Per term, a pattern matching any of its forms in ``lang``: whole words in English
    (any case), the characters themselves in Chinese (which has no spaces)."""
    patterns = {}
    for term in TERMS:
        forms = [re.escape(f) for f in CATALOGS[lang][f"glossary.{term}.forms"].split("|")]
        alternatives = "|".join(sorted(forms, key=len, reverse=True))
        if lang == DEFAULT_LANGUAGE:
            patterns[term] = re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)
        else:
            patterns[term] = re.compile(alternatives)
    return patterns


def terms_in(text: str, lang: str) -> set[str]:
    """The glossary terms whose forms occur in ``text`` (written in ``lang``)."""
    return {term for term, pattern in _patterns(lang).items() if pattern.search(text)}


def definition(term: str) -> str:
    """``term``'s line in the current language: its name in bold, then its definition
    (``glossary.line``: a full-width colon in Chinese)."""
    return t("glossary.line", name=t(f"glossary.{term}.name"), text=t(f"glossary.{term}.text"))
