"""User-facing strings: English and Chinese catalogs in ui/common/locales/*.toml.

Keys are dotted paths into the TOML tables (``"variance.title"``). Placeholders use
``str.format`` syntax (``{d_k}``). The current language is the sidebar's ``lang``
widget value in ``st.session_state``.
"""

from __future__ import annotations

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


def current_language() -> str:
    """The language of this session: the sidebar's ``lang`` control (English before it
    exists, or for a value it does not offer)."""
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
