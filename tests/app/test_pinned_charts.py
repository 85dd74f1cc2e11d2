"""Every page's charts at default settings, pinned: spec and data, byte for byte.

A refactor of the UI layer must not change what a user sees for the same URL. Each
chart's Vega-Lite spec and its datasets (decoded from Arrow, with column types) are
written as canonical JSON and hashed; ``golden_charts.json`` holds the hashes per page
and language. After an intended change to a chart, regenerate it with
``python tests/app/test_pinned_charts.py [page ...]`` (only the named pages, or all)
and review the diff.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from tests.app.helpers import run_page  # noqa: E402

GOLDEN = Path(__file__).with_name("golden_charts.json")
PAGES = {
    "home": None,
    "variance": "app_pages/variance.py",
    "saturation": "app_pages/saturation.py",
    "gradients": "app_pages/gradients.py",
    "sqrt-vs-d": "app_pages/sqrt-vs-d.py",
    "training": "app_pages/training.py",
    "which-d": "app_pages/which-d.py",
    "real-models": "app_pages/real-models.py",
}
LANGS = ("en", "zh")


def _table(data: bytes) -> dict:
    """An Arrow IPC stream as {"schema": [[name, type], ...], "columns": {name: values}}."""
    table = pa.ipc.open_stream(data).read_all()
    return {
        "schema": [[field.name, str(field.type)] for field in table.schema],
        "columns": table.to_pydict(),
    }


def chart_digest(proto) -> str:
    """sha256 of one chart's spec and datasets as canonical JSON."""
    payload = {
        "spec": json.loads(proto.spec),
        "datasets": {ds.name: _table(ds.data.data) for ds in proto.datasets},
        "data": _table(proto.data.data) if proto.data.data else None,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def page_digests(page: str, lang: str) -> list[str]:
    """The digests of every chart on ``page`` in ``lang`` at default settings, in order."""
    at = run_page(PAGES[page], lang=lang)
    assert not at.exception, at.exception
    return [chart_digest(chart.proto) for chart in at.get("vega_lite_chart")]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", list(PAGES))
def test_charts_match_the_pinned_ones(page, lang):
    golden = json.loads(GOLDEN.read_text())[f"{page}/{lang}"]
    digests = page_digests(page, lang)
    assert len(digests) == golden["count"]
    for i, (got, want) in enumerate(zip(digests, golden["charts"], strict=True)):
        assert got == want, f"chart {i} on {page} ({lang}) changed"


def test_golden_covers_every_page():
    from ui.common.pages import PAGES as SPECS

    assert {p.url_path or "home" for p in SPECS} == set(PAGES)
    golden = json.loads(GOLDEN.read_text())
    assert set(golden) == {f"{p}/{lang}" for p in PAGES for lang in LANGS}
    assert sum(g["count"] for g in golden.values()) > 0


if __name__ == "__main__":
    # python tests/app/test_pinned_charts.py [page ...]: re-pin the named pages (all if none)
    only = sys.argv[1:]
    unknown = sorted(set(only) - set(PAGES))
    if unknown:
        sys.exit(f"unknown page(s) {unknown}; pinned pages are {sorted(PAGES)}")
    out = json.loads(GOLDEN.read_text()) if only and GOLDEN.exists() else {}
    for page in only or PAGES:
        for lang in LANGS:
            digests = page_digests(page, lang)
            out[f"{page}/{lang}"] = {"count": len(digests), "charts": digests}
            print(f"{page}/{lang}: {len(digests)} charts")
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
