"""Controls and sections of the "In real models" page.

The sentence control is a select box that shows the sentences but keeps their *index*
in the URL (``?sentence=3``): Streamlit would write the displayed text, so this control
manages its query parameter itself, with the same validation and warning as every
bound control (:mod:`ui.common.controls`). Layer and head are 0-based, as in Hugging
Face ``transformers``.
"""

from __future__ import annotations

from functools import partial
from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from core import real_models as rm
from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.common.specs import text_table
from ui.real_models import charts, data, frames
from ui.real_models import sentence as own
from ui.real_models.field_guide import COLUMNS, ROWS

OFF = {"delta_color": "off", "delta_arrow": "off"}


def arch(c: data.Corpus) -> dict[str, int]:
    """Placeholders every text of the page may use: the model's shape and the corpus size."""
    return {
        "layers": c.n_layers,
        "heads": c.n_heads,
        "cells": c.n_layers * c.n_heads,
        "d_k": c.d_k,
        "n": len(c.sentences),
    }


def tc(c: data.Corpus, key: str, **values: object) -> str:
    """:func:`ui.common.i18n.t` with the placeholders of :func:`arch` filled in too."""
    return t(key, **{**arch(c), **values})


def _f(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


# --- controls ----------------------------------------------------------------------------
def _pick_instead(key: str) -> None:
    """A shipped sentence picked while the learner's text was shown: show that sentence."""
    st.session_state[key] = st.session_state[f"{key}_instead"]
    own.clear_text()


def sentence_select(
    key: str,
    sentences: tuple[str, ...],
    help: str | None = None,
    on_change=None,
    typed: bool = False,
) -> int:
    """A select box over ``sentences`` bound to ``?key=<index>`` (0-based; the app writes
    the URL: the box shows the sentences).

    ``typed``: the charts are of the learner's own text, so the box names no shipped
    sentence but says so; picking one there goes back to it (the link keeps the index it
    had). Returns the index of the shipped sentence."""
    n = len(sentences)
    p = controls.param(key)
    if (int(p.lo), int(p.hi)) != (0, n - 1):
        raise ValueError(f"{key}: the table declares {p.lo}…{p.hi}, the corpus has {n} sentences")
    if typed:
        st.selectbox(
            t("real_models.sentence"),
            range(n),
            index=None,
            placeholder=t("real_models.sentence_typed"),
            format_func=lambda i: f"{i} · {sentences[i]}",
            key=f"{key}_instead",
            help=help,
            on_change=_pick_instead,
            args=(key,),
        )
        return int(st.session_state.get(key, controls.link_value(key)))
    if key not in st.session_state:  # the link seeds the box when it is first made
        st.session_state[key] = controls.link_value(key)
    index = st.selectbox(
        t("real_models.sentence"),
        range(n),
        format_func=lambda i: f"{i} · {sentences[i]}",
        key=key,
        help=help,
        on_change=on_change,
    )
    controls.write_link(key, index, p.default)
    return int(index)


def divisor_select(c: data.Corpus) -> str:
    """The divisor of q·k the page's charts use (a counterfactual but for √d_k), bound to
    ``?divide_by=``."""
    return controls.choice(
        "divide_by",
        t("real_models.divisor"),
        labels=[divisor_label(name, c.d_k) for name in rm.DIVISORS],
        help=t("real_models.divisor_help"),
    )


def head_controls(c: data.Corpus) -> tuple[data.Chosen, int, int]:
    """The sentence (a shipped one, or the learner's own text beside them), layer and head,
    URL-bound; returns them. Picking a shipped sentence empties the text box; while the
    learner's text is shown, the sentence box says so."""
    left, right = workshop.control_columns([1, 1])
    with right:  # drawn first: the sentence box says whether the charts are of this text
        chosen = own.text_box(c)
    with left:
        sentence = sentence_select(
            "sentence",
            c.sentences,
            help=tc(c, "real_models.sentence_help"),
            on_change=own.clear_text,
            typed=chosen is not None,
        )
    if chosen is None:
        chosen = data.Chosen(data.shipped_heads(sentence), index=sentence)
    c1, c2 = workshop.control_columns(2)  # wide enough for the − / + buttons
    with c1:
        layer = controls.int_input(
            "layer", t("real_models.layer"), help=t("real_models.layer_help", top=c.n_layers - 1)
        )
    with c2:
        head = controls.int_input(
            "head", t("real_models.head_label"), help=t("real_models.head_help", top=c.n_heads - 1)
        )
    return chosen, layer, head


def divisor_label(name: str, d_k: int) -> str:
    """Legend text of a counterfactual divisor, e.g. ``÷√d_k = ÷5.66 (as trained)``."""
    return t(f"real_models.div_{name}", c=f"{rm.divisor_value(name, d_k):.3g}")


# --- 1. the trained heads at a glance ----------------------------------------------------
def predict_std(c: data.Corpus, fig: dict) -> bool:
    """Is the std of the scaled logits about 1? Answered by the live mean per-head std."""
    bounds = (0.8, 1.25, 3.0)
    measured = fig["std_mean"]
    answer = sum(measured >= b for b in bounds)
    return workshop.predict(
        "real_models_std",
        t("real_models_workshop.predict_q"),
        [t(f"real_models_workshop.opt_{i}") for i in range(4)],
        answer=answer,
        explain=tc(
            c,
            "real_models_workshop.predict_explain",
            std=_f(fig["std_mean"]),
            lo=_f(min(fig["std_layers"])),
            hi=_f(max(fig["std_layers"])),
            pooled=_f(fig["pooled_std"]),
            r=f"{c.d_k**0.5:.3g}",
            head_hi=_f(fig["std_hi"]),
            hi_l=fig["std_hi_head"][0],
            hi_h=fig["std_hi_head"][1],
        ),
        about=(round(measured, 6),),
    )


def glance_takeaway(c: data.Corpus, fig: dict, divisor: str) -> str:
    """Section 1's takeaway for the logits q·k/c of ``divisor`` c."""
    if divisor == "sqrt_d_k":
        return t("real_models.glance_takeaway")
    i = data.divisor_index
    return t(
        f"real_models.glance_takeaway_{divisor}",
        r=f"{c.d_k**0.5:.3g}",
        none=_pct(fig["collapsed"][i("none")]),
        sqrt=_pct(fig["collapsed"][i("sqrt_d_k")]),
        h=_f(fig["entropy"][i("d_k")]),
        log_t=_f(fig["log_t"]),
    )


def glance(c: data.Corpus, fig: dict, divisor: str) -> None:
    """Predict, then the layer × head heatmaps under ``divisor``, the pooled histogram and
    the myth card."""
    st.header(t("real_models.glance_header"))
    top = st.container()  # the takeaway, once the question is answered
    st.markdown(tc(c, "real_models.glance_lead"))
    if not predict_std(c, fig):
        return
    with top:
        workshop.takeaway(glance_takeaway(c, fig, divisor))
    log_t = _f(fig["log_t"])
    times = rm.logit_multiplier(divisor, c.d_k)
    label = t(f"real_models.div_short_{divisor}")
    specs = (
        ("std", True, {"lo": _f(times * fig["std_lo"]), "hi": _f(times * fig["std_hi"])}),
        ("entropy", False, {"log_t": log_t}),
    )
    for col, (value, log_color, extra) in zip(st.columns(2), specs, strict=True):
        with col:
            workshop.chart(
                f"real_models.grid_{value}", charts.head_grid_heatmap,
                partial(frames.head_grid, value, divisor),
                options={"value": value, "fmt": ".1f", "log_color": log_color},
                source=[rm.corpus_summaries, rm.head_summaries], div=label, **arch(c),
                **extra,
            )  # fmt: skip
    lo_l, lo_h = fig["std_lo_head"]
    hi_l, hi_h = fig["std_hi_head"]
    st.caption(
        t(
            "real_models.grid_caption",
            n=fig["n_sentences"],
            log_t=log_t,
            div=label,
            lo=_f(times * fig["std_lo"]),
            lo_l=lo_l,
            lo_h=lo_h,
            hi=_f(times * fig["std_hi"]),
            hi_l=hi_l,
            hi_h=hi_h,
        )
    )
    workshop.chart(
        "real_models.hist", charts.logit_histogram, partial(frames.histogram),
        source=[rm.pooled_histogram, rm.standard_normal_pdf],
        std=_f(fig["pooled_std"]), mean=_f(fig["pooled_mean"]),
    )  # fmt: skip
    left, right = st.columns(2)
    with left:
        st.metric(
            tc(c, "real_models.m_head_std"), _f(fig["std_mean"]), t("real_models.m_init"), **OFF
        )
    with right:
        st.metric(
            t("real_models.m_pooled_std"),
            _f(fig["pooled_std"]),
            t("real_models.m_pooled_mean", mean=_f(fig["pooled_mean"])),
            **OFF,
        )
    st.caption(
        t(
            "real_models.hist_caption",
            n=f"{c.hist['n']:,}",
            outside=_pct(fig["outside"]),
            lo=_f(fig["pooled_min"], 1),
            hi=_f(fig["pooled_max"], 1),
        )
    )
    workshop.myth(
        t("real_models_workshop.myth_claim"),
        t(
            "real_models_workshop.myth_reality",
            std=_f(fig["std_mean"]),
            lo=_f(min(fig["std_layers"])),
            hi=_f(max(fig["std_layers"])),
            head_lo=_f(fig["std_lo"]),
            head_hi=_f(fig["std_hi"]),
            pooled=_f(fig["pooled_std"]),
            top=_f(fig["pooled_max"], 1),
        ),
    )


# --- 2. one head -------------------------------------------------------------------------
@fragments.panel
def one_head_section(c: data.Corpus, divisor: str) -> None:
    """Section 2 with its own controls (sentence, text, layer, head: read here only, so
    moving them reruns this panel, not the page)."""
    one_head_intro(c)
    with workshop.controls_box():
        chosen, layer, head = head_controls(c)
    one_head(c, chosen, layer, head, divisor)


def one_head_intro(c: data.Corpus) -> None:
    st.header(t("real_models.head_header"))
    workshop.takeaway(t("real_models.head_takeaway"), tc(c, "real_models.data_note"))
    st.markdown(t("real_models.head_lead", d_k=c.d_k, r=f"{c.d_k**0.5:.3g}"))


def one_head(c: data.Corpus, chosen: data.Chosen, layer: int, head: int, divisor: str) -> None:
    """The chosen sentence as the model reads it, its heads at a glance under the chosen
    divisor, then one head's attention map and its metrics."""
    label = divisor_label(divisor, c.d_k)
    own.tokens_view(c, chosen)
    own.grids(c, chosen, divisor, label)
    m = chosen.head_stats(layer, head, divisor)
    workshop.chart(
        "real_models.head", charts.attention_heatmap,
        partial(frames.head_map, chosen.index, chosen.text, layer, head, divisor),
        options={"tokens": chosen.heads.tokens}, source=[rm.head_attention, rm.logit_multiplier],
        layer=layer, head=head, div=label, sentence=own.quoted(chosen.heads),
        h=_f(m["entropy"]), top=_f(m["max_weight"]),
    )  # fmt: skip
    cols = st.columns(3)
    with cols[0]:
        st.metric(
            t("real_models.m_entropy"),
            _f(m["entropy"], 3),
            t("real_models.m_uniform", t=m["t"], h=_f(m["log_t"], 3)),
            **OFF,
        )
    with cols[1]:
        st.metric(
            t("real_models.m_max"),
            _f(m["max_weight"], 3),
            t("real_models.m_one_over_t", v=_f(1 / m["t"], 3)),
            **OFF,
        )
    cols[2].metric(t("real_models.m_std", div=label), _f(m["std"]), **OFF)
    st.caption(t("real_models.head_caption"))


# --- 3. the counterfactual over every head and sentence ----------------------------------
def counterfactual(c: data.Corpus, fig: dict) -> None:
    """Entropy and collapse per layer with each divisor, the table, and the second myth."""
    st.header(t("real_models.cf_header"))
    workshop.takeaway(t("real_models.cf_takeaway"), tc(c, "real_models.cf_lead"))
    labels = {name: divisor_label(name, c.d_k) for name in rm.DIVISORS}
    log_t = _f(fig["log_t"])
    h, share = fig["entropy"], fig["collapsed"]
    alt_values = {
        "log_t": log_t,
        **{f"h_{k}": _f(h[i]) for i, k in enumerate(("none", "sqrt", "dk"))},
        **{f"c_{k}": _pct(share[i]) for i, k in enumerate(("none", "sqrt", "dk"))},
    }
    specs = (
        ("entropy", ".3f", "~g", fig["log_t"]),  # the dashed line: uniform attention
        ("collapsed", ".1%", "%", None),
    )
    for col, (value, fmt, axis_format, reference) in zip(st.columns(2), specs, strict=True):
        options = {
            "value": value,
            "labels": tuple(labels.items()),
            "fmt": fmt,
            "axis_format": axis_format,
            "reference": reference,
        }
        with col:
            workshop.chart(
                f"real_models.cf_{value}", charts.divisor_layer_bars, partial(frames.layers),
                options=options, source=[rm.corpus_summaries, rm.collapsed_share],
                **arch(c), **alt_values,
            )  # fmt: skip
    table = pd.DataFrame(
        {
            t("real_models.col_divisor"): list(labels.values()),
            t("real_models.col_entropy"): [round(float(v), 3) for v in fig["entropy"]],
            t("real_models.col_max"): [round(float(v), 3) for v in fig["max_weight"]],
            t("real_models.col_collapsed"): [_pct(v) for v in fig["collapsed"]],
        }
    )
    st.dataframe(table, hide_index=True, width="stretch")
    i_none, i_sqrt = data.divisor_index("none"), data.divisor_index("sqrt_d_k")
    heads = ", ".join(
        t("real_models.layer_head", layer=lh[0], head=lh[1]) for lh in fig["collapsed_heads"]
    )
    st.caption(
        tc(
            c,
            "real_models.cf_caption",
            log_t=log_t,
            none=_pct(fig["collapsed"][i_none]),
            sqrt=_pct(fig["collapsed"][i_sqrt]),
            collapsed_heads=heads or "—",
            n=fig["n_sentences"],
        )
    )
    if fig["collapsed_heads"]:
        layer, head = fig["collapsed_heads"][0]
        cell = c.summary["max_weight"][:, layer, head, i_sqrt]
        workshop.myth(
            t("real_models_workshop.myth2_claim"),
            t(
                "real_models_workshop.myth2_reality",
                layer=layer,
                head=head,
                n=fig["n_sentences"],
                top=_f(float(cell.mean()), 3),
                low=_f(float(cell.min()), 3),
                h=_f(float(c.summary["entropy"][:, layer, head, i_sqrt].max()), 3),
            ),
        )


# --- 4. the field guide ------------------------------------------------------------------
def field_guide() -> None:
    """What well-known models put in front of softmax(q·k), one source per row."""
    st.header(t("real_models.guide_header"))
    workshop.takeaway(t("real_models.guide_takeaway"), t("real_models.guide_lead"))
    cols = {
        "model": t("real_models.col_model"),
        "d_k": t("real_models.col_d_k"),
        "factor": t("real_models.col_factor"),
        "extras": t("real_models.col_extras"),
        "source": t("real_models.col_source"),
    }
    rows = []
    for row in ROWS:
        host = urlsplit(row.source).netloc.removeprefix("www.")
        cells = {col: t(f"real_models.guide_{row.id}_{col}") for col in COLUMNS}
        record = {**cells, "source": f"[{host}]({row.source})"}
        rows.append({cols[col]: record[col] for col in cols})  # the model first: the row label
    # a static table wraps its cells: every row's factor, extras and source link show in
    # full at 1400 and 800 px (a data grid cut them to "…" and hid the source column)
    workshop.draw_table(text_table(rows))
    st.caption(t("real_models.guide_caption"))
