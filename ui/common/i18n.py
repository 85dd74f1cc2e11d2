"""User-facing strings: English and Chinese catalogs in ui/common/locales/*.toml.

Keys are dotted paths into the TOML tables (``"variance.title"``). Placeholders use
``str.format`` syntax (``{d_k}``). The current language is the sidebar's ``lang``
widget value in ``st.session_state``, read once at the start of a complete run of the app
(:func:`set_run_language`): a page looks up some 100–300 strings a run, and each read of
a widget's value from session state costs about 7 µs (2.2 ms of a 37 ms training rerun).
"""

from __future__ import annotations

import contextvars
import functools
import tomllib
from pathlib import Path

import streamlit as st

from ui.common.chart_text import ChartText

LOCALES_DIR = Path(__file__).parent / "locales"
LANGUAGES = {"en": "English", "zh": "中文"}
DEFAULT_LANGUAGE = "en"


def _flatten(table: dict, prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _load(lang: str) -> dict[str, str]:
    with (LOCALES_DIR / f"{lang}.toml").open("rb") as fh:
        return _flatten(tomllib.load(fh))


#: Every language's flattened catalog, read once when the app starts.
CATALOGS: dict[str, dict[str, str]] = {lang: _load(lang) for lang in LANGUAGES}


def catalog(lang: str) -> dict[str, str]:
    """Flattened catalog of one language.

    Raises
    ------
    ValueError
        If ``lang`` is not one of :data:`LANGUAGES`.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    return CATALOGS[lang]


#: The language of the complete run in progress (:func:`set_run_language`), None outside
#: one (a fragment's own rerun reads session state). A context variable, so it is the
#: script thread's own: a session's runs take place on its script thread, never another
#: session's, and the end of every complete run clears it.
_RUN_LANGUAGE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "run_language", default=None
)


def set_run_language(lang: str | None) -> None:
    """Hold ``lang`` as the language of the run in progress (None: forget it). The app
    sets it when its run starts, once the sidebar's ``lang`` value is known, and clears it
    when the run ends, however it ends."""
    _RUN_LANGUAGE.set(lang if lang in LANGUAGES else None)


def current_language() -> str:
    """The language of this session: the one held for the run in progress, else the
    sidebar's ``lang`` control (English before it exists, or for a value it does not
    offer)."""
    lang = _RUN_LANGUAGE.get()
    if lang is None:
        lang = st.session_state.get("lang")
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def t(key: str, /, **values: object) -> str:
    """The string for ``key`` in the current language, formatted with ``values``.

    A key missing from the current catalog falls back to English; a key missing from
    both raises ``KeyError`` (the catalog tests keep that from reaching users).
    """
    text = catalog(current_language()).get(key)
    if text is None:
        text = catalog(DEFAULT_LANGUAGE)[key]
    return text.format(**values) if values else text


@functools.cache
def _chart_table(lang: str, key: str) -> tuple[tuple[str, str], ...]:
    """The entries of chart ``key``'s table in ``lang``'s catalog (English where it has
    none), as (name, template) pairs; ``tips.series`` for a nested table's entry."""
    for source in (lang, DEFAULT_LANGUAGE):
        prefix = f"{key}."
        found = tuple(
            sorted(
                (k[len(prefix) :], v) for k, v in CATALOGS[source].items() if k.startswith(prefix)
            )
        )
        if found:
            return found
    raise KeyError(f"no chart table {key!r} in the catalogs")


def chart_text(
    key: str, /, *, replace: dict[str, str] | None = None, **values: object
) -> ChartText:
    """The words of chart ``key`` in the current language: its catalog table (``[key]``),
    every entry formatted with ``values``; an entry named in ``replace`` is that text
    instead, as it is (the recap's small charts: their own alt text, no title).

    Raises
    ------
    KeyError
        If neither catalog has the table, or an entry names a placeholder ``values`` lack.
    """
    table = _chart_table(current_language(), key)
    given = replace or {}
    return ChartText(
        tuple(
            (name, given[name] if name in given else text.format(**values)) for name, text in table
        )
    )
