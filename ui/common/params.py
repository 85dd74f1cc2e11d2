"""Query parameters: what each raw value means, where d_k's − / + lead, the tables that
declare each page's parameters (:class:`Param`) and :func:`read_query`, which checks a
whole query string against one. Pure functions (no Streamlit)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_INT_RE = re.compile(r"^[+-]?\d{1,12}$")
_FLOAT_RE = re.compile(r"^[+-]?(\d{1,12}(\.\d{0,12})?|\.\d{1,12})([eE][+-]?\d{1,3})?$")


def parse_int(raw: Sequence[str], lo: int, hi: int) -> int | None:
    """The single integer in ``raw`` if it is well-formed and in [lo, hi], else None."""
    if len(raw) != 1 or not _INT_RE.match(raw[0].strip()):
        return None
    value = int(raw[0])
    return value if lo <= value <= hi else None


def parse_float(raw: Sequence[str], lo: float, hi: float) -> float | None:
    """The single finite float in ``raw`` if it is well-formed and in [lo, hi], else None."""
    if len(raw) != 1 or not _FLOAT_RE.match(raw[0].strip()):
        return None
    value = float(raw[0])
    return value if math.isfinite(value) and lo <= value <= hi else None


def parse_choice(raw: Sequence[str], options: Sequence[Any]) -> Any | None:
    """The option whose ``str`` equals the single value in ``raw``, else None."""
    if len(raw) != 1:
        return None
    matches = [o for o in options if str(o) == raw[0]]
    return matches[0] if matches else None


def power_step(value: int, previous: int | None, lo: int, hi: int) -> int:
    """Where a number input's − / + lead: a change of exactly one from ``previous`` (the
    value shown) goes on to the next power of two that way (64 → 65 gives 128, 100 → 99
    gives 64), within [lo, hi]; any other value (typed, linked, ÷2 / ×2) is kept. The
    input steps by one and a press looks like a typed value: typing 65 at 64 gives 128.
    """
    if previous is None or abs(value - previous) != 1:
        return value
    if value > previous:
        target = 1 << previous.bit_length()  # the smallest power of two above previous
    else:
        target = 1 << max(0, (previous - 1).bit_length() - 1)  # the largest one below it
    return int(min(hi, max(lo, target)))


def nearest_power(value: int, lo: int, hi: int) -> int:
    """The power of two in [lo, hi] nearest to ``value`` on a log scale (half-way: up)."""
    value = min(hi, max(lo, int(value)))
    down = 1 << (value.bit_length() - 1)
    if down == value:
        return value
    up = down * 2
    return int(min(hi, up if math.log2(value) - math.log2(down) >= 0.5 else down))


# --- the parameter tables --------------------------------------------------------------
#: ``Param.step`` of an integer whose − / + go through powers of two (:func:`power_step`).
POWERS = "powers of two"
#: ``Param.kind`` of a parameter its own module reads (the room store checks a code).
OWN = "own"


@dataclass(frozen=True)
class Param:
    """One query parameter: what it accepts, its default and how its widget moves.

    ``kind``: ``"int"``, ``"float"``, ``"choice"``, ``"flag"``, ``"text"`` or :data:`OWN`.
    ``lo``, ``hi``: the range of a number (a text's length: ``hi``); ``options``: a
    choice's options or a flag's accepted words, as written in a URL; ``default``: the
    value a widget starts from (a choice: its option; a flag: a bool). ``step``: a
    slider's step, or :data:`POWERS`. ``labelled``: written by the app, never by the
    widget (a choice shown with translated labels, or whose default follows other
    values; the presenter toggle). ``snap``: where a linked number moves
    (training trains at powers of two), said in the warning (catalog key ``changed``).
    ``given``: the parameter as the other clean values make it (``n_heads`` divides
    ``d_model``; a ``step`` needs ``present``); None there means "ignored, needs
    ``needs``". ``allowed``: catalog key of the allowed values, if not the kind's own.
    ``worst``: the costliest value, as the benchmarks' worst case sets it.
    """

    key: str
    kind: str
    default: Any = None
    lo: float | None = None
    hi: float | None = None
    options: tuple[str, ...] = ()
    step: float | str | None = None
    labelled: bool = False
    snap: Callable[[int], int] | None = None
    changed: str | None = None
    given: Callable[[Param, Mapping[str, Any]], Param | None] | None = None
    needs: str | None = None
    allowed: str | None = None
    worst: str | None = None


@dataclass(frozen=True)
class Note:
    """What :func:`read_query` did with one parameter: ``reason`` is ``"bad"`` (malformed
    or out of range), ``"repeated"``, ``"changed"`` (moved to ``used``), ``"needs"``
    (ignored without another parameter) or ``"unknown"``. ``param``: the parameter as
    the other values made it (its allowed values and default)."""

    key: str
    reason: str
    param: Param | None = None
    given: Any = None
    used: Any = None


@dataclass(frozen=True)
class Reading:
    """The query string read against a table: ``values`` (every parameter: the URL's if
    good, else its default), ``query`` (the URL as it should stand: good values as
    given, changed ones as used, the rest dropped) and ``notes``."""

    values: dict[str, Any]
    query: dict[str, list[str]]
    notes: tuple[Note, ...]


def parse(param: Param, raw: Sequence[str]) -> Any | None:
    """The value of ``param`` that the single value in ``raw`` means, else None."""
    if param.kind == "int":
        return parse_int(raw, int(param.lo), int(param.hi))
    if param.kind == "float":
        return parse_float(raw, param.lo, param.hi)
    if param.kind == "choice":
        return parse_choice(raw, param.options)
    if param.kind == "flag":
        value = raw[0].strip().lower() if len(raw) == 1 else None
        return None if value not in param.options else value in ("1", "true")
    if param.kind == "text":
        return raw[0] if len(raw) == 1 and len(raw[0]) <= param.hi else None
    return raw[0] if len(raw) == 1 else None


def read_query(
    query: Mapping[str, Sequence[str]],
    table: Sequence[Param],
    held: Mapping[str, Any] | None = None,
) -> Reading:
    """Check the whole query string against ``table``, in the table's order (a
    parameter's ``given`` sees the values before it).

    ``held``: values the session already holds (a widget drawn before), taken as they
    are where the URL mirrors them; a URL that says otherwise (Back and Forward bring
    back an older one) is checked like a new link. A parameter given more than once, malformed or out of range
    is dropped (its default used), one moved by ``snap`` is changed, one ignored for want
    of another is dropped, and any key the table lacks is unknown: each gets a
    :class:`Note`. Pure: no Streamlit.
    """
    held = held or {}
    values: dict[str, Any] = {}
    fixed: dict[str, list[str]] = {}
    notes: list[Note] = []
    for declared in table:
        key = declared.key
        param = declared.given(declared, values) if declared.given else declared
        raw = list(query.get(key, ()))
        if param is None:  # ignored without another parameter (a step without present)
            values[key] = declared.default
            if raw:
                notes.append(Note(key, "needs", declared))
            continue
        if key in held and (not raw or _mirrors(param, raw, held[key])):
            values[key] = held[key]
            if raw:
                fixed[key] = raw  # the URL mirrors the widget
            continue
        values[key] = param.default
        if not raw:
            continue
        if param.kind == OWN:
            fixed[key] = raw  # its module reads it
            values[key] = None
            continue
        if len(raw) > 1:
            notes.append(Note(key, "repeated", param, given=len(raw)))
            continue
        value = parse(param, raw)
        if value is None:
            notes.append(Note(key, "bad", param))
            continue
        if param.snap is not None and param.snap(value) != value:
            notes.append(Note(key, "changed", param, given=value, used=param.snap(value)))
            value = param.snap(value)
            fixed[key] = [str(value)]
        else:
            fixed[key] = raw
        values[key] = value
    known = {p.key for p in table}
    unknown = [k for k in query if k not in known]
    notes.extend(Note(k, "unknown") for k in unknown)
    return Reading(values, fixed, tuple(notes))


def _mirrors(param: Param, raw: Sequence[str], held: Any) -> bool:
    """Whether ``raw`` is what the URL says of the value the session holds (a URL that
    says otherwise came from elsewhere: the browser's history)."""
    if len(raw) != 1:
        return False
    if param.kind == "text" and len(raw[0]) > param.hi:
        # a text typed past the box's length: the box kept its first characters (its
        # on_change runs before the URL is read), so the URL still holds the whole text
        return raw[0][: int(param.hi)] == held
    return raw[0] == str(held) or parse(param, raw) == held


def defaults(table: Sequence[Param]) -> dict[str, Any]:
    """Every parameter's default, each dependent one given the others' defaults."""
    return read_query({}, table).values
