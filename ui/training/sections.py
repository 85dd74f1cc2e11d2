"""Sections of the training page, each drawn by one function.

The page script reads the controls into a :class:`View` (which trains, or takes from the
cache, the single run); the sections draw it. Every number a sentence quotes is read
from the run or the sweep at the learner's settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import pandas as pd
import streamlit as st

from core.training import train_recall_variants
from ui.common import controls, workshop
from ui.common.i18n import t
from ui.common.params import nearest_power
from ui.training import charts, data
from ui.training.runs import D_K_POWERS, M_OPTIONS


@dataclass(frozen=True)
class View:
    d_k: int
    optimizer: str
    lr: float
    steps: int
    variants: tuple[str, ...]
    seed: int
    run: dict
    m: int = 1


def view(
    d_k: int,
    optimizer: str,
    lr: str,
    steps: str,
    folded: bool,
    qk_norm: bool,
    seed: int,
    m: str = "1",
):
    variants = data.variant_names(folded, qk_norm)
    seconds = data.cell_cost(d_k, int(steps), len(variants)) / 10  # one rate of ~13
    with st.spinner(t("training.training_now", seconds=f"{seconds:.0f}"), show_time=True):
        run = data.single_run(d_k, optimizer, float(lr), int(steps), variants, seed, int(m))
    return View(d_k, optimizer, float(lr), int(steps), variants, seed, run, int(m))


def m_select() -> str:
    """The task: m targets per row (1, 2 or 4), bound to ``?m=``."""
    return controls.choice(
        "m",
        t("training.m"),
        captions=[t(f"training.m_caption_{m}") for m in M_OPTIONS],
        help=t("training.m_help"),
    )


# --- controls ---------------------------------------------------------------------------------
#: Session-state entry: the optimizer of the previous run (to reset the LR when it changes).
_LAST_OPTIMIZER = "_training_optimizer"


def lr_select(optimizer: str) -> str:
    """The learning rate (a select slider over quarter decades), bound to ``?lr=``.

    When the optimizer changes, the rate goes back to that optimizer's default
    (``core.training.DEFAULT_LRS``): SGD's good rates are Adam's failing ones.
    """
    last = st.session_state.get(_LAST_OPTIMIZER)
    st.session_state[_LAST_OPTIMIZER] = optimizer
    if last is not None and last != optimizer:
        st.session_state["lr"] = data.DEFAULT_LR_TEXT[optimizer]
    return controls.choice(
        "lr",
        t("training.lr"),
        widget="select_slider",
        help=t(
            "training.lr_help", sgd=data.DEFAULT_LR_TEXT["sgd"], adam=data.DEFAULT_LR_TEXT["adam"]
        ),
        given={"optimizer": optimizer},
    )


_D_K_MOVED = "_training_d_k_moved"  # (asked, used) when a typed value was moved to a power


def snap_d_k(value: int, previous: int | None) -> int:
    """The power of two in :data:`D_K_POWERS` that ``value`` moves to.

    A step of one away from ``previous`` (the number input's − / +) goes on to the next
    power in that direction, as d_k does on every page (:func:`controls.power_step`);
    any other value (typed, another page's d_k) goes to the nearest power on a log scale
    (as a linked one does: the table's ``snap``).
    """
    lo, hi = D_K_POWERS[0], D_K_POWERS[-1]
    value = min(hi, max(lo, int(value)))
    stepped = controls.power_step(value, previous, lo, hi)
    return stepped if stepped != value else nearest_power(value, lo, hi)


def d_k_input() -> int:
    """d_k, a power of two from 16 to 1024, bound to ``?d_k=``: − / + and ÷2 / ×2 move it
    as on every page (:func:`controls.d_k_input`), but a value typed moves to the nearest
    power, with a note saying why (each d_k is a training run that a room of learners
    shares, see :data:`D_K_POWERS`); a linked one was moved when the URL was read.
    """
    state = st.session_state
    previous = controls.last_shown("d_k")
    value = state.get("d_k")
    if isinstance(value, int) and value not in D_K_POWERS:  # typed, or another page's
        used = snap_d_k(value, previous)
        if used != controls.power_step(value, previous, D_K_POWERS[0], D_K_POWERS[-1]):
            state[_D_K_MOVED] = (value, used)  # not a − / + step: say why
        state["d_k"] = used
    d_k = controls.d_k_input(help=t("training.d_k_help"))
    moved = state.pop(_D_K_MOVED, None)
    if moved is not None:
        st.caption(t("training.d_k_moved", asked=moved[0], used=moved[1]))
    return d_k


# --- shared pieces ------------------------------------------------------------------------------
def tips(*names: str) -> dict[str, str]:
    """Tooltip titles of a chart, from the catalog (``training.tip_<name>``)."""
    return {name: t(f"training.tip_{name}") for name in names}


def opt_name(optimizer: str) -> str:
    return t(f"training.opt_{optimizer}")


def fmt(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.3g}" if x >= 1e-3 else f"{x:.1e}"


pct = data.pct


def gap_text(gap: float) -> str:
    """A gap left as a percentage (∞ or NaN: "—")."""
    return f"{100 * gap:.0f} %" if math.isfinite(gap) else "—"


def finals_text(summary: pd.DataFrame) -> str:
    return "; ".join(
        f"{data.variant_label(r.variant)} {fmt(r.final_loss)}" for r in summary.itertuples()
    )


# --- 1: one run, side by side ------------------------------------------------------------------
def one_run(v: View) -> None:
    st.header(t("training.s1_title"))
    setting = {"d_k": v.d_k, "opt": opt_name(v.optimizer), "lr": data.lr_text(v.lr)}
    workshop.takeaway(one_run_takeaway(v.run["summary"], v.m, **setting))
    st.markdown(
        t(
            "training.s1_text",
            d_k=v.d_k,
            opt=opt_name(v.optimizer),
            lr=data.lr_text(v.lr),
            steps=v.steps,
        )
    )
    parts = one_run_parts(v)
    st.table(parts["table"])
    st.caption(
        t(
            "training.table_caption",
            last=data.LAST,
            m=v.m,
            uniform=fmt(data.uniform(v.m)),
            best=fmt(data.task_best(v.m)),
        )
    )
    st.table(data.thresholds(v.m))
    for text in parts["warnings"]:
        st.warning(text)
    for i, (metric, chart, frame) in enumerate(parts["charts"]):
        if i % 2 == 0:  # row by row, so a narrow screen stacks them in reading order
            cols = st.columns(2)
        with cols[i % 2]:
            workshop.legacy_chart(
                chart, key=f"training_{metric}", data=frame, source=train_recall_variants
            )
    st.caption(
        t("training.curves_caption", window=data.SMOOTH, points=data.CURVE_POINTS, last=data.LAST)
    )
    st.caption(parts["dead_caption"])


def one_run_takeaway(summary: pd.DataFrame, m: int = 1, **setting) -> str:
    """Section 1's takeaway, read from the run: whether it learns with and without the
    scale (the verdicts of α = 0 and α = ½); ``setting`` (d_k, opt, lr, m) names the
    run the sentence speaks for."""
    verdicts = {r.variant: data.verdict(r.final_loss, m) for r in summary.itertuples()}
    if verdicts["alpha_half"] != "learns":
        key = "training.s1_takeaway_rate"
        verdict = verdicts["alpha_half"]
    elif verdicts["alpha_0"] != "learns":
        key, verdict = "training.s1_takeaway_unscaled", verdicts["alpha_0"]
    else:
        key, verdict = "training.s1_takeaway_both", "learns"
    return t(key, verdict=t(f"training.verdict_{verdict}"), **({"m": m} | setting))


# --- the task and its headline ----------------------------------------------------------------
def m_sentence(m: int) -> str:
    """What the choice of m changes, in one sentence."""
    return t(
        "training.m_sentence",
        m=m,
        what=t(f"training.m_what_{m}"),
        how=t(f"training.m_how_{m}"),
        uniform=fmt(data.uniform(m)),
    )


def headline(m: int) -> str:
    """The page's answer for the task m, from the shipped sweep (α = 0 against α = ½ at
    every optimizer and d_k): whether the unscaled model fails somewhere — no rate ends
    better than uniform attention —, learns everywhere, or in between; at how many
    (setting, rate) pairs it learns against 1/√d_k; and its best final loss over the
    task's best ℓ* at d_k ≥ 64."""
    found = data.task_findings(m)
    if found.empty:
        return t("training.headline_missing")
    unscaled = found[found["variant"] == "alpha_0"].set_index(["optimizer", "d_k"])
    half = found[found["variant"] == "alpha_half"].set_index(["optimizer", "d_k"])
    wide = unscaled.index.get_level_values("d_k") >= 64
    r0, rh = unscaled["vs_task_best"][wide], half["vs_task_best"][wide]
    numbers = {
        "m": m,
        "seeds": data.SWEEP_SEEDS,
        "lo": f"{r0.min():.1f}",
        "hi": f"{r0.max():.1f}",
        "hlo": f"{rh.min():.1f}",
        "hhi": f"{rh.max():.1f}",
        "best": fmt(data.task_best(m)),
        "uniform": fmt(data.uniform(m)),
        "n0": int(unscaled["n_learns"].sum()),
        "nh": int(half["n_learns"].sum()),
        "total": int(unscaled["n_rates"].sum()),
    }

    def where(mask) -> str:
        parts = []
        for opt in dict.fromkeys(unscaled.index.get_level_values("optimizer")):
            d_ks = [str(d) for (o, d), hit in mask.items() if o == opt and hit]
            if d_ks:
                parts.append(t("training.where_item", opt=opt_name(opt), d_ks=", ".join(d_ks)))
        return t("training.where_sep").join(parts)

    failing = ~unscaled["beats_uniform"]
    if failing.any():
        there = half["best"][failing.to_numpy()]
        return t(
            "training.headline_fails",
            where=where(failing),
            best_lo=fmt(there.min()),
            best_hi=fmt(there.max()),
            **numbers,
        )
    learning = unscaled["n_learns"] > 0
    if learning.all():
        return t("training.headline_learns", **numbers)
    return t("training.headline_partly", where=where(learning), **numbers)


def one_run_parts(v: View) -> dict:
    """What section 1 draws for the run of ``v``: the summary ``table``, divergence
    ``warnings``, per metric (name, deferred chart, CSV frame) in ``charts``, and the
    ``dead_caption``."""
    run, steps = v.run, v.steps
    summary = run["summary"]
    m = v.m
    ln_n = math.log(data.N_KEYS)
    chance = 1 / math.comb(data.N_KEYS, m)  # top-m equal to the m targets by chance
    specs = {
        "loss": {"log_y": True},
        "accuracy": {
            "y_domain": (0, 1),
            "reference": pd.DataFrame(
                {
                    "y": [chance],
                    "label": [t("training.ref_chance", value=f"{chance:.2g}")],
                }
            ),
        },
        "entropy": {
            "y_domain": (0, ln_n * 1.05),
            "reference": pd.DataFrame(
                {"y": [ln_n], "label": [t("training.ref_uniform", value=f"{ln_n:.2f}")]}
            ),
        },
        "dead_fraction": {"y_domain": (0, 1)},
    }
    finals = {
        "loss": finals_text(summary),
        "accuracy": "; ".join(
            f"{data.variant_label(r.variant)} {r.accuracy:.2f}" for r in summary.itertuples()
        ),
        "entropy": "; ".join(
            f"{data.variant_label(r.variant)} {r.entropy_0:.2f} → {r.entropy:.2f}"
            for r in summary.itertuples()
        ),
        "dead_fraction": "; ".join(
            f"{data.variant_label(r.variant)} {pct(r.dead_0)} → {pct(r.dead)}"
            for r in summary.itertuples()
        ),
    }
    curves = {metric: data.labelled(run["curves"][metric]) for metric in data.METRICS}
    charts_ = []
    for metric in data.METRICS:
        frame = curves[metric]
        chart = partial(
            charts.curves,
            frame,
            title=t(f"training.{metric}_title"),
            x_title=t("training.axis_step"),
            y_title=t(f"training.{metric}_y"),
            description=t(f"training.{metric}_alt", values=finals[metric], steps=steps),
            tips=tips("series", "step", "smooth", "raw", "reference"),
            **specs[metric],
        )
        charts_.append((metric, chart, frame.drop(columns="color")))
    diverged = summary[summary["diverged_at"] >= 0]
    return {
        "table": summary_table(summary, m),
        "warnings": [
            t("training.diverged", name=data.variant_label(r.variant), step=r.diverged_at)
            for r in diverged.itertuples()
        ],
        "charts": charts_,
        "dead_caption": dead_rows_caption(summary),
    }


def summary_table(summary: pd.DataFrame, m: int = 1) -> pd.DataFrame:
    """One row per variant, indexed by its name: the run's numbers and verdict."""
    rows = []
    for r in summary.itertuples():
        rows.append(
            {
                t("training.col_scaling"): data.variant_label(r.variant),
                t("training.col_initial"): fmt(r.initial_loss),
                t("training.col_final"): fmt(r.final_loss),
                t("training.col_ratio"): gap_text(data.gap_left(r.final_loss, m)),
                t("training.col_accuracy"): f"{r.accuracy:.2f}",
                t("training.col_dead"): f"{pct(r.dead_0)} → {pct(r.dead)}",
                t("training.col_verdict"): t(f"training.verdict_{data.verdict(r.final_loss, m)}"),
            }
        )
    table = pd.DataFrame(rows)
    return table.set_index(table.columns[0])


def dead_rows_caption(summary: pd.DataFrame) -> str:
    """Dead rows at step 0 and at the end, per variant, with how to read them."""
    unscaled = summary[summary["variant"] == "alpha_0"].iloc[0]
    return t(
        "training.dead_caption",
        dead_0=pct(unscaled.dead_0),
        dead=pct(unscaled.dead),
        acc=f"{unscaled.accuracy:.2f}",
    )


# --- 2: inside one run ---------------------------------------------------------------------------
def inside_run(v: View) -> None:
    st.header(t("training.s2_title"))
    start = v.run["summary"].set_index("variant")["entropy_0"]
    workshop.takeaway(
        t(
            "training.s2_takeaway",
            h0=f"{start['alpha_0']:.2f}",
            hh=f"{start['alpha_half']:.2f}",
            ln_n=f"{math.log(data.N_KEYS):.2f}",
        )
    )
    st.markdown(t("training.s2_text", n=data.N_PROBE))
    chart, frame, caption = inside_run_parts(v)
    workshop.legacy_chart(chart, key="training_probe", data=frame, source=train_recall_variants)
    st.caption(caption)


def inside_run_parts(v: View) -> tuple[partial, pd.DataFrame, str]:
    """Section 2 for the run of ``v``: the deferred probe heatmap, its frame (the CSV) and
    the caption."""
    run, variants = v.run, v.variants
    probe = run["probe"]
    short = {name: data.variant_short(name) for name in pd.unique(probe["variant"])}
    frame = probe.assign(series=probe["variant"].map(short))
    last = int(frame["snapshot"].max())
    top = (
        frame.groupby(["variant", "snapshot"], sort=False)["weight"]
        .max()
        .groupby(level=0)
        .agg(["first", "last"])
    )
    on_target = (
        frame[frame["target"] == 1].groupby(["variant", "snapshot"], sort=False)["weight"].mean()
    )
    described = "; ".join(
        t(
            "training.probe_alt_part",
            name=data.variant_label(name),
            top0=f"{top.loc[name, 'first']:.2f}",
            target=f"{on_target.loc[(name, last)]:.2f}",
        )
        for name in variants
    )
    chart = partial(
        charts.probe_heatmap,
        frame,
        title=t("training.probe_title"),
        x_title=t("training.probe_x"),
        color_title=t("training.probe_color"),
        step_title=t("training.axis_step"),
        description=t("training.probe_alt", last=last, parts=described),
        tips=tips("series", "row", "key", "weight"),
    )
    summary = run["summary"]
    caption = t(
        "training.probe_caption",
        ln_n=f"{math.log(data.N_KEYS):.2f}",
        entropies="; ".join(
            f"{data.variant_label(r.variant)} {r.entropy_0:.2f} → {r.entropy:.2f}"
            for r in summary.itertuples()
        ),
    )
    return chart, frame, caption
