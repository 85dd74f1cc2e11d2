"""The shape of the code: which layer may import what (docs/ARCHITECTURE.md).

Rules, checked on every Python file of the project by reading its imports (``ast``):

1. ``core/`` is NumPy only: no ``streamlit``, ``altair`` or ``pandas``, and nothing from
   ``ui`` or ``app_pages``.
2. Chart builders (``ui/common/charts.py``, ``ui/<page>/charts.py``, ``ui/story/charts.py``
   and any other ``…charts.py``) make no Streamlit calls: they do not import ``streamlit``.
3. No module imports another module's private name (``from m import _x``, ``m._x``).
   Tests are exempt: a white-box test may reach into the module it tests.
4. A page package ``ui/<page>/`` never imports another page's package.
5. ``ui/common/`` never imports a page package, nor ``ui/story/``; ``ui/story/`` (what the
   story's pages and the recap share) never imports a page package.
6. Nothing in ``ui/`` imports ``app_pages``.
7. Streamlit and Altair through their public top level only: ``import streamlit as st``,
   ``import altair as alt`` and public names of those modules; no other module of theirs
   (except ``streamlit.testing.v1`` in tests and benchmarks, and ``streamlit.proto``, the
   wire format, in the load benchmarks), no ``_``-prefixed name of theirs, and no
   submodule reached as an attribute (``alt.utils.…``) but their public ones.
8. Outside tests, no ``_``-prefixed attribute of any object but ``self``/``cls`` or the
   module's own, and no library object patched (``setattr``, ``object.__setattr__``,
   assigning to an attribute of ``st`` or ``alt``).

Each rule is also run on a small synthetic tree, so a rule that could never fire fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Third-party packages core/ may not import.
NOT_IN_CORE = {"streamlit", "altair", "pandas"}
#: The libraries whose public top level is all the project may use (rule 7), and the
#: submodules of theirs that are public API.
LIBRARIES = {"streamlit": {"column_config", "components"}, "altair": {"theme", "expr"}}
#: Other modules of theirs allowed, by folder.
LIBRARY_MODULES = {
    "streamlit.testing.v1": ("tests/", "benchmarks/"),
    "streamlit.proto": ("benchmarks/",),
}
#: A named tuple's public methods (their names start with "_" to avoid field names).
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}
#: The packages of ``ui/`` that are no page's: what every page uses, and what the story's
#: pages and the recap share.
SHARED = {"common", "story"}
#: Folders that hold no project code.
SKIP = {".git", ".venv", "__pycache__", "node_modules", ".ruff_cache", ".pytest_cache"}


def _python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if not SKIP & set(p.relative_to(root).parts))


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(tree: ast.AST) -> list[tuple[str, str | None, int]]:
    """(module, imported name or None, line) for every import, nested ones included."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += [(node.module, alias.name, node.lineno) for alias in node.names]
    return out


def _private_attributes(tree: ast.AST, project: set[str]) -> list[tuple[str, str, int]]:
    """``alias._x`` where ``alias`` is bound to a project module by an import."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in project:
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in project:
                    aliases[alias.asname or alias.name] = full
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and _is_private(node.attr)
        ):
            out.append((aliases[node.value.id], node.attr, node.lineno))
    return out


def _library_uses(tree: ast.AST) -> list[tuple[str, int]]:
    """(what, line) for every use of Streamlit or Altair past their public top level
    (rule 7), before the folder exceptions of :data:`LIBRARY_MODULES`."""
    import importlib
    import inspect

    def submodule(library: str, name: str) -> bool:
        """Whether ``library.name`` is a module (``st.navigation`` is a function, though a
        module of that name exists; ``alt.utils`` is a module)."""
        value = getattr(importlib.import_module(library), name, None)
        return inspect.ismodule(value)

    out = []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = _top(alias.name)
                if top in LIBRARIES and alias.name != top:
                    out.append((alias.name, node.lineno))
                elif top in LIBRARIES:
                    aliases[alias.asname or top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = _top(node.module)
            if top not in LIBRARIES:
                continue
            if node.module != top:
                out.append((node.module, node.lineno))
                continue
            for alias in node.names:
                if _is_private(alias.name) or (
                    alias.name not in LIBRARIES[top] and submodule(top, alias.name)
                ):
                    out.append((f"{top}.{alias.name}", node.lineno))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            top = aliases.get(node.value.id)
            if top and (
                _is_private(node.attr)
                or (node.attr not in LIBRARIES[top] and submodule(top, node.attr))
            ):
                out.append((f"{top}.{node.attr}", node.lineno))
    return out


def _library_allowed(rel: str, what: str) -> bool:
    return any(
        (what == module or what.startswith(f"{module}.")) and rel.startswith(folders)
        for module, folders in LIBRARY_MODULES.items()
    )


def _private_or_patched(tree: ast.AST) -> list[tuple[str, int]]:
    """(what, line) for rule 8: ``x._y`` with ``x`` not ``self``/``cls`` nor a name of the
    module, ``setattr``/``object.__setattr__`` calls, and assignments to ``st.x``/``alt.x``."""
    defined = {  # the module's own names, and imported modules (rules 3 and 7)
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
    } | {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    libraries = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name in LIBRARIES
    }
    own = {  # private attributes the module gives its own objects (self._x = …)
        target.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            owner = node.value
            if node.attr in own | NAMEDTUPLE_API:
                continue
            if not (isinstance(owner, ast.Name) and owner.id in {"self", "cls", *defined}):
                out.append((f"private attribute .{node.attr}", node.lineno))
        elif isinstance(node, ast.Call):
            fn = node.func
            if (isinstance(fn, ast.Name) and fn.id == "setattr") or (
                isinstance(fn, ast.Attribute) and fn.attr == "__setattr__"
            ):
                out.append(("setattr", node.lineno))
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id in libraries
                ):
                    out.append((f"assigns {target.value.id}.{target.attr}", node.lineno))
    return out


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _top(module: str) -> str:
    return module.split(".")[0]


def _ui_package(module: str) -> str | None:
    """``variance`` for ``ui.variance.charts``; None outside ``ui.<package>``."""
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "ui" else None


def check(root: Path) -> list[str]:
    """Every breach of the rules under ``root``, as ``path:line: message``."""
    files = _python_files(root)
    project = {_module_name(root, p) for p in files}
    pages = {p.parent.name for p in root.glob("ui/*/__init__.py")} - SHARED
    problems = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        here = _module_name(root, path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        own_page = _ui_package(here)
        for module, name, line in _imports(tree):
            # `from ui import variance` imports the module ui.variance
            targets = [module] + (
                [f"{module}.{name}"] if name and f"{module}.{name}" in project else []
            )
            where = f"{rel}:{line}"
            if rel.startswith("core/") and _top(module) in NOT_IN_CORE | {"ui", "app_pages"}:
                problems.append(f"{where}: core imports {module}")
            if rel.startswith("ui/") and rel.endswith("charts.py") and _top(module) == "streamlit":
                problems.append(f"{where}: a chart module imports streamlit")
            if rel.startswith("ui/") and _top(module) == "app_pages":
                problems.append(f"{where}: ui imports {module}")
            if (
                name
                and _is_private(name)
                and module in project
                and module != here
                and not rel.startswith("tests/")
            ):
                problems.append(f"{where}: imports the private name {module}.{name}")
            for target in targets:
                other = _ui_package(target)
                if own_page == "common" and other == "story":
                    problems.append(f"{where}: ui/common imports ui/story ({target})")
                    break
                if other not in pages:
                    continue
                if own_page in SHARED:
                    problems.append(f"{where}: ui/{own_page} imports the page package {target}")
                    break
                if own_page in pages and other != own_page:
                    problems.append(f"{where}: page {own_page} imports page package {target}")
                    break
        if not rel.startswith("tests/"):
            for module, name, line in _private_attributes(tree, project):
                if module != here:
                    problems.append(f"{rel}:{line}: uses the private name {module}.{name}")
            for what, line in _private_or_patched(tree):
                problems.append(f"{rel}:{line}: {what} of an object not its own")
        for what, line in _library_uses(tree):
            if not _library_allowed(rel, what):
                problems.append(f"{rel}:{line}: uses {what}, not the library's public API")
    return problems


def test_the_project_keeps_its_shape():
    assert check(ROOT) == []


def test_every_story_page_has_its_package():
    from ui.common.pages import STORY

    for name in STORY:
        package = ROOT / "ui" / name
        for part in ("__init__.py", "data.py", "charts.py", "sections.py"):
            assert (package / part).is_file(), f"ui/{name}/{part}"


def test_no_ui_file_is_too_long():
    """Past ~500 lines a file wants splitting (ARCHITECTURE.md)."""
    long = {
        p.relative_to(ROOT).as_posix(): n
        for p in (ROOT / "ui").rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert not long, long


# --- the checker itself, on a synthetic project -------------------------------------------
GOOD = {
    "core/__init__.py": "",
    "core/maths.py": "import numpy as np\n\n\ndef _helper():\n    return np.zeros(1)\n",
    "core/other.py": "from core.maths import _helper  # noqa\n",
    "ui/__init__.py": "",
    "ui/common/__init__.py": "",
    "ui/common/charts.py": "import altair as alt\n",
    "ui/common/data.py": "import streamlit as st\nfrom core import maths\n",
    "ui/alpha/__init__.py": "",
    "ui/alpha/charts.py": "import altair as alt\nfrom ui.common import charts\n",
    "ui/alpha/data.py": "import pandas as pd\nimport streamlit as st\nfrom ui.common import data\n",
    "ui/alpha/sections.py": "from ui.alpha import charts, data\nfrom ui.common.charts import alt\n",
    "ui/beta/__init__.py": "",
    "ui/beta/sections.py": "import streamlit as st\n",
    "ui/story/__init__.py": "",
    "ui/story/charts.py": "import altair as alt\nfrom ui.common import charts\n",
    "ui/story/data.py": "import streamlit as st\nfrom ui.common import data\n",
    "ui/alpha/uses_story.py": "from ui.story import charts, data\n",
    "app_pages/alpha.py": "from ui.alpha import sections\n",
    "tests/test_maths.py": "from core import maths\nfrom core.maths import _helper\n\nmaths._helper()\n",
    "tests/test_app.py": "from streamlit.testing.v1 import AppTest\n",
    "benchmarks/load.py": "from streamlit.proto import BackMsg_pb2\nimport streamlit as st\n",
    "ui/common/public.py": (
        "import altair as alt\nimport streamlit as st\n\nst.column_config.NumberColumn\n"
        "alt.theme.enable\n"
    ),
}
# one breach per rule, with the message it must produce
BREACHES = {
    "core/bad_streamlit.py": ("import streamlit as st\n", "core imports streamlit"),
    "core/bad_pandas.py": ("def f():\n    import pandas\n", "core imports pandas"),
    "core/bad_ui.py": ("from ui.common import data\n", "core imports ui.common"),
    "ui/alpha/bad_charts/charts.py": ("import streamlit\n", "a chart module imports streamlit"),
    "ui/beta/charts.py": ("from streamlit import cache_data\n", "a chart module imports streamlit"),
    "ui/alpha/bad_private.py": (
        "from core.maths import _helper\n",
        "private name core.maths._helper",
    ),
    "ui/alpha/bad_attr.py": (
        "from core import maths\n\nmaths._helper()\n",
        "uses the private name core.maths._helper",
    ),
    "ui/alpha/bad_page.py": (
        "from ui.beta import sections\n",
        "page alpha imports page package ui.beta",
    ),
    "ui/alpha/bad_page2.py": ("from ui import beta\n", "page alpha imports page package ui.beta"),
    "ui/common/bad_common.py": (
        "import ui.alpha.data\n",
        "ui/common imports the page package ui.alpha.data",
    ),
    "ui/common/bad_app.py": ("import app_pages.alpha\n", "ui imports app_pages.alpha"),
    "ui/common/bad_story.py": (
        "from ui.story import frames\n",
        "ui/common imports ui/story (ui.story)",
    ),
    "ui/story/bad_page.py": (
        "from ui.alpha import data\n",
        "ui/story imports the page package ui.alpha",
    ),
    "ui/story/bad_charts.py": ("import streamlit as st\n", "a chart module imports streamlit"),
    "ui/common/bad_lib1.py": (
        "from streamlit.elements import vega_charts\n",
        "uses streamlit.elements, not the library's public API",
    ),
    "ui/common/bad_lib2.py": (
        "from streamlit import dataframe_util\n",
        "uses streamlit.dataframe_util, not the library's public API",
    ),
    "ui/common/bad_lib3.py": (
        "from altair.vegalite.v6.api import _combine_subchart_data\n",
        "uses altair.vegalite.v6.api, not the library's public API",
    ),
    "ui/common/bad_lib4.py": (
        "import altair as alt\n\nalt.utils.schemapi.DEBUG_MODE\n",
        "uses altair.utils, not the library's public API",
    ),
    "ui/common/bad_lib5.py": (
        "import streamlit as st\n\nst._config\n",
        "uses streamlit._config, not the library's public API",
    ),
    "ui/common/bad_lib6.py": (
        "import streamlit.runtime\n",
        "uses streamlit.runtime, not the library's public API",
    ),
    "ui/common/bad_proto.py": (
        "from streamlit.proto import BackMsg_pb2\n",
        "uses streamlit.proto, not the library's public API",
    ),
    "ui/common/bad_get.py": (
        "def f(chart):\n    return chart._get('layer')\n",
        "private attribute ._get of an object not its own",
    ),
    "ui/common/bad_patch.py": (
        "def f(chart, fn):\n    object.__setattr__(chart, 'to_dict', fn)\n",
        "setattr of an object not its own",
    ),
    "ui/common/bad_assign.py": (
        "import altair as alt\n\nalt.Chart = None\n",
        "assigns alt.Chart of an object not its own",
    ),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_checker_passes_a_clean_project(tmp_path):
    _write(tmp_path, GOOD)
    problems = check(tmp_path)
    # the only breach in GOOD: a core module importing another's private name
    assert problems == ["core/other.py:1: imports the private name core.maths._helper"]


@pytest.mark.parametrize("rel", list(BREACHES))
def test_checker_catches(tmp_path, rel):
    text, message = BREACHES[rel]
    _write(tmp_path, {**GOOD, "core/other.py": "", rel: text})
    problems = check(tmp_path)
    assert len(problems) == 1 and rel in problems[0] and message in problems[0], problems
