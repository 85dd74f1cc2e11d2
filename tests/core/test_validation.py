"""Argument checks (core/validation.py) and the core layering rule."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest

from core.validation import (
    check_choice,
    check_finite,
    check_float_dtype,
    check_int,
    check_positive,
    check_positive_int,
    check_probability,
    check_real,
    check_rho,
    check_rng,
)

CORE = Path(__file__).resolve().parents[2] / "core"


def test_check_int_message_names_argument_and_range():
    with pytest.raises(ValueError, match=re.escape("d_k must be an integer in [1, 65536], got 0")):
        check_int("d_k", 0, 1, 65536)


@pytest.mark.parametrize("value", [64, np.int64(64), 64.0, np.float32(64.0)])
def test_check_int_accepts_integral_values(value):
    result = check_int("d_k", value, 1, 65536)
    assert result == 64
    assert type(result) is int


@pytest.mark.parametrize("value", [True, 1.5, math.nan, math.inf, "64", None, [64]])
def test_check_int_rejects_non_integers(value):
    with pytest.raises(ValueError, match=r"^n_keys must be an integer"):
        check_int("n_keys", value, 1)


def test_check_int_bounds_are_inclusive():
    assert check_int("n", 1, 1, 3) == 1
    assert check_int("n", 3, 1, 3) == 3
    with pytest.raises(ValueError, match=re.escape("n must be an integer in [1, 3], got 4")):
        check_int("n", 4, 1, 3)
    with pytest.raises(ValueError, match=re.escape("[1, inf)")):
        check_positive_int("n", 0)


def test_check_real_interval_and_message():
    assert check_real("alpha", 0.5, 0.0, 4.0) == 0.5
    assert check_real("alpha", 0, 0.0, 4.0) == 0.0
    with pytest.raises(ValueError, match=re.escape("alpha must be a finite number in [0, 4]")):
        check_real("alpha", 4.5, 0.0, 4.0)
    for bad in (math.nan, math.inf, -math.inf, True, "0.5", None):
        with pytest.raises(ValueError, match=r"^alpha must be a finite number"):
            check_real("alpha", bad, 0.0, 4.0)


def test_open_bounds():
    with pytest.raises(ValueError, match=re.escape("sigma must be a finite number in (0, inf)")):
        check_positive("sigma", 0.0)
    assert check_positive("sigma", 1e-300) == 1e-300
    for bad in (1.0, -1.0, 1.5):
        with pytest.raises(ValueError, match=re.escape("rho must be a finite number in (-1, 1)")):
            check_rho("rho", bad)
    assert check_rho("rho", -0.999) == -0.999
    assert check_probability("p", 1.0) == 1.0
    with pytest.raises(ValueError, match="p must be a finite number in"):
        check_probability("p", 1.01)


def test_check_choice():
    assert check_choice("dist", "normal", ("normal", "uniform")) == "normal"
    with pytest.raises(ValueError, match="dist must be one of normal, uniform; got 'cauchy'"):
        check_choice("dist", "cauchy", ("normal", "uniform"))


def test_check_finite():
    out = check_finite("z", [1, 2, 3])
    assert out.dtype == np.float64
    assert check_finite("z", np.ones(2, np.float32)).dtype == np.float32
    with pytest.raises(ValueError, match="z must not contain NaN"):
        check_finite("z", [1.0, math.nan])
    with pytest.raises(ValueError, match=re.escape("z must not contain +inf")):
        check_finite("z", [1.0, math.inf])
    with pytest.raises(ValueError, match="z must not contain -inf"):
        check_finite("z", [1.0, -math.inf])
    assert np.isneginf(check_finite("z", [-math.inf], allow_neg_inf=True)).all()
    with pytest.raises(ValueError, match="z must be a real-valued array"):
        check_finite("z", ["a"])


def test_check_float_dtype_and_rng():
    assert check_float_dtype("dtype", np.float16) == np.dtype(np.float16)
    assert check_float_dtype("dtype", "float32") == np.dtype(np.float32)
    for bad in (np.int32, "nope", complex):
        with pytest.raises(ValueError, match="dtype must be a NumPy floating dtype"):
            check_float_dtype("dtype", bad)
    rng = np.random.default_rng(0)
    assert check_rng("rng", rng) is rng
    with pytest.raises(ValueError, match=r"rng must be a numpy\.random\.Generator"):
        check_rng("rng", 0)


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_imports_no_ui_libraries():
    files = sorted(CORE.rglob("*.py"))
    assert files, "core/ has no Python files"
    for path in files:
        banned = _imported_modules(path) & {"streamlit", "altair", "pandas"}
        assert not banned, f"{path.name} imports {sorted(banned)}; core/ must stay pure NumPy"
