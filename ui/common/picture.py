"""A picture the app draws as SVG (home's Transformer layer, the language model's diagram),
with its words beside it or under it.

``st.html``'s sanitiser drops SVG, so the picture is an ``st.components.v2`` component. It
lives in the page's own DOM, not a shadow root: its ``currentColor`` is the page's text
colour in either theme, and its ``url(#…)`` arrow markers resolve.
"""

from __future__ import annotations

import streamlit as st

#: The widest the words beside a picture get (about 70 characters a line); narrower than
#: that beside it, they go under it.
WORDS_PX = 480

_PICTURE = st.components.v2.component(
    "lab_picture",
    html='<div class="lab-picture"></div>',
    js="export default function ({parentElement, data}) {\n"
    "  parentElement.querySelector('.lab-picture').innerHTML = data.svg;\n}",
    isolate_styles=False,
)


def beside_words(svg: str, *, key: str, width: int):
    """Draw ``svg`` as element ``key``, at most ``width`` px wide (its natural width: its
    labels keep their size), and return the place beside it for its words, at most
    :data:`WORDS_PX` wide. Where the two do not fit side by side (a phone; 800 or 1000 px
    with the sidebar open, where two columns drew the labels at half size or the words
    some 15 characters a line) the words go under it.

    ``svg`` is markup the app builds with every label escaped (``ui/home/diagram.py``,
    ``ui/language_model/diagram.py``): trusted, it is set as the picture's inner HTML.
    """
    row = st.container(horizontal=True, gap="large")
    with row.container(width=width):
        _PICTURE(data={"svg": svg}, key=key)
    return row.container(width=WORDS_PX)
