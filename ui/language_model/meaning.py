"""The language-model page's conclusions ("What it means"), each sentence from a number
the page shows, compared with the training lab's verdict and with Wortsman et al. 2023 and
Dehghani et al. 2023.

:func:`figures` computes every number the section quotes from the shipped sweep (and the
training lab's shipped sweep); :func:`meaning` writes them into the section. Where the
data could point either way, the wording follows the numbers (a gap that grows or not,
a sensitivity that is lower or higher).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.common import workshop
from ui.common.i18n import t
from ui.common.pages import lr_text
from ui.language_model import data
from ui.language_model.sections import big, ends, gap, joined, n_parameters, nats, pct


def rises(d_h: int, variant: str) -> list[float]:
    """The rates at which the seed-mean held-out loss of ``variant`` rises between two
    recorded steps at least once."""
    out = []
    for lr in data.sweep().lrs:
        loss = data.curve(variant, d_h, lr, "val_loss")["mean"]
        if (np.diff(loss[np.isfinite(loss)]) > 0).any():
            out.append(lr)
    return out


def figures() -> dict:
    """Every number of the section, computed from the sweep.

    Returns
    -------
    dict
        ``small``, ``large`` (head sizes); ``gap`` {d_h: best loss without the scale −
        with ÷√dₕ, as written}; ``none``, ``sqrt`` (best losses at ``large``); ``unigram``; ``lab``
        (:func:`ui.language_model.data.lab_verdict` at dₖ = ``large``), ``lab2`` (the same
        on the lab's task of two keys); ``onehot_none``,
        ``onehot_sqrt`` (first-layer one-hot share at the end, each at its best rate);
        ``start`` {d_h: ÷1's first-layer max |logit| at step 0}; ``top`` (the top rate),
        ``top_logit`` and ``top_loss`` {variant: at the top rate and ``large``};
        ``sens`` {variant: sensitivity at ``large``}; ``diverged``, ``runs``;
        ``onehot_top`` (the largest first-layer one-hot share at the top rate, QK-LayerNorm
        aside); ``rises`` {variant: rates where its held-out loss rises}.
    """
    s, cells = data.sweep(), data.cells()
    small, large = min(s.head_sizes), max(s.head_sizes)
    top = s.lrs[-1]
    z = s.arrays
    done = z["done"] == 1

    def onehot(variant: str) -> float:
        best = s.lrs[cells[variant, large].best]
        return ends(large, best, variant, "onehot_share")[1]

    return {
        "small": small,
        "large": large,
        "gap": {
            h: gap(cells["none", h].best_loss, cells["sqrt", h].best_loss) for h in s.head_sizes
        },
        "none": cells["none", large].best_loss,
        "sqrt": cells["sqrt", large].best_loss,
        "best_lr": s.lrs[cells["none", large].best],
        "unigram": s.meta["unigram_val_loss"],
        "lab": data.lab_verdict(large),
        "lab2": data.lab_verdict(large, m=2),
        "onehot_none": onehot("none"),
        "onehot_sqrt": onehot("sqrt"),
        "start": {h: ends(h, top, "none")[0] for h in s.head_sizes},
        "top": top,
        "top_logit": {v: ends(large, top, v)[1] for v in data.VARIANTS},
        "top_loss": {v: float(cells[v, large].loss[-1]) for v in data.VARIANTS},
        "sens": {v: cells[v, large].sensitivity for v in data.VARIANTS},
        "diverged": int(((z["diverged_step"] >= 0) & done).sum()),
        "runs": int(done.sum()),
        "onehot_top": max(
            ends(large, top, v, "onehot_share")[1] for v in data.VARIANTS if v != "qk_ln"
        ),
        "rises": {v: rises(large, v) for v in ("none", "sqrt", "qk_ln")},
    }


def meaning() -> None:
    """How the result compares with the one-layer lab and with the two papers."""
    f = figures()
    s = data.sweep()
    small, large = f["small"], f["large"]
    st.header(t("language_model.meaning_header"))
    workshop.takeaway(
        t(
            "language_model.meaning_takeaway",
            g_small=f["gap"][small],
            g_large=f["gap"][large],
            small=small,
            large=large,
        )
    )
    lab = f["lab"]
    st.markdown(
        t(
            "language_model.meaning_lab",
            d_h=large,
            none=nats(f["none"]),
            below=gap(f["unigram"], f["none"]),
            unigram=nats(f["unigram"]),
            sqrt=nats(f["sqrt"]),
            lab_none=f"{lab['none']:.2g}",
            lab_sqrt=f"{lab['sqrt']:.2g}",
            lab_u=f"{lab['uniform']:.3g}",
            lab_seeds=lab["seeds"],
        )
    )
    lab2 = f["lab2"]
    st.markdown(
        t(
            "language_model.meaning_lab_two_keys",
            d_h=large,
            none=f"{lab2['none']:.2g}",
            sqrt=f"{lab2['sqrt']:.2g}",
            u=f"{lab2['uniform']:.3g}",
        )
    )
    grows = float(f["gap"][large]) > float(f["gap"][small])
    st.markdown(
        t(
            "language_model.meaning_gap_grows" if grows else "language_model.meaning_gap_flat",
            g_small=f["gap"][small],
            g_large=f["gap"][large],
            small=small,
            large=large,
            lr=lr_text(f["best_lr"]),
            oh_none=pct(f["onehot_none"]),
            oh_sqrt=pct(f["onehot_sqrt"]),
            m_small=big(f["start"][small]),
            m_large=big(f["start"][large]),
        )
    )
    logit, loss, sens = f["top_logit"], f["top_loss"], f["sens"]
    st.markdown(
        t(
            "language_model.meaning_wortsman",
            top=lr_text(f["top"]),
            d_h=large,
            sqrt=big(logit["sqrt"]),
            none=big(logit["none"]),
            qk=big(logit["qk_ln"]),
            q_loss=nats(loss["qk_ln"]),
            s_loss=nats(loss["sqrt"]),
            q_sens=f"{sens['qk_ln']:.3f}",
            s_sens=f"{sens['sqrt']:.3f}",
        )
    )
    less = sens["none"] < sens["sqrt"]
    part = t(
        "language_model.meaning_sens_less" if less else "language_model.meaning_sens_more",
        n_sens=f"{sens['none']:.3f}",
        s_sens=f"{sens['sqrt']:.3f}",
        d_h=large,
    )
    divergence = t(
        "language_model.meaning_no_divergence"
        if f["diverged"] == 0
        else "language_model.meaning_divergence",
        n=f["diverged"],
        runs=f["runs"],
        top=lr_text(f["top"]),
        oh_top=pct(f["onehot_top"]),
        params=f"{n_parameters(large):,}",
    )
    st.markdown(t("language_model.meaning_disagree", sens=part, divergence=divergence))
    myth(large, s.config["eval_every"], len(s.meta["seeds"]), f["rises"])


def myth(d_h: int, every: int, seeds: int, found: dict[str, list[float]]) -> None:
    """The seed texts' "the loss curve shakes like an ECG", against the recorded curves."""
    rates = data.sweep().lrs
    where = {v: joined([lr_text(r) for r in found[v]]) or "—" for v in found}
    with_rate = set(found["none"]) <= set(found["sqrt"])
    ending = "language_model.myth_rate" if with_rate else "language_model.myth_scale"
    reality = t(
        "language_model.myth_reality",
        ending=t(ending),
        every=every,
        seeds=seeds,
        d_h=d_h,
        n=len(rates),
        n_up=len(found["none"]),
        where=where["none"],
        s_up=len(found["sqrt"]),
        s_where=where["sqrt"],
        q_up=len(found["qk_ln"]),
        q_where=where["qk_ln"],
    )
    workshop.myth(t("language_model.myth_claim"), reality)
