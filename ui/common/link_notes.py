"""What the one warning about a link says: a paragraph per value that was dropped,
changed or refused (:func:`ui.common.params.read_query`'s notes), naming the parameter,
what it allows and the value used instead. The offending value is never echoed back."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ui.common.i18n import t
from ui.common.params import Note, Param


def notes_text(notes: Sequence[Note], values: Mapping[str, Any]) -> list[str]:
    """One paragraph per note of :func:`ui.common.params.read_query` (the unknown
    parameters in one), for the one warning about the link."""
    unknown = [n.key for n in notes if n.reason == "unknown"]
    lines = [note_text(n, values) for n in notes if n.reason != "unknown"]
    if unknown:
        names = ", ".join(f"`{k[:24]}`" if re.fullmatch(r"[\w-]+", k) else "`?`" for k in unknown)
        lines.append(t("common.unknown_params", names=names))
    return lines


def note_text(note: Note, values: Mapping[str, Any]) -> str:
    """What a note of :func:`ui.common.params.read_query` tells the learner."""
    p = note.param
    if note.reason == "needs":
        return t("common.param_needs", name=note.key, other=p.needs)
    if note.reason == "changed":
        return t(p.changed, asked=note.given, used=note.used)
    default = _shown_default(p)
    if note.reason == "repeated":
        return t("common.param_repeated", name=note.key, n=note.given, default=default)
    return t("common.bad_param", name=note.key, allowed=allowed_text(p, values), default=default)


def _shown_default(p: Param) -> str:
    if p.kind == "flag":
        return p.options[0]
    return str(p.default) if p.default != "" else t("common.empty_text")


def allowed_text(p: Param, values: Mapping[str, Any]) -> str:
    """The values ``p`` allows, for a warning (``values``: the link's clean values, which
    some catalog texts name)."""
    if p.allowed is not None:
        return t(p.allowed, lo=p.options[0], hi=p.options[-1], options=", ".join(p.options),
                 **values)  # fmt: skip
    if p.kind == "int":
        return t("common.allowed_int", lo=int(p.lo), hi=int(p.hi))
    if p.kind == "float":
        return t("common.allowed_float", lo=p.lo, hi=p.hi)
    if p.kind == "text":
        return t("common.allowed_text", hi=f"{int(p.hi):,}")
    return ", ".join(p.options)
