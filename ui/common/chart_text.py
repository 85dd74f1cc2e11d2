"""The words of a chart: :class:`ChartText`, what every builder gets from its catalog
table (:func:`ui.common.i18n.chart_text`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ChartText:
    """The words of one chart in the page's language: its catalog table, each entry
    formatted (:func:`ui.common.i18n.chart_text`).

    A chart's table (``[saturation.overflow]`` in ``locales/en.toml`` and ``zh.toml``)
    has ``title`` and ``alt`` (the description a screen reader reads), usually ``x`` and
    ``y`` (axis titles), optionally ``subtitle``, a ``tips`` table (tooltip titles by
    field) and any other entry a builder needs (legend or reference labels), read with
    ``text["name"]``. Hashable: the entries are the chart's words in its cache key.
    """

    entries: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, tips: Mapping[str, str] | None = None, **entries: str) -> ChartText:
        """A chart's words given by hand (tests): ``ChartText.of(title="T", tips={…})``."""
        flat = dict(entries)
        flat.update({f"tips.{field}": text for field, text in (tips or {}).items()})
        return cls(tuple(sorted(flat.items())))

    def __getitem__(self, name: str) -> str:
        for entry, text in self.entries:
            if entry == name:
                return text
        raise KeyError(f"chart text has no entry {name!r}: {[e for e, _ in self.entries]}")

    def get(self, name: str, default: str | None = None) -> str | None:
        """Entry ``name``, or ``default`` if the table has none."""
        return next((text for entry, text in self.entries if entry == name), default)

    @property
    def title(self) -> str:
        return self["title"]

    @property
    def subtitle(self) -> str | None:
        return self.get("subtitle")

    @property
    def description(self) -> str:
        return self["alt"]

    @property
    def x(self) -> str:
        return self["x"]

    @property
    def y(self) -> str:
        return self["y"]

    @property
    def tips(self) -> dict[str, str]:
        """Tooltip titles by field (the table's ``tips``)."""
        return {e[5:]: text for e, text in self.entries if e.startswith("tips.")}
