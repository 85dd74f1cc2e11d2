"""The learning-rate sweep of the training page, the best rate per d_k, and the myth card
that reads the sweep.

Sections 3 (the short path), 5 and 4 of the page (sections 1 and 2:
:mod:`ui.training.sections`). The sweep is shown at once from the shipped cells; missing
cells are computed behind a button, one cached cell at a time, with the progress bar and
status line outside the cache.
"""

from __future__ import annotations

import math
import time
from functools import partial

import pyarrow as pa
import streamlit as st

from core.training import LR_GRIDS
from ui.common import workshop
from ui.common.i18n import t
from ui.common.specs import text_table
from ui.story import answers
from ui.training import charts, data, frames
from ui.training.sections import Settings, View, fmt, headline, m_sentence, opt_name, pct


# --- 3: LR sensitivity ---------------------------------------------------------------------------
def grid_text(optimizer: str) -> dict[str, str]:
    grid = LR_GRIDS[optimizer]
    return {
        "n": str(len(grid)),
        "lo": data.lr_text(grid[0]),
        "hi": data.lr_text(grid[-1]),
        "seeds": str(data.SWEEP_SEEDS),
    }


def gather(v: Settings) -> dict[tuple, str]:
    """The sweep cells available now, each with where it comes from: "precomputed" or
    "computed" (in this session)."""
    out = {}
    for cell in data.needed_cells(v.m, v.optimizer, v.d_k, v.seed, v.steps):
        source = data.cell_source(cell, v.variants)
        if source is not None:
            out[cell] = source
    return out


def compute_missing(v: Settings, missing: list[tuple]) -> None:
    """Run the missing cells one by one (each cached), with a progress bar and a status
    line outside the cached function."""
    bar = st.progress(0.0, text=t("training.progress_start", n=len(missing)))
    costs = [data.cell_cost(c[2], v.steps, len(v.variants)) for c in missing]
    done_cost, spent, t0 = 0.0, 0.0, time.perf_counter()
    for i, cell in enumerate(missing):
        m, opt, d_k, seed, steps = cell
        left_cost = sum(costs[i:])
        eta = left_cost * (spent / done_cost) if done_cost else left_cost
        bar.progress(
            done_cost / sum(costs),
            text=t(
                "training.progress",
                k=i + 1,
                n=len(missing),
                d_k=d_k,
                seed=seed,
                opt=opt_name(opt),
                left=f"{eta:.0f}",
            ),
        )
        data.sweep_cell(m, opt, d_k, seed, steps, v.variants)
        data.store(cell, v.variants)
        done_cost += costs[i]
        spent = time.perf_counter() - t0
    bar.progress(1.0, text=t("training.progress_done", n=len(missing), seconds=f"{spent:.0f}"))


def lr_sweep(v: Settings) -> dict | None:
    """The sweep section, the page's short path: the question, then the chart at the
    learner's d_k; returns the numbers the myth card needs (None while the sweep at that
    d_k is not available)."""
    st.header(t("training.s3_title"))
    top = st.container()  # the takeaway: at once without a sweep, else once answered
    with st.expander(t("training.model_label"), icon=":material/info:"):
        st.markdown(t("training.model", n=data.N_KEYS))
        st.markdown(m_sentence(v.m))
    needed = data.needed_cells(v.m, v.optimizer, v.d_k, v.seed, v.steps)
    have = gather(v)
    missing = [c for c in needed if c not in have]
    if missing:
        estimate = sum(data.cell_cost(c[2], v.steps, len(v.variants)) for c in missing)
        st.info(
            t(
                "training.not_precomputed",
                n=len(missing),
                total=len(needed),
                seconds=f"{estimate:.0f}",
                steps=data.PRECOMPUTED_STEPS,
                seed_list=", ".join(str(x) for x in data.PRECOMPUTED_SEEDS),
            ),
            icon=":material/info:",
        )
        if st.button(
            t("training.compute"),
            key="training_compute",
            type="primary",
            icon=":material/play_arrow:",
        ):
            compute_missing(v, missing)
            have = gather(v)
    here = [c for c in needed[: data.SWEEP_SEEDS] if c in have]
    if len(here) < data.SWEEP_SEEDS:
        with top:
            workshop.takeaway(t("training.s3_takeaway_missing"))
        return None
    numbers = data.sweep_stats(
        m=v.m, optimizer=v.optimizer, d_k=v.d_k, seed=v.seed, steps=v.steps, variants=v.variants
    )
    if workshop.predict(**learns_question(v, numbers)):
        n0, nh = (count(numbers["per"][k], "learns") for k in ("alpha_0", "alpha_half"))
        with top:
            workshop.takeaway(
                t(
                    f"training.s3_takeaway_{claim(numbers)}",
                    n0=n0,
                    nh=nh,
                    n=len(numbers["per"]["alpha_0"]["lrs"]),
                )
            )
        st.markdown(
            t(
                "training.s3_text",
                opt=opt_name(v.optimizer),
                learn=pct(data.LEARN_RATIO),
                **grid_text(v.optimizer),
            )
        )
        sweep_charts(v, have, numbers)
    return numbers


def lr_list(entry: dict, which: str) -> str:
    """The rates with verdict ``which``, a borderline one followed by the borderline mark."""
    sign = t("training.borderline_mark")
    picked = [
        data.lr_text(lr) + (sign if edge else "")
        for lr, w, edge in zip(entry["lrs"], entry["verdicts"], entry["borderline"], strict=True)
        if w == which
    ]
    return ", ".join(picked) if picked else t("training.none")


def count(entry: dict, which: str) -> int:
    return entry["verdicts"].count(which)


def claim(numbers: dict) -> str:
    """What the sweep says of the claim that a model without the scale cannot learn:
    "learns" (unscaled it learns at some rate: too strong), "none" (unscaled at none,
    with 1/√d_k at some: it holds) or "neither" (at none either way: this grid does not
    separate them, so it neither holds nor fails)."""
    per = numbers["per"]
    if count(per["alpha_0"], "learns"):
        return "learns"
    return "none" if count(per["alpha_half"], "learns") else "neither"


def sweep_charts(v: Settings, have: dict, numbers: dict) -> None:
    """The LR chart at the learner's d_k and what the shipped sweep says beyond it; the
    table, the captions and where the runs come from in a panel (``numbers``:
    :func:`data.sweep_stats`)."""
    per = numbers["per"]
    answers.training_sweep(v.m, v.d_k, v.optimizer, v.lr, v.steps, v.variants, v.seed).draw()
    st.caption(t("training.lr_caption"))
    st.markdown(headline(v.m))
    with st.expander(t("training.numbers_label"), icon=":material/table:"):
        st.caption(
            t("training.lr_caption_more", learn=pct(data.LEARN_RATIO), fail=pct(data.FAIL_RATIO))
        )
        workshop.draw_table(sensitivity_table(per))
        diverged, sources = numbers["diverged"], list(have.values())
        notes = (
            borderline_caption(per),
            t("training.sensitivity_caption", **grid_text(v.optimizer)),
            t("training.diverged_some", n=diverged) if diverged else t("training.diverged_none"),
            t(
                "training.sources",
                pre=sources.count("precomputed"),
                now=sources.count("computed"),
                total=len(data.needed_cells(v.m, v.optimizer, v.d_k, v.seed, v.steps)),
                seeds=", ".join(str(s) for s in data.sweep_seeds(v.seed)),
            ),
        )
        # the notes under the table, one paragraph each, in one element
        st.caption("\n\n".join(note for note in notes if note))


def sensitivity_table(per: dict) -> pa.Table:
    """One row per variant, indexed by its name: sensitivity (median and range over the
    seeds), ℓ₀, best rate, verdicts; a borderline rate or best rate carries the mark."""
    mark = t("training.borderline_mark")
    rows = []
    for name, e in per.items():
        sens = f"{e['sensitivity']:.3f} ({e['sensitivity_lo']:.3f}–{e['sensitivity_hi']:.3f})"
        best = f"{fmt(e['best'])} @ {data.lr_text(e['best_lr'])}" + (mark if e["rivals"] else "")
        rows.append(
            {
                t("training.col_scaling"): data.variant_label(name),
                t("training.col_sensitivity"): sens,
                t("training.col_initial"): fmt(e["initial"]),
                t("training.col_best"): best,
                t("training.col_vs_best"): f"{e['vs_task_best']:.1f}×",
                t("training.col_learns"): lr_list(e, "learns"),
                t("training.col_fails"): lr_list(e, "fails"),
            }
        )
    return text_table(rows)


def ratio_text(x: float) -> str:
    return f"{100 * x:.0f} %" if math.isfinite(x) else "∞"


def borderline_caption(per: dict) -> str | None:
    """Each borderline verdict and best rate with its spread over the seeds (None if no
    result is borderline)."""
    items = []
    for name, e in per.items():
        label = data.variant_label(name)
        for i, lr in enumerate(e["lrs"]):
            if e["borderline"][i]:
                items.append(
                    t(
                        "training.borderline_verdict",
                        name=label,
                        lr=data.lr_text(lr),
                        lo=ratio_text(e["ratio_lo"][i]),
                        hi=ratio_text(e["ratio_hi"][i]),
                        median=ratio_text(e["ratio"][i]),
                        verdict=t(f"training.verdict_{e['verdicts'][i]}"),
                    )
                )
        if e["rivals"]:
            items.append(
                t(
                    "training.borderline_best",
                    name=label,
                    lr=data.lr_text(e["best_lr"]),
                    lo=fmt(e["best_lo"]),
                    hi=fmt(e["best_hi"]),
                    rivals=", ".join(data.lr_text(lr) for lr in e["rivals"]),
                )
            )
    if not items:
        return None
    return t(
        "training.borderline_caption",
        mark=t("training.borderline_mark"),
        n=data.SWEEP_SEEDS,
        items=t("training.borderline_sep").join(items),
    )


def small_multiples(v: Settings) -> None:
    """Section 5: the LR chart at every d_k of ``data.SWEEP_D_KS`` whose seeds are all
    available (:func:`gather`), on one y-range, with the best rate per d_k."""
    have = gather(v)
    title = t("training.multiples_title", opt=opt_name(v.optimizer))
    d_ks = tuple(
        d_k
        for d_k in data.SWEEP_D_KS
        if all(
            c in have
            for c in data.needed_cells(v.m, v.optimizer, d_k, v.seed, v.steps)[: data.SWEEP_SEEDS]
        )
    )
    st.header(title)
    if not d_ks:
        workshop.takeaway(t("training.multiples_takeaway_missing"))
        st.caption(t("training.multiples_missing"))
        return
    found = data.multiples_stats(
        m=v.m, optimizer=v.optimizer, seed=v.seed, steps=v.steps, variants=v.variants, d_ks=d_ks
    )
    best = {}  # per variant its best rate at each d_k, from the smallest d_k up
    for d_k in d_ks:
        for name, lr in found["best"][d_k]:
            best.setdefault(name, []).append(data.lr_text(lr))
    half = best["alpha_half"]
    workshop.takeaway(
        t("training.multiples_takeaway_same", lr=half[0], lo=d_ks[0], hi=d_ks[-1])
        if len(set(half)) == 1
        else t(
            "training.multiples_takeaway_moves",
            first=half[0], last=half[-1], lo=d_ks[0], hi=d_ks[-1],
        )
    )  # fmt: skip
    labels = data.variant_labels(v.variants)
    options = {
        **data.lines_options(v.optimizer, labels),
        "uniform": data.uniform(v.m),
        "y_domain": found["domain"],
        "legend_columns": 1,  # two panels to a row: ~210 px each at 800 px
        "height": 340,
        "width_px": 170,
    }
    cols = st.columns(2)
    for i, d_k in enumerate(data.SWEEP_D_KS):
        with cols[i % 2]:
            if d_k not in d_ks:
                st.caption(t("training.multiple_missing", d_k=d_k))
                continue
            rates = "; ".join(
                f"{data.variant_label(name)} {data.lr_text(lr)}" for name, lr in found["best"][d_k]
            )
            workshop.chart(
                f"training.lr_{d_k}", charts.lr_lines,
                partial(frames.lr_panel, v.m, v.optimizer, d_k, v.seed, v.steps, v.variants,
                        labels),
                table="training.lr_panel", options=options, source=data.sweep_cell, d_k=d_k, opt=opt_name(v.optimizer),
                best=rates, n=data.SWEEP_SEEDS,
            )  # fmt: skip
    st.caption(
        t(
            "training.multiples_caption",
            best="; ".join(f"{data.variant_label(n)}: {' → '.join(v)}" for n, v in best.items()),
        )
    )


def learns_question(v: Settings, numbers: dict) -> dict:
    per = numbers["per"]
    n0, nh = count(per["alpha_0"], "learns"), count(per["alpha_half"], "learns")
    answer = 0 if n0 == 0 else 1 if n0 < nh else 2
    grid = grid_text(v.optimizer)
    return {
        "key": "training_learns",
        "about": (v.m, v.d_k, v.optimizer, v.steps, v.seed, n0, nh),
        "question": t(
            "training_workshop.learns_q",
            d_k=v.d_k,
            m=v.m,
            opt=opt_name(v.optimizer),
            steps=v.steps,
            learn=pct(data.LEARN_RATIO),
            **grid,
        ),
        "options": [
            t("training_workshop.learns_none"),
            t("training_workshop.learns_fewer"),
            t("training_workshop.learns_as_many"),
        ],
        "answer": answer,
        "explain": t(
            "training_workshop.learns_explain",
            n0=n0,
            nh=nh,
            lrs0=lr_list(per["alpha_0"], "learns"),
            lrsh=lr_list(per["alpha_half"], "learns"),
            s0=f"{per['alpha_0']['sensitivity']:.3f}",
            sh=f"{per['alpha_half']['sensitivity']:.3f}",
            n=grid["n"],
            seeds=data.SWEEP_SEEDS,
        ),
    }


# --- 4: the claim --------------------------------------------------------------------------------
def myth(v: View, numbers: dict | None) -> None:
    st.header(t("training.s4_title"))
    if numbers is None:
        workshop.takeaway(t("training.s4_takeaway_no_sweep"))
    else:
        e0 = numbers["per"]["alpha_0"]
        n_learn, n = count(e0, "learns"), len(e0["lrs"])
        workshop.takeaway(t(f"training.s4_takeaway_{claim(numbers)}", n_learn=n_learn, n=n))
    st.markdown(t("training.s4_context"))
    zero, half = v.run["summary"]["alpha_0"], v.run["summary"]["alpha_half"]
    run_part = t(
        "training_workshop.myth_run",
        lr=data.lr_text(v.lr),
        f0=fmt(zero["final_loss"]),
        l0=fmt(zero["initial_loss"]),
        v0=t(f"training.verdict_{data.verdict(zero['final_loss'], v.m)}"),
        fh=fmt(half["final_loss"]),
        vh=t(f"training.verdict_{data.verdict(half['final_loss'], v.m)}"),
    )
    definition = t(
        "training_workshop.myth_define",
        learn=pct(data.LEARN_RATIO),
        fail=pct(data.FAIL_RATIO),
        last=data.LAST,
        m=v.m,
        uniform=fmt(data.uniform(v.m)),
        best=fmt(data.task_best(v.m)),
    )
    if numbers is None:
        sweep_part = t("training_workshop.myth_no_sweep")
    else:
        e0, eh = numbers["per"]["alpha_0"], numbers["per"]["alpha_half"]
        dead_0 = zero["dead_0"]  # step 0: the same at every rate
        start = (
            t("training_workshop.myth_start_dead", dead_0=pct(dead_0))
            if dead_0 > 0
            else t("training_workshop.myth_start_alive")
        )
        sweep_part = t(
            f"training_workshop.myth_sweep_{claim(numbers)}",
            d_k=v.d_k,
            m=v.m,
            opt=opt_name(v.optimizer),
            steps=v.steps,
            n=len(e0["lrs"]),
            n_learn=count(e0, "learns"),
            learn=lr_list(e0, "learns"),
            partly=lr_list(e0, "partly"),
            fail=lr_list(e0, "fails"),
            best=fmt(e0["best"]),
            best_lr=data.lr_text(e0["best_lr"]),
            l0=fmt(e0["initial"]),
            nh=count(eh, "learns"),
            learn_h=lr_list(eh, "learns"),
            s0=f"{e0['sensitivity']:.3f}",
            sh=f"{eh['sensitivity']:.3f}",
            lh=fmt(eh["initial"]),
            best_h=fmt(eh["best"]),
            best_h_lr=data.lr_text(eh["best_lr"]),
            start=start,
            seeds=data.SWEEP_SEEDS,
        )
        if count(e0, "diverged"):
            sweep_part += " " + t("training_workshop.myth_diverged", lrs=lr_list(e0, "diverged"))
        if any(e0["borderline"]) or any(eh["borderline"]):
            sweep_part += " " + t(
                "training_workshop.myth_borderline", mark=t("training.borderline_mark")
            )
    workshop.myth(
        t("training_workshop.myth_claim"), "\n\n".join([definition, sweep_part, run_part])
    )
    st.caption(t("training.s4_caption"))
