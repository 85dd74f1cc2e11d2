"""Every chart of every page, in both languages, read as a learner reads it.

Each page runs with every prediction question answered by the link (``reveal=1``: all
charts drawn; the session's shared run, :func:`tests.app.helpers.page_run`); each chart's
decoded spec is walked layer by layer (facets and nested layers included, a layer's
shared ``encoding`` merged into its marks):

- **tooltips**: every mark but text labels and bands has one; every entry has a title
  (Vega-Lite shows the raw field name, ``lo`` or ``var``, without one), in Chinese Chinese (or a symbol or a term on
  :data:`ZH_TERMS`); every quantitative entry has a d3 format of 3–4 significant figures
  or fixed decimals/percent with at most 4 decimals (:func:`format_problem`);
- **heatmaps** (a rect with x, y and a colour) draw no grid over their cells;
- **log axes** (base 10) are labelled by :func:`ui.common.axes.log_axis`: fixed ticks
  and one label format for the whole axis;
- **typography**: no ASCII math (``^``, ``d_k``, a subscript ``_i``/``_j``) in chart
  titles, axis and legend titles, legend and axis labels (the values of the encoded
  nominal fields), text marks, tooltip titles, or the page's widget labels and captions.
  URL parameters and option identifiers keep ``d_k`` (they are not labels).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.app.helpers import SCRIPTS, page_run
from tests.app.test_pinned_charts import decode_chart
from ui.common.axes import EXP_LABEL, PLAIN_LABEL

LANGS = ("en", "zh")

#: Marks that need no tooltip of their own: text labels (their numbers are in the
#: tooltip of the mark they label) and bands (the line through them carries theirs).
NO_TOOLTIP_MARKS = {"text", "area"}
#: Latin words a Chinese tooltip title may keep: the field's terms, units and operators.
ZH_TERMS = {"logit", "logits", "softmax", "LayerNorm", "QK", "nat", "nats", "NaN", "inf"}
ZH_TERMS |= {"ln", "log", "exp", "max", "min", "Var", "std"}
#: ASCII math a learner should not have to decode: a caret exponent, d_k written with an
#: underscore (dₖ), and a single-letter index subscript (qᵢ, kⱼ, Jᵢⱼ). Names like
#: n_keys and d_model, and subscripts Unicode lacks (σ_q, W_q, d_q) stay as written.
ASCII_MATH = re.compile(r"\^|\bd_k\b|_[ij]{1,2}\b")
_FORMAT = re.compile(r"^,?(?:\.(?P<p>\d+))?(?P<trim>~)?(?P<type>[defgr%])$")
_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
#: A symbol's name (n_keys, d_model): not a word to translate.
_SYMBOL = re.compile(r"\b[A-Za-z]+_[A-Za-z]+\b")


def format_problem(fmt: str | None) -> str | None:
    """Why a tooltip's d3 ``fmt`` is not a readable number format, or None if it is:
    ``d`` (whole numbers), 1–4 significant figures (``g``, ``r``, ``e``: precision 1–4,
    ``e`` counting the digit before the point), or at most 4 decimals (``f``, ``%``)."""
    if not fmt:
        return "no format"
    m = _FORMAT.match(fmt)
    if not m:
        return f"format {fmt!r} is not a number format"
    kind, p = m["type"], m["p"]
    if kind == "d":
        return None if p is None else f"format {fmt!r}: 'd' takes no precision"
    if p is None:
        return f"format {fmt!r} has no precision (6 significant figures)"
    digits = int(p) + (kind == "e")
    most = 4
    if kind in "f%":
        return None if int(p) <= most else f"format {fmt!r}: more than {most} decimals"
    return None if 1 <= digits <= most else f"format {fmt!r}: {digits} significant figures"


# --------------------------------------------------------------------------- walking specs
def marks(spec: dict, inherited: dict | None = None, data=None) -> list[dict]:
    """Every mark of ``spec`` as {"mark": type, "encoding": merged, "data": name}."""
    encoding = {**(inherited or {}), **spec.get("encoding", {})}
    data = spec.get("data", {}).get("name", data) if isinstance(spec.get("data"), dict) else data
    out = []
    if "mark" in spec:
        mark = spec["mark"]
        out.append(
            {"mark": mark if isinstance(mark, str) else mark["type"], "encoding": encoding}
            | {"data": data, "mark_def": mark if isinstance(mark, dict) else {}}
        )
    for key in ("layer", "concat", "hconcat", "vconcat"):
        for child in spec.get(key, []):
            out += marks(child, encoding, data)
    if "spec" in spec:  # a facet
        out += marks(spec["spec"], encoding, data)
    return out


def title_texts(title) -> list[str]:
    """The lines of a title in any of its forms (string, list, {"text", "subtitle"},
    an expression choosing between wrappings)."""
    if title is None:
        return []
    if isinstance(title, str):
        return [title]
    if isinstance(title, list):
        return [str(x) for x in title]
    if isinstance(title, dict):
        if "expr" in title:
            return [
                s for part in re.findall(r"\[[^\]]*\]", title["expr"]) for s in json.loads(part)
            ]
        return title_texts(title.get("text")) + title_texts(title.get("subtitle"))
    return []


def _tooltips(encoding: dict) -> list[dict]:
    tips = encoding.get("tooltip")
    if tips is None:
        return []
    return tips if isinstance(tips, list) else [tips]


def chart_texts(chart: dict) -> list[str]:
    """Every text a learner reads in ``chart`` (a :func:`decode_chart` result)."""
    spec, tables = chart["spec"], chart["datasets"]
    names = {f"<dataset {i}>": t["columns"] for i, t in enumerate(tables)}
    texts = title_texts(spec.get("title"))
    stack = [spec]
    while stack:  # every title of every layer and facet
        node = stack.pop()
        if isinstance(node, dict):
            if node is not spec and "title" in node and not isinstance(node.get("title"), bool):
                texts += title_texts(node["title"])
            stack += node.values()
        elif isinstance(node, list):
            stack += node
    for mark in marks(spec):
        columns = names.get(mark["data"], {})
        for channel, enc in mark["encoding"].items():
            if isinstance(enc, dict) and enc.get("type") in ("nominal", "ordinal"):
                values = columns.get(enc.get("field"), [])
                texts += [v for v in values if isinstance(v, str)]
            if channel == "text" and isinstance(enc, dict):
                texts += [v for v in columns.get(enc.get("field"), []) if isinstance(v, str)]
            if channel == "facet" or channel == "row":
                texts += [v for v in columns.get(enc.get("field"), []) if isinstance(v, str)]
    # a facet's header field
    for key in ("facet",):
        if key in spec:
            for enc in spec[key].values():
                if isinstance(enc, dict) and "field" in enc:
                    for cols in names.values():
                        texts += [v for v in cols.get(enc["field"], []) if isinstance(v, str)]
    return texts


def page(url_path: str, lang: str) -> tuple[list[dict], tuple[str, ...]]:
    """The decoded charts of a page (the session's shared run) and its widgets' labels and
    captions."""
    run = page_run(url_path, lang)
    assert not run.exceptions, run.exceptions
    return [decode_chart(proto)[0] for proto in run.charts], run.labels


CASES = [(p, lang) for p in SCRIPTS for lang in LANGS]


def _name(chart: dict) -> str:
    return " ".join(title_texts(chart["spec"].get("title")))[:60]


# --------------------------------------------------------------------------- the tests
@pytest.mark.parametrize(("url_path", "lang"), CASES)
def test_every_tooltip_is_titled_and_formatted(url_path, lang):
    charts, _ = page(url_path, lang)
    problems = []
    for i, chart in enumerate(charts):
        for mark in marks(chart["spec"]):
            where = f"chart {i} ({_name(chart)}), {mark['mark']}"
            tips = _tooltips(mark["encoding"])
            if mark["mark_def"].get("tooltip") not in (None, False):
                problems.append(f"{where}: a mark-level tooltip shows raw fields")
            if not tips and mark["mark"] not in NO_TOOLTIP_MARKS:
                problems.append(f"{where}: no tooltip")
            for tip in tips:
                field, title = tip.get("field"), tip.get("title")
                if not isinstance(title, str) or not title.strip():
                    problems.append(f"{where}: tooltip {field!r} has no title")
                    continue
                if tip.get("type") == "quantitative":
                    why = format_problem(tip.get("format"))
                    if why:
                        problems.append(f"{where}: tooltip {title!r}: {why}")
                if lang == "zh":
                    english = set(_LATIN_WORD.findall(_SYMBOL.sub("", title))) - ZH_TERMS
                    if english:
                        problems.append(f"{where}: tooltip title {title!r} is English")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("url_path", "lang"), CASES)
def test_heatmaps_draw_no_grid_over_their_cells(url_path, lang):
    charts, _ = page(url_path, lang)
    problems = []
    for i, chart in enumerate(charts):
        for mark in marks(chart["spec"]):
            enc = mark["encoding"]
            if mark["mark"] != "rect" or "x2" in enc or "y2" in enc:
                continue  # a histogram's bars
            for channel in ("x", "y"):
                axis = enc.get(channel, {}).get("axis") or {}
                if axis.get("grid") is not False:
                    problems.append(f"chart {i} ({_name(chart)}): {channel} axis draws a grid")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("url_path", "lang"), CASES)
def test_log_axes_label_in_one_format(url_path, lang):
    charts, _ = page(url_path, lang)
    problems = []
    for i, chart in enumerate(charts):
        found: dict[str, list[dict]] = {}
        for mark in marks(chart["spec"]):
            for channel in ("x", "y"):
                enc = mark["encoding"].get(channel)
                scale = (enc or {}).get("scale") or {}
                if scale.get("type") == "log" and scale.get("base", 10) == 10:
                    found.setdefault(channel, []).append(enc.get("axis") or {})
        for channel, axes in found.items():
            if not any(
                a.get("labelExpr") in (PLAIN_LABEL, EXP_LABEL) and a.get("values") for a in axes
            ):
                problems.append(f"chart {i} ({_name(chart)}): log {channel} axis not log_axis()")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("url_path", "lang"), CASES)
def test_no_ascii_math_in_chart_or_control_labels(url_path, lang):
    charts, labels = page(url_path, lang)
    problems = [f"control label {text!r}" for text in labels if ASCII_MATH.search(text)]
    for i, chart in enumerate(charts):
        texts = chart_texts(chart)
        for mark in marks(chart["spec"]):
            texts += [tip.get("title", "") for tip in _tooltips(mark["encoding"])]
            for enc in mark["encoding"].values():
                if isinstance(enc, dict) and isinstance(enc.get("title"), str):
                    texts.append(enc["title"])
        problems += [
            f"chart {i} ({_name(chart)}): {text!r}"
            for text in dict.fromkeys(texts)
            if ASCII_MATH.search(text)
        ]
    assert not problems, "\n".join(problems)


def test_the_checks_fire():
    """What each rule accepts and rejects."""
    assert format_problem(".4g") is None and format_problem(".3e") is None
    assert format_problem("d") is None and format_problem(".1%") is None
    assert format_problem(".2f") is None and format_problem(".3~g") is None
    assert format_problem(None) == "no format"
    assert "6 significant" in format_problem("~g")
    assert "more than 4 decimals" in format_problem(".7f")
    assert "5 significant" in format_problem(".4e")
    assert ASCII_MATH.search("d_k^−α") and ASCII_MATH.search("e^(−g_j)")
    assert ASCII_MATH.search("q_i·k_i") and ASCII_MATH.search("J_ij")
    assert ASCII_MATH.search("d_k (log scale)")
    for fine in ("dₖ⁻ᵅ", "‖J‖_F", "n_keys", "d_model", "σ_q", "d_kv", "qᵢ·kᵢ", "sqrt_d_k"):
        assert not ASCII_MATH.search(fine), fine
    spec = {
        "layer": [
            {"mark": "line", "encoding": {"x": {"field": "d"}}},
            {"layer": [{"mark": {"type": "text"}}], "encoding": {"y": {"field": "v"}}},
        ],
        "encoding": {"color": {"field": "s"}},
    }
    found = marks(spec)
    assert [m["mark"] for m in found] == ["line", "text"]
    assert set(found[1]["encoding"]) == {"color", "y"}
    title = {"text": {"expr": 'width >= 300 ? ["a b"] : ["a", "b"]'}, "subtitle": ["c"]}
    assert title_texts(title) == ["a b", "a", "b", "c"]
