"""Page fragments too long for a page script but specific to one page (no charts)."""

from __future__ import annotations

import math

import streamlit as st

from ui.i18n import t


def variance_metrics(m: dict[str, float], var_theory: float, kurt_theory: float) -> None:
    """Metric row: sample mean, variance, std and excess kurtosis of q·k against theory."""
    std_theory = math.sqrt(var_theory)
    cols = st.columns(4)
    cols[0].metric(
        t("variance.m_mean"),
        f"{m['mean']:.4g}",
        t("variance.m_mean_delta", z=m["mean"] / m["mean_se"]),
        delta_color="off",
        delta_arrow="off",
        help=t("variance.m_mean_help"),
    )
    for col, key, theory in ((cols[1], "var", var_theory), (cols[2], "std", std_theory)):
        col.metric(
            t(f"variance.m_{key}"),
            f"{m[key]:.4g}",
            t("variance.m_delta", theory=f"{theory:.4g}", err=100 * (m[key] - theory) / theory),
            delta_color="off",
            delta_arrow="off",
            help=t("variance.m_se_help", se=f"{m[key + '_se']:.2g}"),
        )
    z_kurt = (m["kurt"] - kurt_theory) / m["kurt_se"] if m["kurt_se"] > 0 else 0.0
    cols[3].metric(
        t("variance.m_kurt"),
        f"{m['kurt']:.3f}",
        t("variance.m_kurt_delta", theory=f"{kurt_theory:.4g}", z=z_kurt),
        delta_color="off",
        delta_arrow="off",
        help=t("variance.m_kurt_help"),
    )


def _tex(x: float) -> str:
    """An exact number for LaTeX without exponent notation: 1{,}048{,}576, 0.00390625 (the
    σ sliders step by ¼, so every value here is a short binary fraction)."""
    return f"{x:,.12g}".replace(",", "{,}")


def variance_derivation(d_k: int, sigma_q: float, sigma_k: float) -> None:
    """The variance of q·k derived step by step with the live numbers substituted."""
    c2v_num = (sigma_q * sigma_k) ** 2
    c2v, var = _tex(c2v_num), _tex(d_k * c2v_num)
    var_num = d_k * c2v_num
    with st.expander(t("variance.derivation_title"), expanded=True):
        st.latex(r"\mathbb{E}[q_i k_i] = \mathbb{E}[q_i]\,\mathbb{E}[k_i] = 0")
        st.latex(
            rf"\mathrm{{Var}}(q_i k_i) = \mathbb{{E}}[q_i^2]\,\mathbb{{E}}[k_i^2] = \sigma_q^2\sigma_k^2"
            rf" = {sigma_q:g}^2 \cdot {sigma_k:g}^2 = {c2v}"
        )
        st.latex(
            rf"\mathrm{{Var}}(q\cdot k) = \sum_{{i=1}}^{{d_k}} \mathrm{{Var}}(q_i k_i)"
            rf" = d_k\,\sigma_q^2\sigma_k^2 = {_tex(d_k)} \cdot {c2v} = {var}"
        )
        st.latex(
            rf"\mathrm{{std}}(q\cdot k) = \sqrt{{d_k}}\,\sigma_q\sigma_k = {_tex(round(math.sqrt(var_num), 4))}"
        )
        st.latex(
            rf"\mathrm{{Var}}\!\left(\frac{{q\cdot k}}{{\sqrt{{d_k}}}}\right) = \frac{{{var}}}{{{_tex(d_k)}}}"
            rf" = \sigma_q^2\sigma_k^2 = {c2v}"
        )
        st.caption(t("variance.derivation_note"))
