"""Maths in captions and chart subtitles: rendered (``$…$``, KaTeX, in a caption) or
written in Unicode (dₖ, qᵢ, dₖ⁻ᵅ, 10⁻³), never plain-text TeX (``d_k``, ``d_k^−α``,
``\\sigma``, ``1.45e-01``); and a subtitle never breaks inside a symbol.

The captions and subtitles are found in the code (``st.caption(t("…"))``,
``subtitle=t("…")``) and by their keys' names (``…_caption``, ``…_subtitle``, ``…_sub``,
``source``, and the ``subtitle`` of a chart's table), in both catalogs.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ui.common.charts import HALF_SUBTITLE_LINE_COLUMNS, SUBTITLE_LINE_COLUMNS, wrap_text
from ui.common.i18n import catalog
from ui.gradients.sections import sig3

ROOT = Path(__file__).resolve().parents[3]
LANGS = ("en", "zh")
_CALLED = re.compile(r'(?:caption|subtitle)\s*[(=]\s*t\(\s*f?"([a-z_]+\.[a-z0-9_{}]+)"')
_NAMED = re.compile(r"(?:caption|subtitle|_sub|^[a-z_]+\.source|_caption_[a-z0-9]+)$")
#: A chart table's subtitle (``[gradients.jac_sweep]``'s ``subtitle``): drawn as it is.
_TABLE_SUBTITLE = re.compile(r"^[a-z_]+\.[a-z0-9_]+\.subtitle(?:_[a-z]+)?$")
_SUBTITLE_CALL = re.compile(r'subtitle\s*=\s*t\(\s*"([a-z_]+\.[a-z0-9_]+)"')

# plain-text TeX, outside $…$, `code` and {placeholders}
_SUBSCRIPT = re.compile(
    r"(?:(?<![A-Za-z0-9_])[A-Za-zα-ωΑ-Ω]|[‖)])_(?:\{[^}]*\}|[A-Za-z0-9]{1,3})(?![A-Za-z0-9_])"
)
_SUPERSCRIPT = re.compile(r"\^")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_E_NOTATION = re.compile(r"\d[eE][-+−]?\d")
_PROTECTED = re.compile(r"\$[^$]*\$|`[^`]*`|\{[a-z_0-9]+\}")


def _catalog(lang: str) -> dict[str, str]:
    with open(ROOT / "ui" / "common" / "locales" / f"{lang}.toml", "rb") as f:
        tree = tomllib.load(f)
    flat: dict[str, str] = {}

    def walk(table: dict, prefix: str) -> None:
        for key, value in table.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            else:
                flat[f"{prefix}{key}"] = value

    walk(tree, "")
    return flat


def _sources() -> str:
    files = [*(ROOT / "ui").rglob("*.py"), *(ROOT / "app_pages").glob("*.py")]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def caption_keys() -> set[str]:
    """Keys of every caption and chart subtitle (an f-string key stands for each key it
    can be: ``sqrt_vs_d.{caption}`` is matched by name)."""
    en = _catalog("en")
    called = {k for k in _CALLED.findall(_sources()) if "{" not in k}
    return {k for k in en if _NAMED.search(k) or _TABLE_SUBTITLE.match(k)} | (called & set(en))


def subtitle_keys() -> set[str]:
    tables = {k for k in _catalog("en") if _TABLE_SUBTITLE.match(k)}
    return set(_SUBTITLE_CALL.findall(_sources())) | tables


def plain_tex(text: str) -> list[str]:
    """The pieces of ``text`` written as plain-text TeX."""
    bare = _PROTECTED.sub(" ", text)
    found = []
    for pattern in (_SUBSCRIPT, _SUPERSCRIPT, _COMMAND, _E_NOTATION):
        found += [m.group(0) for m in pattern.finditer(bare)]
    return found


def test_the_scan_finds_the_captions_and_subtitles():
    keys, subtitles = caption_keys(), subtitle_keys()
    assert len(keys) >= 60
    assert {"variance.source", "gradients.gap_law_na", "sqrt_vs_d.logit_caption"} <= keys
    assert {"gradients.heat_unscaled.subtitle", "gradients.jac_sweep.subtitle"} <= subtitles
    assert subtitles <= set(_catalog("en"))


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("‖J‖_F = 1.45e-01", ["‖_F", "5e-0"]),
        ("the factor d_k^−α", ["d_k", "^"]),
        ("every ε_j = e^(−g_j) small", ["ε_j", "g_j", "^"]),
        ("q · k = Σᵢ₌₁^(d_k) q_i k_i", ["d_k", "q_i", "k_i", "^"]),
        ("with \\sigma_w", ["\\sigma"]),
    ],
)
def test_the_scan_sees_plain_tex(text, pieces):
    assert sorted(plain_tex(text)) == sorted(pieces)


@pytest.mark.parametrize(
    "text",
    ["dₖ⁻ᵅ · ‖J‖ = 0.145", "$\\varepsilon_j = e^{-g_j}$", "n_keys = {n_keys}, d_model",
     "`d_k=64` in the URL", "{d_k} at 10⁻³"],
)  # fmt: skip
def test_the_scan_leaves_unicode_math_and_names_alone(text):
    assert plain_tex(text) == []


@pytest.mark.parametrize("lang", LANGS)
def test_no_caption_or_subtitle_is_plain_tex(lang):
    catalog = _catalog(lang)
    bad = {k: plain_tex(catalog[k]) for k in sorted(caption_keys()) if plain_tex(catalog[k])}
    assert not bad, bad


@pytest.mark.parametrize("lang", LANGS)
def test_math_is_closed_and_subtitles_have_none_to_render(lang):
    """Captions are Markdown (KaTeX renders ``$…$``); a chart subtitle is drawn as it is,
    so it holds Unicode only."""
    catalog = _catalog(lang)
    assert all(catalog[k].count("$") % 2 == 0 for k in caption_keys())
    # no braces in math: the catalog's str.format placeholders are braces
    math = {k: re.findall(r"\$([^$]*)\$", catalog[k]) for k in caption_keys()}
    assert not {k: m for k, m in math.items() if any("{" in x or "}" in x for x in m)}
    assert not [k for k in subtitle_keys() if "$" in catalog[k]]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("columns", [HALF_SUBTITLE_LINE_COLUMNS, SUBTITLE_LINE_COLUMNS])
def test_a_subtitle_never_breaks_inside_a_symbol(lang, columns):
    texts = catalog(lang)
    heat = texts["gradients.heat_unscaled.subtitle"].format(p="1 − 2.50·10⁻⁴", fro=sig3(6.3e-12))
    band = texts["gradients.jac_sweep.subtitle"]
    whole = {
        "en": ["‖J‖\u00a0=\u00a06.30·10⁻¹²", "10–90\u00a0%"],
        "zh": ["‖J‖\u00a0=\u00a06.30·10⁻¹²", "10%–90%的行", "范数"],
    }
    lines = wrap_text(heat, columns) + wrap_text(band, columns)
    for symbol in whole[lang]:
        assert any(symbol in line for line in lines), (symbol, lines)
    assert not any("\u2060" in line for line in lines)  # the joiner is not drawn


def test_numbers_have_three_significant_figures_without_e_notation():
    assert sig3(1.45e-01) == "0.145"
    assert sig3(0.0133) == "0.0133"
    assert sig3(6.30112885149e-12) == "6.30·10⁻¹²"
    assert sig3(2.5e-4) == "2.50·10⁻⁴"
    assert sig3(0.0) == "0"
