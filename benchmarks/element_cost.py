"""In a real browser: what one more element costs a change, whatever the element says.

Each row starts ``streamlit run benchmarks/element_page.py`` with ``ELEMENT_KIND`` and
``ELEMENT_COUNT`` set (a fragment holding the one-chart page's number input and chart, and
that many elements of one kind), types ``--changes`` new values into the number input and
times each change as :mod:`benchmarks.browser_latency` does: from the key to the chart's
last redraw, on the page's clock. The rows with no element come first and last, so a
drift of the machine shows. Printed: the median per row, and per added element
(the median less the first empty row's, over the count).

Usage (from the repo root)::

    python benchmarks/element_cost.py [--changes 16] [--rows none:0,markdown:40,...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.browser_latency import open_page, server, timed_change, type_value
from tests.e2e.conftest import CHROMIUM_ARGS, find_chromium

PAGE = "benchmarks/element_page.py"
#: kind:count rows; the empty page first and last.
ROWS = (
    "none:0,markdown:20,markdown:40,markdown:80,changing:20,button:40,bordered:20,"
    "expander:20,metric:20,none:0"
)


def time_row(browser, kind: str, count: int, changes: int) -> float:
    """Median ms of ``changes`` changes of the page with ``count`` elements of ``kind``."""
    os.environ["ELEMENT_KIND"], os.environ["ELEMENT_COUNT"] = kind, str(count)
    with server(REPO_ROOT, PAGE) as url:
        page = open_page(browser, url)
        time.sleep(0.5)
        times = [
            timed_change(page, lambda v=v: type_value(page, "n", v))[0]
            for v in range(60, 60 + changes)
        ]
        page.close()
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=16, help="changes per row")
    parser.add_argument("--rows", default=ROWS, help="comma list of kind:count")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    if executable is None:
        print("no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)")
        return 2
    rows = [(kind, int(count)) for kind, count in (r.split(":") for r in args.rows.split(","))]
    print(f"{'elements':<16}{'median ms':>10}{'ms per element':>16}")
    empty = None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        for kind, count in rows:
            median = time_row(browser, kind, count, args.changes)
            if empty is None and count == 0:
                empty = median
            each = (median - empty) / count if count and empty is not None else float("nan")
            print(f"{f'{count} {kind}':<16}{median:10.1f}{each:16.2f}", flush=True)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
