"""Sections of the training page, each drawn by one function.

The page script reads the controls into a :class:`View` (which trains, or takes from the
cache, the single run); the sections draw it. Every number a sentence quotes is read
from the run or the sweep at the learner's settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import pyarrow as pa
import streamlit as st

from core.training import OPTIMIZERS, train_recall_variants
from ui.common import controls, workshop
from ui.common.i18n import t
from ui.common.params import nearest_power
from ui.common.specs import text_table
from ui.training import charts, data, frames
from ui.training.runs import D_K_POWERS


@dataclass(frozen=True)
class Settings:
    """The learner's settings: the task (m), d_k, the optimizer and its learning rate, the
    number of steps, the variants trained and the seed."""

    d_k: int
    optimizer: str
    lr: float
    steps: int
    variants: tuple[str, ...]
    seed: int
    m: int


@dataclass(frozen=True)
class View(Settings):
    """The settings and the single run's numbers (:func:`data.run_stats`)."""

    run: dict


def settings(
    d_k: int,
    optimizer: str,
    lr: str,
    steps: str,
    folded: bool,
    qk_norm: bool,
    seed: int,
    m: str,
) -> Settings:
    """The values of the controls as :class:`Settings` (nothing is trained)."""
    variants = data.variant_names(folded, qk_norm)
    return Settings(d_k, optimizer, float(lr), int(steps), variants, seed, int(m))


def view(s: Settings) -> View:
    """The single run at settings ``s``, trained with a spinner unless the cache (or the
    shipped runs) holds it."""
    seconds = data.cell_cost(s.d_k, s.steps, len(s.variants)) / 10  # one rate of ~13
    with st.spinner(t("training.training_now", seconds=f"{seconds:.0f}"), show_time=True):
        # by keyword: Streamlit's cache reads the signature for every positional argument
        run = data.run_stats(
            d_k=s.d_k, optimizer=s.optimizer, lr=s.lr, steps=s.steps, variants=s.variants,
            seed=s.seed, m=s.m,
        )  # fmt: skip
    return View(s.d_k, s.optimizer, s.lr, s.steps, s.variants, s.seed, s.m, run)


def m_select() -> str:
    """The task: m targets per row (1, 2 or 4), bound to ``?m=``."""
    return controls.choice("m", t("training.m"), help=t("training.m_help"))


# --- controls ---------------------------------------------------------------------------------
def more_settings() -> tuple[str, str, str, bool, bool]:
    """The optimizer, its learning rate, the steps and the two extra variants (the
    controls box's "More settings"): (optimizer, lr, steps, folded, qk_norm)."""
    optimizer = optimizer_radio()
    lr = lr_select(optimizer)
    steps = controls.choice(
        "steps", t("training.steps"), widget="select_slider", help=t("training.steps_help")
    )
    folded = controls.toggle("folded", t("training.folded"), t("training.folded_help"))
    qk_norm = controls.toggle("qk_norm", t("training.qk_norm"), t("training.qk_norm_help"))
    return optimizer, lr, steps, folded, qk_norm


def optimizer_radio() -> str:
    """SGD or Adam, ``?optimizer=``: the radio shows the names and the link keeps the option
    (as :func:`controls.choice` does with ``labels``), but the radio starts from the link's
    value through its index, not a value put in the session first: a radio seeded that way
    inside a popover stops sending its changes after the next rerun (Streamlit 1.67)."""
    options = list(OPTIMIZERS)
    current = st.session_state.get("optimizer", controls.link_value("optimizer"))
    value = st.radio(
        t("training.optimizer"),
        options,
        index=options.index(current),
        format_func=opt_name,
        captions=[t(f"training.opt_{o}_caption") for o in options],
        horizontal=True,
        key="optimizer",
    )
    controls.write_link("optimizer", value, controls.param("optimizer").default)
    return value


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
        t("training.lr_label"),
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
def opt_name(optimizer: str) -> str:
    return t(f"training.opt_{optimizer}")


def fmt(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.3g}" if x >= 1e-3 else f"{x:.1e}"


pct = data.pct


def gap_text(gap: float) -> str:
    """A gap left as a percentage (∞ or NaN: "—")."""
    return f"{100 * gap:.0f} %" if math.isfinite(gap) else "—"


def per_variant(summary: dict[str, dict], text) -> str:
    """``text(row)`` of every variant of a run's ``summary``, each after its legend text."""
    return "; ".join(f"{data.variant_label(name)} {text(r)}" for name, r in summary.items())


# --- 1: one run, side by side ------------------------------------------------------------------
def one_run(v: View) -> None:
    summary = v.run["summary"]
    st.header(t("training.s1_title"))
    setting = {"d_k": v.d_k, "opt": opt_name(v.optimizer), "lr": data.lr_text(v.lr)}
    workshop.takeaway(
        one_run_takeaway(summary, v.m, **setting),
        t(
            "training.s1_text",
            d_k=v.d_k,
            opt=opt_name(v.optimizer),
            lr=data.lr_text(v.lr),
            steps=v.steps,
        ),
    )
    workshop.draw_table(summary_table(summary, v.m))
    st.caption(
        t(
            "training.table_caption",
            last=data.LAST,
            m=v.m,
            uniform=fmt(data.uniform(v.m)),
            best=fmt(data.task_best(v.m)),
        )
    )
    workshop.draw_table(data.thresholds(v.m))
    for name, r in summary.items():
        if r["diverged_at"] >= 0:
            st.warning(t("training.diverged", name=data.variant_label(name), step=r["diverged_at"]))
    curves(v)
    st.caption(
        t("training.curves_caption", window=data.SMOOTH, points=data.CURVE_POINTS, last=data.LAST)
    )
    st.caption(dead_rows_caption(summary))


def curves(v: View) -> None:
    """Loss, accuracy, entropy and dead rows against step, two to a row."""
    summary, m = v.run["summary"], v.m
    ln_n = math.log(data.N_KEYS)
    chance = 1 / math.comb(data.N_KEYS, m)  # top-m equal to the m targets by chance
    options = {
        "loss": {"log_y": True},
        "accuracy": {"y_domain": (0, 1), "reference": chance},
        "entropy": {"y_domain": (0, ln_n * 1.05), "reference": ln_n},
        "dead_fraction": {"y_domain": (0, 1)},
    }
    values = {
        "loss": {"values": per_variant(summary, lambda r: fmt(r["final_loss"]))},
        "accuracy": {
            "values": per_variant(summary, lambda r: f"{r['accuracy']:.2f}"),
            "value": f"{chance:.2g}",
        },
        "entropy": {
            "values": per_variant(summary, lambda r: f"{r['entropy_0']:.2f} → {r['entropy']:.2f}"),
            "value": f"{ln_n:.2f}",
        },
        "dead_fraction": {
            "values": per_variant(summary, lambda r: f"{pct(r['dead_0'])} → {pct(r['dead'])}")
        },
    }
    labels = data.variant_labels(v.variants)
    for i, metric in enumerate(data.METRICS):
        if i % 2 == 0:  # row by row, so a narrow screen stacks them in reading order
            cols = st.columns(2)
        with cols[i % 2]:
            workshop.chart(
                f"training.{metric}", charts.curves,
                partial(frames.curve, metric, v.d_k, v.optimizer, v.lr, v.steps, v.variants,
                        v.seed, v.m, labels),
                options=options[metric], source=train_recall_variants, steps=v.steps,
                **values[metric],
            )  # fmt: skip


def one_run_takeaway(summary: dict[str, dict], m: int = 1, **setting) -> str:
    """Section 1's takeaway, read from the run's ``summary`` (:func:`data.run_stats`):
    whether it learns with and without the scale (the verdicts of α = 0 and α = ½);
    ``setting`` (d_k, opt, lr, m) names the run the sentence speaks for."""
    verdicts = {name: data.verdict(r["final_loss"], m) for name, r in summary.items()}
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
    every optimizer and d_k, :func:`data.task_headline`): whether the unscaled model fails
    somewhere — no rate ends better than uniform attention —, learns everywhere, or in
    between; at how many (setting, rate) pairs it learns against 1/√d_k; and its best
    final loss over the task's best ℓ* at d_k ≥ 64."""
    found = data.task_headline(m=m)
    if found is None:
        return t("training.headline_missing")
    numbers = {
        "m": m,
        "seeds": data.SWEEP_SEEDS,
        "lo": f"{found['r0'][0]:.1f}",
        "hi": f"{found['r0'][1]:.1f}",
        "hlo": f"{found['rh'][0]:.1f}",
        "hhi": f"{found['rh'][1]:.1f}",
        "best": fmt(data.task_best(m)),
        "uniform": fmt(data.uniform(m)),
        "n0": found["n0"],
        "nh": found["nh"],
        "total": found["total"],
    }

    def where(settings: tuple[tuple[str, tuple[int, ...]], ...]) -> str:
        parts = [
            t("training.where_item", opt=opt_name(opt), d_ks=", ".join(str(d) for d in d_ks))
            for opt, d_ks in settings
            if d_ks
        ]
        return t("training.where_sep").join(parts)

    if found["half_best"] is not None:  # somewhere α = 0 ends no better than uniform
        return t(
            "training.headline_fails",
            where=where(found["failing"]),
            best_lo=fmt(found["half_best"][0]),
            best_hi=fmt(found["half_best"][1]),
            **numbers,
        )
    if sum(len(d_ks) for _, d_ks in found["learning"]) == found["every_d_k"]:
        return t("training.headline_learns", **numbers)
    return t("training.headline_partly", where=where(found["learning"]), **numbers)


def summary_table(summary: dict[str, dict], m: int = 1) -> pa.Table:
    """One row per variant of the run's ``summary``, indexed by its name: the run's
    numbers and verdict."""
    rows = []
    for name, r in summary.items():
        rows.append(
            {
                t("training.col_scaling"): data.variant_label(name),
                t("training.col_initial"): fmt(r["initial_loss"]),
                t("training.col_final"): fmt(r["final_loss"]),
                t("training.col_ratio"): gap_text(data.gap_left(r["final_loss"], m)),
                t("training.col_accuracy"): f"{r['accuracy']:.2f}",
                t("training.col_dead"): f"{pct(r['dead_0'])} → {pct(r['dead'])}",
                t("training.col_verdict"): t(
                    f"training.verdict_{data.verdict(r['final_loss'], m)}"
                ),
            }
        )
    return text_table(rows)


def dead_rows_caption(summary: dict[str, dict]) -> str:
    """Dead rows at step 0 and at the end, per variant, with how to read them."""
    unscaled = summary["alpha_0"]
    return t(
        "training.dead_caption",
        dead_0=pct(unscaled["dead_0"]),
        dead=pct(unscaled["dead"]),
        acc=f"{unscaled['accuracy']:.2f}",
    )


# --- 2: inside one run ---------------------------------------------------------------------------
def inside_run(v: View) -> None:
    summary = v.run["summary"]
    st.header(t("training.s2_title"))
    workshop.takeaway(
        t(
            "training.s2_takeaway",
            h0=f"{summary['alpha_0']['entropy_0']:.2f}",
            hh=f"{summary['alpha_half']['entropy_0']:.2f}",
            ln_n=f"{math.log(data.N_KEYS):.2f}",
        )
    )
    st.markdown(t("training.s2_text", n=data.N_PROBE))
    shorts = data.variant_shorts(v.variants)
    # one heatmap per scaling, two to a row on a wide screen (three would leave 8-px cells
    # at 800 px beside the sidebar) and stacked on a phone: each takes its column's width,
    # so its cells grow with the screen
    for i, (name, r) in enumerate(summary.items()):
        if i % 2 == 0:
            cols = st.columns(2)
        with cols[i % 2]:
            workshop.chart(
                f"training.probe_{name}", charts.probe_heatmap,
                partial(frames.probe, v.d_k, v.optimizer, v.lr, v.steps, v.variants, v.seed,
                        v.m, shorts, name),
                table="training.probe", source=train_recall_variants if name == v.variants[-1]
                else None, last=v.run["last"], name=data.variant_label(name),
                top0=f"{r['top_0']:.2f}", target=f"{r['on_target']:.2f}",
            )  # fmt: skip
    st.caption(
        t(
            "training.probe_caption",
            ln_n=f"{math.log(data.N_KEYS):.2f}",
            entropies=per_variant(summary, lambda r: f"{r['entropy_0']:.2f} → {r['entropy']:.2f}"),
        )
    )
