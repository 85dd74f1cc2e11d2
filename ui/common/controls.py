"""Widgets of the parameters the page tables declare (:mod:`ui.common.pages`), and the
one check of the URL per run.

Every control has a stable ``key`` that is also its query parameter; its kind, range or
options and default come from the page's table. At the start of every complete run,
before any element, :func:`start_run` checks the whole query string against the table
(:func:`ui.common.params.read_query`). Streamlit seeds a bound widget from the URL the
run started with, so a URL that needs correcting (a bad, repeated, changed or unknown
value) is corrected and the app reruns once, at once: every widget then starts from a
good value, and the one warning listing what was wrong is drawn first on the page. The
offending value is never echoed back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import streamlit as st

from ui.common import link_notes
from ui.common.i18n import set_run_language, t
from ui.common.pages import APP_TABLE, SEED_MAX, PageSpec, by_url
from ui.common.params import Param, defaults, parse, parse_int, power_step, read_query

__all__ = ["SEED_MAX", "parse_int", "power_step"]

#: Session-state entry: the url path of the page (a fragment's own rerun reads its table).
PAGE = "_page"
#: Session-state entry: the notes of the URL just corrected, for the run after the rerun.
_NOTES = "_url_notes"
#: Session-state entry: {key: default} of the page that last drew each control (α is ½,
#: but 0.75 on sqrt-vs-d: another page's default is not carried over).
_OWN_DEFAULTS = "_control_defaults"
#: Session-state entry holding the state of the complete run of the app in progress
#: (:func:`start_run` until :func:`end_run`): ``notices``, the container at the top of the
#: page that warnings about the link go to; ``values``, the URL's clean values;
#: :mod:`ui.common.workshop` adds the next page and the presenter steps.
RUN = "_run"
#: Session-state entry: set while a fragment's own rerun holds the turn (:func:`holding_turn`).
_HOLDS_TURN = "_holds_turn"
#: Session-state entry: the query string as the app last left it (end of a complete run,
#: or its own write): another one at the next run came from Back, Forward or the address bar.
_SEEN_QUERY = "_seen_query"
#: Session-state entries: the notices (kind, text) the last complete run drew at the top of
#: the page, and the mark that the next run is not the learner's doing (:func:`keep_notices`).
_TOP_NOTICES, _KEEP_NOTICES = "_top_notices", "_keep_notices"
_APP_KEYS = frozenset(p.key for p in APP_TABLE)


def language() -> str:
    """The language the page is drawn in: the session's, or on its first run the link's
    (the sidebar's control, bound to ``?lang=``, is drawn later in the run)."""
    held = st.session_state.get("lang")
    if held is not None:
        return held
    return parse(APP_TABLE[0], st.query_params.get_all("lang")) or APP_TABLE[0].default


def start_run(spec: PageSpec) -> None:
    """Call first in a complete run of the app, before any element: read the URL against
    ``spec``'s table. A URL that needs correcting is corrected and the app reruns (once);
    then the top of the page is reserved for warnings about the link, and its one warning
    is drawn there. Where the URL is not as the app left it (Back, Forward, the address
    bar), the page's controls that the app writes to it (``labelled``) start from it again.
    """
    query, state = _query(), st.session_state
    moved = state.get(_SEEN_QUERY, query) != query  # Back, Forward or an edited address
    for p in spec.table:  # a control the app writes to the URL is seeded from it again:
        if not p.labelled or p.key not in state or p.key in _APP_KEYS:
            continue  # (a bound widget follows the URL by itself; the app's own stay)
        # where the URL moved, or a radio hands back the label it showed in the other
        # language (options that follow other values, n_heads', are not declared)
        if moved or (p.kind == "choice" and p.options and state[p.key] not in p.options):
            del state[p.key]
    held = {p.key: state[p.key] for p in spec.table if p.key in state and p.kind != "own"}
    reading = read_query(query, spec.table, held)
    if reading.query != query:
        for key in query.keys() | reading.query.keys():
            if query.get(key) != reading.query.get(key):
                _correct(key, reading.query.get(key), reading.values.get(key), spec)
        corrected = _NOTES in state  # corrected in the run before: never loop
        state[_NOTES] = tuple(dict.fromkeys((*state.get(_NOTES, ()), *reading.notes)))
        if not corrected:
            st.rerun()
    state[PAGE] = spec.url_path
    state.setdefault("lang", reading.values["lang"])
    set_run_language(state["lang"])
    state[RUN] = {"notices": st.container(), "values": reading.values, "spec": spec, "drawn": []}
    if state.pop(_KEEP_NOTICES, False):  # the run before still stands
        for kind, text in state.get(_TOP_NOTICES, ()):
            notice(kind, text)
    notes = state.pop(_NOTES, ())
    if notes:
        warn("\n\n".join(link_notes.notes_text(notes, reading.values)))


def _correct(key: str, values: list[str] | None, value: Any, spec: PageSpec) -> None:
    """Write ``?key=`` as ``values`` (None: drop it). Streamlit refuses to write a
    parameter bound to a widget drawn before (Back or Forward brought an older URL back):
    that widget is set instead, and its binding writes the URL."""
    bound = any(p.key == key and p.kind != "own" and not p.labelled for p in spec.table)
    if bound and key in st.session_state:
        if value is not None:
            st.session_state[key] = value
    elif values is None:
        del st.query_params[key]
    else:
        st.query_params[key] = values if len(values) > 1 else values[0]


def run_state() -> dict:
    """The state of the complete run in progress (empty in a fragment's own rerun)."""
    return st.session_state.get(RUN, {})


def in_full_run() -> bool:
    """Whether this is a complete run of the app, not a fragment's own rerun."""
    return RUN in st.session_state


def holds_turn() -> bool:
    """Whether this run holds the server's turn (:mod:`ui.common.turns`): a complete run,
    or a fragment's own rerun in :func:`holding_turn` (what it draws must not wait)."""
    return in_full_run() or st.session_state.get(_HOLDS_TURN, False)


@contextlib.contextmanager
def holding_turn() -> Iterator[None]:
    """Mark a fragment's own rerun as holding the turn, with the session's language held
    for its catalog lookups as in a complete run, for the ``with`` block."""
    st.session_state[_HOLDS_TURN] = True
    set_run_language(language())
    try:
        yield
    finally:
        set_run_language(None)
        st.session_state.pop(_HOLDS_TURN, None)


def end_run() -> None:
    """Call at the end of every complete run, however it ends (``finally``)."""
    set_run_language(None)
    run = st.session_state.pop(RUN, {})
    st.session_state[_TOP_NOTICES] = tuple(run.get("drawn", ()))
    st.session_state[_SEEN_QUERY] = _query()


def keep_notices() -> None:
    """A callback of an element that reruns the app on its own, not at the learner's
    action (the tab's learner id, :mod:`ui.common.room_tab`): that run draws the notices
    of the run before again, which stay until the learner changes something."""
    st.session_state[_KEEP_NOTICES] = True


def _query() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params.keys()}


def clear_notices() -> None:
    """Call first in a fragment: in its own rerun after a notice at the top of the page
    (which a fragment that reruns the page alone cannot clear), rerun the app instead
    (before any element), which clears the notice."""
    if not in_full_run() and st.session_state.get(_TOP_NOTICES):
        st.rerun(scope="app")


def notice(kind: str, text: str) -> None:
    """A notice (``kind``: "warning" or "info") about the link or the room: at the top of
    the page in a complete run, which records it (the page's last notices:
    :func:`clear_notices`, :func:`keep_notices`), else in place (a fragment's own rerun)."""
    run = run_state()
    where = run.get("notices", st)
    getattr(where, kind)(text, icon="⚠️" if kind == "warning" else "ℹ️")
    if run:
        run["drawn"].append((kind, text))


def warn(text: str) -> None:
    """A warning about the link: at the top of the page, or in place outside a complete
    run (a fragment rerun)."""
    notice("warning", text)


def page_spec() -> PageSpec:
    """The page this run (or fragment rerun) draws."""
    return by_url(st.session_state.get(PAGE, ""))


def param(key: str, **values: Any) -> Param:
    """The page's parameter ``key``, as ``values`` of others make it (``n_heads`` given
    ``d_model=…``)."""
    spec = page_spec()
    declared = spec.param(key)
    if declared.given is None:
        return declared
    made = declared.given(declared, {**defaults(spec.table), **values})
    return declared if made is None else made


def link_value(key: str) -> Any:
    """The clean value of ``?key=`` this run started with (its default if the link had
    none): for a control that keeps the URL itself. In a fragment's own rerun, the link
    as it is now (the last complete run checked it; only the app has written it since)."""
    values = run_state().get("values")
    if values is not None:
        return values.get(key, param(key).default)
    now = parse(param(key), st.query_params.get_all(key))
    return param(key).default if now is None else now


def page_defaults() -> dict[str, Any]:
    """Every parameter's default on this page (what "Defaults" restores)."""
    return defaults(page_spec().table)


def _own_default(key: str, default: Any) -> None:
    """Start ``key`` from this page's default if another page drew it with another one
    (which Streamlit carries only after an interaction there)."""
    own = st.session_state.setdefault(_OWN_DEFAULTS, {})
    if key in own and own[key] != default:
        st.session_state.pop(key, None)
    own[key] = default


def int_input(key: str, label: str, *, help: str | None = None) -> int:
    """An integer ``st.number_input`` bound to ``?key=`` (range and default: the table)."""
    p = param(key)
    _own_default(key, p.default)
    return st.number_input(
        label,
        min_value=int(p.lo),
        max_value=int(p.hi),
        value=p.default,
        step=1,
        key=key,
        bind="query-params",
        help=help,
    )


def float_slider(key: str, label: str, *, help: str | None = None, fmt: str | None = None) -> float:
    """A float ``st.slider`` bound to ``?key=`` (range, step and default: the table)."""
    p = param(key)
    _own_default(key, p.default)
    return st.slider(
        label,
        min_value=p.lo,
        max_value=p.hi,
        value=p.default,
        step=p.step,
        key=key,
        bind="query-params",
        help=help,
        format=fmt,
    )


def choice(
    key: str,
    label: str,
    *,
    captions: Sequence[str] | None = None,
    widget: str = "radio",
    help: str | None = None,
    labels: Sequence[str] | None = None,
    given: dict[str, Any] | None = None,
) -> str:
    """One of the table's options (a radio, a select slider, a select box or a segmented
    control) bound to ``?key=``; ``given``: the values of the parameters its options depend
    on. The URL holds the option, a language-neutral identifier (``normal``); the widget
    shows ``labels`` (one per option) if given, and ``captions`` under a radio's options.
    Streamlit's binding writes the *displayed* text to the URL (``?dist=均匀``), and only
    when the widget itself changes (``n_heads``' default follows d_model under a kept
    value), so a choice marked ``labelled`` in the table is not bound but keeps the URL.
    """
    p = param(key, **(given or {}))
    options, default = list(p.options), p.default
    declared = page_spec().param(key)
    _own_default(key, declared.default)  # as declared: not as ``given`` makes it
    common: dict[str, Any] = {"key": key, "help": help}
    if not declared.labelled:  # bound: Streamlit keeps the URL in step
        common["bind"] = "query-params"
        index = options.index(default)
        common.update({"value": default} if widget == "select_slider" else {"index": index})
    else:  # the link seeds it once; then the URL is written below
        # set every run (the default as ``given`` makes it, if neither the session nor the
        # link has one): the browser keeps the label it showed, which may have changed, and
        # a widget it draws anew starts from its first option (which-d's n_heads became 1)
        st.session_state[key] = (
            st.session_state[key] if key in st.session_state
            else link_value(key) if key in st.query_params else default
        )  # fmt: skip
        if labels is not None:
            common["format_func"] = dict(zip(options, labels, strict=True)).__getitem__
    if widget == "select_slider":
        value = st.select_slider(label, options=options, **common)
    elif widget == "selectbox":
        value = st.selectbox(label, options, **common)
    elif widget == "segmented_control":  # one row of buttons, one always chosen
        if "index" in common:
            common["default"] = options[common.pop("index")]
        value = st.segmented_control(label, options, required=True, **common)
    else:
        value = st.radio(label, options, captions=captions, horizontal=True, **common)
    if declared.labelled:
        write_link(key, value, default)
    return value


def write_link(key: str, value: Any, default: Any) -> None:
    """Keep ``?key=`` in step with a control that is not bound: absent at its default."""
    written = None if value == default else str(value)
    if st.query_params.get(key) == written:
        return
    if written is None:
        del st.query_params[key]
    else:
        st.query_params[key] = written
    st.session_state[_SEEN_QUERY] = _query()  # as the app leaves it


def toggle(key: str, label: str, help: str | None = None) -> bool:
    """A toggle bound to ``?key=true|false``."""
    p = param(key)
    _own_default(key, p.default)
    return st.toggle(label, value=p.default, key=key, help=help, bind="query-params")


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
    key: str, label: str, *, placeholder: str | None = None, help: str | None = None
) -> str:
    """A text box bound to ``?key=``, keeping at most the table's ``hi`` characters.

    A longer text typed or pasted is cut to its first characters, saying so under the box
    while that text stays (Streamlit's own ``max_chars`` would make the browser drop a
    longer paste whole, silently). The text is only ever shown as text, never as Markdown.
    """
    p = param(key)
    max_chars = int(p.hi)
    value = st.text_area(
        label,
        value=p.default,
        key=key,
        bind="query-params",
        placeholder=placeholder,
        help=help,
        on_change=_cut_text,
        args=(key, max_chars),
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
    return shown[1] if shown is not None and shown[0] == st.session_state.get(PAGE) else None


def halving_input(key: str, label: str, *, help: str | None = None) -> int:
    """An integer input bound to ``?key=`` whose − / + step through powers of two (see
    :func:`power_step`; the table's ``step``), with ÷2 and ×2 buttons in a row under it
    (beside it they would squeeze it at 1024 px); any integer typed or linked is kept."""
    p = param(key)
    lo, hi = int(p.lo), int(p.hi)
    current = st.session_state.get(key)
    if isinstance(current, int):
        stepped = power_step(current, last_shown(key), lo, hi)
        if stepped != current:  # before the input is drawn, so it shows the power
            st.session_state[key] = stepped
    value = int_input(key, label, help=help)
    st.session_state.setdefault(_SHOWN, {})[key] = (st.session_state.get(PAGE), value)
    # one row on every screen (columns would stack on a phone)
    row = st.container(horizontal=True, gap="small")
    for text, suffix, factor, disabled in (
        ("÷2", "half", 0.5, value <= lo),
        ("×2", "double", 2.0, value >= hi),
    ):
        row.button(
            text,
            key=f"{key}_{suffix}",
            on_click=_rescale,
            args=(key, factor, lo, hi),
            disabled=disabled,
            help=t(f"common.{'halve' if factor < 1 else 'double'}", name=key),
            width="stretch",
        )
    return value


def d_k_input(key: str = "d_k", *, label: str | None = None, help: str | None = None) -> int:
    """d_k as a :func:`halving_input`, the same on every page (common label and help)."""
    p = param(key)
    return halving_input(
        key,
        label or t("common.d_k"),
        help=help or t("common.d_k_help", lo=int(p.lo), hi=int(p.hi)),
    )


#: The three exponents everybody names: none, the Transformer's 1/√d_k, μP's 1/d_k.
ALPHA_PRESETS = (0.0, 0.5, 1.0)


def alpha_input(key: str = "alpha") -> float:
    """The scaling exponent α (logits = d_k^-α · q·k): a slider plus three preset buttons.

    0 = no scaling, 0.5 = 1/√d_k, 1 = 1/d_k; the slider reaches any α of the table's range
    in its steps.
    """
    value = float_slider(key, t("common.alpha"), help=t("common.alpha_help"))
    # one row of content-wide buttons that wraps when the control column is narrow (a
    # third of the page at 800 px): fixed equal columns cut their labels to "α …"
    row = st.container(horizontal=True, gap="small")
    for i, preset in enumerate(ALPHA_PRESETS):
        row.button(
            {0.0: "α = 0", 0.5: "α = ½", 1.0: "α = 1"}[preset],
            key=f"{key}_preset_{i}",
            on_click=_set_values,
            args=(((key, preset),),),
            help=alpha_label(preset),
            type="primary" if value == preset else "secondary",
            width="content",
        )
    return value


def _set_values(values: tuple[tuple[str, Any], ...]) -> None:
    for key, value in values:
        st.session_state[key] = value


def break_button() -> None:
    """ "Show me where it breaks": one click sets the page's controls to its ``breaks``
    (the registry), which the URL then carries like any other value. Nothing is drawn
    on a page without them."""
    values = page_spec().breaks
    if not values:
        return
    st.button(
        t("common.break_it"),
        key="break_it",
        on_click=_set_values,
        args=(values,),
        icon=":material/bolt:",
        help=t("common.break_it_help"),
        type="secondary",
    )


def alpha_label(alpha: float) -> str:
    """Legend text of a scaling exponent: named for 0, ½ and 1, numeric otherwise."""
    names = {0.0: "common.alpha_none", 0.5: "common.alpha_sqrt", 1.0: "common.alpha_linear"}
    key = names.get(round(float(alpha), 6))
    return t(key) if key else t("common.alpha_custom", alpha=f"{alpha:g}")
