"""Sections of the recap: the story's answers, one sentence and one small chart per page,
one to a row; then the self-check, one card per tab.
"""

from __future__ import annotations

import html

import streamlit as st

from ui.common import specs, workshop
from ui.common.i18n import chart_text, t
from ui.common.pages import page
from ui.recap import charts, data
from ui.story.answers import Answer


# --- 1. the story's answers ----------------------------------------------------------------
def answers(seed: int) -> None:
    """Per story page: its sentence, a link to the page, and its answering chart in small."""
    st.header(t("recap.answers_header", n=len(data.PAGES)))
    workshop.takeaway(t("recap.answers_takeaway"))
    colour_key()
    # one item to a row: two to a row leave a small chart ~80 px wide beside the open
    # sidebar of an 800-px window, too narrow for its axis titles and labels
    with st.container(key="recap_items"):  # layout.css sets its sentences closer
        for name in data.PAGES:
            item(name, seed)


def colour_key() -> None:
    """The scalings' colours, the same in every chart below (which draw no legend)."""
    alpha = data.settings("sqrt_vs_d", 0)["alpha"]
    entries = [
        f'<span style="color:{color}">■</span>\u00a0'
        + html.escape(t(f"recap.key_{name}", alpha=f"{alpha:g}"))
        for name, color in charts.KEY
    ]
    # Markdown's :color[…] takes named colours only; st.html keeps a span's style
    st.html(f"<p>{' &nbsp; '.join(entries)}</p>")


#: Width of an item's sentence beside its chart, px: on a phone the sentence takes five or
#: six lines, about the chart's height, and the chart the rest of the row.
SENTENCE_PX = 125


def item(name: str, seed: int) -> None:
    """One page's sentence, linked to the page, beside its chart (or why it is not drawn):
    side by side on every screen, so that a phone shows the eight in three screens."""
    sentence = t(f"recap.{name}")
    row = st.container(horizontal=True, wrap=False, gap="small", vertical_alignment="center")
    with row:
        st.page_link(
            page(name).script,
            label=t("recap.item", title=t(f"home.step_{name}_title"), text=sentence),
            width=SENTENCE_PX,
        )
        if name == "training" and not data.training_sweep_ready(seed):
            st.caption(t("recap.training_missing", seed=seed))
            return
        small_chart(name, data.answer(name, seed))


def small_chart(name: str, answer: Answer) -> None:
    """``answer`` drawn small (:func:`ui.recap.charts.small`): its page's data and marks,
    no title, short axis titles and an alt text of the recap's (``recap.<name>_alt``,
    ``_x``, ``_y``)."""
    words = {"title": "", **{part: t(f"recap.{name}_{part}") for part in ("alt", "x", "y")}}
    text = chart_text(answer.words, replace=words, **answer.values)
    spec = specs.drawn(
        f"recap.{name}",
        answer.builder,
        answer.frame,
        text,
        options=answer.options,
        marker=answer.marker,
        presenting=workshop.is_presenting(),
        swap_data=answer.swap_data,
    )
    st.vega_lite_chart(spec=charts.small(spec), width="stretch", key=f"recap_{name}")


# --- 2. the self-check -----------------------------------------------------------------------
def self_check(seed: int) -> None:
    """The story's prediction cards asked again, each under a key of its own
    (``recap.<card>``) and graded as on its page; in a room the presenter sees each card's
    first answers on its page beside the recap's."""
    asked = [(name, data.card(name, seed)) for name in data.CARDS]
    asked = [(name, card) for name, card in asked if card is not None]
    st.header(t("recap.check_header"))
    workshop.takeaway(t("recap.check_takeaway", n=len(asked)))
    tabs = st.tabs([t("recap.check_tab", k=k, title=t(f"home.step_{name}_title"))
                    for k, (name, _) in enumerate(asked, start=1)])  # fmt: skip
    for tab, (_, card) in zip(tabs, asked, strict=True):
        with tab:
            first = card["key"]
            workshop.predict(**(card | {"key": f"recap.{first}"}), earlier=first)
