"""A new page, added by the checklist of docs/ARCHITECTURE.md in a copy of the tree.

The page is the smallest the checklist describes: one slider, one chart, no core module
and no randomness. In a temporary copy of the repository the test writes its four new
files and edits the three shared ones (the registry and the two catalogs), pins its
charts, then shows that every registry-driven suite collects the page (``pytest
--collect-only``) and that its AppTest suites pass for it. It runs the copy's tests in a
child process: a few minutes of CPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The new page's name (catalog section, ui/ package) and url path.
NAME = "demo"
#: The suites that take their pages from the registry, and the AppTest ones among them.
REGISTRY_SUITES = (
    "tests/app/test_hostile_urls.py",
    "tests/app/test_fuzz.py",
    "tests/app/test_chart_text.py",
    "tests/app/test_text.py",
    "tests/app/test_chinese.py",
    "tests/app/test_pinned_charts.py",
    "tests/e2e/test_all_pages.py",
    "tests/e2e/test_narrow_screens.py",
    "tests/e2e/test_accessibility.py",
)
APPTEST_SUITES = REGISTRY_SUITES[:6]

NEW_FILES = {
    f"app_pages/{NAME}.py": '''
        """Two scores: how softmax splits between them as their gap grows."""

        import streamlit as st

        from ui.common import controls, fragments, workshop
        from ui.common.i18n import t
        from ui.demo import sections

        st.title(t("demo.title"))
        st.markdown(t("demo.lead"))


        def body() -> None:
            with workshop.controls_box():
                gap = controls.float_slider("demo_gap", t("demo.gap"))
            step = workshop.steps([t("demo_workshop.step_1")])
            if workshop.shown(1, step):
                sections.two_scores(gap)
            st.caption(t("demo.source"))


        fragments.page_body(body)
    ''',
    f"ui/{NAME}/__init__.py": '''
        """The two-score page: its chart and its section."""
    ''',
    f"ui/{NAME}/charts.py": '''
        """Altair builder of the two-score page (conventions: :mod:`ui.common.charts`)."""

        from __future__ import annotations

        import altair as alt
        import pandas as pd

        from ui.common.charts import COLORS, ChartText, chart_title, check_rows


        def weight_line(df: pd.DataFrame, text: ChartText, *, gap: float) -> alt.LayerChart:
            """The larger weight of softmax([g, 0]) against g, with a point at ``gap``."""
            check_rows(df)
            x = alt.X("gap:Q", title=text.x)
            y = alt.Y("weight:Q", title=text.y, scale=alt.Scale(domain=[0.5, 1]))
            tooltip = [
                alt.Tooltip("gap:Q", title=text.tips["gap"], format=".3g"),
                alt.Tooltip("weight:Q", title=text.tips["weight"], format=".4g"),
            ]
            line = alt.Chart(df).mark_line(color=COLORS["sqrt"]).encode(x=x, y=y, tooltip=tooltip)
            here = df.iloc[[(df["gap"] - gap).abs().argmin()]]
            point = (
                alt.Chart(here).mark_point(color=COLORS["unscaled"], filled=True, size=80)
                .encode(x=x, y=y, tooltip=tooltip)
            )
            return alt.layer(line, point).properties(
                title=chart_title(text.title), description=text.description, height=240
            )
    ''',
    f"ui/{NAME}/sections.py": '''
        """The two-score page's one section."""

        from __future__ import annotations

        from functools import partial

        import numpy as np
        import pandas as pd
        import streamlit as st

        from ui.common import workshop
        from ui.common.i18n import t
        from ui.demo import charts


        def weights(n: int) -> pd.DataFrame:
            """The larger weight 1 / (1 + e⁻ᵍ) of softmax([g, 0]) at ``n`` gaps in [0, 10]."""
            g = np.linspace(0.0, 10.0, n)
            return pd.DataFrame({"gap": g, "weight": 1.0 / (1.0 + np.exp(-g))})


        def two_scores(gap: float) -> None:
            """softmax([g, 0])'s larger weight against the gap g."""
            st.header(t("demo.header"))
            workshop.takeaway(t("demo.takeaway"))
            workshop.chart(
                "demo.weight", charts.weight_line, partial(weights, 41),
                options={"gap": gap}, gap=f"{gap:g}",
            )
    ''',
}

REGISTRY_LINE = (
    '    PageSpec("demo", "demo", ":material/science:", 1, (\n'
    '        Param("demo_gap", "float", 2.0, 0.0, 10.0, step=0.5, worst="10"),\n'
    '    ), "demo_gap"),\n'
)

STRINGS = {
    "en": {
        "home": {
            "step_demo_title": "Two scores",
            "step_demo_text": "How softmax splits between two scores as their gap grows.",
        },
        "demo": {
            "nav": "Two scores",
            "title": "Two scores",
            "lead": "Softmax of two scores depends on their gap only.",
            "source": "The weight is 1 / (1 + e⁻ᵍ) for a gap g.",
            "gap": "Gap g between the scores",
            "header": "The larger weight",
            "takeaway": "A gap of 5 already gives the larger score 99 % of the weight.",
        },
        "demo.weight": {
            "title": "Larger weight of the softmax of g and 0",
            "x": "gap g",
            "y": "larger weight",
            "alt": "The larger weight rises from 0.5 towards 1 as the gap grows; the point marks g = {gap}.",
            "tips.gap": "gap g",
            "tips.weight": "larger weight",
        },
        "demo_workshop": {"step_1": "The larger weight"},
    },
    "zh": {
        "home": {
            "step_demo_title": "两个分数",
            "step_demo_text": "两个分数的差距变大时，softmax 如何在二者之间分配权重。",
        },
        "demo": {
            "nav": "两个分数",
            "title": "两个分数",
            "lead": "两个分数的 softmax 只取决于它们的差。",
            "source": "差为 g 时，较大的权重是 1 / (1 + e⁻ᵍ)。",
            "gap": "两个分数之差 g",
            "header": "较大的权重",
            "takeaway": "差为 5 时，较大的分数已经拿到 99 % 的权重。",
        },
        "demo.weight": {
            "title": "g 与 0 的 softmax 中较大的权重",
            "x": "差 g",
            "y": "较大的权重",
            "alt": "随着差变大，较大的权重从 0.5 逐渐升向 1；圆点标出 g = {gap}。",
            "tips.gap": "差 g",
            "tips.weight": "较大的权重",
        },
        "demo_workshop": {"step_1": "较大的权重"},
    },
}


def _toml(table: dict[str, str]) -> str:
    return "".join(f'{key} = "{value}"\n' for key, value in table.items())


def _add_page(tree: Path) -> list[str]:
    """Follow the checklist in ``tree``; returns the paths it created or edited."""
    touched = []
    for path, text in NEW_FILES.items():  # steps 3 and 4
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip())
        touched.append(path)
    registry = tree / "ui/common/pages.py"  # step 1: the last entry of PAGES
    text = registry.read_text()
    end = text.index(")  # fmt: skip\n\n_missing")
    registry.write_text(text[:end] + REGISTRY_LINE + text[end:])
    touched.append("ui/common/pages.py")
    for lang, sections in STRINGS.items():  # step 2
        catalog = tree / f"ui/common/locales/{lang}.toml"
        text = catalog.read_text().replace("[home]\n", "[home]\n" + _toml(sections["home"]), 1)
        text += "".join(
            f"\n[{name}]\n{_toml(sections[name])}"
            for name in ("demo", "demo.weight", "demo_workshop")
        )
        catalog.write_text(text)
        touched.append(f"ui/common/locales/{lang}.toml")
    return touched


def _run(tree: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("tree") / "app"
    ignore = shutil.ignore_patterns(
        ".git", "__pycache__", ".pytest_cache", ".ruff_cache", "artifacts"
    )
    shutil.copytree(ROOT, copy, ignore=ignore)
    touched = _add_page(copy)
    new = [p for p in touched if not (ROOT / p).exists()]
    edited = sorted(set(touched) - set(new))
    assert len(new) <= 6 and len(edited) <= 3, (new, edited)
    pinned = _run(copy, "tests/app/test_pinned_charts.py", NAME, timeout=600)  # step 6
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    return copy


def test_every_registry_driven_suite_collects_the_new_page(tree):
    done = _run(
        tree, "-m", "pytest", "-n", "0", "--collect-only", "-q", *REGISTRY_SUITES, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for suite in REGISTRY_SUITES:
        ids = [line for line in done.stdout.splitlines() if line.startswith(suite)]
        assert any(NAME in line for line in ids), f"{suite} does not collect the {NAME} page"


def test_the_apptest_suites_pass_for_the_new_page(tree):
    done = _run(
        tree, "-m", "pytest", "-n", "0", "-x", "-q", "-p", "no:cacheprovider", "-k", NAME,
        *APPTEST_SUITES,
        timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]
