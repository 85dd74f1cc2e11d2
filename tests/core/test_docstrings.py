"""Every public function and class of core/ has a numpydoc docstring (house rule).

Functions: ``Parameters`` (when they take any), ``Returns`` and ``Raises``; classes:
``Attributes``. Properties are exempt (one line says what they hold). Sources are not
checked here: argument checks and data plumbing have none, and a formula's source is
reviewed with the formula (docs/mathematics.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "core"


def _public_definitions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.ClassDef) or node.name.startswith("_"):
            continue
        yield node.name, node
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef) and not sub.name.startswith("_"):
                    yield f"{node.name}.{sub.name}", sub


def _missing(node: ast.FunctionDef | ast.ClassDef) -> list[str]:
    doc = ast.get_docstring(node) or ""
    if not doc:
        return ["a docstring"]
    if isinstance(node, ast.ClassDef):
        return [] if "Attributes\n" in doc else ["Attributes"]
    if any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list):
        return []
    args = [a.arg for a in node.args.args + node.args.kwonlyargs if a.arg not in ("self", "cls")]
    wanted = (["Parameters"] if args else []) + ["Returns", "Raises"]
    return [section for section in wanted if f"{section}\n" not in doc]


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_public_definitions_have_numpydoc_sections(path):
    problems = {name: miss for name, node in _public_definitions(path) if (miss := _missing(node))}
    assert not problems, problems


def test_the_check_fires():
    tree = ast.parse("def f(x):\n    '''One line.'''\n")
    assert _missing(tree.body[0]) == ["Parameters", "Returns", "Raises"]
