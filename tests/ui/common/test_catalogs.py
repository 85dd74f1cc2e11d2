"""The English and Chinese catalogs: same keys, same placeholders, every used key present."""

import re
import string
from pathlib import Path

import pytest

from ui.common import i18n

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [
    ROOT / "app.py",
    *sorted((ROOT / "app_pages").glob("*.py")),
    *sorted((ROOT / "ui").rglob("*.py")),
]


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_catalogs_have_identical_keys():
    en, zh = i18n.catalog("en"), i18n.catalog("zh")
    assert set(en) == set(zh), (sorted(set(en) - set(zh)), sorted(set(zh) - set(en)))
    assert len(en) > 50


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
def test_no_empty_strings(lang):
    assert all(isinstance(v, str) and v.strip() for v in i18n.catalog(lang).values())


def test_same_placeholders_in_both_languages():
    en, zh = i18n.catalog("en"), i18n.catalog("zh")
    for key in en:
        assert _placeholders(en[key]) == _placeholders(zh[key]), key


def test_chinese_catalog_is_chinese():
    """English prose (three or more words of three or more letters) is Chinese in zh."""
    cjk = re.compile(r"[\u4e00-\u9fff]")
    en, zh = i18n.catalog("en"), i18n.catalog("zh")
    prose = [k for k, v in en.items() if len(re.findall(r"[A-Za-z]{3,}", v)) >= 3]
    missing = [k for k in prose if not cjk.search(zh[k])]
    assert not missing, missing


def test_every_literal_key_used_in_code_exists():
    keys = set(i18n.catalog("en"))
    used = set()
    for path in SOURCES:
        used |= set(
            re.findall(
                r"""\bt\(\s*["']([a-z_]+\.[a-z0-9_.]+)["']""", path.read_text(encoding="utf-8")
            )
        )
    assert used, "no t(...) calls found"
    assert not sorted(used - keys)


def _key_patterns(source: str) -> list[re.Pattern]:
    """Every catalog key a source file can name: literal keys, f-string templates such as
    f"home.step_{name}_title" (placeholders match any text) and literal prefixes that are
    concatenated ("which_d_workshop.myth_reality" + suffix)."""
    patterns = [
        re.compile(re.escape(key) + ("" if plus is None or not plus else ".*"))
        for key, plus in re.findall(r"""["']([a-z_]+\.[a-z0-9_]+)["'](\s*\+)?""", source)
    ]
    for body in re.findall(r"""(?=\bf(["'])(.*?)\1)""", source):  # overlapping: nested f-strings
        template = body[1]
        literal = re.sub(r"\{[^}]*\}", "", template)
        if "." in literal and re.fullmatch(r"[a-z0-9_.]+", literal):
            patterns.append(re.compile(re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(template))))
    return patterns


def test_every_catalog_key_is_used():
    """No dead text: a key nothing can show would go stale unseen."""
    patterns = [p for path in SOURCES for p in _key_patterns(path.read_text(encoding="utf-8"))]
    unused = [k for k in i18n.catalog("en") if not any(p.fullmatch(k) for p in patterns)]
    assert not unused


def test_every_formatted_key_prefix_exists():
    """f-string keys such as t(f"home.step_{name}_title") resolve for every value used."""
    from ui.common.pages import STORY

    en = i18n.catalog("en")
    for name in STORY:
        assert f"home.step_{name}_title" in en and f"home.step_{name}_text" in en
    from ui.common.pages import PAGES

    for spec in PAGES:
        assert f"{spec.name}.nav" in en
