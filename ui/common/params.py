"""What a query parameter's raw values mean, and where d_k's − / + lead: pure functions
(no Streamlit), used by :mod:`ui.common.controls` and the pages' own URL-bound inputs."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
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
