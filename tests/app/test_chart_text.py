"""Every chart of every page, in both languages, read as a learner reads it.

Each page runs with every prediction question answered by the link (``reveal=1``: all
charts drawn; the session's shared runs, :func:`tests.app.helpers.page_run`), in every
state of :data:`STATES`: the defaults, then one factor changed at a time (each α preset,
each optimizer, each variant a toggle or a choice draws), and presenter mode at its last
step. Each chart's decoded spec is walked layer by layer (facets and nested layers
included, a layer's shared ``encoding`` merged into its marks):

- **tooltips**, read as Streamlit sends the spec: its chart theme gives every mark that
  sets no tooltip of its own an encoding tooltip (``mark.tooltip: {content: "encoding"}``),
  which shows raw field names and unformatted numbers. So every mark either has a tooltip
  or switches it off (``mark_area(tooltip=False)``, or ``"tooltip": null`` in its
  encoding); every tooltip entry has a title, in Chinese on a Chinese page (or a symbol or
  a term on :data:`ZH_TERMS`); every quantitative entry has a d3 format of 3–4 significant
  figures or fixed decimals/percent with at most 4 decimals (:func:`format_problem`); and
  a band or an interval (an area or a rule from ``y`` to ``y2``, or ``x`` to ``x2``) has
  both its edges, titled, in a tooltip of its chart (its own, or the line's through it);
- **heatmaps** (a rect with x, y and a colour) draw no grid over their cells;
- **log axes** (base 10) are labelled by :func:`ui.common.axes.log_axis`: fixed ticks
  and one label format for the whole axis;
- **typography**: no ASCII math (``^``, ``d_k``, a subscript ``_i``/``_j``) in chart
  titles, axis and legend titles, legend and axis labels (the values of the encoded
  nominal fields), text marks, tooltip titles, or the page's widget labels and captions.
  URL parameters and option identifiers keep ``d_k`` (they are not labels).
"""

from __future__ import annotations

import functools
import json
import re

import pytest

from core.real_models import DIVISORS as RM_DIVISORS
from core.theory import DISTRIBUTIONS
from core.training import OPTIMIZERS
from core.which_d import DIVISORS_SELF
from core.which_d import INITS as WHICH_D_INITS
from tests.app.helpers import SCRIPTS, page_run
from tests.app.test_pinned_charts import decode_chart
from ui.common.axes import EXP_LABEL, PLAIN_LABEL
from ui.common.controls import ALPHA_PRESETS

LANGS = ("en", "zh")

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


def page(url_path: str, lang: str, **params: str) -> tuple[list[dict], tuple[str, ...]]:
    """The decoded charts of a page (the session's shared run) and its widgets' labels and
    captions."""
    run = page_run(url_path, lang, **params)
    assert not run.exceptions, run.exceptions
    return [decode_chart(proto)[0] for proto in run.charts], run.labels


#: One factor changed at a time from the defaults: each α preset, each optimizer, each
#: variant a toggle or a choice of what is drawn (not a number a control only moves).
VARIANTS: dict[str, list[dict[str, str]]] = {
    "home": [{"example_d_k": "1024"}, {"example_step": "weights"}],
    "variance": [{"dist": d} for d in DISTRIBUTIONS if d != "normal"] + [{"hist_axes": "own"}],
    "saturation": [{"alpha": f"{a:g}"} for a in ALPHA_PRESETS if a != 0.5],
    "gradients": [{"alpha": f"{a:g}"} for a in ALPHA_PRESETS if a != 0.5] + [{"gap2": "4"}],
    "sqrt-vs-d": [{"alpha": f"{a:g}"} for a in ALPHA_PRESETS],
    "training": [{"optimizer": o} for o in OPTIMIZERS if o != "adam"]
    + [{"folded": "true"}, {"qk_norm": "true"}, {"m": "2"}, {"m": "4"}],
    "which-d": [{"head_divisor": d} for d in DIVISORS_SELF if d != "d_k"]
    + [{"w_init": i} for i in WHICH_D_INITS if i != "fan_in"],
    "real-models": [{"divide_by": d} for d in RM_DIVISORS if d != "sqrt_d_k"],
}


@functools.cache
def presenter(url_path: str) -> dict[str, str]:
    """Presenter mode at the page's last step (every section shown)."""
    steps = page_run(url_path, "en", present="1").steps
    return {"present": "1"} | ({"step": str(steps)} if steps else {})


def state(url_path: str, params: dict[str, str] | str) -> dict[str, str]:
    """The query parameters of a state of :data:`STATES`."""
    return presenter(url_path) if params == "present" else params


def _state_id(url_path: str, lang: str, params: dict[str, str] | str) -> str:
    if isinstance(params, str):
        return f"{url_path}-{lang}-{params}"
    return "-".join([url_path, lang] + [f"{k}={v}" for k, v in params.items()])


#: Every state of every page the tooltip check walks, in both languages: the defaults,
#: each variant, and presenter mode ("present", resolved when the test runs).
STATES = [
    pytest.param(url_path, lang, params, id=_state_id(url_path, lang, params))
    for url_path in SCRIPTS
    for params in [{}, *VARIANTS.get(url_path, []), "present"]
    for lang in LANGS
]


def _name(chart: dict) -> str:
    return " ".join(title_texts(chart["spec"].get("title")))[:60]


#: What Streamlit's chart theme (``theme="streamlit"``, the default) sets as every mark's
#: tooltip: an encoding tooltip, unless the spec's own config or the mark says otherwise.
STREAMLIT_MARK_TOOLTIP = {"content": "encoding"}
_UNSET = object()


def mark_tooltip(mark: dict, spec: dict, theme: str) -> list[dict] | str | None:
    """What ``mark`` shows on hover, as Vega-Lite compiles it with Streamlit's theme: its
    encoding's tooltip entries (a list), None (tooltips off), or the reason it shows raw
    fields (a string)."""
    tips = mark["encoding"].get("tooltip", _UNSET)
    if tips is None:  # encoding.tooltip: null switches the mark's tooltip off
        return None
    if tips is not _UNSET:
        return tips if isinstance(tips, list) else [tips]
    theme_tip = STREAMLIT_MARK_TOOLTIP if theme == "streamlit" else None
    config = spec.get("config", {})
    default = config.get(mark["mark"], {}).get("tooltip", config.get("mark", {}).get("tooltip"))
    own = mark["mark_def"].get("tooltip", _UNSET)
    tip = own if own is not _UNSET else (default if default is not None else theme_tip)
    if tip in (None, False):
        return None
    if tip is True or (isinstance(tip, dict) and tip.get("content") == "encoding"):
        return "an encoding tooltip (every encoded field, raw names, raw numbers)"
    if isinstance(tip, dict):
        return "a data tooltip (every field of the row, raw names)"
    return None if isinstance(tip, str) else f"tooltip {tip!r}"


#: Marks that draw a band or an interval between two fields (an error band, an error bar
#: drawn as a rule): a learner reads both edges. A rect's or a bar's x2/y2 are the extent
#: of a heatmap cell or a histogram bin, which its tooltip names by its centre or label.
BAND_MARKS = {"area", "rule", "errorband", "errorbar"}


def _edges(mark: dict) -> list[tuple[str, str]]:
    """The field pairs of a band or interval: (y, y2), (x, x2) with both fields."""
    if mark["mark"] not in BAND_MARKS:
        return []
    encoding, out = mark["encoding"], []
    for one, two in (("x", "x2"), ("y", "y2")):
        a, b = encoding.get(one), encoding.get(two)
        if isinstance(a, dict) and isinstance(b, dict) and a.get("field") and b.get("field"):
            out.append((a["field"], b["field"]))
    return out


def tooltip_problems(chart: dict, lang: str, theme: str) -> list[str]:
    """Why the tooltips of ``chart`` (decoded) do not read well, one line each."""
    spec, problems = chart["spec"], []
    found = [(m, mark_tooltip(m, spec, theme)) for m in marks(spec)]
    titled = {
        tip.get("field")
        for _, tips in found
        if isinstance(tips, list)
        for tip in tips
        if isinstance(tip.get("title"), str) and tip["title"].strip()
    }
    for j, (mark, tips) in enumerate(found):
        where = f"layer {j}, {mark['mark']}"
        if isinstance(tips, str):
            problems.append(f"{where}: sets no tooltip, so it shows {tips}")
            continue
        for a, b in _edges(mark):
            missing = [f for f in (a, b) if f not in titled]
            if missing:
                problems.append(f"{where}: band edge(s) {missing} in no titled tooltip")
        for tip in tips or []:
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
    return problems


# --------------------------------------------------------------------------- the tests
@pytest.mark.parametrize(("url_path", "lang", "params"), STATES)
def test_every_tooltip_is_titled_and_formatted(url_path, lang, params):
    params = state(url_path, params)
    run = page_run(url_path, lang, **params)
    assert not run.exceptions, run.exceptions
    assert not run.warnings, f"the state {params} is not one the page takes: {run.warnings}"
    problems = []
    for i, proto in enumerate(run.charts):
        chart = decode_chart(proto)[0]
        problems += [
            f"chart {i} ({_name(chart)}), {problem}"
            for problem in tooltip_problems(chart, lang, proto.theme)
        ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("url_path", "lang", "params"), STATES)
def test_every_dataset_sent_is_named_by_its_chart(url_path, lang, params):
    """The browser refuses a dataset its chart does not name: a swap of data in place
    (``swap_data``, the d_k marker) would then stop at it and draw nothing new."""
    run = page_run(url_path, lang, **state(url_path, params))
    problems = [
        f"chart {i}: dataset {ds.name} is not in its spec"
        for i, proto in enumerate(run.charts)
        for ds in proto.datasets
        if json.dumps(ds.name) not in proto.spec
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("url_path", "lang", "params"), STATES)
def test_heatmaps_draw_no_grid_over_their_cells(url_path, lang, params):
    charts, _ = page(url_path, lang, **state(url_path, params))
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


@pytest.mark.parametrize(("url_path", "lang", "params"), STATES)
def test_log_axes_label_in_one_format(url_path, lang, params):
    charts, _ = page(url_path, lang, **state(url_path, params))
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


@pytest.mark.parametrize(("url_path", "lang", "params"), STATES)
def test_no_ascii_math_in_chart_or_control_labels(url_path, lang, params):
    charts, labels = page(url_path, lang, **state(url_path, params))
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


def test_the_tooltip_rules_fire():
    """A mark without a tooltip of its own shows Streamlit's encoding tooltip; one that
    switches it off shows none; a band needs both edges in a titled tooltip."""
    area = {"mark": {"type": "area"}, "encoding": {"y": {"field": "lo"}, "y2": {"field": "hi"}}}
    line = {"mark": "line", "encoding": {"y": {"field": "value"}}}
    tip = {"field": "value", "type": "quantitative", "title": "mean", "format": ".3g"}
    line["encoding"]["tooltip"] = [tip]

    def problems(*layers, theme="streamlit"):
        return tooltip_problems({"spec": {"layer": list(layers)}, "datasets": []}, "en", theme)

    assert mark_tooltip(marks(area)[0], area, "streamlit").startswith("an encoding tooltip")
    assert mark_tooltip(marks(area)[0], area, "") is None  # no theme: no tooltip
    off = {**area, "mark": {"type": "area", "tooltip": False}}
    assert mark_tooltip(marks(off)[0], off, "streamlit") is None
    null = {**area, "encoding": {**area["encoding"], "tooltip": None}}
    assert mark_tooltip(marks(null)[0], null, "streamlit") is None
    assert problems(line) == []
    assert "sets no tooltip" in problems(area, line)[0]
    assert problems(off, line) == ["layer 0, area: band edge(s) ['lo', 'hi'] in no titled tooltip"]
    edges = [
        {"field": f, "type": "quantitative", "title": f, "format": ".3g"} for f in ("lo", "hi")
    ]
    line_with_edges = {**line, "encoding": {**line["encoding"], "tooltip": [tip, *edges]}}
    assert problems(off, line_with_edges) == []
    untitled = {**line, "encoding": {**line["encoding"], "tooltip": [{"field": "g"}]}}
    assert problems(untitled) == ["layer 0, line: tooltip 'g' has no title"]
    raw = {**line, "encoding": {**line["encoding"], "tooltip": [{**tip, "format": None}]}}
    assert problems(raw) == ["layer 0, line: tooltip 'mean': no format"]
