"""The saturation page's self-contained panels.

Each is an ``st.fragment`` with its own URL-bound controls, so moving one of them reruns
that panel only: the two-score playground (``score_1``, ``score_2``, ``divisor``), the
Gaussian limit of the float16 overflow chance (``logit_std``) and the toy experiment
Q, K ~ N(0, 1) (``classic_batch``, ``classic_seq``, ``classic_d_k``).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core import classic as classic_core
from core.attention import attention_logits
from core.softmax import gaussian_overflow_chance, softmax
from ui.common import controls, fragments, live, workshop
from ui.common.i18n import t
from ui.saturation import charts, data, frames
from ui.story import cards


@fragments.panel
def playground() -> None:
    """Two scores, softmax before and after dividing by c; reruns on its own."""
    st.header(t("saturation.play_header"))
    workshop.takeaway(t("saturation.play_takeaway"))
    left, right = st.columns(2)
    versions = (t("saturation.playground.raw"), t("saturation.playground.divided"))
    keys = (t("saturation.key_n", n=1), t("saturation.key_n", n=2))
    with left:  # the sliders under the chart move it in the browser
        now = live.live_chart(
            "saturation.playground", charts.two_score_bars,
            partial(frames.playground, versions, keys),
            (("score_1", t("saturation.score_1")), ("score_2", t("saturation.score_2")),
             ("divisor", t("saturation.divisor"))),
            source=[softmax, charts.two_score_weight],
        )  # fmt: skip
        st.caption(t("saturation.divisor_help"))
    s1, s2, c = now["score_1"], now["score_2"], now["divisor"]
    raw, div = frames.two_scores(s1, s2, c)
    tex = lambda p: rf"[{p[0]:.7f},\ {p[1]:.7f}]"  # noqa: E731
    gap = s1 - s2
    with right:
        st.latex(rf"\mathrm{{softmax}}([{s1:g},\ {s2:g}]) = {tex(raw)}")
        st.latex(rf"\tfrac{{1}}{{{c:g}}}\,[{s1:g},\ {s2:g}] = [{s1 / c:.6g},\ {s2 / c:.6g}]")
        st.latex(rf"\mathrm{{softmax}}([{s1 / c:.6g},\ {s2 / c:.6g}]) = {tex(div)}")
        st.latex(
            rf"p_1 = \frac{{1}}{{1 + e^{{-(z_1 - z_2)/c}}}}"
            rf" = \frac{{1}}{{1 + e^{{{-gap / c:.6g}}}}} = {div[0]:.7f}"
        )
        st.markdown(t("saturation.play_text"))


@fragments.panel
def gaussian_limit(n_keys: int) -> None:
    """The float16 overflow chance of Gaussian logits against n_keys, σ = 1 and a σ the
    learner moves in the browser; reruns on its own when the drag pauses."""
    st.markdown(t("saturation.gauss_lead"))
    labels = (t("saturation.gauss_limit.yours"), t("saturation.gauss_limit.scaled"))
    live.live_chart(
        "saturation.gauss_limit", charts.gaussian_overflow_lines,
        partial(frames.gaussian_limit, labels), (("logit_std", t("saturation.logit_std")),),
        options={"n_keys": n_keys}, source=[gaussian_overflow_chance, charts.gaussian_overflow],
        n_keys=n_keys,
    )  # fmt: skip
    st.caption(t("saturation.gauss_caption"))


@fragments.panel
def classic_experiment() -> None:
    """The toy experiment Q, K ~ N(0, 1) of shape (batch, seq_len, d_k); reruns on its own."""
    st.header(t("saturation.classic_header"))
    top = st.container()  # the takeaway, once the question is answered
    st.markdown(t("saturation.classic_lead"))
    cols = st.columns(3)
    with cols[0]:
        batch = controls.int_input("classic_batch", t("saturation.classic_batch"))
    with cols[1]:
        seq = controls.int_input("classic_seq", t("saturation.classic_seq"))
    with cols[2]:
        dk = controls.int_input("classic_d_k", t("saturation.classic_d_k"))
    seed = st.session_state.get("seed", 0)
    summary = data.classic_summary(batch, seq, dk, seed)
    u, s = summary[False], summary[True]
    bins = cards.weight_bins(seq)
    shape = {"b": batch, "n": seq, "d_k": dk}
    if workshop.predict(
        "saturation_median",
        t("saturation_workshop.predict_median_q", rows=f"{int(u['n_rows']):,}", **shape),
        cards.weight_options(seq),
        answer=cards.weight_index(u["median"], bins),
        explain=t(
            "saturation_workshop.predict_median_explain",
            median=frames.fmt_weight(u["median"]),
            q10=f"{u['q10']:.2f}",
            top=frames.fmt_weight(u["tensor_max_median"]),
            n=seq,
        ),
        about=(batch, seq, dk, seed),
    ):
        quoted = data.quoted_printout()
        chance = {
            "chance": frames.fmt_chance_se(quoted["chance"], quoted["se"]),
            "one_in": f"{round(1 / quoted['chance'], -2):,.0f}",
        }
        with top:
            workshop.takeaway(t("saturation.classic_takeaway", **chance))
        _classic_charts(batch, seq, dk, seed, summary)
        # at a large d_k a typical row is saturated too: the claim holds there; at a small
        # d_k or a small tensor not even the tensor's largest entry is reliably ≈ 1
        variant = (
            "_saturated" if u["median"] >= 0.99 else "_flat" if u["tensor_high_share"] < 0.5 else ""
        )
        reality = t(
            "saturation_workshop.myth_reality" + variant,
            median=frames.fmt_weight(u["median"]),
            q10=f"{u['q10']:.2f}",
            high=f"{100 * u['high_share']:.0f}",
            top=frames.fmt_weight(u["tensor_max_median"]),
            top_share=f"{100 * u['tensor_high_share']:.0f}",
            **shape,
        )
        printout = t(
            "saturation_workshop.myth_printout",
            n=f"{quoted['n_printouts']:,.0f}",
            row=f"{100 * quoted['row_share']:.1f}",
            **chance,
        )
        workshop.myth(t("saturation_workshop.myth_claim"), f"{reality}\n\n{printout}")
        st.info(
            t(
                "saturation_workshop.dist_plain",
                mean=f"{u['mean']:.3f}",
                se=f"{u['se']:.2g}",
                mean_s=f"{s['mean']:.3f}",
                q90_s=f"{s['q90']:.2f}",
            ),
            icon=":material/lightbulb:",
        )


def _classic_charts(
    batch: int, seq: int, dk: int, seed: int, summary: dict[bool, dict[str, float]]
) -> None:
    """The two heatmaps of one batch element and the row-max distribution with its table."""
    means = data.classic_heat_means(seq, dk, seed)
    for col, scaled in zip(st.columns(2), (False, True), strict=True):
        name = "scaled" if scaled else "unscaled"
        with col:
            workshop.chart(
                f"saturation.heat_{name}", charts.attention_heatmap,
                partial(frames.heat_cells, seq, dk, seed, scaled),
                source=None if scaled else [attention_logits, softmax],
                d_k=dk, n=seq, mean=f"{means[scaled]:.3f}",
            )  # fmt: skip
    st.caption(t("saturation.heat_caption"))
    u, s = summary[False], summary[True]
    n_rep = int(u["n_replicates"])
    st.markdown(t("saturation.dist_header", n_rep=f"{n_rep:,}", rows=f"{int(u['n_rows']):,}"))
    left, right = st.columns([3, 2])
    names = (t("saturation.series_unscaled"), t("saturation.series_scaled"))
    kinds = (t("saturation.mark_mean"), t("saturation.mark_tensor_max"))
    with left:
        workshop.chart(
            "saturation.rowmax", charts.rowmax_histogram,
            partial(frames.rowmax, batch, seq, dk, seed, names, kinds),
            source=[
                classic_core.classic_rowmax,
                classic_core.classic_scores,
                classic_core.rowmax_summary,
            ],
            b=batch, n=seq, d_k=dk, mean_u=f"{u['mean']:.3f}", mean_s=f"{s['mean']:.3f}",
            top=frames.fmt_weight(u["tensor_max_median"]),
        )  # fmt: skip
    with right:
        workshop.draw_table(frames.rowmax_table(summary))
