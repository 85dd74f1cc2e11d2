"""Every page's charts at default settings, pinned: spec and data, value by value.

A refactor of the UI layer must not change what a user sees for the same URL. Each chart
Streamlit sends is decoded into its Vega-Lite spec and its datasets (Arrow, decoded to
values), and compared with the page's pin file, ``pins/<url path>.json`` (``home.json``
for the home page), which holds its charts in both languages:

- the spec's structure exactly: every key, encoding, string and list length;
- every number, in the spec (e.g. a computed colour domain) and in the data, within
  ``|got − pinned| ≤ max(RTOL · |pinned|, ATOL)``;
- values, not Arrow column types: 3 and 3.0 are equal, "3" and 3 are not, and a bool
  equals only a bool;
- dataset names do not matter: each is replaced by ``<dataset N>``, N counting the
  datasets in order of first appearance in the spec (walked in sorted-key order, so the
  order the spec's keys are written in does not matter either), then those the spec
  does not name.

Tolerances. The charts are deterministic given the seed; what differs between machines
is the rounding of the last bit: NumPy dispatches other SIMD kernels for ``exp``,
``log``, ``sqrt`` and sums per CPU (AVX-512, AVX2, baseline), and OpenBLAS picks its own
kernels, so a value differs by a few ULPs after one function and by up to ~n·2⁻⁵³ after
a reduction over n terms. Measured on this app (2026-12-02), every chart of every page
in both languages under the machine's default (AVX-512, OpenBLAS SkylakeX kernels),
``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"`` (AVX2) and
``NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR"
OPENBLAS_CORETYPE=Sandybridge`` (baseline kernels, another BLAS): up to 2,794 of the
~68,000 pinned numbers differ, by at most 2.0e-11 relative (sqrt-vs-d's saturated-share
s.e. and variance's exact density tail); strings, counts and list lengths never differ.

- ``RTOL = 1e-9``: 50× the largest difference measured, and ~10⁷ ULPs — room for a
  CPU with other kernels again (the Apple/ARM builds), and still far below anything a
  chart can show (a pixel is ~1e-3 of an axis; tooltips print ≤ 4 significant digits).
- ``ATOL = 1e-12``, the floor for values near zero: a quantity that comes out near zero
  by cancellation (an entropy of a nearly one-hot row, a difference of two sums) has an
  absolute rounding error of a few ULPs of its operands, not a relative one, and the
  largest operands these pages use are O(10³) (logit variances up to d_k = 4096):
  10³·2⁻⁵² ≈ 2e-13. The price: the ~0.6 % of pinned values whose magnitude is below
  1e-12 (far tails of log-scale axes: sqrt-vs-d's saturated share, gradients' ‖J‖ lows)
  are checked only to stay below 1e-12. (Measured, those tails differ by at most
  2.7e-19 in absolute terms between the three settings.)
- float32 columns (the training curves and probe weights) are float64 results rounded to
  24 bits: a last-bit difference before the rounding can move the float32 value by one
  of its own ULPs, so they get ``FLOAT32_RTOL = 2⁻²³``.

A pin file holds numbers rounded to 12 significant digits (≤ 5e-13 relative, far inside
RTOL) and lists of scalars on one line each, so that a re-pin's diff names the columns that
changed; a Chinese chart's column equal to the English one is written once. The page runs
are the session's shared ones (:func:`tests.app.helpers.page_run`), which the chart-text
and text suites read too. After an intended change to a chart, re-pin the pages concerned
with ``python tests/app/test_pinned_charts.py <page> [<page> ...]`` (``<page>`` is the
url path, ``home`` for the home page; no argument re-pins all and removes the pin files
of pages the registry no longer has) and review the diff. A
failure names the first differing item, e.g. ``chart 3: spec.layer[1].encoding.x.title:
'a' != 'b'`` or ``chart 0: datasets[2].columns.p[17]: 0.123 vs pinned 0.124 (rel
8.1e-03)``.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from pathlib import Path

import pyarrow as pa
import pytest

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from tests.app.helpers import SCRIPTS, page_run  # noqa: E402

#: One pin file per page: ``<url path>.json``, ``home.json`` for the home page.
PINS = Path(__file__).with_name("pins")
#: Pages by url path ("home" for ""), from the registry.
PAGES = tuple(SCRIPTS)
LANGS = ("en", "zh")

RTOL = 1e-9
ATOL = 1e-12
FLOAT32_RTOL = 2.0**-23
#: Significant digits of the numbers in the pin files.
DIGITS = 12
_LOW_PRECISION = {pa.float32(): FLOAT32_RTOL, pa.float16(): 2.0**-10}


# --------------------------------------------------------------------------- decoding
def _value(x):
    """A decoded scalar: non-finite floats as a tagged object (JSON has no NaN)."""
    if isinstance(x, float) and not math.isfinite(x):
        return {"float": repr(x)}  # 'nan', 'inf', '-inf'
    return x


def _table(data: bytes) -> tuple[dict, dict[str, float]]:
    """An Arrow IPC stream as {"columns": {name: values}} and the rtol of each column
    stored at less than float64 precision."""
    table = pa.ipc.open_stream(data).read_all()
    columns = {name: [_value(x) for x in values] for name, values in table.to_pydict().items()}
    rtols = {f.name: _LOW_PRECISION[f.type] for f in table.schema if f.type in _LOW_PRECISION}
    return {"columns": columns}, rtols


def _dataset_order(spec, names: set[str], order: list[str]) -> None:
    """Dataset names in order of first appearance in ``spec`` (sorted-key walk)."""
    if isinstance(spec, dict):
        for key in sorted(spec):
            _dataset_order(spec[key], names, order)
    elif isinstance(spec, list):
        for item in spec:
            _dataset_order(item, names, order)
    elif isinstance(spec, str) and spec in names and spec not in order:
        order.append(spec)


def _renamed(spec, placeholder: dict[str, str]):
    if isinstance(spec, dict):
        return {key: _renamed(value, placeholder) for key, value in spec.items()}
    if isinstance(spec, list):
        return [_renamed(item, placeholder) for item in spec]
    if isinstance(spec, str):
        return placeholder.get(spec, spec)
    return _value(spec)


def decode_chart(proto) -> tuple[dict, list[dict[str, float]]]:
    """One chart as {"spec": …, "datasets": [{"columns": …}, …]} (plus "data" if the
    element carries unnamed data), dataset names replaced by ``<dataset N>``; and per
    dataset the rtol of its low-precision columns."""
    spec = json.loads(proto.spec)
    tables = {ds.name: _table(ds.data.data) for ds in proto.datasets}
    order: list[str] = []
    _dataset_order(spec, set(tables), order)
    order += [name for name in tables if name not in order]
    placeholder = {name: f"<dataset {i}>" for i, name in enumerate(order)}
    chart = {"spec": _renamed(spec, placeholder), "datasets": [tables[n][0] for n in order]}
    rtols = [tables[n][1] for n in order]
    if proto.data.data:
        table, data_rtols = _table(proto.data.data)
        chart["data"] = table
        rtols.append(data_rtols)
    return chart, rtols


def canonical_chart(proto) -> dict:
    """:func:`decode_chart`'s chart alone (for comparisons within one process)."""
    return decode_chart(proto)[0]


def page_charts(page: str, lang: str) -> list[tuple[dict, list[dict[str, float]]]]:
    """Every chart on ``page`` in ``lang`` at default settings, decoded, in order."""
    run = page_run(page, lang)
    assert not run.exceptions, run.exceptions
    return [decode_chart(proto) for proto in run.charts]


# --------------------------------------------------------------------------- comparing
def _is_number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "…"


def _kind(x) -> str:
    return "number" if _is_number(x) else type(x).__name__


def first_difference(got, want, path: str, rtol: float = RTOL) -> str | None:
    """The first item where ``got`` differs from the pinned ``want`` (keys sorted, lists
    in order), as ``path: got … pinned``; None if they agree."""
    if _is_number(got) and _is_number(want):
        if abs(got - want) <= max(rtol * abs(want), ATOL):
            return None
        rel = abs(got - want) / abs(want) if want else math.inf
        return f"{path}: {got!r} vs pinned {want!r} (rel {rel:.1e})"
    if _kind(got) != _kind(want):
        return f"{path}: {_short(got)} ({_kind(got)}) vs pinned {_short(want)} ({_kind(want)})"
    if isinstance(want, dict):
        if set(got) != set(want):
            extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
            return f"{path}: keys {extra} not pinned, pinned keys {missing} missing"
        for key in sorted(want):
            diff = first_difference(got[key], want[key], f"{path}.{key}", rtol)
            if diff:
                return diff
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} items vs pinned {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            diff = first_difference(g, w, f"{path}[{i}]", rtol)
            if diff:
                return diff
        return None
    return None if got == want else f"{path}: {_short(got)} != pinned {_short(want)}"


def _tables(chart: dict) -> list[tuple[str, dict]]:
    out = [(f"datasets[{i}]", table) for i, table in enumerate(chart["datasets"])]
    return out + ([("data", chart["data"])] if "data" in chart else [])


def chart_difference(got: dict, rtols: list[dict[str, float]], want: dict) -> str | None:
    """The first difference between a decoded chart (with :func:`decode_chart`'s
    ``rtols``) and its pinned form, or None."""
    diff = first_difference(got["spec"], want["spec"], "spec")
    if diff:
        return diff
    tables, pinned = _tables(got), _tables(want)
    if [w for w, _ in tables] != [w for w, _ in pinned]:
        return f"datasets: {[w for w, _ in tables]} vs pinned {[w for w, _ in pinned]}"
    for (where, table), (_, pin), low in zip(tables, pinned, rtols, strict=True):
        cols, pcols = table["columns"], pin["columns"]
        diff = first_difference(sorted(cols), sorted(pcols), f"{where}.columns (names)")
        if diff:
            return diff
        for col in sorted(pcols):
            rtol = max(RTOL, low.get(col, RTOL))
            diff = first_difference(cols[col], pcols[col], f"{where}.columns.{col}", rtol)
            if diff:
                return diff
    return None


# --------------------------------------------------------------------------- the pin files
def rounded(x):
    """``x`` with every float rounded to ``DIGITS`` significant digits."""
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v) for v in x]
    if isinstance(x, float):
        return float(f"{x:.{DIGITS}g}")
    return x


def dumps(x, indent: int = 0) -> str:
    """JSON with keys sorted, containers indented one space a level, and each list of
    scalars on one line."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(x, dict) and x:
        items = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {dumps(x[k], indent + 1)}"
            for k in sorted(x)
        ]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(x, list) and any(isinstance(v, dict | list) and v for v in x):
        items = [inner + dumps(v, indent + 1) for v in x]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(x, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


#: A zh chart's column equal to the same column of the en chart is written as this string
#: (a column is otherwise a list): the numbers are pinned, and reviewed, once.
SAME_AS_EN = "same as en"


def _shared_columns(pins: dict, expand: bool) -> dict:
    """A page's ``pins`` ({lang: charts}) with each zh column that equals its en column
    written as :data:`SAME_AS_EN` (``expand=False``), or with those expanded back
    (``expand=True``)."""
    en, zh = pins.get("en", []), pins.get("zh", [])
    if len(en) != len(zh):
        return pins
    shared = []
    for chart, ref in zip(zh, en, strict=True):
        chart = {**chart, "datasets": [dict(t) for t in chart["datasets"]]}
        for table, ref_table in zip(chart["datasets"], ref["datasets"], strict=False):
            columns, ref_columns = table["columns"], ref_table["columns"]
            table["columns"] = {
                name: _column(values, ref_columns.get(name), expand)
                for name, values in columns.items()
            }
        shared.append(chart)
    return {**pins, "zh": shared}


def _column(values, ref, expand: bool):
    if expand:
        return ref if values == SAME_AS_EN else values
    return SAME_AS_EN if values == ref else values


def pin_file(page: str) -> Path:
    return PINS / f"{page}.json"


@functools.cache
def load_pins(page: str) -> dict:
    """The pinned charts of ``page``: {lang: [chart, …]}."""
    return _shared_columns(json.loads(pin_file(page).read_text(encoding="utf-8")), expand=True)


def write_pins(page: str) -> Path:
    """Pin the charts of ``page`` in every language as they are drawn now."""
    pins = {lang: [rounded(chart) for chart, _ in page_charts(page, lang)] for lang in LANGS}
    path = pin_file(page)
    path.write_text(dumps(_shared_columns(pins, expand=False)) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", list(PAGES))
def test_charts_match_the_pinned_ones(page, lang):
    pinned = load_pins(page)[lang]
    charts = page_charts(page, lang)
    assert len(charts) == len(pinned), f"{len(charts)} charts vs pinned {len(pinned)}"
    for i, ((got, rtols), want) in enumerate(zip(charts, pinned, strict=True)):
        diff = chart_difference(got, rtols, want)
        assert diff is None, f"{page}/{lang} chart {i}: {diff}"


def test_one_pin_file_per_page():
    """A pin file for every page of the registry, in every language, and none for a page
    it no longer has."""
    assert {path.stem for path in PINS.glob("*.json")} == set(PAGES)
    for page in PAGES:
        assert set(load_pins(page)) == set(LANGS), page
    assert sum(len(charts) for page in PAGES for charts in load_pins(page).values()) > 0


def test_the_comparison_fires():
    """What passes, and how the first difference is reported."""
    want = {"spec": {"a": [1, 2.5], "t": "x"}, "datasets": [{"columns": {"p": [0.0, 3]}}]}

    def diff(spec=None, p=None, low=None):
        got = {
            "spec": {"a": [1.0, 2.5], "t": "x"} if spec is None else spec,
            "datasets": [{"columns": {"p": [0.0, 3.0] if p is None else p}}],
        }
        return chart_difference(got, [low or {}], want)

    assert diff() is None  # int vs float of equal value; key order does not matter
    assert diff(spec={"a": [1, 2.5 * (1 + 1e-10)], "t": "x"}) is None
    assert diff(spec={"a": [1, 2.5 * (1 + 1e-8)], "t": "x"}) == (
        "spec.a[1]: 2.500000025 vs pinned 2.5 (rel 1.0e-08)"
    )
    assert diff(spec={"a": [1, 2.5], "t": "y"}) == "spec.t: 'y' != pinned 'x'"
    extra = diff(spec={"a": [1, 2.5], "t": "x", "u": 1})
    assert extra == "spec: keys ['u'] not pinned, pinned keys [] missing"
    assert diff(p=["0.0", 3]) == "datasets[0].columns.p[0]: '0.0' (str) vs pinned 0.0 (number)"
    assert diff(p=[0.0, True]) == "datasets[0].columns.p[1]: True (bool) vs pinned 3 (number)"
    assert diff(p=[0.0, 3, 4]) == "datasets[0].columns.p: 3 items vs pinned 2"
    assert diff(p=[1e-13, 3]) is None  # below the absolute floor
    assert diff(p=[1e-11, 3]) == "datasets[0].columns.p[0]: 1e-11 vs pinned 0.0 (rel inf)"
    assert diff(p=[0.0, 3 * (1 + 1e-7)]) is not None
    assert diff(p=[0.0, 3 * (1 + 1e-7)], low={"p": FLOAT32_RTOL}) is None
    renamed = chart_difference({**want, "datasets": [{"columns": {"q": [0.0, 3]}}]}, [{}], want)
    assert renamed == "datasets[0].columns (names)[0]: 'q' != pinned 'p'"


def test_dataset_names_do_not_matter():
    from types import SimpleNamespace

    def table(**columns) -> bytes:
        sink = pa.BufferOutputStream()
        t = pa.table(columns)
        with pa.ipc.new_stream(sink, t.schema) as writer:
            writer.write_table(t)
        return sink.getvalue().to_pybytes()

    def proto(a: str, b: str):
        spec = {"layer": [{"data": {"name": b}}, {"data": {"name": a}}], "data": {"name": a}}
        datasets = [
            SimpleNamespace(name=a, data=SimpleNamespace(data=table(x=[1, 2]))),
            SimpleNamespace(name=b, data=SimpleNamespace(data=table(y=[0.5]))),
        ]
        return SimpleNamespace(
            spec=json.dumps(spec), datasets=datasets, data=SimpleNamespace(data=b"")
        )

    one, two = canonical_chart(proto("aaa", "bbb")), canonical_chart(proto("f00", "0ba"))
    assert one == two
    # sorted-key walk: "data" comes before "layer", so the top-level dataset is number 0
    assert one["spec"]["data"] == {"name": "<dataset 0>"}
    assert one["spec"]["layer"][0]["data"] == {"name": "<dataset 1>"}
    assert one["datasets"] == [{"columns": {"x": [1, 2]}}, {"columns": {"y": [0.5]}}]


if __name__ == "__main__":
    # python tests/app/test_pinned_charts.py [page ...]: re-pin the named pages (all if none)
    only = sys.argv[1:]
    unknown = sorted(set(only) - set(PAGES))
    if unknown:
        sys.exit(f"unknown page(s) {unknown}; the pages are {sorted(PAGES)}")
    PINS.mkdir(exist_ok=True)
    for page in only or PAGES:
        path = write_pins(page)
        counts = ", ".join(f"{lang} {len(page_charts(page, lang))}" for lang in LANGS)
        size = path.stat().st_size / 1024
        print(f"wrote {path.relative_to(ROOT)} ({size:.0f} KB; charts: {counts})")
    if not only:
        for path in sorted(set(PINS.glob("*.json")) - {pin_file(page) for page in PAGES}):
            path.unlink()
            print(f"removed {path.relative_to(ROOT)} (no such page)")
