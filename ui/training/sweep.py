"""The learning-rate sweep of the training page, and the myth card that reads it.

Sections 3 and 4 of the page (section 1 and 2: :mod:`ui.training.sections`). The sweep
is shown at once from the shipped cells; missing cells are computed behind a button,
one cached cell at a time, with the progress bar and status line outside the cache.
"""

from __future__ import annotations

import math
import time
from functools import partial

import pandas as pd
import streamlit as st

from core.training import LR_GRIDS, final_loss, lr_sensitivity
from ui.common import workshop
from ui.common.i18n import t
from ui.training import charts, data
from ui.training.sections import View, fmt, opt_name, pct, tips


# --- 3: LR sensitivity ---------------------------------------------------------------------------
def grid_text(optimizer: str) -> dict[str, str]:
    grid = LR_GRIDS[optimizer]
    return {
        "n": str(len(grid)),
        "lo": data.lr_text(grid[0]),
        "hi": data.lr_text(grid[-1]),
        "seeds": str(data.SWEEP_SEEDS),
    }


def gather(v: View) -> dict[tuple, tuple[pd.DataFrame, str]]:
    """The sweep cells available now (shipped or computed in this session)."""
    out = {}
    for cell in data.needed_cells(v.m, v.optimizer, v.d_k, v.seed, v.steps):
        got = data.available(cell, v.variants)
        if got is not None:
            out[cell] = got
    return out


def compute_missing(v: View, missing: list[tuple]) -> None:
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
        data.store(cell, v.variants, data.sweep_cell(m, opt, d_k, seed, steps, v.variants))
        done_cost += costs[i]
        spent = time.perf_counter() - t0
    bar.progress(1.0, text=t("training.progress_done", n=len(missing), seconds=f"{spent:.0f}"))


def lr_sweep(v: View) -> dict | None:
    """The sweep section; returns the numbers the myth card needs at the learner's d_k
    (None while the sweep at that d_k is not available)."""
    st.header(t("training.s3_title"))
    top = st.container()  # the takeaway: at once without a sweep, else once answered
    grid = grid_text(v.optimizer)
    st.markdown(t("training.s3_text", opt=opt_name(v.optimizer), **grid))
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
    sources = [s for _, s in have.values()]
    if have:
        st.caption(
            t(
                "training.sources",
                pre=sources.count("precomputed"),
                now=sources.count("computed"),
                total=len(needed),
                seeds=", ".join(str(s) for s in data.sweep_seeds(v.seed)),
            )
        )
    here = [c for c in needed[: data.SWEEP_SEEDS] if c in have]
    if len(here) < data.SWEEP_SEEDS:
        with top:
            workshop.takeaway(t("training.s3_takeaway_missing"))
        small_multiples(v, have)
        return None
    keys = tuple(here)
    numbers = sweep_numbers(v, keys, [have[c][0] for c in keys])
    if workshop.predict(**learns_question(v, numbers)):
        n0, nh = (count(numbers["per"][k], "learns") for k in ("alpha_0", "alpha_half"))
        with top:
            workshop.takeaway(
                t(
                    "training.s3_takeaway_learns" if n0 else "training.s3_takeaway_none",
                    n0=n0,
                    nh=nh,
                    n=len(numbers["per"]["alpha_0"]["lrs"]),
                )
            )
        sweep_charts(v, have, numbers)
    return numbers


def sweep_numbers(v: View, keys: tuple[tuple, ...], cells: list) -> dict:
    """The sweep at the learner's d_k (cells ``keys``, one per seed, frames ``cells``):
    the seeds' ``summary`` and, per variant, :func:`ui.training.data.conclusions` (of the
    shipped cells, cached, when they are all shipped)."""
    shipped = data.shipped_sweep(v.m, v.optimizer, v.d_k, v.seed, v.steps, v.variants)
    if shipped is None:
        shipped = data.sweep_summary(cells, v.m), data.conclusions(cells, v.m)
    summary, per = shipped
    return {"summary": summary, "per": per, "keys": keys, "variants": v.variants}


def lr_list(entry: dict, which: str, mark: bool = True) -> str:
    """The rates with verdict ``which``, a borderline one followed by the borderline mark
    (``mark``: the alt text lists them plain)."""
    sign = t("training.borderline_mark") if mark else ""
    picked = [
        data.lr_text(lr) + (sign if edge else "")
        for lr, w, edge in zip(entry["lrs"], entry["verdicts"], entry["borderline"], strict=True)
        if w == which
    ]
    return ", ".join(picked) if picked else t("training.none")


def count(entry: dict, which: str) -> int:
    return entry["verdicts"].count(which)


def sweep_charts(v: View, have: dict, numbers: dict) -> None:
    chart, frame, table, borderline, diverged = sweep_parts(numbers, v.lr)
    workshop.legacy_chart(
        chart, key="training_lr", data=frame, source=[data.sweep_cell, final_loss, lr_sensitivity]
    )
    st.caption(t("training.lr_caption", learn=pct(data.LEARN_RATIO), fail=pct(data.FAIL_RATIO)))
    st.table(table)
    if borderline:
        st.caption(borderline)
    st.caption(t("training.sensitivity_caption", **grid_text(v.optimizer)))
    st.caption(t("training.diverged_some", n=diverged) if diverged else t("training.diverged_none"))
    small_multiples(v, have)


def sweep_parts(
    numbers: dict, lr: float
) -> tuple[partial, pd.DataFrame, pd.DataFrame, str | None, int]:
    """The LR chart (deferred), its CSV frame, the sensitivity table, the caption of its
    borderline results (None if none) and the count of diverged runs at the learner's
    rate ``lr``, for :func:`sweep_numbers` ``numbers``."""
    keys = numbers["keys"]
    m, optimizer, d_k = keys[0][0], keys[0][1], keys[0][2]
    summary = data.labelled(numbers["summary"])
    initial = data.labelled(
        summary.groupby("variant", sort=False)["initial_loss"].first().reset_index()
    ).rename(columns={"initial_loss": "y"})
    per = numbers["per"]
    described = "; ".join(
        t(
            "training.lr_alt_part",
            name=data.variant_label(name),
            best=fmt(e["best"]),
            lr=data.lr_text(e["best_lr"]),
            learn=lr_list(e, "learns", mark=False),
        )
        for name, e in per.items()
    )
    grid = LR_GRIDS[optimizer]
    chart = partial(
        charts.lr_lines,
        summary,
        current_lr=lr if grid[0] <= lr <= grid[-1] else None,
        title=t("training.lr_title", d_k=d_k, opt=opt_name(optimizer)).split("|"),
        x_title=t("training.axis_lr"),
        y_title=t("training.lr_y", last=data.LAST),
        description=t(
            "training.lr_alt",
            d_k=d_k,
            m=m,
            opt=opt_name(optimizer),
            parts=described,
            n=data.SWEEP_SEEDS,
            uniform=fmt(data.uniform(m)),
        ),
        tips=tips("series", "lr", "value", "lo", "hi", "ratio", "diverged", "initial", "uniform"),
        initial=initial[["series", "color", "y"]],
        uniform=data.uniform(m),
    )
    diverged = int(numbers["summary"]["diverged"].sum())
    table = sensitivity_table(per)
    return chart, summary.drop(columns="color"), table, borderline_caption(per), diverged


def sensitivity_table(per: dict) -> pd.DataFrame:
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
    table = pd.DataFrame(rows)
    return table.set_index(table.columns[0])


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


def small_multiples(v: View, have: dict) -> None:
    title = t("training.multiples_title", opt=opt_name(v.optimizer))
    shipped = data.shipped_multiples(v.m, v.optimizer, v.seed, v.steps, v.variants)
    labelled = {d_k: data.labelled(summary) for d_k, summary in shipped.items()}
    parts = multiples_parts(labelled, v.optimizer, v.m) if labelled else None
    if parts is None:  # not all shipped: from what is here
        frames = {}
        for d_k in data.SWEEP_D_KS:
            keys = [
                c
                for c in data.needed_cells(v.m, v.optimizer, d_k, v.seed, v.steps)[
                    : data.SWEEP_SEEDS
                ]
                if c in have
            ]
            if len(keys) == data.SWEEP_SEEDS:
                summary = data.sweep_summary([have[c][0] for c in keys], v.m)
                frames[d_k] = data.labelled(summary)
        if not frames:
            st.subheader(title)
            workshop.takeaway(t("training.multiples_takeaway_missing"))
            st.caption(t("training.multiples_missing"))
            return
        parts = multiples_parts(frames, v.optimizer, v.m)
    panels, caption, takeaway = parts
    st.subheader(title)
    workshop.takeaway(takeaway)
    cols = st.columns(2)
    for i, (d_k, chart, frame) in enumerate(panels):
        with cols[i % 2]:
            if chart is None:
                st.caption(t("training.multiple_missing", d_k=d_k))
                continue
            workshop.legacy_chart(
                chart, key=f"training_lr_{d_k}", data=frame, source=data.sweep_cell
            )
    st.caption(caption)


def multiples_parts(
    frames: dict[int, pd.DataFrame], optimizer: str, m: int = 1
) -> tuple[list, str, str]:
    """Per d_k of ``SWEEP_D_KS`` (d_k, deferred LR chart or None, CSV frame or None) on a
    shared y scale, the caption naming each variant's best rate per d_k, and the
    takeaway: whether the best rate with 1/√d_k moves with d_k."""
    values = pd.concat(frames.values())
    domain = (max(1e-5, float(values["lo"].min()) * 0.8), float(values["hi"].max()) * 1.25)
    panels = []
    for d_k in data.SWEEP_D_KS:
        if d_k not in frames:
            panels.append((d_k, None, None))
            continue
        frame = frames[d_k]
        best = "; ".join(
            f"{data.variant_label(name)} {data.lr_text(part.loc[part['value'].idxmin(), 'lr'])}"
            for name, part in frame.groupby("variant", sort=False)
        )
        chart = partial(
            charts.lr_lines,
            frame,
            current_lr=None,
            title=t("training.multiple_title", d_k=d_k),
            x_title=t("training.axis_lr"),
            y_title=t("training.lr_y_short"),
            description=t(
                "training.multiple_alt",
                d_k=d_k,
                opt=opt_name(optimizer),
                best=best,
                n=data.SWEEP_SEEDS,
            ),
            tips=tips(
                "series", "lr", "value", "lo", "hi", "ratio", "diverged", "initial", "uniform"
            ),
            uniform=data.uniform(m),
            y_domain=domain,
            legend_columns=1,  # two panels to a row: ~210 px each at 800 px
            height=340,
            width_px=170,
        )
        panels.append((d_k, chart, frame.drop(columns="color")))
    best = {}
    for frame in frames.values():
        for name, part in frame.groupby("variant", sort=False):
            best.setdefault(name, []).append(data.lr_text(part.loc[part["value"].idxmin(), "lr"]))
    caption = t(
        "training.multiples_caption",
        best="; ".join(f"{data.variant_label(n)}: {' → '.join(v)}" for n, v in best.items()),
    )
    half, lo, hi = best["alpha_half"], min(frames), max(frames)
    takeaway = (
        t("training.multiples_takeaway_same", lr=half[0], lo=lo, hi=hi)
        if len(set(half)) == 1
        else t("training.multiples_takeaway_moves", first=half[0], last=half[-1], lo=lo, hi=hi)
    )
    return panels, caption, takeaway


def learns_question(v: View, numbers: dict) -> dict:
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
        key = "training.s4_takeaway_too_strong" if n_learn else "training.s4_takeaway_holds"
        workshop.takeaway(t(key, n_learn=n_learn, n=n))
    summary = v.run["summary"].set_index("variant")
    run_part = t(
        "training_workshop.myth_run",
        lr=data.lr_text(v.lr),
        f0=fmt(summary.loc["alpha_0", "final_loss"]),
        l0=fmt(summary.loc["alpha_0", "initial_loss"]),
        v0=t(f"training.verdict_{data.verdict(summary.loc['alpha_0', 'final_loss'], v.m)}"),
        fh=fmt(summary.loc["alpha_half", "final_loss"]),
        vh=t(f"training.verdict_{data.verdict(summary.loc['alpha_half', 'final_loss'], v.m)}"),
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
        key = "myth_sweep" if count(e0, "learns") else "myth_sweep_holds"
        dead_0 = float(summary.loc["alpha_0", "dead_0"])  # step 0: the same at every rate
        start = (
            t("training_workshop.myth_start_dead", dead_0=pct(dead_0))
            if dead_0 > 0
            else t("training_workshop.myth_start_alive")
        )
        sweep_part = t(
            f"training_workshop.{key}",
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
