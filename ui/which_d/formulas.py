"""LaTeX of the "Which d?" page, with the live numbers substituted."""

from __future__ import annotations

import math

from core.which_d import layernorm_logit_std


def tex_number(value: float, digits: int = 4) -> str:
    """A number for LaTeX: plain in [1e-3, 1e5), otherwise m \\times 10^{e}."""
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:.{digits}g}"
    exponent = math.floor(math.log10(abs(value)))
    mantissa = value / 10**exponent
    return rf"{mantissa:.{digits}g}\times 10^{{{exponent}}}"


def multi_head_latex(d_model: int, n_heads: int, var: float) -> str:
    """d_k = d_model / n_heads, Var(q·k), and the logit std under √d_k and √d_model."""
    d_k = d_model // n_heads
    right, wrong = math.sqrt(var / d_k), math.sqrt(var / d_model)
    return (
        r"\begin{gathered}"
        rf"d_k = \frac{{d_\text{{model}}}}{{n_\text{{heads}}}} = \frac{{{d_model}}}{{{n_heads}}}"
        rf" = {d_k},\qquad \mathrm{{Var}}(q\cdot k) = d_k\,(d_\text{{model}}\,\sigma_w^2"
        rf"\sigma_x^2)^2 = {tex_number(var)},\\"
        rf"\mathrm{{std}}\Big(\tfrac{{q\cdot k}}{{\sqrt{{d_k}}}}\Big) = {tex_number(right)},\quad"
        rf"\mathrm{{std}}\Big(\tfrac{{q\cdot k}}{{\sqrt{{d_\text{{model}}}}}}\Big) = {tex_number(wrong)}"
        rf" = \frac{{{tex_number(right)}}}{{\sqrt{{{n_heads}}}}}"
        r"\end{gathered}"
    )


def cross_latex(d_k: int, d_q: int, d_kv: int, var: float) -> str:
    """Var(q·k) of cross-attention and the logit std under the three divisors."""
    stds = r",\quad ".join(
        rf"\mathrm{{std}}\Big(\tfrac{{q\cdot k}}{{\sqrt{{{n}}}}}\Big) = {tex_number(math.sqrt(var / n), 3)}"
        for n in (d_k, d_q, d_kv)
    )
    return (
        r"\begin{gathered}"
        rf"\mathrm{{Var}}(q\cdot k) = d_k\,(d_q\,\sigma_{{w_q}}^2\sigma_x^2)\,"
        rf"(d_{{kv}}\,\sigma_{{w_k}}^2\sigma_x^2) = {tex_number(var)},\\ {stds}"
        r"\end{gathered}"
    )


def where_latex(d_k: int) -> str:
    """q d_k^-¼ · k d_k^-¼ = q·k / √d_k, and division by c as softmax temperature c."""
    # two equations, two lines: side by side, a phone showed the first and then only the
    # blank space between them, so the formula looked finished
    return (
        r"\begin{gathered}"
        rf"\left(q\,d_k^{{-1/4}}\right)\cdot\left(k\,d_k^{{-1/4}}\right)"
        rf" = \frac{{q\cdot k}}{{\sqrt{{{d_k}}}}} = \frac{{q\cdot k}}{{{math.sqrt(d_k):.4g}}},\\"
        r"\mathrm{softmax}\!\left(\frac{s}{c}\right)_i = \frac{e^{s_i/c}}{\sum_j e^{s_j/c}}"
        r" = \mathrm{softmax}_{T=c}(s)_i"
        r"\end{gathered}"
    )


def qk_latex(scale: float, d_k: int) -> str:
    """Logit std s² without normalisation; with QK LayerNorm √(d_k/(d_k − 1)) whatever s
    (:func:`core.which_d.layernorm_logit_std`; 0 at d_k = 1), bounded by √d_k."""
    ln = (
        rf"\approx \sqrt{{\tfrac{{d_k}}{{d_k - 1}}}} = {layernorm_logit_std(d_k):.4g}"
        if d_k >= 2
        else "= 0"
    )
    return (
        r"\begin{gathered}"
        rf"\mathrm{{std}}\Big(\tfrac{{(s q)\cdot(s k)}}{{\sqrt{{d_k}}}}\Big) = s^2"
        rf" = {scale:g}^2 = {scale**2:g},\\"
        rf"\mathrm{{std}}\Big(\tfrac{{\mathrm{{LN}}(s q)\cdot\mathrm{{LN}}(s k)}}{{\sqrt{{d_k}}}}\Big)"
        rf" {ln},\quad \Big|\tfrac{{\mathrm{{LN}}(q)\cdot\mathrm{{LN}}(k)}}{{\sqrt{{d_k}}}}\Big|"
        rf" \le \sqrt{{d_k}} = {math.sqrt(d_k):.4g}"
        r"\end{gathered}"
    )
