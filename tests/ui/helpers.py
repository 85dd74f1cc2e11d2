"""Helpers the chart tests of several pages share."""

from __future__ import annotations

import re


def legend_columns_at(legend: dict, width: int) -> int:
    """Entries per row a legend_below legend draws on a plot ``width`` px wide."""
    columns = legend["columns"]
    if isinstance(columns, int):
        return columns
    expr = columns["expr"]  # "width >= 272 ? 2 : 1", widest first
    for need, k in re.findall(r"width >= (\d+) \? (\d+)", expr):
        if width >= int(need):
            return int(k)
    return int(expr.rsplit(":", 1)[-1])
