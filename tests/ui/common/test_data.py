"""Shared cached data: one rule for the rows of every saturation sweep."""

from ui.common import data
from ui.gradients import data as gradients_data
from ui.saturation import data as saturation_data
from ui.sqrt_vs_d import data as sqrt_vs_d_data
from ui.variance import data as variance_data
from ui.which_d import data as which_d_data


def test_every_page_uses_one_sweep_row_rule():
    """A sweep computed for one page is a cache hit on the others."""
    assert (
        gradients_data.gradient_rows(10)
        == data.SWEEP_ROWS
        == saturation_data.sat_sweep_rows(10)
        == sqrt_vs_d_data.sqrt_vs_d_rows(10)
    )
    assert gradients_data.gradient_rows(512) * 512 <= data.SWEEP_ROW_KEY_BUDGET
    assert data.sweep_rows(512) == data.SWEEP_ROW_KEY_BUDGET // 512


def test_random_streams_are_unique_across_pages():
    """Two pictures on one stream would share their random draws."""
    modules = [data, gradients_data, saturation_data, sqrt_vs_d_data, variance_data, which_d_data]
    streams = {
        f"{m.__name__}.{name}": value
        for m in modules
        for name, value in vars(m).items()
        if name.startswith("STREAM_")
    }
    assert len(streams) >= 15
    assert len(set(streams.values())) == len(streams), streams
