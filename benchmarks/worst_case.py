"""CPU time and memory of each page at its most expensive control values, cold caches.

For every page the script opens the app through AppTest with the page's costliest
query string (largest d_k, n_keys, samples; the O(d) uniform sampler; …), clears
``st.cache_data`` first so nothing is reused, and measures the CPU time of that one run
(``time.process_time``, all threads of this process) and the growth of peak RSS.
Budget (issue: hardening): ≤ 2 s of CPU per page on this machine.

Usage (from the repo root)::

    python benchmarks/worst_case.py
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import logging
import resource
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

BUDGET_CPU_S = 2.0


def worst_query(spec) -> dict[str, str]:
    """The costliest query parameters of page ``spec``: every value its table marks
    ``worst``."""
    return {p.key: p.worst for p in spec.params if p.worst is not None}


def main() -> int:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from tests.app.helpers import reveal_all
    from ui.common.pages import PAGES

    for name in [n for n in logging.root.manager.loggerDict if n.startswith("streamlit")]:
        logging.getLogger(name).setLevel(logging.ERROR)  # each has its own level

    rows, ok = [], True
    for spec in PAGES:
        worst = worst_query(spec)
        if not worst:
            print(f"{spec.url_path or 'home'}: its table marks no worst value: not measured")
            continue
        st.cache_data.clear()
        at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120)
        for key, value in worst.items():
            at.query_params[key] = value
        at.run()  # the home page: imports and the sidebar, not timed
        at.switch_page(spec.script)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        cpu0, wall0 = time.process_time(), time.perf_counter()
        at.run()
        reveal_all(at)  # answer the predict-first questions: every chart is drawn
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        passed = cpu <= BUDGET_CPU_S and not at.exception
        ok &= passed
        rows.append(
            (spec.url_path, cpu, wall, rss - rss0, rss, len(at.get("vega_lite_chart")), passed)
        )
    print(f"{'page':<12}{'cpu s':>8}{'wall s':>8}{'+MB':>7}{'peak MB':>9}{'charts':>8}  budget")
    for page, cpu, wall, dmb, mb, n, passed in rows:
        print(
            f"{page:<12}{cpu:8.2f}{wall:8.2f}{dmb:7.0f}{mb:9.0f}{n:8d}  {'pass' if passed else 'FAIL'}"
        )
    print(f"\nbudget: <= {BUDGET_CPU_S} s of CPU per page at its costliest controls, cold caches")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
