"""How long a paragraph is, and how many sentences a text has, in English and Chinese.

A learner reads a paragraph of at most about 90 English words; past that it becomes a
short list, or its detail moves into an expander. The Chinese limit is 180: Chinese text
needs about two characters per English word (measured on this app's catalogs, the
Chinese/English length ratio of the longer strings has median 1.8, 10–90 % 1.6–2.1).

- A **paragraph** is a block separated by a blank line; each item of a list and each
  heading line is a paragraph of its own.
- **English length**: words, i.e. whitespace-separated pieces with a letter or a digit
  (a formula such as ``Var(q·k) = d_k·σ²`` counts 3).
- **Chinese length**: characters (CJK ideographs and full-width punctuation), plus one for
  each run of other characters between them (an embedded term, number or formula such
  as ``d_k`` or ``0.125``), so that a formula weighs the same in both languages.
"""

from __future__ import annotations

import re

#: The longest paragraph allowed, by language (see the module docstring).
LIMITS = {"en": 90, "zh": 180}

_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_ITEM = re.compile(r"\s*(?:[-*+]|\d+\.)\s|\s*#")


def paragraphs(text: str) -> list[str]:
    """The paragraphs of a Markdown text (see the module docstring)."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in block.split("\n"):
            if _ITEM.match(line):  # a list item or a heading starts a paragraph
                if lines:
                    out.append(" ".join(lines))
                lines = [line]
                if line.lstrip().startswith("#"):  # and a heading ends it
                    out.append(line)
                    lines = []
            else:
                lines.append(line)
        if lines:
            out.append(" ".join(lines))
    return [p.strip() for p in out if p.strip()]


def length(paragraph: str, lang: str) -> int:
    """The length of a paragraph: English words, or Chinese characters (see above)."""
    if lang == "zh":
        return len(re.findall(f"[{_CJK}]", paragraph)) + len(
            re.findall(f"[^\\s{_CJK}]+", paragraph)
        )
    return len([w for w in paragraph.split() if re.search("[A-Za-z0-9]", w)])


#: Sentence ends: a full stop, question or exclamation mark followed by a space or the
#: end (in English not after e.g., i.e., et al., vs. or cf.), or a Chinese one.
_END = {
    "en": re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bal)(?<!\bvs)(?<!\bcf)[.!?](?=[\s”’\"]|$)"),
    "zh": re.compile(r"[。！？]"),
}


def sentence_count(text: str, lang: str) -> int:
    """How many sentences ``text`` has (Markdown emphasis ignored)."""
    return len(_END[lang].findall(text.replace("**", "").strip()))
