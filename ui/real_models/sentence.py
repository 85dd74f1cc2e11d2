"""The learner's own sentence on the "In real models" page: the text box and its examples,
what the tokenizer made of the text, and every head of the sentence section 2 shows.

A typed text takes the path of a shipped sentence: :func:`text_box` runs it through
all-MiniLM-L6-v2 (:mod:`ui.real_models.model`; the weights are loaded once per server by
:func:`ui.real_models.data.minilm`, and only once somebody types) and returns a
:class:`~ui.real_models.data.Chosen`, as a shipped sentence gets one. The text is only
ever shown as text — in the box, in ``st.code`` and as chart data — never as Markdown or
HTML; messages about it quote counts, not the text.
"""

from __future__ import annotations

import math
from functools import partial

import streamlit as st

from core import real_models as rm
from ui.common import controls, workshop
from ui.common.i18n import t
from ui.common.pages import page
from ui.real_models import charts, data, frames
from ui.real_models import model as mm

#: The text box's query parameter.
TEXT_KEY = "text"
#: Most characters the box (and so a link) holds: a link stays short, and 1,000
#: characters are far more than the MAX_TOKENS tokens the model reads.
MAX_CHARS = int(page("real_models").param(TEXT_KEY).hi)
#: One click away: a classic coreference sentence, emoji and Chinese (mostly [UNK]). Model
#: inputs, like the shipped sentences: the same in every language.
EXAMPLES = (
    "The animal didn't cross the street because it was too tired.",
    "I love 🍕, but my cat 🐱 only eats fish 🐟.",
    "注意力为什么要除以根号 d？",
)
#: Longest quote of the text in a chart's alt text.
ALT_CHARS = 200


def _set_text(text: str) -> None:
    st.session_state[TEXT_KEY] = text


def clear_text() -> None:
    """Empty the box (a shipped sentence was picked)."""
    st.session_state[TEXT_KEY] = ""


def text_box(c: data.Corpus) -> data.Chosen | None:
    """The box, its examples and what became of the text: the chosen sentence if the text
    ran through the model, else None (no text, a text the model cannot read, or no
    weights on this server — each said under the box)."""
    text = controls.text_area(
        TEXT_KEY,
        t("real_models.text"),
        placeholder=t("real_models.text_placeholder", max=mm.MAX_TOKENS),
        help=t("real_models.text_help", max=mm.MAX_TOKENS, chars=f"{MAX_CHARS:,}"),
    )
    st.caption(t("real_models.examples"))
    row = st.container(horizontal=True, gap="small")
    for i, example in enumerate(EXAMPLES):
        row.button(
            example,
            key=f"text_example_{i}",
            on_click=_set_text,
            args=(example,),
            help=t(f"real_models.example_{i}"),
            width="content",
        )
    if not text:
        return None
    if not text.strip():  # nothing to run: the weights are not even needed
        st.warning(t("real_models.text_empty"), icon=":material/edit_note:")
        return None
    with st.spinner(t("real_models.text_running")):
        model = data.minilm()
        if isinstance(model, mm.WeightsUnavailable):
            heads = model
        else:
            try:
                heads = data.typed_heads(text, model)
            except mm.TextError as exc:
                heads = exc
    if isinstance(heads, mm.WeightsUnavailable):
        st.warning(
            t("real_models.weights_missing", n=len(c.sentences)), icon=":material/cloud_off:"
        )
        st.code("\n".join(heads.reasons), language=None, wrap_lines=True)
        return None
    if isinstance(heads, mm.TextError):
        st.warning(t(f"real_models.text_{heads.code}"), icon=":material/edit_note:")
        return None
    tokens = heads.typed
    st.caption(t("real_models.text_tokens", t=len(tokens.tokens), max=mm.MAX_TOKENS))
    if tokens.truncated:
        st.info(
            t(
                "real_models.text_cut",
                n=tokens.n_text_tokens,
                kept=len(tokens.tokens) - 2,
                max=mm.MAX_TOKENS,
                chars=f"{tokens.used_chars:,}",
                total=f"{len(text):,}",
            ),
            icon=":material/content_cut:",
        )
    return data.Chosen(heads, model=model)


def quoted(heads: data.SentenceHeads) -> str:
    """The sentence for an alt text: the part the model read, on one line, without control
    or format characters (a bidi override, say), at most ALT_CHARS long."""
    text = heads.text if heads.typed is None else heads.text[: heads.typed.used_chars]
    text = "".join(ch for ch in " ".join(text.split()) if ch.isprintable())
    return text if len(text) <= ALT_CHARS else text[: ALT_CHARS - 1] + "…"


def tokens_view(c: data.Corpus, chosen: data.Chosen) -> None:
    """The sentence as the model reads it: its tokens, and what [UNK] among them means."""
    heads = chosen.heads
    which = (
        t("real_models.which_typed")
        if chosen.index is None
        else t("real_models.which_shipped", i=chosen.index)
    )
    st.markdown(t("real_models.tokens_title", t=len(heads.tokens), which=which))
    st.code(" ".join(heads.tokens), language=None, wrap_lines=True)
    typed = heads.typed
    if typed is not None and typed.n_unk:
        st.info(
            t(
                "real_models.unk_note",
                n=typed.n_unk,
                total=len(typed.tokens) - 2,
                share=f"{100 * typed.unk_share:.0f} %",
                vocab=f"{chosen.model.config.vocab_size:,}",
            ),
            icon=":material/help:",
        )
        st.caption(t("real_models.unk_pieces"))
        st.code("  ".join(typed.unk_pieces), language=None, wrap_lines=True)


def grids(c: data.Corpus, chosen: data.Chosen, divisor: str, label: str) -> None:
    """Layer × head heatmaps of the chosen sentence under ``divisor``: each head's logit std
    and its mean row entropy (tooltips: the extremes)."""
    heads = chosen.heads
    n_tokens = len(heads.tokens)
    values = {
        "layers": c.n_layers,
        "heads": c.n_heads,
        "div": label,
        "sentence": quoted(heads),
        "t": n_tokens,
        "log_t": f"{math.log(n_tokens):.2f}",
    }
    for col, value in zip(st.columns(2), ("std", "entropy"), strict=True):
        lo, hi = data.grid_range(heads, divisor, c.d_k, value)
        options = {
            "value": value,
            "extremes": frames.SENTENCE_EXTREMES[value],
            "fmt": ".1f",
            "log_color": value == "std",
        }
        with col:
            workshop.chart(
                f"real_models.sentence_{value}", charts.head_grid_heatmap,
                partial(frames.sentence_grid, chosen.index, chosen.text, divisor, value),
                options=options, source=[rm.head_summaries, rm.head_attention],
                lo=f"{lo:.2f}", hi=f"{hi:.2f}", **values,
            )  # fmt: skip
    st.caption(t("real_models.sgrid_caption", n=len(c.sentences), **values))
