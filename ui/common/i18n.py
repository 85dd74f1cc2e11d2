"""User-facing strings: English and Chinese catalogs in ui/common/locales/*.toml.

Keys are dotted paths into the TOML tables (``"variance.title"``). Placeholders use
``str.format`` syntax (``{d_k}``). The current language is the sidebar's ``lang``
widget value in ``st.session_state``.
"""

from __future__ import annotations

import functools
import threading
import tomllib
from pathlib import Path

import streamlit as st

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


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    """Flattened catalog of one language (cached for the life of the process)."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    with (LOCALES_DIR / f"{lang}.toml").open("rb") as fh:
        return _flatten(tomllib.load(fh))


#: This script thread's language, once the run has read its ``lang`` widget
#: (:func:`fix_language`): a page asks for hundreds of strings per rerun, and each read
#: of ``st.session_state`` goes through Streamlit's session lock.
_RUN = threading.local()


def fix_language(lang: str | None) -> None:
    """Serve :func:`current_language` from ``lang`` for the rest of this script run
    (``None``: read ``st.session_state`` again). ``app.py`` clears it as a run starts and
    sets it after the language widget; a fragment's rerun, which runs no ``app.py``,
    keeps the language of its session's last full run (only the sidebar changes it)."""
    _RUN.lang = lang


def current_language() -> str:
    lang = getattr(_RUN, "lang", None)
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
