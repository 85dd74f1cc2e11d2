"""Sections of the language-model page, each drawn by one function.

The page script draws the controls and decides which sections are shown (presenter
steps); the learner's own prompt, a panel with controls of its own, is in
:mod:`ui.language_model.prompt`. Every number a sentence quotes is computed here from the
shipped sweep (:mod:`ui.language_model.data`).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pyarrow as pa
import streamlit as st

from core import char_lm
from ui.common import controls, picture, workshop
from ui.common.i18n import t
from ui.common.pages import lr_text
from ui.common.specs import text_table
from ui.language_model import charts, data, diagram, frames


# --- words and numbers ----------------------------------------------------------------------
def labels() -> tuple[tuple[str, str], ...]:
    """(variant, legend label) of every variant, in the page's language."""
    return tuple((v, t(f"language_model.variant_{v}")) for v in data.VARIANTS)


def label(variant: str) -> str:
    return t(f"language_model.variant_{variant}")


def nats(x: float) -> str:
    """A loss or a gap in nats per character, to 3 decimals."""
    return f"{x:.3f}"


def gap(a: float, b: float) -> str:
    """a − b as the page writes it: the difference of the two losses as shown (to 3
    decimals), so that it agrees with them to the last digit."""
    return nats(round(a, 3) - round(b, 3))


def big(x: float) -> str:
    """A |logit| to 3 significant digits, thousands separated (274,000, 61,700, 13.3)."""
    return f"{float(f'{x:.3g}'):,.0f}" if x >= 100 else f"{x:.3g}"


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def joined(parts: list[str]) -> str:
    """Items of a list in a sentence, with the language's separator."""
    return t("language_model.sep").join(parts)


def ends(d_h: int, lr: float, variant: str, name: str = "max_logit", layer: int = 0) -> tuple:
    """(first, last) recorded seed mean of ``name`` in ``layer`` over training."""
    c = data.curve(variant, d_h, lr, name, layer)
    finite = c["mean"][np.isfinite(c["mean"])]
    return float(finite[0]), float(finite[-1])


# --- the controls ---------------------------------------------------------------------------
def d_h_select() -> int:
    """The head size shown: a radio, each option captioned with its number of heads."""
    d_model = data.sweep().config["d_model"]
    options = controls.param("d_h").options
    return int(
        controls.choice(
            "d_h",
            t("language_model.d_h"),
            captions=[heads(d_model // int(h)) for h in options],
            help=t("language_model.d_h_help", d_model=d_model),
        )
    )


def heads(n: int) -> str:
    return t("language_model.heads_one") if n == 1 else t("language_model.heads_many", n=n)


def rate_select() -> float:
    """The learning rate of the curves over training (the sweep's grid)."""
    return float(
        controls.choice(
            "rate",
            t("language_model.rate"),
            widget="select_slider",
            help=t("language_model.rate_help"),
        )
    )


# --- 1. the experiment ------------------------------------------------------------------------
def setup(d_h: int) -> None:
    """The model and the experiment in a few sentences, its picture, and the logits at
    step 0."""
    s = data.sweep()
    cfg, meta = s.config, s.meta
    st.header(t("language_model.setup_header"))
    workshop.takeaway(
        t("language_model.setup_takeaway"),
        t(
            "language_model.setup_why",
            runs=int(s.arrays["done"].sum()),
            n_rates=len(s.lrs),
            seeds=len(meta["seeds"]),
        ),
    )
    keys = ("title", "description", "logit", "residual", *(k for k, *_ in diagram.BOXES))
    counts = {"layers": cfg["n_layers"], "vocab": len(meta["vocab"])}
    names = {k: t(f"language_model.diagram_{k}", **counts) for k in keys}
    names["layers"] = t("language_model.diagram_layers", n=cfg["n_layers"])
    names |= {v: t(f"language_model.variant_short_{v}") for v in data.VARIANTS}
    words = picture.beside_words(
        diagram.model_svg(names), key="language_model_diagram", width=diagram.WIDTH
    )
    small, large = min(s.head_sizes), max(s.head_sizes)
    words.markdown(
        t(
            "language_model.setup_model",
            layers=cfg["n_layers"],
            d_model=cfg["d_model"],
            mlp=4 * cfg["d_model"],
            context=cfg["context"],
            vocab=len(meta["vocab"]),
            n_small=cfg["d_model"] // small,
            small=small,
            large=large,
            params=f"{n_parameters(large):,}",
        )
    )
    files = meta["files"]
    held = [t(f"language_model.work_{f.removesuffix('_gut.txt')}") for f in meta["held_out"]]
    words.markdown(
        t(
            "language_model.setup_text",
            works=len(files),
            chars=f"{meta['train_chars'] + meta['val_chars']:,}",
            held=t("language_model.sep_list").join(held),
            val=f"{meta['val_chars']:,}",
            unigram=nats(meta["unigram_val_loss"]),
        )
    )
    z = s.arrays
    words.markdown(
        t(
            "language_model.setup_training",
            b1=cfg["beta1"],
            b2=cfg["beta2"],
            wd=cfg["weight_decay"],
            warmup=cfg["warmup"],
            steps=cfg["steps"],
            batch=cfg["batch"],
            n_rates=len(s.lrs),
            lo=lr_text(s.lrs[0]),
            hi=lr_text(s.lrs[-1]),
            seeds=len(meta["seeds"]),
            runs=int(z["done"].sum()),
            diverged=int(((z["diverged_step"] >= 0) & (z["done"] == 1)).sum()),
        )
    )
    st.markdown(t("language_model.variants_list"))
    logits_at_start(d_h)


def n_parameters(d_h: int) -> int:
    """Parameters of one shipped model at head size ``d_h``."""
    params = data.models(d_h)["params"]
    return int(sum(np.prod(a.shape[1:]) for a in params.values()))


def logits_at_start(d_h: int) -> None:
    """The histogram of the attention logits at step 0, with what theory expects."""
    s = data.sweep()
    first = {v: ends(d_h, s.lrs[0], v)[0] for v in data.VARIANTS}  # step 0: any rate
    maxes = joined([f"{label(v)} {big(x)}" for v, x in first.items()])
    root = math.sqrt(d_h)
    st.markdown(t("language_model.hist_text", d_h=d_h, root=f"{root:.3g}", inv=f"{1 / root:.3g}"))
    workshop.chart(
        "language_model.logits_at_start", charts.logit_histogram,
        partial(frames.logits_at_start, d_h, labels()),
        source=char_lm.forward, d_h=d_h, maxes=maxes,
    )  # fmt: skip
    rows = s.config["probe_rows"]
    st.caption(
        t(
            "language_model.hist_caption",
            rows=rows,
            seeds=len(s.meta["seeds"]),
            width=f"{np.diff(s.arrays['logit_hist_edges'])[0]:g}",
            maxes=maxes,
        )
    )


# --- 2. final loss against learning rate --------------------------------------------------------
def rate_answer(d_h: int) -> int:
    """The prediction's right answer: 0 if without the scale the best rate is lower than
    with ÷√dₕ, 1 if the same, 2 if higher (seed means on the shipped grid)."""
    cells = data.cells()
    none, sqrt = cells["none", d_h].best, cells["sqrt", d_h].best
    return 0 if none < sqrt else 1 if none == sqrt else 2


def loss_against_rate(d_h: int, rate: float) -> None:
    """The question on the best rate, then the final loss against the rate for both head
    sizes (Wortsman et al. 2023, Figure 1) with the learner's ``rate`` marked, what each
    variant reaches at that rate, and each variant's LR sensitivity."""
    s = data.sweep()
    cells = data.cells()
    st.header(t("language_model.rate_header"))
    top = st.container()  # the takeaway, once the question is answered
    none, sqrt = cells["none", d_h], cells["sqrt", d_h]
    explain = t(
        "language_model_workshop.predict_explain",
        seeds=len(s.meta["seeds"]),
        n=len(s.lrs),
        lr_sqrt=lr_text(s.lrs[sqrt.best]),
        loss_sqrt=nats(sqrt.best_loss),
        lr_none=lr_text(s.lrs[none.best]),
        loss_none=nats(none.best_loss),
    )
    if not workshop.predict(
        "language_model_best_rate",
        t(
            "language_model_workshop.predict_q",
            d_h=d_h,
            n=len(s.lrs),
            lo=lr_text(s.lrs[0]),
            hi=lr_text(s.lrs[-1]),
        ),
        [t(f"language_model_workshop.opt_{k}") for k in ("lower", "same", "higher")],
        answer=rate_answer(d_h),
        explain=explain,
        about=(d_h,),
    ):
        return
    excess = gap(none.best_loss, sqrt.best_loss)
    with top:
        if none.best == sqrt.best:
            workshop.takeaway(
                t(
                    "language_model.rate_takeaway_same",
                    d_h=d_h,
                    lr=lr_text(s.lrs[sqrt.best]),
                    gap=excess,
                )
            )
        else:
            workshop.takeaway(
                t(
                    "language_model.rate_takeaway_moved",
                    d_h=d_h,
                    lr_sqrt=lr_text(s.lrs[sqrt.best]),
                    lr_none=lr_text(s.lrs[none.best]),
                    gap=excess,
                )
            )
    small, large = min(s.head_sizes), max(s.head_sizes)
    st.markdown(t("language_model.rate_text", small=small, large=large, seeds=len(s.meta["seeds"])))
    unigram = s.meta["unigram_val_loss"]
    domain = data.loss_domain()
    for col, h in zip(st.columns(len(s.head_sizes)), s.head_sizes, strict=True):
        parts = [
            t("language_model.rate_alt_part", name=label(v), best=nats(cells[v, h].best_loss),
              lr=lr_text(s.lrs[cells[v, h].best]), sens=f"{cells[v, h].sensitivity:.3f}")
            for v in data.VARIANTS
        ]  # fmt: skip
        with col:
            workshop.chart(
                f"language_model.loss_lr_{h}", charts.loss_against_rate,
                partial(frames.loss_against_rate, h, labels()), table="language_model.loss_lr",
                options={"reference": unigram, "y_domain": domain,
                         "rates": (s.lrs[0], s.lrs[-1]), "current_lr": rate},
                source=char_lm.lr_sensitivity if h == small else None,
                d_h=h, unigram=nats(unigram), lo=lr_text(s.lrs[0]), hi=lr_text(s.lrs[-1]),
                rate=lr_text(rate),
                parts=t("language_model.sep_parts").join(parts),
            )  # fmt: skip
    st.markdown(at_rate(d_h, rate))
    with st.expander(t("language_model.sensitivity_label"), icon=":material/table:"):
        workshop.draw_table(sensitivity_table())
        z = s.arrays
        diverged = int(((z["diverged_step"] >= 0) & (z["done"] == 1)).sum())
        st.caption(
            t(
                "language_model.sensitivity_caption",
                n=len(s.lrs),
                lo=lr_text(s.lrs[0]),
                hi=lr_text(s.lrs[-1]),
                seeds=len(s.meta["seeds"]),
                l0=nats(float(z["initial_val_loss"][z["done"] == 1].mean())),
                diverged=t("language_model.sensitivity_none_diverged")
                if diverged == 0
                else t("language_model.sensitivity_diverged", n=diverged),
            )
        )


def at_rate(d_h: int, rate: float) -> str:
    """What every variant reaches at the learner's ``rate`` (head size ``d_h``): its final
    held-out loss and the first layer's largest |logit| at the end of training."""
    s = data.sweep()
    cells, i = data.cells(), s.rate(rate)
    return t(
        "language_model.at_rate",
        lr=lr_text(rate),
        d_h=d_h,
        losses=joined([f"{label(v)} {nats(float(cells[v, d_h].loss[i]))}" for v in data.VARIANTS]),
        unigram=nats(s.meta["unigram_val_loss"]),
        logits=joined([f"{label(v)} {big(ends(d_h, rate, v)[1])}" for v in data.VARIANTS]),
    )


def sensitivity_table() -> pa.Table:
    """Best final loss (at its rate) and LR sensitivity per variant and head size, a row
    per variant (:func:`ui.common.specs.text_table`)."""
    s, cells = data.sweep(), data.cells()
    rows = []
    for v in data.VARIANTS:
        row = {t("language_model.col_variant"): label(v)}
        for h in s.head_sizes:
            best = cells[v, h]
            row[t("language_model.col_best", d_h=h)] = (
                f"{nats(best.best_loss)} ({lr_text(s.lrs[best.best])})"
            )
            row[t("language_model.col_sensitivity", d_h=h)] = f"{best.sensitivity:.3f}"
        rows.append(row)
    return text_table(rows)


# --- 3. over training -------------------------------------------------------------------------------
def over_training(d_h: int, rate: float) -> None:
    """Held-out loss, largest |logit| and entropy per layer against the step, at the
    learner's rate."""
    s = data.sweep()
    cfg = s.config
    st.header(t("language_model.train_header"))
    logit = {v: ends(d_h, rate, v) for v in data.VARIANTS}  # first layer: (step 0, end)
    workshop.takeaway(
        t(
            "language_model.train_takeaway",
            d_h=d_h,
            lr=lr_text(rate),
            s0=big(logit["sqrt"][0]),
            s1=big(logit["sqrt"][1]),
            n0=big(logit["none"][0]),
            n1=big(logit["none"][1]),
            q0=big(logit["qk_ln"][0]),
            q1=big(logit["qk_ln"][1]),
        )
    )
    seeds = len(s.meta["seeds"])
    st.markdown(
        t(
            "language_model.train_text",
            every=cfg["eval_every"],
            rows=cfg["probe_rows"],
            context=cfg["context"],
            seeds=seeds,
        )
    )
    names = labels()
    rate_words = {"d_h": d_h, "lr": lr_text(rate)}
    unigram = s.meta["unigram_val_loss"]
    loss = [data.curve(v, d_h, rate, "val_loss") for v in data.VARIANTS]
    start = float(np.mean([c["mean"][0] for c in loss]))
    # the y-range leaves out step 0 (≈ ln 84 + ½ for every variant): it would flatten the rest
    later = np.concatenate([np.concatenate([c["lo"][1:], c["hi"][1:]]) for c in loss])
    later = later[np.isfinite(later)]
    loss_domain = (float(later.min()) - 0.05, max(float(later.max()), unigram) + 0.1)
    workshop.chart(
        "language_model.val_loss", charts.over_training,
        partial(frames.over_training, d_h, rate, "val_loss", None, names),
        options={"reference": unigram, "y_domain": loss_domain}, unigram=nats(unigram),
        start=f"{start:.2f}",
        ends=joined([f"{label(v)} {nats(ends(d_h, rate, v, 'val_loss')[1])}"
                     for v in data.VARIANTS]),
        **rate_words,
    )  # fmt: skip
    layers = range(cfg["n_layers"])
    logit_span = _span(d_h, rate, "max_logit", layers)
    logit_domain = (logit_span[0] / 1.5, logit_span[1] * 1.5)
    uniform = data.uniform_entropy(cfg["context"])
    entropy_top = max(_span(d_h, rate, "entropy", layers)[1], uniform) * 1.08
    for name, options in (
        ("max_logit", {"log_y": True, "y_domain": logit_domain}),
        ("entropy", {"y_domain": (0.0, entropy_top), "reference": uniform}),
    ):
        for col, layer in zip(st.columns(len(layers)), layers, strict=True):
            summary = joined(
                [f"{label(v)} {big(ends(d_h, rate, v, name, layer)[1])}" for v in data.VARIANTS]
            )
            with col:
                workshop.chart(
                    f"language_model.{name}_layer_{layer + 1}", charts.over_training,
                    partial(frames.over_training, d_h, rate, name, layer, names),
                    table=f"language_model.{name}",
                    options=options, layer=layer + 1, ends=summary,
                    uniform=f"{uniform:.2f}", **rate_words,
                )  # fmt: skip
    st.caption(
        t(
            "language_model.train_caption",
            uniform=f"{uniform:.2f}",
            context=cfg["context"],
            floor=pct(1 / cfg["context"]),
        )
    )


def _span(d_h: int, rate: float, name: str, layers) -> tuple[float, float]:
    """The smallest positive and the largest value of ``name`` over every variant, seed
    and layer at (d_h, rate): one y-range for the charts of all layers."""
    values = np.concatenate(
        [
            np.concatenate([c["lo"], c["hi"]])
            for v in data.VARIANTS
            for layer in layers
            for c in [data.curve(v, d_h, rate, name, layer)]
        ]
    )
    values = values[np.isfinite(values)]
    positive = values[values > 0]
    return float(positive.min()), float(values.max())
