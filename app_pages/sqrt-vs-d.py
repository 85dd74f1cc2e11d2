"""√d_k vs d_k: why this divisor for independent q, k, and when 1/d_k is right instead."""

import math

import streamlit as st

from core import scaling
from core.experiments import saturation_sweep
from ui import cache, controls, workshop
from ui import sqrt_vs_d as page
from ui.i18n import t

st.title(t("sqrt_vs_d.title"))
st.markdown(t("sqrt_vs_d.lead"))
st.info(t("sqrt_vs_d.model"), icon=":material/info:")

with workshop.controls_box():
    c1, c2, c3 = workshop.control_columns([4, 3, 3])
    with c1:
        d_k = controls.d_k_input()
    with c2:
        d_min = controls.choice(
            "d_min", t("sqrt_vs_d.d_min"), page.D_OPTIONS, default="1", widget="select_slider"
        )
    with c3:
        d_max = controls.choice(
            "d_max", t("sqrt_vs_d.d_max"), page.D_OPTIONS, default="4096", widget="select_slider"
        )
    c4, c5, c6 = workshop.control_columns([2, 5, 4])
    with c4:
        n_keys = controls.int_input(
            "n_keys", t("sqrt_vs_d.n_keys"), min_value=2, max_value=512, default=10,
            help=t("sqrt_vs_d.n_keys_help", **cache.sweep_row_limits()),
        )  # fmt: skip
    with c5:
        alpha = controls.alpha_input(default=0.75)
    with c6:
        rho = controls.float_slider(
            "rho", t("sqrt_vs_d.rho"), min_value=0.0, max_value=0.95, default=0.5, step=0.05,
            help=t("sqrt_vs_d.rho_help"),
        )  # fmt: skip
        page.rho_presets(rho)
seed = st.session_state.get("seed", 0)
step = workshop.steps([t(f"sqrt_vs_d_workshop.step_{i}") for i in range(1, 7)])
d_lo, d_hi = sorted((int(d_min), int(d_max)))
if int(d_min) > int(d_max):
    st.caption(t("sqrt_vs_d.range_swapped", lo=d_lo, hi=d_hi))
if d_lo == d_hi:
    st.info(t("sqrt_vs_d.range_single", d=d_lo), icon=":material/info:")
if not d_lo <= d_k <= d_hi:
    st.caption(t("sqrt_vs_d.outside_range", d_k=d_k, lo=d_lo, hi=d_hi))

full = page.sweep(n_keys, alpha, rho, seed)  # d_k = 1…4096: the questions and the myth card
sweep = page.in_range(full, d_lo, d_hi)
axis_d = t("sqrt_vs_d.axis_d_k")
SWEEP = saturation_sweep  # the core function behind every chart


def show(builder: str, frame, *extra, key: str, source=SWEEP, **options) -> None:
    """Build and draw one chart, with its data as CSV and its core source."""
    chart = page.chart(builder, frame, *extra, **options)
    workshop.chart(chart, key=f"sqrt_vs_d_{key}", data=frame, source=source)


def lines(
    df, key: str, *, y_domain=None, log_y=False, reference=None, label="above_left", source=SWEEP
):
    show(
        "sweep_lines", df, key=key, source=source, current_d=d_k, x_title=axis_d,
        title=t(f"sqrt_vs_d.{key}_title"), y_title=t(f"sqrt_vs_d.{key}_y"),
        description=t(f"sqrt_vs_d.{key}_alt", n=n_keys), log_y=log_y, y_domain=y_domain,
        reference=reference, reference_label=label,
    )  # fmt: skip


def floor_label(reference) -> str:
    """Below a floor no line goes under — unless the floor hugs the x-axis (many keys:
    1/512), where a label below it would sit on the tick labels."""
    return "below_right" if float(reference["y"].iloc[0]) >= 0.08 else "above_right"


# --- 1: at your d_k, and the logit scale ------------------------------------------------------
if workshop.shown(1, step):
    page.summary(d_k, n_keys, alpha, rho, seed)
    st.header(t("sqrt_vs_d.s1_title"))
    st.markdown(t("sqrt_vs_d.s1_text"))
    st.latex(page.logit_latex(d_k, alpha, rho))
    left, right = st.columns(2)
    for col, which in ((left, "std"), (right, "mean")):
        with col:
            if which == "mean" and rho == 0:
                st.info(t("sqrt_vs_d.mean_rho0"), icon=":material/info:")
                continue
            theory = {"std": scaling.independent_logit_std, "mean": scaling.relevant_logit_mean}
            show(
                "logit_scale", page.logit_frame(sweep, which, rho), key=which,
                source=[SWEEP, theory[which]], current_d=d_k, x_title=axis_d,
                title=t(f"sqrt_vs_d.{which}_title"), subtitle=t("sqrt_vs_d.points_sub"),
                y_title=t(f"sqrt_vs_d.{which}_y"), theory_title=t("sqrt_vs_d.theory"),
                description=t(f"sqrt_vs_d.{which}_alt", rho=f"{rho:g}"),
            )  # fmt: skip
    st.caption(t("sqrt_vs_d.logit_caption_rho0" if rho == 0 else "sqrt_vs_d.logit_caption"))

# --- 2: what softmax does with them (predict first) ------------------------------------------
if workshop.shown(2, step):
    st.header(t("sqrt_vs_d.s2_title"))
    if workshop.predict(**page.max_weight_question(full, n_keys, rho)):
        left, right = st.columns(2)
        with left:
            entropy = page.lines(sweep, "entropy_mean", divide_by=math.log(n_keys))
            lines(entropy, "entropy", y_domain=(0, 1), reference=page.uniform_reference())
        with right:
            maxw = page.lines(sweep, "max_weight_mean")
            chance = page.references(n_keys, rho, limit=False)
            lines(maxw, "max", y_domain=(0, 1), reference=chance, label=floor_label(chance))
        caption = "softmax_caption_rho0" if rho == 0 else "softmax_caption_rho"
        st.caption(t(f"sqrt_vs_d.{caption}"))

# --- 3: every exponent at once ---------------------------------------------------------------
if workshop.shown(3, step):
    st.header(t("sqrt_vs_d.s3_title"))
    heat = page.in_range(cache.sqrt_vs_d_heatmap(n_keys, rho, seed), d_lo, d_hi)
    show(
        "alpha_heatmap", heat, page.heatmap_rules(), key="heatmap", legend_cols=None,
        title=t("sqrt_vs_d.heat_title", rho=f"{rho:g}"), x_title=axis_d,
        y_title=t("sqrt_vs_d.heat_y"), color_title=t("sqrt_vs_d.heat_color"),
        description=t("sqrt_vs_d.heat_alt", rho=f"{rho:g}"),
    )  # fmt: skip
    st.caption(t("sqrt_vs_d.heat_caption", rows=f"{cache.sqrt_vs_d_heatmap_rows(n_keys):,}"))

# --- 4: discrimination (predict first) -------------------------------------------------------
if workshop.shown(4, step):
    st.header(t("sqrt_vs_d.s4_title"))
    if workshop.predict(**page.relevant_weight_question(full, n_keys, rho)):
        left, right = st.columns(2)
        with left:
            chance = page.references(n_keys, rho, limit=False)
            argmax = page.argmax_line(sweep)
            lines(argmax, "argmax", y_domain=(0, 1), reference=chance, label=floor_label(chance))
        with right:
            weight = page.lines(sweep, "relevant_weight_mean")
            limit = page.references(n_keys, rho, limit=True)
            lines(
                # 1/n_keys is a floor; the 1/d_k limit is one only for α ≤ 1 (with α > 1
                # the weight falls through it toward 1/n_keys, and α < 1 rises to 1)
                weight, "weight", y_domain=(0, 1), reference=limit,
                label=floor_label(limit) if alpha <= 1 else "above_right",
                source=[SWEEP, scaling.linear_scaling_weight_limit],
            )  # fmt: skip
        limit_text = f"{scaling.linear_scaling_weight_limit(n_keys, rho):.3g}"
        st.caption(
            t("sqrt_vs_d.disc_caption_rho0") if rho == 0 else t("sqrt_vs_d.disc_caption", limit=limit_text)
        )  # fmt: skip

# --- 5: gradient scale -----------------------------------------------------------------------
if workshop.shown(5, step):
    st.header(t("sqrt_vs_d.s5_title"))
    left, right = st.columns([3, 2])
    with left:
        lines(page.lines(sweep, "grad_fro_mean", log=True), "grad", log_y=True)
    with right:
        st.markdown(t("sqrt_vs_d.grad_text", floor=f"{page.LOG_FLOOR:g}"))

# --- 6: when each is right, and the misconception --------------------------------------------
if workshop.shown(6, step):
    st.header(t("sqrt_vs_d.s6_title"))
    left, right = st.columns(2)
    with left.container(border=True):
        st.markdown(t("sqrt_vs_d.why_sqrt"))
    with right.container(border=True):
        st.markdown(t("sqrt_vs_d.why_d"))
    workshop.myth(t("sqrt_vs_d_workshop.myth_claim"), page.myth_reality(full, n_keys, rho))
st.caption(t("sqrt_vs_d.source"))
