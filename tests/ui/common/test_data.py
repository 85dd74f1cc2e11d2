"""Shared cached data: one rule for the rows of every saturation sweep, one stream each."""

import importlib

from ui.common import data
from ui.common.pages import PAGES, ROOT


def test_one_sweep_row_rule():
    """Every page's sweep takes its rows from ``sweep_rows``: a sweep computed for one
    page is a cache hit on the others."""
    assert data.sweep_rows(10) == data.SWEEP_ROWS
    assert data.sweep_rows(512) == data.SWEEP_ROW_KEY_BUDGET // 512
    assert data.sweep_rows(512) * 512 <= data.SWEEP_ROW_KEY_BUDGET


def test_alpha_sweep_adds_a_chosen_exponent_only():
    assert data.is_preset(0.5) and data.is_preset(0.5 + 1e-12) and not data.is_preset(0.55)
    assert data.is_preset(0.5, (0.0, 0.5)) and not data.is_preset(1.0, (0.0, 0.5))


def _data_modules() -> list:
    """``ui.common.data`` and the ``data`` module of every registered page that has one."""
    names = [s.name for s in PAGES if (ROOT / "ui" / s.name / "data.py").exists()]
    return [data] + [importlib.import_module(f"ui.{name}.data") for name in names]


def test_random_streams_are_unique_across_pages():
    """Two pictures on one stream would share their random draws."""
    modules = _data_modules()
    assert len(modules) >= 6
    streams = {
        f"{m.__name__}.{name}": value
        for m in modules
        for name, value in vars(m).items()
        if name.startswith("STREAM_")
    }
    assert len(streams) >= 15
    assert len(set(streams.values())) == len(streams), streams
