"""The learner's own prompt, continued by every variant's best model at the head size shown.

A panel with controls of its own (``prompt``, ``temperature``, ``length``), drawn as a
fragment: a new prompt reruns the panel alone. The text is only ever shown as text — in
the box and in ``st.code`` — never as Markdown or HTML; the messages about it quote counts,
never the text.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core import char_lm
from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.common.pages import lr_text
from ui.language_model import charts, data, frames
from ui.language_model.sections import label, labels, nats


def notes(read: data.Prompt, context: int) -> None:
    """What became of the prompt: a Chinese prompt dropped whole, characters dropped (and
    which kind) or replaced, an empty start, a cut to the context."""
    n_vocab = len(char_lm.VOCAB)
    if read.empty and read.chinese:  # nothing left but Chinese was typed: say it in full
        st.warning(t("language_model.prompt_chinese", n=n_vocab), icon=":material/translate:")
    elif read.dropped:
        kinds = []
        if read.chinese:
            kinds.append(t("language_model.dropped_chinese", n=read.chinese))
        if read.other:
            kinds.append(t("language_model.dropped_other", n=read.other))
        st.warning(
            t(
                "language_model.prompt_dropped",
                n=read.dropped,
                vocab=n_vocab,
                kinds=t("language_model.sep").join(kinds),
            ),
            icon=":material/filter_alt:",
        )
    if read.empty and not read.chinese:
        said = (
            t("language_model.prompt_nothing") if read.typed else t("language_model.prompt_empty")
        )
        st.info(said, icon=":material/keyboard_return:")
    if read.replaced:
        st.info(t("language_model.prompt_replaced", n=read.replaced), icon=":material/swap_horiz:")
    if read.cut:
        st.info(
            t("language_model.prompt_cut", context=context, n=f"{read.cut + context:,}"),
            icon=":material/content_cut:",
        )


@fragments.panel
def own_prompt(d_h: int, seed: int) -> None:
    """The prompt box, the temperature and the length; the four continuations side by
    side; the next character's distribution. Reruns on its own."""
    cfg = data.sweep().config
    context = cfg["context"]
    st.header(t("language_model.prompt_header"))
    workshop.takeaway(t("language_model.prompt_takeaway", d_h=d_h))
    with st.container(border=True):
        text = controls.text_area(
            "prompt",
            t("language_model.prompt"),
            placeholder=t("language_model.prompt_placeholder"),
            help=t("language_model.prompt_help", n=len(char_lm.VOCAB), context=context),
        )
        left, right = st.columns([3, 2])
        with left:
            temperature = controls.float_slider(
                "temperature", t("language_model.temperature"),
                help=t("language_model.temperature_help"),
            )  # fmt: skip
        with right:
            length = int(controls.choice("length", t("language_model.length")))
    temperature = round(float(temperature), 2)
    read = data.read_prompt(text, context)
    notes(read, context)
    written = data.continuations(read.text, d_h, temperature, seed, length)
    m = data.models(d_h)
    for row in range(0, len(data.VARIANTS), 2):
        for col, i in zip(st.columns(2), range(row, row + 2), strict=True):
            info = m["models"][i]
            with col:
                st.markdown(f"**{label(m['variants'][i])}**")
                st.caption(
                    t(
                        "language_model.model_caption",
                        lr=lr_text(info["lr"]),
                        seed=info["seed"],
                        loss=nats(info["final_val_loss"]),
                    )
                )
                st.code(read.text + written[i], language=None, wrap_lines=True)
    st.caption(
        t(
            "language_model.sample_caption",
            seed=seed,
            t=f"{temperature:g}",
            length=length,
            context=context,
            keep=context // 2,
        )
    )
    st.markdown(t("language_model.next_text"))
    top = data.next_char(read.text, d_h, temperature).sort_values("rank")
    first = top.drop_duplicates("char").iloc[0]["char"]
    names = (t("language_model.space"), t("language_model.newline"))
    workshop.chart(
        "language_model.next_char", charts.next_char_bars,
        partial(frames.next_chars, read.text, d_h, temperature, labels(), names),
        source=char_lm.forward, t=f"{temperature:g}", d_h=d_h,
        first=frames.shown_char(first, names), k=data.TOP_CHARS,
    )  # fmt: skip
