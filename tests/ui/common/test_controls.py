"""Query-parameter parsing: what a URL may set, and what falls back to the default."""

import pytest

from ui.common.params import parse_choice, parse_float, parse_int, power_step


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["64"], 64),
        (["1"], 1),
        (["4096"], 4096),
        ([" 128 "], 128),
        (["+7"], 7),
        (["0"], None),
        (["4097"], None),
        (["-3"], None),
        (["abc"], None),
        (["3.5"], None),
        (["1e3"], None),
        (["nan"], None),
        (["inf"], None),
        ([""], None),
        (["64", "128"], None),
        (["9" * 400], None),
        (["<script>alert(1)</script>"], None),
        (["６４"], 64),  # Python (and so Streamlit) reads Unicode digits as numbers
    ],
)
def test_parse_int(raw, expected):
    assert parse_int(raw, 1, 4096) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["1.5"], 1.5),
        (["0.25"], 0.25),
        (["4"], 4.0),
        ([".5"], 0.5),
        (["2e0"], 2.0),
        (["0.2"], None),
        (["4.01"], None),
        (["nan"], None),
        (["-inf"], None),
        (["1,5"], None),
        (["1.5", "2"], None),
        (["0x10"], None),
    ],
)
def test_parse_float(raw, expected):
    assert parse_float(raw, 0.25, 4.0) == expected


def test_parse_choice():
    opts = ("normal", "uniform", "rademacher")
    assert parse_choice(["uniform"], opts) == "uniform"
    assert parse_choice(["Uniform"], opts) is None
    assert parse_choice(["normal", "uniform"], opts) is None
    assert parse_choice([""], opts) is None


@pytest.mark.parametrize(
    ("value", "previous", "want"),
    [
        (65, 64, 128),  # + from a power: the next one
        (63, 64, 32),  # −
        (101, 100, 128),  # + from elsewhere: the next power up
        (99, 100, 64),  # − from elsewhere: the next power down
        (2, 1, 2),
        (1, 2, 1),
        (3, 2, 4),
        (4095, 4096, 2048),
        (100, 64, 100),  # typed, linked, ÷2 / ×2: kept
        (128, 64, 128),
        (100, None, 100),  # nothing shown before
        (17, 16, 32),
        (15, 16, 16),  # clamped to the input's range
        (3001, 3000, 4096),
    ],
)
def test_power_step(value, previous, want):
    lo, hi = (16, 1024) if previous == 16 else (1, 4096)
    assert power_step(value, previous, lo, hi) == want
