"""Citations lead somewhere: documents named in the code exist, and so do their sections.

- Code, tests, scripts, benchmarks and docs cite papers or a document in ``docs/``, never a
  note outside the repository (cited by its name in capitals, see ``OUTSIDE_NOTE``).
- Every ``docs/<name>.md`` a file names exists.
- Every section of docs/mathematics.md cited as ``docs/mathematics.md §3.4`` (or, in the
  tests, ``docs §3.4``; ranges like ``§2.3–§2.4``) is a heading of that file.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where citations are checked.
ROOTS = ("core", "ui", "app_pages", "app.py", "scripts", "tests", "benchmarks", "docs", "README.md")
SUFFIXES = {".py", ".md", ".toml", ".txt"}

OUTSIDE_NOTE = re.compile(r"\bREFERENCE\b")
DOC_PATH = re.compile(r"\bdocs/([\w.-]+\.(?:md|png))")
SECTION_CITE = re.compile(r"\bdocs(?:/mathematics\.md)? (§\d+(?:\.\d+)?(?:[–-]§?\d+(?:\.\d+)?)?)")
HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", re.MULTILINE)


def _files() -> list[Path]:
    out = []
    for name in ROOTS:
        path = ROOT / name
        found = [path] if path.is_file() else sorted(path.rglob("*"))
        out += [
            p
            for p in found
            if p.suffix in SUFFIXES and "__pycache__" not in p.parts and p.is_file()
        ]
    return out


def _sections(citation: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", citation)


def test_no_citation_of_a_note_outside_the_repository():
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _files()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE_NOTE.search(line)
    ]
    assert not hits, hits


def test_named_documents_exist():
    missing = {
        f"{p.relative_to(ROOT)}: docs/{name}"
        for p in _files()
        for name in DOC_PATH.findall(p.read_text(encoding="utf-8"))
        if not (ROOT / "docs" / name).is_file()
    }
    assert not missing, sorted(missing)


def test_cited_sections_of_the_mathematics_exist():
    headings = set(HEADING.findall((ROOT / "docs" / "mathematics.md").read_text(encoding="utf-8")))
    dangling = {
        f"{p.relative_to(ROOT)}: §{section}"
        for p in _files()
        for citation in SECTION_CITE.findall(p.read_text(encoding="utf-8"))
        for section in _sections(citation)
        if section not in headings
    }
    assert not dangling, sorted(dangling)


def test_the_checks_fire():
    assert OUTSIDE_NOTE.search("see " + "REF" + "ERENCE §2")
    assert not OUTSIDE_NOTE.search("_REFERENCE_LABELS")
    assert DOC_PATH.findall("docs/" + "nothing.md and docs/ARCHITECTURE.md") == [
        "nothing.md",
        "ARCHITECTURE.md",
    ]
    cites = SECTION_CITE.findall("docs/mathematics.md §2.3–§2.4, docs §5.2: and docs §3–§5")
    assert [_sections(c) for c in cites] == [["2.3", "2.4"], ["5.2"], ["3", "5"]]
    assert HEADING.findall("## 3. Softmax\n### 3.4 Large σ\n#### 9 not a section\n") == [
        "3",
        "3.4",
    ]
