"""A Chinese page has no English prose: every text of every page, charts included.

Each page runs in Chinese as a learner meets it (the prediction questions open, then
answered) with the share panel open. Every text it sends is collected
(:func:`page_texts`): markdown, captions, alerts, headings, widget labels, options,
captions and help, button labels and help, expander labels, metrics, table and data-frame
cells; and from every chart's decoded Vega-Lite spec (:func:`chart_texts`) its title and
subtitle, alt text, axis and legend titles (a field's name where it has none: Vega-Lite
shows it), tooltip titles (the field's name where it has none), and the values a chart
shows as text (axis labels of a category field, legend entries, text marks, tooltips).

:func:`tests.english_words.english_words` then finds the English words among them:
names, symbols and code stay as written, and a short reviewed list of terms is allowed
(see that module). Left out on purpose:

- the language selector, which names each language in its own script (English, 中文);
- on real-models, the model's inputs, which are English sentences and their tokens (the
  model reads English): a sentence of the corpus or of the text box's examples is taken
  out of any text that quotes it, and a text equal to a token is not checked;
- code panels and the share link (code and a URL), and formulas drawn with ``st.latex``
  (only their ``\\text{…}`` is text).
"""

from __future__ import annotations

import functools
import html
import json
import re

import pyarrow as pa
import pytest

from tests.app.helpers import open_share_panel, picture_svg, reveal_all, run_page
from tests.english_words import english_words
from ui.common.pages import PAGES

SCRIPTS = {p.url_path or "home": p.script for p in PAGES}

#: Element types whose ``value`` is text shown as it is (markdown is rendered, not shown
#: as source, but its words are the same).
_TEXT = ("markdown", "caption", "title", "header", "subheader", "info", "warning", "success",
         "error", "toast")  # fmt: skip
#: Proto fields of widgets, buttons, links and blocks that a learner reads.
_FIELDS = ("label", "help", "placeholder")
_LISTS = ("options", "captions")
#: Encoding channels whose title Vega-Lite draws (an axis, a legend or a header).
_TITLED = ("x", "y", "color", "fill", "stroke", "shape", "size", "opacity", "strokeDash",
           "row", "column", "facet")  # fmt: skip
_POSITION = ("x", "y", "row", "column", "facet")
_LEGEND = ("color", "fill", "stroke", "shape", "size", "opacity", "strokeDash")


def _literals(expr: str) -> list[str]:
    """The string literals of a Vega expression (what a label or calculate may show)."""
    return [a or b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", expr)]


def _title_texts(title) -> list[str]:
    if isinstance(title, str):
        return [title]
    if isinstance(title, list):
        return [x for x in title if isinstance(x, str)]
    if isinstance(title, dict):
        if "expr" in title:  # a title that depends on the width: every text it can show
            return _literals(title["expr"])
        return _title_texts(title.get("text")) + _title_texts(title.get("subtitle"))
    return []


def chart_texts(spec: dict, columns: dict[str, list]) -> list[str]:
    """Every text one chart shows: ``spec`` is its decoded Vega-Lite spec, ``columns``
    the values of each column in its datasets (by column name)."""
    out: list[str] = []
    explicit: set[str] = set()  # channels with a title somewhere in the chart

    def has_title(enc: dict, channel: str) -> bool:
        guide = enc.get("axis" if channel in _POSITION[:2] else "legend") or {}
        header = enc.get("header") or {}
        return "title" in enc or "title" in guide or "title" in header

    def scan_titles(node) -> None:
        if isinstance(node, dict):
            for channel, enc in (node.get("encoding") or {}).items():
                if isinstance(enc, dict) and has_title(enc, channel):
                    explicit.add(channel)
            for value in node.values():
                scan_titles(value)
        elif isinstance(node, list):
            for item in node:
                scan_titles(item)

    def values(enc: dict) -> list[str]:
        return [v for v in columns.get(enc.get("field"), []) if isinstance(v, str)]

    def encoding(channel: str, enc: dict) -> None:
        guide_key = (
            "axis" if channel in ("x", "y") else "header" if channel in _POSITION else "legend"
        )
        guide = enc.get(guide_key, {})
        shown = guide is not None and not (channel in _LEGEND and enc.get("scale", {}) is None)
        if channel == "tooltip":
            out.append(enc["title"] if "title" in enc else enc.get("field", ""))
            out.extend(values(enc))
            return
        if channel == "text":
            out.extend(values(enc))
            out.extend(_title_texts(enc.get("value")))
            return
        if channel not in _TITLED or not shown:
            return
        if "title" in enc:
            out.extend(_title_texts(enc["title"]))
        elif isinstance(guide, dict) and "title" in guide:
            out.extend(_title_texts(guide["title"]))
        elif enc.get("field") and channel not in explicit:
            out.append(enc["field"])  # Vega-Lite's default title: the field's name
        if isinstance(guide, dict) and "labelExpr" in guide:
            out.extend(_literals(guide["labelExpr"]))
        categorical = enc.get("type") in ("nominal", "ordinal")
        if categorical and "labelExpr" not in (guide or {}):
            out.extend(values(enc))

    def walk(node) -> None:
        if isinstance(node, dict):
            for key in ("title", "description"):
                if key in node:
                    out.extend(_title_texts(node[key]))
            for channel, enc in (node.get("encoding") or {}).items():
                for item in enc if isinstance(enc, list) else [enc]:
                    if isinstance(item, dict):
                        encoding("tooltip" if channel == "tooltip" else channel, item)
                        condition = item.get("condition")
                        if channel == "text" and isinstance(condition, dict):
                            encoding("text", condition)
            for step in node.get("transform") or []:
                if "calculate" in step:
                    out.extend(_literals(step["calculate"]))
            for key, value in node.items():
                if key not in ("encoding", "datasets", "data"):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    scan_titles(spec)
    walk(spec)
    return [s for s in out if s]


def _columns(proto) -> dict[str, list]:
    columns: dict[str, list] = {}
    for ds in proto.datasets:
        for name, vals in pa.ipc.open_stream(ds.data.data).read_all().to_pydict().items():
            columns.setdefault(name, []).extend(vals)
    return columns


def _latex_text(body: str) -> list[str]:
    """The words of a formula: its ``\\text{…}`` outside sub- and superscripts (operator
    names such as ``\\mathrm{Var}`` and indices such as ``d_\\text{model}`` are symbols)."""
    return re.findall(r"(?<![_^])\\text\{([^}]*)\}", body)


def page_texts(at) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(texts outside charts, texts of charts) of a page run, each as (where, text)."""
    page, chart = [], []
    n_charts = 0
    for node in at:
        kind = node.type
        proto = getattr(node, "proto", None)
        markup = picture_svg(node) or (
            node.value if kind == "markdown" and node.value.startswith("<") else None
        )
        if markup is not None:  # a picture or markup: its words
            page.extend(("markup", html.unescape(w)) for w in re.findall(r">([^<>]+)<", markup))
            page.extend(("markup", html.unescape(w)) for w in re.findall(r">([^<>]+)$", markup))
        elif kind in _TEXT:
            page.append((kind, node.value))
        elif kind == "latex":
            page.extend(("latex", s) for s in _latex_text(node.value))
        elif kind == "vega_lite_chart":
            spec = json.loads(proto.spec)
            n_charts += 1
            chart.extend((f"chart {n_charts}", s) for s in chart_texts(spec, _columns(proto)))
        elif kind in ("table", "dataframe"):
            frame = node.value
            cells = [*map(str, frame.columns), *map(str, frame.index)]
            cells += [str(v) for v in frame.to_numpy().ravel()]
            page.extend((kind, s) for s in cells)
        elif kind == "metric":
            page.extend(("metric", s) for s in (proto.label, proto.body, proto.delta, proto.help))
        elif kind in ("code", "html") or proto is None:
            continue  # code panels, the share link, style sheets; blocks without a proto
        elif getattr(node, "key", None) == "lang":
            continue  # the language selector names each language in its own script
        else:
            for field in _FIELDS:
                value = getattr(proto, field, None)
                if isinstance(value, str) and value:
                    page.append((f"{kind} {field}", value))
            for field in _LISTS:
                if hasattr(proto, field) and not isinstance(getattr(proto, field), str):
                    # a segmented control's options are messages with their text in content
                    page.extend(
                        (f"{kind} {field}", getattr(s, "content", s)) for s in getattr(proto, field)
                    )
    return [p for p in page if p[1]], [c for c in chart if c[1]]


@functools.cache
def _model_inputs() -> tuple[tuple[str, ...], frozenset[str]]:
    """The real-models inputs: the corpus's sentences and the text box's examples (without
    their final full stop), longest first, and the corpus's tokens."""
    from ui.real_models import data, sentence

    corpus = data.corpus()
    inputs = {*corpus.sentences, *sentence.EXAMPLES}
    sentences = sorted({s.rstrip(".") for s in inputs}, key=len, reverse=True)
    return tuple(sentences), frozenset(tok for toks in corpus.tokens for tok in toks)


def _without_inputs(text: str) -> str:
    """``text`` without the model's inputs: a token shown alone, or a sentence anywhere
    in it (the sentence box's options, a chart title that quotes the sentence)."""
    sentences, tokens = _model_inputs()
    if text in tokens:
        return ""
    for sentence in sentences:
        text = text.replace(sentence, " ")
    return text


@functools.cache
def zh_page(page: str) -> tuple[tuple, tuple]:
    """The texts of ``page`` in Chinese: its questions before they are answered, then the
    whole page with every answer shown and the share panel open."""
    at = run_page(SCRIPTS[page], reveal=False, lang="zh")
    assert not at.exception, at.exception
    first = page_texts(at)
    open_share_panel(reveal_all(at))
    assert not at.exception, at.exception
    second = page_texts(at)
    return tuple(first[0] + second[0]), tuple(first[1] + second[1])


def _english(texts) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for where, text in texts:
        words = english_words(_without_inputs(text))
        if words:
            found.setdefault(" ".join(dict.fromkeys(words)), []).append(f"{where}: {text[:90]!r}")
    return found


@pytest.mark.parametrize("page", list(SCRIPTS))
def test_chinese_page_has_no_english_prose(page):
    texts, _ = zh_page(page)
    assert len(texts) > 10  # the collection works: a page has more than a title
    assert not _english(texts), _english(texts)


@pytest.mark.parametrize("page", list(SCRIPTS))
def test_chinese_charts_have_no_english(page):
    _, texts = zh_page(page)
    assert not _english(texts), _english(texts)


def test_the_collection_sees_every_kind_of_text():
    """A run's texts include widget options and help, table cells, metrics, and a chart's
    axis titles, tooltip titles and the category values it shows."""
    texts, _ = zh_page("variance")
    kinds = {where.split()[0] for where, _ in texts}
    assert {"markdown", "caption", "radio", "number_input", "button", "metric"} <= kinds
    assert ("radio options", "均匀") in texts  # the distribution's name, translated
    spec = {
        "title": {"text": "T", "subtitle": "S"},
        "layer": [
            {
                "mark": "line",
                "encoding": {
                    "x": {"field": "d", "type": "quantitative", "title": "X"},
                    "y": {"field": "v", "type": "quantitative"},
                    "color": {"field": "series", "type": "nominal", "legend": {"title": None}},
                    "tooltip": [
                        {"field": "lo", "type": "quantitative"},
                        {"field": "v", "title": "V"},
                    ],
                },
            },
            {
                "mark": "rule",
                "encoding": {"y": {"field": "w", "type": "quantitative", "title": "Y"}},
            },
        ],
    }
    got = chart_texts(spec, {"series": ["a b", "c"], "v": [1.0]})
    # y has a title in another layer: Vega-Lite merges the layers' axes and shows "Y"
    assert sorted(got) == sorted(["T", "S", "X", "Y", "lo", "V", "a b", "c"])


def test_the_check_fires_on_an_english_page():
    """The same collection and check on the English variance page find plenty of English
    (so a pass in Chinese means something)."""
    at = run_page(SCRIPTS["variance"], lang="en")
    texts, _ = page_texts(at)
    assert len(_english(texts)) > 30
