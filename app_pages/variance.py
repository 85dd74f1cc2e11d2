"""Variance: why q·k grows with d_k, and how dividing by √d_k undoes it."""

import math

import streamlit as st

from core import variance as variance_core
from core.sampling import dot_products
from core.theory import DISTRIBUTIONS, dot_product_excess_kurtosis, dot_product_variance
from ui import cache, charts, controls, workshop
from ui.i18n import t
from ui.views import variance_derivation, variance_metrics

N_SAMPLES = ("1000", "2000", "5000", "10000", "20000", "50000", "100000", "200000")

st.title(t("variance.title"))
st.markdown(t("variance.lead"))

with workshop.controls_box():
    c1, c2, c3 = workshop.control_columns([4, 3, 3])
    with c1:
        d_k = controls.d_k_input()
    with c2:
        n_samples = int(
            controls.choice(
                "n_samples",
                t("variance.n_samples"),
                N_SAMPLES,
                default="20000",
                widget="select_slider",
            )
        )
    with c3:
        dist = controls.choice(
            "dist",
            t("variance.dist"),
            DISTRIBUTIONS,
            default="normal",
            captions=[t(f"variance.dist_{d}") for d in DISTRIBUTIONS],
            help=t("variance.dist_help"),
        )
    c4, c5 = workshop.control_columns(2)
    with c4:
        sigma_q = controls.float_slider(
            "sigma_q", t("variance.sigma_q"), min_value=0.25, max_value=4.0, default=1.0, step=0.25
        )
    with c5:
        sigma_k = controls.float_slider(
            "sigma_k", t("variance.sigma_k"), min_value=0.25, max_value=4.0, default=1.0, step=0.25
        )
seed = st.session_state.get("seed", 0)
step = workshop.steps([t(f"variance.step_{i}") for i in range(1, 5)])

raw, scaled, moments = cache.score_histograms(d_k, n_samples, dist, sigma_q, sigma_k, seed)
var_theory = dot_product_variance(d_k, sigma_q, sigma_k)
std_theory = math.sqrt(var_theory)
c = sigma_q * sigma_k  # the spread of one product q_i·k_i, and of q·k/√d_k

# --- 1. predict the spread, then the sum's measured moments and the derivation ----------
# (the metrics state the answer, so they come after the question, as do the histograms)
revealed = True
if workshop.shown(1, step):
    drawn = cache.samples_for(dist, d_k, n_samples)
    if drawn < n_samples:
        st.info(
            t("variance.uniform_capped", drawn=f"{drawn:,}", requested=f"{n_samples:,}", d_k=d_k)
        )
    options = [f"{c:g}", f"{math.sqrt(d_k) * c:.3g}", f"{d_k * c:g}", f"{d_k * d_k * c:g}"]
    revealed = workshop.predict(
        "variance_std",
        t("variance.predict_q", d_k=d_k, sigma_q=f"{sigma_q:g}", sigma_k=f"{sigma_k:g}"),
        options,
        answer=1,
        explain=t(
            "variance.predict_explain", std=f"{moments['std']:.3g}", theory=f"{std_theory:.3g}"
        ),
        about=(d_k, sigma_q, sigma_k),
        unanswerable=t("variance.predict_one") if d_k == 1 else None,  # every option is c
    )
    if revealed:
        variance_metrics(moments, var_theory, dot_product_excess_kurtosis(d_k, dist))
        variance_derivation(d_k, sigma_q, sigma_k)

# --- 2. histograms, unscaled beside scaled ----------------------------------------------
if workshop.shown(2, step):
    if not revealed:
        st.caption(t("variance.hist_after_guess"))
    else:
        laws = (t("variance.law_exact"), t("variance.law_gauss"))
        left, right = st.columns(2)
        with left:
            workshop.chart(
                charts.histogram_with_law(
                    raw,
                    title=t("variance.hist_raw_title", d_k=d_k),
                    x_title=t("variance.axis_score"),
                    y_title=t("variance.axis_density"),
                    law_labels=laws,
                    description=t("variance.hist_raw_alt", d_k=d_k, std=f"{std_theory:.3g}"),
                    color=charts.COLORS["unscaled"],
                ),
                key="variance_hist_raw",
                data=raw,
                source=[dot_products, variance_core.expected_density],
            )
        with right:
            workshop.chart(
                charts.histogram_with_law(
                    scaled,
                    title=t("variance.hist_scaled_title", d_k=d_k),
                    x_title=t("variance.axis_scaled_score"),
                    y_title=t("variance.axis_density"),
                    law_labels=laws,
                    description=t("variance.hist_scaled_alt", std=f"{c:.3g}"),
                ),
                key="variance_hist_scaled",
                data=scaled,
            )
        st.caption(t("variance.hist_caption", uniform_max=variance_core.UNIFORM_EXACT_MAX_D))

# --- 3. Var(q·k) against d_k ---------------------------------------------------------------
if workshop.shown(3, step):
    c2v = (sigma_q * sigma_k) ** 2
    sweep = cache.variance_sweep(dist, seed)
    sweep = sweep.assign(
        var=sweep["var"] * c2v,
        lo=sweep.lo * c2v,
        hi=sweep.hi * c2v,
        theory=sweep.theory * c2v,
        series=sweep.scaled.map(
            {False: t("variance.series_raw"), True: t("variance.series_scaled")}
        ),
    ).drop(columns="scaled")
    workshop.chart(
        charts.variance_sweep(
            sweep,
            current_d=d_k,
            series_order=(t("variance.series_raw"), t("variance.series_scaled")),
            title=t("variance.sweep_title"),
            x_title=t("variance.axis_d_k"),
            y_title=t("variance.axis_variance"),
            description=t("variance.sweep_alt"),
        ),
        key="variance_sweep",
        data=sweep,
        source=variance_core.variance_sweep,
    )
    st.caption(t("variance.sweep_caption", n=f"{cache.SWEEP_SAMPLES:,}"))
    if dist == "uniform":
        st.caption(t("variance.sweep_uniform_note"))

# --- 4. the sum, dimension by dimension --------------------------------------------------
if workshop.shown(4, step):
    left, right = st.columns(2)
    with left:
        paths, envelope = cache.running_sums(d_k, dist, sigma_q, sigma_k, seed)
        envelope = envelope.assign(
            band=envelope.k.map({1: t("variance.band_1"), 2: t("variance.band_2")})
        )
        workshop.chart(
            charts.running_sums(
                paths,
                envelope,
                title=t("variance.paths_title", n=cache.N_PATHS),
                x_title=t("variance.axis_i"),
                y_title=t("variance.axis_partial_sum"),
                description=t("variance.paths_alt", d_k=d_k),
            ),
            key="variance_paths",
            data=paths,
            source=variance_core.running_sums,
        )
        st.caption(t("variance.paths_caption"))
    with right:
        terms, total = cache.pair_terms(d_k, dist, sigma_q, sigma_k, seed)
        signs = (t("variance.sign_pos"), t("variance.sign_neg"))
        terms = terms.assign(sign=terms.positive.map({True: signs[0], False: signs[1]})).drop(
            columns="positive"
        )
        workshop.chart(
            charts.term_bars(
                terms,
                title=t("variance.terms_title", total=f"{total:.3g}"),
                x_title=t("variance.axis_i"),
                y_title=t("variance.axis_term"),
                sign_title=t("variance.sign_title"),
                sign_order=signs,
                description=t("variance.terms_alt", d_k=d_k, total=f"{total:.3g}"),
            ),
            key="variance_terms",
            data=terms,
        )
        if d_k > cache.MAX_TERMS_SHOWN:
            st.caption(t("variance.terms_truncated", shown=cache.MAX_TERMS_SHOWN, d_k=d_k))

st.caption(t("variance.source"))
