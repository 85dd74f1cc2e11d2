"""Workshop tools: presenter mode, step-by-step reveal, predictions, misconception cards,
share links, restoring defaults, CSV downloads and the code behind each chart.

Pages use them like this::

    box = workshop.controls_box()            # sidebar when presenting, bordered box otherwise
    step = workshop.steps(["…", "…", "…"])   # 1-based step, or None when not presenting
    if workshop.shown(1, step):
        workshop.chart("page.chart", charts.builder, partial(frames.fn, d_k), marker=d_k)
"""

from __future__ import annotations

import functools
import inspect
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path

import altair as alt
import pandas as pd
import pyarrow as pa
import streamlit as st

from ui.common import controls, glossary, room, room_live, specs
from ui.common.i18n import chart_text, t

_HERE = Path(__file__).parent
# The app's own styles and scripts, read once: st.html of a Path reads the file on every
# run. A string of style tags alone is drawn in no element's place, as a .css Path is.
#: Formulas and tables scroll in a box; hidden helper elements take no room.
LAYOUT_CSS = f"<style>{(_HERE / 'layout.css').read_text()}</style>"
#: Larger type in presenter mode.
PRESENTER_CSS = f"<style>{(_HERE / 'presenter.css').read_text()}</style>"
#: Boxes that scroll sideways on a phone join the tab order.
SCROLL_REGIONS_JS = (_HERE / "scroll_regions.html").read_text()


# --- presenter mode --------------------------------------------------------------------
def presenter_toggle() -> bool:
    """Sidebar toggle mirrored in the URL as ``?present=1``; on: larger type, steps.

    The toggle keeps the URL in step by hand rather than through ``bind``: Streamlit's
    binding writes booleans as ``true``/``false`` and drops ``1`` on the first load.
    """
    if "present" not in st.session_state:
        st.session_state["present"] = controls.link_value("present")
    on = st.toggle(t("workshop.present"), key="present", help=t("workshop.present_help"))
    if on:
        st.query_params["present"] = "1"
        st.html(PRESENTER_CSS)
    else:  # the step goes with it: without ``present`` the link's step would be refused
        for key in ("present", "step"):
            st.query_params.pop(key, None)
    return on


def is_presenting() -> bool:
    return bool(st.session_state.get("present", False))


def controls_box():
    """Where a page puts its controls: the sidebar when presenting, else a bordered box."""
    return st.sidebar.container(border=True) if is_presenting() else st.container(border=True)


def control_columns(spec: int | Sequence[float]) -> list:
    """Columns for controls: side by side on the page, stacked in the presenter sidebar."""
    if is_presenting():
        n = spec if isinstance(spec, int) else len(spec)
        return [st.container() for _ in range(n)]
    return st.columns(spec)


def _move_step(delta: int, order: tuple[int, ...], scroll: bool = False) -> None:
    """Go ``delta`` places along ``order`` (the page's step ids as shown)."""
    place = order.index(st.session_state.get("step", order[0])) + delta
    st.session_state["step"] = order[min(len(order) - 1, max(0, place))]
    if scroll:  # the top navigator: bring the new step into view (:func:`next_step_footer`)
        st.session_state[_SCROLL] = (st.session_state["step"], secrets.token_hex(4))


#: Session-state entry: the step whose heading the end of the next run scrolls into view,
#: with a nonce (each press runs the script again).
_SCROLL = "_step_scroll"
#: Scrolls the presenter's step into view once the run ends.
SCROLL_JS = (_HERE / "scroll_to_step.html").read_text()


#: Session-state entry: the url path of the page the step navigator last served.
_STEP_PAGE = "_step_page"


def set_page(url_path: str, next_page: tuple[str, str] | None) -> None:
    """Record the page this run shows and the (script, title) of the next one in the
    story, for the step navigator and :func:`next_step_footer` (in the run's state,
    :func:`ui.common.controls.run_state`)."""
    controls.run_state().update(page=url_path, next_page=next_page)


def steps(titles: Sequence[str]) -> int | None:
    """Step navigator for presenter mode; returns the current step's id or None.

    ``titles``: one per step id (1, 2, …). The page shows its sections in its order
    (``PageSpec.order``); the sections up to the current one in that order are shown
    (:func:`shown`). ``?step=k`` opens the page at the k-th step it shows, "Step k of n"
    on the screen, which is what a presenter reads off it and writes into a link.
    """
    run = controls.run_state()
    run.pop("steps", None)
    if not is_presenting():
        return None
    spec, n = controls.page_spec(), len(titles)
    if n != spec.steps:
        raise ValueError(f"titles: {n} steps, but the page's registry entry declares {spec.steps}")
    order = spec.step_order
    page = run.get("page")
    if st.session_state.get(_STEP_PAGE, page) != page:
        st.session_state["step"] = order[0]  # another page: start at its first step
    st.session_state[_STEP_PAGE] = page
    if st.session_state.get("step") not in order:  # the link's step, seeded once
        st.session_state["step"] = order[controls.link_value("step") - 1]
    place = {step_id: i for i, step_id in enumerate(order)}
    with st.container(border=True):
        prev_col, label_col, next_col = st.columns([1, 4, 1], vertical_alignment="center")
        with label_col:
            shown_as = {
                i: t("workshop.step_of", k=place[i] + 1, n=n, title=titles[i - 1]) for i in order
            }
            step = st.selectbox(t("workshop.step"), order, format_func=shown_as.get, key="step")
        controls.write_link("step", place[step] + 1, 1)  # as on the screen
        prev_col.button(
            t("workshop.previous"),
            key="step_prev",
            on_click=_move_step,
            args=(-1, order, True),
            disabled=place[step] == 0,
            icon=":material/arrow_back:",
            width="stretch",
        )
        next_col.button(
            t("workshop.next"),
            key="step_next",
            on_click=_move_step,
            args=(1, order, True),
            disabled=place[step] == n - 1,
            icon=":material/arrow_forward:",
            width="stretch",
            type="primary",
        )
    run["steps"] = (step, order, list(titles))
    return step


def next_step_footer() -> None:
    """Presenter mode: under the last section shown, a button that reveals the next one
    (below what is on screen, where the presenter is; the top navigator needs a scroll)."""
    run = controls.run_state()
    current, next_page = run.get("steps"), run.get("next_page")
    if not is_presenting() or current is None:
        return
    target = st.session_state.pop(_SCROLL, None)
    if target is not None:
        # Streamlit has no scroll API: a script, last on the page, waits for the run to
        # end and scrolls the heading that follows the step's mark (:func:`shown`) into view
        step_no, nonce = target
        script = SCROLL_JS.replace("__STEP__", str(int(step_no)))
        st.html(script.replace("__NONCE__", nonce), unsafe_allow_javascript=True)
    step, order, titles = current
    place = order.index(step)
    if place < len(order) - 1:
        following = order[place + 1]
        st.button(
            t("workshop.next_step", k=place + 2, title=titles[following - 1]),
            key="step_next_footer",
            on_click=_move_step,
            args=(1, order),
            icon=":material/arrow_downward:",
            type="primary",
        )
    elif next_page is not None:  # the last step: on to the next page of the story
        script, title = next_page
        st.page_link(
            script,
            label=t("workshop.next_page", title=title),
            icon=":material/arrow_forward:",
            query_params={"present": "1"},
        )


def takeaway(text: str, lead: str | None = None) -> None:
    """The one-sentence takeaway that opens a section, under its heading (bold), and
    ``lead``, the paragraph after it, in the same element. A section that asks a question
    first draws it into a ``st.container()`` under the heading once :func:`predict`
    returns True, so that it does not give the answer away."""
    st.markdown(f"**{text}**" + (f"\n\n{lead}" if lead else ""))


def shown(section: int, step: int | None) -> bool:
    """Whether section ``section`` (its step id) is revealed at ``step`` (None: all are):
    in presenter mode, whether it comes no later than ``step`` in the page's order.

    In presenter mode the first call for a section also marks where the section starts
    (an empty container, hidden by presenter.css; one per section in every run, so that
    no element below moves): the top Next and Back scroll to the heading after it."""
    if step is None:
        return True
    marked = controls.run_state().setdefault("step_marks", set())
    if section not in marked:
        marked.add(section)
        # (an empty container is not drawn: it holds an empty span)
        st.container(key=f"step_mark_{section}").html("<span></span>")
    order = controls.page_spec().step_order
    return order.index(section) <= order.index(step)


def deeper(step: int | None):
    """The page's "Go deeper" part, under its short path (``PageSpec.short``): a container
    to draw the rest of the page's sections into, or None while it is closed.

    Closed, nothing in it is computed or sent. Its state is in the URL (``?deeper=true``).
    In presenter mode it opens by itself once the current step is one of its sections,
    and stays out of sight before.
    """
    spec = controls.page_spec()
    if not spec.short or spec.short >= spec.steps:
        return st.container()
    if step is not None:
        past = spec.step_order.index(step) >= spec.short
        return st.container() if past else None
    panel = st.expander(
        t("workshop.go_deeper"),
        icon=":material/expand_more:",
        key="deeper",
        on_change="rerun",
        bind="query-params",
    )
    return panel if panel.open else None


def terms() -> None:
    """ "Terms on this page": a one-sentence definition of every glossary term the page
    uses (``PageSpec.terms``), in a popover under the lead, and a link to the glossary."""
    names = controls.page_spec().terms
    if not names:
        return
    with st.popover(t("glossary.terms_label"), icon=":material/menu_book:"):
        # one element, a paragraph a term: every element is a message on every rerun
        st.markdown("\n\n".join(glossary.definition(name) for name in names))
        st.page_link("app_pages/glossary.py", label=t("glossary.all_terms"))


# --- charts with their data and their code ----------------------------------------------
def chart(
    key: str,
    builder: Callable[..., alt.TopLevelMixin],
    frame: functools.partial,
    *,
    marker: float | None = None,
    source: Callable | Sequence[Callable] | None = None,
    options: dict[str, object] | None = None,
    table: str | None = None,
    swap_data: bool = False,
    **values: object,
) -> None:
    """Draw chart ``key``; under it a CSV of its frame and the source of ``source``.

    ``key`` names the chart's words, its catalog table ``[key]`` (title, axes, alt text,
    tooltip titles: :class:`ui.common.charts.ChartText`), each formatted with ``values``;
    with the dot as an underscore it is the element's key (``saturation_overflow``).
    ``frame`` is the deferred call that makes the chart's data,
    ``partial(frames.overflow, n_keys, seed)``: a module-level function and plain
    arguments. ``builder(frame(), text, **options)`` makes the chart (``options``: plain
    values too). The finished spec is cached for the whole server under that description
    (:func:`ui.common.specs.chart_spec`), so a rerun with inputs already seen makes no
    frame and hashes none.

    ``table``: the catalog table of the chart's words when several charts share one (the
    small multiples of one quantity); default ``key``.

    ``marker``: the learner's value (d_k) marked on an axis against d_k by a dashed rule
    (:func:`ui.common.charts.d_marker`), layered here; it travels beside the cached spec,
    so a new value rebuilds nothing.

    ``swap_data``: the builder draws the frames as they are, and its spec depends on its
    words and options only; a new input of the frame function then makes the frames and
    builds no chart (:func:`ui.common.specs.drawn`).

    The CSV (of the frame; the first, if the frame function makes several) and the code
    are under the chart, in a panel drawn once it is opened (``<key>_code``, which reruns
    the page); the CSV is made only when its button is pressed, and pressing it does not
    rerun the page. ``source``
    is the core function (or functions) that computed the data — the same code the
    tests cover. The image is in the chart's own ⋯ menu (PNG/SVG).
    """
    text = chart_text(table or key, **values)
    spec = specs.drawn(
        key, builder, frame, text, options=options, marker=marker, presenting=is_presenting(),
        swap_data=swap_data,
    )  # fmt: skip
    element = key.replace(".", "_")
    st.vega_lite_chart(spec=spec, width="stretch", key=element)
    chart_extras(element, lambda: first_frame(frame()), source)


def draw_table(table: pa.Table, where=st) -> None:
    """Draw a static text table (:func:`ui.common.specs.text_table`) in ``where`` (the page,
    or a column), its row labels as row headers. The index is shown explicitly: left to
    decide, Streamlit turns an Arrow table back into a DataFrame to look at its index."""
    where.table(table, hide_index=False)


def first_frame(made: pd.DataFrame | tuple) -> pd.DataFrame:
    """The frame a chart's CSV holds: the frame function's, or the first of several."""
    return made[0] if isinstance(made, tuple) else made


def chart_extras(key: str, data: Callable[[], pd.DataFrame], source) -> None:
    """Under a chart, one closed panel (``<key>_code``): opened, the CSV of ``data()``
    (made when pressed) and the code of ``source``.

    Closed, it draws nothing inside: a code box on the page makes the browser load its
    syntax highlighter, and a download button is a widget that every rerun registers
    (0.3–0.4 ms of CPU each, measured on the training page's eleven charts). Opening it
    reruns the page; pressing the button does not.
    """
    functions = [] if source is None else [source] if callable(source) else list(source)
    panel = st.expander(
        t("workshop.data_and_code" if functions else "workshop.data_only"),
        icon=":material/code:" if functions else ":material/download:",
        key=f"{key}_code",
        on_change="rerun",
    )
    if not panel.open:
        return
    panel.download_button(
        t("workshop.download_csv"),
        data=lambda: data().to_csv(index=False).encode("utf-8"),
        file_name=f"{key}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        on_click="ignore",
        icon=":material/download:",
        type="tertiary",
    )
    for fn in functions:
        panel.code(inspect.getsource(inspect.unwrap(fn)), language="python")


# --- predictions and misconceptions ------------------------------------------------------
#: Session-state entries: whether the link says ``reveal=1``, and the questions it has
#: revealed.
_LINK_REVEAL, _LINK_REVEALED = "_link_reveal", "_link_revealed"


def link_reveals() -> bool:
    """Whether the link opens with the answers shown (``?reveal=1``, read once per session).
    In a room the presenter reveals the answers: there ``reveal=`` is ignored, with a note."""
    if _LINK_REVEAL not in st.session_state:
        st.session_state[_LINK_REVEAL] = controls.link_value("reveal")
        if st.session_state[_LINK_REVEAL] and room.code() is not None:
            controls.notice("info", t("workshop.reveal_in_room"))
    return st.session_state[_LINK_REVEAL] and room.code() is None


def predict(
    key: str,
    question: str,
    options: Sequence[str],
    *,
    answer: int,
    explain: str,
    about: tuple,
    unanswerable: str | None = None,
    earlier: str | None = None,
) -> bool:
    """Ask a multiple-choice question before revealing what it is about. True once the
    learner has committed to a guess or skipped (the page then shows the chart).

    The guess is kept in the session and compared with ``answer``, the index of the option
    the live measurement supports. ``about``: the language-neutral values the question
    depends on (e.g. ``(d_k, n_keys, seed)``); once they change the guess is not graded
    (the page states the answer for the new settings), and it is again if they change
    back. In a room (:mod:`ui.common.room`) the guess also goes to the room, in the
    settings group of ``about``, and the presenter sees the room's answers under the card.

    ``unanswerable``: a note saying why these settings leave nothing to predict (e.g. every
    option is the same number); it is shown instead of the question, with the charts.

    ``earlier``: the key of the card this one asks again (the recap's self-check asks the
    story's cards under keys of their own): in a room the presenter sees the room's
    answers to that card, at the same settings, beside this one's.
    """
    if unanswerable is not None:
        st.info(unanswerable, icon=":material/info:")
        return True
    guesses = st.session_state.setdefault("_predictions", {})
    asked = st.session_state.setdefault("_predicted_about", {})  # key -> about at the guess
    shown_by_link = st.session_state.setdefault(_LINK_REVEALED, set())
    if key not in guesses and key not in shown_by_link and link_reveals():
        guesses[key], asked[key] = None, about  # shown as if skipped; "Ask again" asks
        shown_by_link.add(key)
    if key in guesses and room.answer_gone(key):  # the presenter reset the question
        del guesses[key]
        asked.pop(key, None)
    _card(key, question, tuple(options), answer, explain, about)
    room_live.presenter_view(key, options, about, is_presenting(), earlier=earlier)
    return key in guesses


@st.fragment
def _card(key: str, question: str, options: tuple, answer: int, explain: str, about: tuple) -> None:
    """The card of :func:`predict`: a fragment, so choosing reruns the card alone; locking
    in (or skipping, or asking again) reruns the page, whose charts depend on it. It draws
    no chart of its own, so its reruns take no turn (the room's answers in it do). Its
    first rerun after a notice at the top of the page reruns the app, which clears it."""
    controls.clear_notices()
    guesses, asked = st.session_state["_predictions"], st.session_state["_predicted_about"]
    with st.container(border=True):
        asking = f"**{t('workshop.predict_title')}** — {question}"
        # answered outside a room, the question joins the answer below (one element fewer);
        # in a room, the room's answers go between them
        apart = key not in guesses or room.code() is not None
        if apart:
            st.markdown(asking)
            room.card_note(key)
        if key not in guesses:
            choice = st.radio(
                t("workshop.your_guess"),
                range(len(options)),
                format_func=lambda i: options[i],
                index=None,
                key=f"{key}_guess",
                horizontal=True,
            )
            left, right = st.columns([2, 1])
            reveal = left.button(
                t("workshop.reveal"), key=f"{key}_reveal", disabled=choice is None, type="primary"
            )
            skip = right.button(t("workshop.skip"), key=f"{key}_skip", type="tertiary")
            if reveal or skip:
                guesses[key] = choice if reveal else None
                asked[key] = about
                if reveal:
                    room.send(key, choice, len(options), about)
                st.rerun()
            return
        guess, changed = guesses[key], None
        if asked.setdefault(key, about) != about:
            guess = None  # a guess for other settings: not graded against these
            changed = f"*{t('workshop.settings_changed')}*"
        if guess is None:
            verdict = t("workshop.skipped", answer=options[answer])
        else:
            outcome = "workshop.right" if guess == answer else "workshop.wrong"
            verdict = t(outcome, guess=options[guess], answer=options[answer])
        shown = (None if apart else asking, changed, f"{verdict} {explain}")
        st.markdown("\n\n".join(p for p in shown if p))
        room.after_guess(key, options, asked[key], is_presenting())
        if st.button(t("workshop.ask_again"), key=f"{key}_again", type="tertiary"):
            del guesses[key]
            asked.pop(key, None)
            room.forget(key)
            st.rerun()


def myth(claim: str, reality: str, *, source: str | None = None) -> None:
    """A misconception card, then what the live numbers show.

    With ``source`` (where the claim appears: a paper, a book, a well-known post or
    course) the card quotes the claim and names it; a claim no source can be named for
    is asked as a question instead (``source=None``).
    """
    if source is None:
        asked = f":material/help: **{t('workshop.myth_question')}** {claim}"
    else:
        asked = f":material/report: **{t('workshop.myth')}** {claim} ({source})"
    answered = f":material/check_circle: **{t('workshop.reality')}** {reality}"
    # one element, two paragraphs: every element is a message on every rerun
    st.container(border=True).markdown(f"{asked}\n\n{answered}")
