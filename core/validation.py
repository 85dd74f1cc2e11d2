"""Small argument checks shared by the core modules.

Every check either returns the value in a canonical type (``int``, ``float``,
``ndarray``, ``np.dtype``) or raises ``ValueError`` whose message names the
argument and the allowed range, e.g.::

    d_k must be an integer in [1, 65536], got 0

The checks are generic on purpose: any core module may import them. They use
only NumPy and the standard library.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

__all__ = [
    "check_choice",
    "check_finite",
    "check_float_dtype",
    "check_int",
    "check_positive",
    "check_positive_int",
    "check_probability",
    "check_real",
    "check_rho",
    "check_rng",
]


def _interval(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    """Human-readable interval, e.g. ``[1, 65536]`` or ``(-1, 1)``."""
    left = "(" if lo_open or lo is None else "["
    right = ")" if hi_open or hi is None else "]"
    lo_text = "-inf" if lo is None else f"{lo:g}" if isinstance(lo, float) else str(lo)
    hi_text = "inf" if hi is None else f"{hi:g}" if isinstance(hi, float) else str(hi)
    return f"{left}{lo_text}, {hi_text}{right}"


def check_int(name: str, value: object, lo: int | None = None, hi: int | None = None) -> int:
    """Check that ``value`` is an integer in the closed interval ``[lo, hi]``.

    Integral-valued reals (``64.0``, ``np.float64(64)``) are accepted and
    returned as ``int``; ``bool`` is rejected.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : object
        Value to check.
    lo, hi : int or None
        Inclusive bounds; ``None`` means unbounded.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``value`` is not an integer or lies outside ``[lo, hi]``.
    """
    message = f"{name} must be an integer in {_interval(lo, hi, False, False)}, got {value!r}"
    if isinstance(value, bool | np.bool_):
        raise ValueError(message)
    if isinstance(value, numbers.Integral):
        result = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        result = int(value)
    else:
        raise ValueError(message)
    if (lo is not None and result < lo) or (hi is not None and result > hi):
        raise ValueError(message)
    return result


def check_positive_int(name: str, value: object, lo: int = 1, hi: int | None = None) -> int:
    """Check that ``value`` is an integer in ``[lo, hi]`` with ``lo >= 1`` by default.

    Same as :func:`check_int` with a default lower bound of 1.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : object
    lo : int
    hi : int or None

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``value`` is not an integer or lies outside ``[lo, hi]``.
    """
    return check_int(name, value, lo, hi)


def check_real(
    name: str,
    value: object,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """Check that ``value`` is a finite real number inside an interval.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : object
        Value to check (Python or NumPy scalar; ``bool`` is rejected).
    lo, hi : float or None
        Bounds; ``None`` means unbounded.
    lo_open, hi_open : bool
        Whether the corresponding bound is excluded.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``value`` is not a finite real number or lies outside the interval.
    """
    message = (
        f"{name} must be a finite number in {_interval(lo, hi, lo_open, hi_open)}, got {value!r}"
    )
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(message)
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(message)
    if lo is not None and (result < lo or (lo_open and result == lo)):
        raise ValueError(message)
    if hi is not None and (result > hi or (hi_open and result == hi)):
        raise ValueError(message)
    return result


def check_positive(name: str, value: object, hi: float | None = None) -> float:
    """Check that ``value`` is a finite real number ``> 0`` (and ``<= hi`` if given).

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : object
    hi : float or None

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``value`` is not a finite real number in ``(0, hi]``.
    """
    return check_real(name, value, 0.0, hi, lo_open=True)


def check_probability(name: str, value: object) -> float:
    """Check that ``value`` is a finite real number in ``[0, 1]``.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : object

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``value`` is not a finite real number in ``[0, 1]``.
    """
    return check_real(name, value, 0.0, 1.0)


def check_rho(name: str, value: object) -> float:
    """Check a correlation coefficient: a finite real number with ``|value| < 1``.

    ``|rho| = 1`` is excluded because the correlated-key construction
    ``k = rho q + sqrt(1 - rho²) eps`` then degenerates to ``k = ±q``.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : object

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``value`` is not a finite real number in ``(-1, 1)``.
    """
    return check_real(name, value, -1.0, 1.0, lo_open=True, hi_open=True)


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """Check that ``value`` is one of ``choices`` (compared as strings).

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : object
    choices : iterable of str

    Returns
    -------
    str
        ``value``.

    Raises
    ------
    ValueError
        Naming ``name`` and listing the allowed choices.
    """
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
    return value


def check_finite(
    name: str,
    a: object,
    *,
    allow_neg_inf: bool = False,
    allow_pos_inf: bool = False,
) -> np.ndarray:
    """Convert ``a`` to a floating ndarray and reject NaN (and infinities).

    Integer and boolean input is converted to ``float64``; floating input keeps
    its dtype.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    a : array_like
        Values to check.
    allow_neg_inf, allow_pos_inf : bool
        Whether ``-inf`` / ``+inf`` entries are allowed (``-inf`` is how a
        masked logit is written).

    Returns
    -------
    ndarray
        ``a`` as a floating array (no copy when it already is one).

    Raises
    ------
    ValueError
        If ``a`` is not numeric, or contains NaN or a disallowed infinity.
    """
    arr = np.asarray(a)
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    elif arr.dtype.kind != "f":
        raise ValueError(f"{name} must be a real-valued array, got dtype {arr.dtype}")
    # one pass for the usual case: a finite sum means no NaN and no infinity (±inf, or
    # inf − inf = NaN, would show in it); an overflowing sum is checked entry by entry
    with np.errstate(over="ignore", invalid="ignore"):
        total = arr.sum()
    if math.isfinite(total):
        return arr
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if not allow_pos_inf and np.isposinf(arr).any():
        raise ValueError(f"{name} must not contain +inf")
    if not allow_neg_inf and np.isneginf(arr).any():
        raise ValueError(f"{name} must not contain -inf")
    return arr


def check_float_dtype(name: str, dtype: object) -> np.dtype:
    """Check that ``dtype`` names a NumPy floating type (float16, float32, float64, ...).

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    dtype : object
        Anything ``np.dtype`` accepts (``np.float16``, ``"float32"``, …).

    Returns
    -------
    numpy.dtype

    Raises
    ------
    ValueError
        If ``dtype`` is not understood by NumPy or is not a floating type.
    """
    try:
        result = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError as exc:
        raise ValueError(f"{name} must be a NumPy floating dtype, got {dtype!r}") from exc
    if result.kind != "f":
        raise ValueError(f"{name} must be a NumPy floating dtype, got {dtype!r}")
    return result


def check_rng(name: str, rng: object) -> np.random.Generator:
    """Check that ``rng`` is a ``numpy.random.Generator`` (e.g. ``np.random.default_rng(0)``).

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    rng : object

    Returns
    -------
    numpy.random.Generator
        ``rng``.

    Raises
    ------
    ValueError
        If ``rng`` is anything else (a seed, the legacy ``RandomState``, …).
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{name} must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng
