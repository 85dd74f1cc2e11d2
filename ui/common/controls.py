"""Widgets bound to the URL, with validation of the query parameters that seed them.

Every control has a stable ``key`` that is also its query parameter
(``bind="query-params"``). Streamlit silently drops a URL value it cannot use and
coerces some it can; we check the raw value ourselves and, when it is malformed, out of
range or repeated, show a warning naming the parameter and what is allowed, and the
widget starts from its default. The offending value is never echoed back to the page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from ui.common.i18n import t
from ui.common.params import parse_choice, parse_float, parse_int, power_step

#: Largest seed the sidebar accepts.
SEED_MAX = 2**31 - 1


@dataclass(frozen=True)
class Control:
    """What a URL-bound control accepts: its query parameter ``key``, its ``kind``
    (``"int"``, ``"float"``, ``"choice"``, ``"flag"`` or ``"text"``), its ``default``, and
    its range (``lo``, ``hi``; for a text, its length) or its ``options`` (as written in a
    URL)."""

    key: str
    kind: str
    default: Any
    lo: float | None = None
    hi: float | None = None
    options: tuple[str, ...] = ()


#: The controls each page has drawn since the server started, by url path, in the order
#: they were first drawn: the page's query parameters. Filled by :func:`register`.
PAGE_CONTROLS: dict[str, dict[str, Control]] = {}
#: The pages drawn whole at least once since the server started (nothing hidden): their
#: entry in :data:`PAGE_CONTROLS` lists every control they have.
WHOLE_PAGES: set[str] = set()


#: Session-state entry: {param: {"state": "pending" | "applied" | "done", "allowed": …,
#: "default": …}} for bad URL values: pending until the default is assigned, applied
#: while the warning shows (see :func:`flag_bad_param`).
_RESETS = "_param_resets"
#: Session-state entry: {param: "applied" | "done"} for query parameters no page uses.
_UNKNOWN = "_unknown_params"
#: Session-state entry: {param: default} of every control made so far (for "Defaults").
DEFAULTS = "_control_defaults"


#: Session-state entry holding the state of the complete run of the app in progress
#: (between :func:`start_run` and :func:`end_run`): ``notices``, the container at the top
#: of the page that warnings about the link go to; :mod:`ui.common.workshop` adds the
#: page and its presenter steps. A fragment's own rerun finds no entry.
RUN = "_run"


def start_run() -> None:
    """Call first in a complete run of the app: reserve the top of the page for warnings
    about the link (a control sits in a narrow column; its warning there would wrap a
    word per line)."""
    st.session_state[RUN] = {"notices": st.container()}


def run_state() -> dict:
    """The state of the complete run in progress (empty in a fragment's own rerun)."""
    return st.session_state.get(RUN, {})


def in_full_run() -> bool:
    """Whether this is a complete run of the app, not a fragment's own rerun."""
    return RUN in st.session_state


def warn(text: str) -> None:
    """A warning about the link: at the top of the page, or in place outside a complete
    run (a fragment rerun, or a page run without the app)."""
    (run_state().get("notices") or st).warning(text, icon="⚠️")


def _raw(key: str) -> list[str] | None:
    values = st.query_params.get_all(key)
    return values or None


def _bound(
    control: Control,
    allowed: str,
    is_valid: Callable[[Sequence[str]], bool],
    make_widget: Callable[[], Any],
    reset_to: Any = None,
) -> Any:
    """Create a URL-bound widget; a bad URL value gives a warning and the default.

    "Defaults" (:func:`ui.common.workshop.share_panel`) sets the widget to ``reset_to`` if
    given: the default of a control that depends on another one's value (n_heads on
    d_model) must be the one that goes with the other control's own default.

    On the first load Streamlit seeds a bound widget from the URL: it keeps values it can
    coerce (``?d_k=3.5`` -> 3, a repeated key -> the last one) and, for an integer input,
    raises on ``inf`` or ``nan``. So before the widget exists we check the raw value
    ourselves; a bad one is removed from the URL and the page reruns once, showing the
    warning and starting the widget from its default.
    """
    key, default = control.key, control.default
    register(control)
    defaults = st.session_state.setdefault(DEFAULTS, {})
    own = default if reset_to is None else reset_to
    if key in defaults and defaults[key] != own:
        # the same key on another page with another default (α: ½, but 0.75 on
        # sqrt-vs-d): start from this page's default instead of carrying the other
        # page's value (which Streamlit did only after an interaction there)
        st.session_state.pop(key, None)
    defaults[key] = own
    entry = st.session_state.setdefault(_RESETS, {}).get(key)
    if entry is not None and entry["state"] == "pending":
        st.session_state[key] = default
        entry["state"] = "applied"
    if show_flagged(key):
        return make_widget()
    # the URL seeds a widget only when it is first made; later the URL mirrors the widget
    raw = _raw(key) if key not in st.session_state else None
    if raw is not None and not is_valid(raw):
        flag_bad_param(key, allowed, default, state="pending")
        del st.query_params[key]
        st.rerun()
    return make_widget()


def flag_bad_param(key: str, allowed: str, default: Any, *, state: str = "applied") -> None:
    """Warn that ``?key=`` was ignored, on every run until one completes (a run cut short
    by another control's :func:`st.rerun` would otherwise lose the warning). "pending":
    the widget is still to be set to its default (see :func:`_bound`)."""
    st.session_state.setdefault(_RESETS, {})[key] = {
        "state": state,
        "allowed": allowed,
        "default": default,
    }


def show_flagged(key: str) -> bool:
    """The warning of :func:`flag_bad_param` for ``key``, while it is due (returns
    whether it was shown); once a complete run has shown it, it is forgotten."""
    resets = st.session_state.setdefault(_RESETS, {})
    entry = resets.get(key)
    if entry is None:
        return False
    if entry["state"] == "done":
        del resets[key]
        return False
    default = entry["default"] if entry["default"] != "" else t("common.empty_text")
    warn(t("common.bad_param", name=key, allowed=entry["allowed"], default=default))
    return True


def end_run(completed: bool) -> None:
    """Call at the end of every complete run, however it ends (``finally``): the run's
    state is dropped and, if the run ``completed``, the warnings shown in it are not
    shown again (a run cut short by ``st.rerun()`` shows them once more)."""
    st.session_state.pop(RUN, None)
    if not completed:
        return
    for entry in st.session_state.get(_RESETS, {}).values():
        if entry["state"] == "applied":
            entry["state"] = "done"
    unknown = st.session_state.get(_UNKNOWN, {})
    for key in unknown:
        unknown[key] = "done"


def int_input(
    key: str, label: str, *, min_value: int, max_value: int, default: int, help: str | None = None
) -> int:
    """An integer ``st.number_input`` bound to ``?key=``."""
    return _bound(
        Control(key, "int", default, min_value, max_value),
        t("common.allowed_int", lo=min_value, hi=max_value),
        lambda raw: parse_int(raw, min_value, max_value) is not None,
        lambda: st.number_input(
            label,
            min_value=min_value,
            max_value=max_value,
            value=default,
            step=1,
            key=key,
            bind="query-params",
            help=help,
        ),
    )


def float_slider(
    key: str,
    label: str,
    *,
    min_value: float,
    max_value: float,
    default: float,
    step: float,
    help: str | None = None,
    fmt: str | None = None,
) -> float:
    """A float ``st.slider`` bound to ``?key=``."""
    return _bound(
        Control(key, "float", default, min_value, max_value),
        t("common.allowed_float", lo=min_value, hi=max_value),
        lambda raw: parse_float(raw, min_value, max_value) is not None,
        lambda: st.slider(
            label,
            min_value=min_value,
            max_value=max_value,
            value=default,
            step=step,
            key=key,
            bind="query-params",
            help=help,
            format=fmt,
        ),
    )


def choice(
    key: str,
    label: str,
    options: Sequence[str],
    *,
    default: str,
    captions: Sequence[str] | None = None,
    widget: str = "radio",
    help: str | None = None,
    allowed: str | None = None,
    reset_to: str | None = None,
    labels: Sequence[str] | None = None,
) -> str:
    """One of ``options`` (a radio, a select slider or a select box) bound to ``?key=``.

    The URL holds the option, a language-neutral identifier (``normal``), so a link works
    in either language; the widget shows ``labels`` (one per option) if given, and
    ``captions`` under a radio's options. Streamlit's binding writes the *displayed* text
    to the URL (``?dist=均匀``, which an English page drops), so a widget with ``labels``
    is not bound but keeps the URL itself. ``allowed`` overrides the options quoted in the
    bad-value warning; ``reset_to`` is what "Defaults" restores (see :func:`_bound`).
    """
    names = None if labels is None else dict(zip(options, labels, strict=True))

    def make_widget() -> str:
        common: dict[str, Any] = {"key": key, "help": help}
        if names is None:  # bound: Streamlit keeps the URL in step
            common["bind"] = "query-params"
            index = list(options).index(default)
            common.update({"value": default} if widget == "select_slider" else {"index": index})
        else:  # the link seeds it once; then the URL is written below
            if key not in st.session_state:
                raw = _raw(key)  # checked by _bound
                st.session_state[key] = parse_choice(raw, options) if raw else default
            common["format_func"] = names.__getitem__
        if widget == "select_slider":
            value = st.select_slider(label, options=list(options), **common)
        elif widget == "selectbox":
            value = st.selectbox(label, options, **common)
        else:
            value = st.radio(label, options, captions=captions, horizontal=True, **common)
        if names is not None and value == default:
            st.query_params.pop(key, None)
        elif names is not None and st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)
        return value

    return _bound(
        Control(key, "choice", default, options=tuple(map(str, options))),
        allowed or ", ".join(options),
        lambda raw: parse_choice(raw, options) is not None,
        make_widget,
        reset_to,
    )


#: Session-state entry: {key: (characters typed, the text kept)} of text boxes whose last
#: text was cut to their length (see :func:`text_area`).
_CUT_TEXTS = "_cut_texts"


def _cut_text(key: str, max_chars: int) -> None:
    """Keep the first ``max_chars`` characters of text box ``key`` (its on_change)."""
    value = st.session_state.get(key) or ""
    if len(value) > max_chars:
        st.session_state[key] = value[:max_chars]
        st.session_state.setdefault(_CUT_TEXTS, {})[key] = (len(value), value[:max_chars])


def text_area(
    key: str,
    label: str,
    *,
    max_chars: int,
    default: str = "",
    placeholder: str | None = None,
    help: str | None = None,
) -> str:
    """A text box bound to ``?key=``, keeping at most ``max_chars`` characters.

    A link's value is checked like any other control's: a repeated key, or a text longer
    than the box keeps, is ignored with a warning naming the parameter, and the box
    starts at ``default``. A longer text typed or pasted is cut to its first
    ``max_chars`` characters, saying so under the box while that text stays (Streamlit's
    own ``max_chars`` would make the browser drop a longer paste whole, silently). The
    text is only ever shown as text, never as Markdown.
    """
    value = _bound(
        Control(key, "text", default, 0, max_chars),
        t("common.allowed_text", hi=f"{max_chars:,}"),
        lambda raw: len(raw) == 1 and len(raw[0]) <= max_chars,
        lambda: st.text_area(
            label,
            value=default,
            key=key,
            bind="query-params",
            placeholder=placeholder,
            help=help,
            on_change=_cut_text,
            args=(key, max_chars),
        ),
    )
    cut = st.session_state.get(_CUT_TEXTS, {}).get(key)
    if cut is not None and cut[1] == value:
        st.info(
            t("common.text_cut", n=f"{cut[0]:,}", max=f"{max_chars:,}"),
            icon=":material/content_cut:",
        )
    return value


def _rescale(key: str, factor: float, lo: int, hi: int) -> None:
    st.session_state[key] = int(min(hi, max(lo, round(st.session_state[key] * factor))))


#: Session-state entry: {key: (page, value)} shown by each :func:`halving_input`.
_SHOWN = "_stepped_inputs"


def last_shown(key: str) -> int | None:
    """What input ``key`` showed at the end of its last run on this page, or None."""
    shown = st.session_state.get(_SHOWN, {}).get(key)
    return shown[1] if shown is not None and shown[0] == run_state().get("page") else None


def halving_input(
    key: str, label: str, *, default: int, min_value: int, max_value: int, help: str | None = None
) -> int:
    """An integer input bound to ``?key=`` whose − / + step through powers of two (see
    :func:`power_step`), with ÷2 and ×2 buttons in a row under it (beside it they would
    squeeze it at 1024 px); any integer typed or linked is kept."""
    current = st.session_state.get(key)
    if isinstance(current, int):
        stepped = power_step(current, last_shown(key), min_value, max_value)
        if stepped != current:  # before the input is drawn, so it shows the power
            st.session_state[key] = stepped
    value = int_input(
        key, label, min_value=min_value, max_value=max_value, default=default, help=help
    )
    st.session_state.setdefault(_SHOWN, {})[key] = (run_state().get("page"), value)
    col_half, col_double = st.columns(2, gap="small")
    for col, text, suffix, factor, disabled in (
        (col_half, "÷2", "half", 0.5, value <= min_value),
        (col_double, "×2", "double", 2.0, value >= max_value),
    ):
        col.button(
            text,
            key=f"{key}_{suffix}",
            on_click=_rescale,
            args=(key, factor, min_value, max_value),
            disabled=disabled,
            help=t(f"common.{'halve' if factor < 1 else 'double'}", name=key),
            width="stretch",
        )
    return value


def d_k_input(
    key: str = "d_k",
    *,
    default: int = 64,
    min_value: int = 1,
    max_value: int = 4096,
    label: str | None = None,
    help: str | None = None,
) -> int:
    """d_k as a :func:`halving_input`, the same on every page (common label and help)."""
    return halving_input(
        key,
        label or t("common.d_k"),
        default=default,
        min_value=min_value,
        max_value=max_value,
        help=help or t("common.d_k_help", lo=min_value, hi=max_value),
    )


def register(control: Control) -> None:
    """Record that this page has ``control`` (call as it is drawn): its query parameter is
    the page's (:data:`PAGE_CONTROLS`, and this run's state for the share link)."""
    run = run_state()
    run.setdefault("controls", {})[control.key] = control
    page = run.get("page")
    if page is not None:
        PAGE_CONTROLS.setdefault(page, {})[control.key] = control


def hide_something() -> None:
    """Record that this run leaves part of the page undrawn (a presenter step not yet
    shown, a question not yet answered): controls there may not have been drawn yet."""
    run_state()["hidden"] = True


def page_params() -> set[str]:
    """The query parameters of the page this run shows: every control it has drawn."""
    run = run_state()
    return set(run.get("controls", {})) | set(PAGE_CONTROLS.get(run.get("page"), {}))


def unknown_params_check(app_params: set[str]) -> None:
    """Warn about query parameters no control of this page or of the app (``app_params``)
    understands; call once the page has run. Until the page has been drawn whole once
    (:data:`WHOLE_PAGES`), a run that leaves part of it undrawn warns about nothing: the
    undrawn part may hold the control a parameter is for.

    The warning shows until the end of the first complete run (see :func:`end_run`).
    """
    run = run_state()
    if not run.get("hidden") and run.get("page") is not None:
        WHOLE_PAGES.add(run["page"])
    known = app_params | page_params()
    seen = st.session_state.setdefault(_UNKNOWN, {})
    if run.get("page") in WHOLE_PAGES:
        for key in st.query_params.keys():
            if key not in known and key not in seen:
                seen[key] = "applied"
    unknown = sorted(k for k, state in seen.items() if state == "applied")
    if unknown:
        names = ", ".join(f"`{k[:24]}`" if re.fullmatch(r"[\w-]+", k) else "`?`" for k in unknown)
        warn(t("common.unknown_params", names=names))


#: The three exponents everybody names: none, the Transformer's 1/√d_k, μP's 1/d_k.
ALPHA_PRESETS = (0.0, 0.5, 1.0)


def _set_value(key: str, value: float) -> None:
    st.session_state[key] = value


def alpha_input(key: str = "alpha", *, default: float = 0.5, max_value: float = 1.5) -> float:
    """The scaling exponent α (logits = d_k^-α · q·k): a slider plus three preset buttons.

    0 = no scaling, 0.5 = 1/√d_k, 1 = 1/d_k; the slider reaches any α in [0, max_value]
    in steps of 0.05.
    """
    value = float_slider(
        key,
        t("common.alpha"),
        min_value=0.0,
        max_value=max_value,
        default=default,
        step=0.05,
        help=t("common.alpha_help"),
    )
    # one row of content-wide buttons that wraps when the control column is narrow (a
    # third of the page at 800 px): fixed equal columns cut their labels to "α …"
    row = st.container(horizontal=True, gap="small")
    for i, preset in enumerate(ALPHA_PRESETS):
        row.button(
            {0.0: "α = 0", 0.5: "α = ½", 1.0: "α = 1"}[preset],
            key=f"{key}_preset_{i}",
            on_click=_set_value,
            args=(key, preset),
            help=alpha_label(preset),
            type="primary" if value == preset else "secondary",
            width="content",
        )
    return value


def alpha_label(alpha: float) -> str:
    """Legend text of a scaling exponent: named for 0, ½ and 1, numeric otherwise."""
    names = {0.0: "common.alpha_none", 0.5: "common.alpha_sqrt", 1.0: "common.alpha_linear"}
    key = names.get(round(float(alpha), 6))
    return t(key) if key else t("common.alpha_custom", alpha=f"{alpha:g}")
