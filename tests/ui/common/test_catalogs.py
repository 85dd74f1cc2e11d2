"""The English and Chinese catalogs: same keys, same placeholders, every used key present."""

import re
import string
from pathlib import Path

import pytest

from tests.english_words import english_words
from tests.text_measure import LIMITS, length, paragraphs, sentence_count
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


#: Catalog entries meant to stay as they are in Chinese, and why.
NOT_CHINESE = {
    "app.language": "the language selector's label is bilingual, to be found in either language",
}


def test_chinese_catalog_has_no_english_prose():
    """Every Chinese string is Chinese: names, symbols, code and the reviewed terms of
    tests/english_words.py stay as written, nothing else is English (placeholders, filled
    in by the page, are checked on the pages: tests/app/test_chinese.py)."""
    zh = i18n.catalog("zh")
    found = {
        key: english_words(re.sub(r"\{[^{}]*\}", " ", text))
        for key, text in zh.items()
        if key not in NOT_CHINESE
    }
    assert not {key: words for key, words in found.items() if words}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("optional in HF, off by default", ["optional", "in", "off", "by", "default"]),
        ("all-MiniLM-L6-v2 (this page)", ["this", "page"]),
        ("final logits capped at 30", ["final", "capped", "at"]),
        ("批大小 batch", ["batch"]),
        ("正态 normal、均匀 uniform、rademacher", ["normal", "uniform", "rademacher"]),
        ("softmax 饱和，logits 过大，one-hot，熵 0.5 nats", []),
        ("d_k、n_keys、float16、GPT-2、Qwen3、MiniLM、QK-norm、LayerNorm、arXiv、CSV", []),
        ("J = diag(p) − ppᵀ，Var(q·k)，maxⱼ pᵢⱼ，out = softmax(z)", []),
        ("出处：Vaswani 等，2017，*Attention Is All You Need*（arXiv:1706.03762）", []),
        ("Chiang 与 Cholak（2022）；Kingma & Ba 2015", []),
        ("见 data/NOTICE、`core.training`、?present=1、https://example.org/a word", ["word"]),
        (":material/report: **常见说法：** Adam、Rademacher", []),
        ("按 Ctrl+Enter（macOS 上为 ⌘+Enter），“it” 指向哪个词", []),
        ("按 Ctrl+Enter 或 press Enter", ["press", "Enter"]),
        ("*不是标题* the", ["the"]),
    ],
)
def test_english_words(text, words):
    assert english_words(text) == words


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
def test_no_paragraph_is_too_long(lang):
    """Every paragraph of every string within the limit of tests/text_measure.py (a
    placeholder counts as one word; the pages check the texts as filled in)."""
    long = {
        key: [length(p, lang) for p in paragraphs(text) if length(p, lang) > LIMITS[lang]]
        for key, text in i18n.catalog(lang).items()
    }
    assert not {key: n for key, n in long.items() if n}


def test_every_takeaway_is_one_sentence():
    for lang in i18n.LANGUAGES:
        takeaways = {k: v for k, v in i18n.catalog(lang).items() if k.endswith("_takeaway")}
        assert len(takeaways) >= 20
        for key, text in takeaways.items():
            assert sentence_count(text, lang) == 1, (lang, key, text)
            assert len(paragraphs(text)) == 1, (lang, key, text)


def test_text_measures():
    text = "One two three.\n\n- **a** b c\n- d e\n\n#### Head\nx y"
    assert paragraphs(text) == ["One two three.", "- **a** b c", "- d e", "#### Head", "x y"]
    assert length("Var(q·k) = d_k·σ² grows, e.g. at 64", "en") == 6  # "=" is no word
    assert length("方差 Var(q·k) 随 d_k 增长。", "zh") == 8  # 6 characters (。 too), 2 runs
    assert sentence_count("**One sentence, e.g. this one (et al. 2017) at 0.5.**", "en") == 1
    assert sentence_count("One. Two!", "en") == 2
    assert sentence_count("一句话，含 0.5 和 d_k。", "zh") == 1
    assert sentence_count("一句。两句。", "zh") == 2


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
    concatenated ("which_d_workshop.myth_reality" + suffix). A key may name a table (a
    chart's words, ``[saturation.overflow]``): its entries count as named."""
    patterns = [
        re.compile(re.escape(key) + (r"(\..+)?" if not plus else ".*"))
        for key, plus in re.findall(r"""["']([a-z_]+\.[a-z0-9_]+)["'](\s*\+)?""", source)
    ]
    for body in re.findall(r"""(?=\bf(["'])(.*?)\1)""", source):  # overlapping: nested f-strings
        template = body[1]
        literal = re.sub(r"\{[^}]*\}", "", template)
        # a template with no word of its own ("{module}.{name}") names no key
        if re.search(r"[a-z]{2}", literal) and re.fullmatch(r"[a-z0-9_.]+", literal):
            named = re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(template))
            patterns.append(re.compile(named + r"(\..+)?"))
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
