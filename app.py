"""Attention Scaling Lab — entry point: page config, sidebar, navigation."""

import os

# Every computation here is a small array op: BLAS threads only add wake-up latency,
# and a Community Cloud app may have a fraction of one core. Set before NumPy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import streamlit as st

from ui.common import controls, room, room_panel, turns, workshop
from ui.common.i18n import LANGUAGES, t
from ui.common.pages import APP_PARAMS, PAGES, ROOT


def main() -> None:
    """One run of the app: the shell (page config, sidebar, notices, share panel) around
    the page the URL names."""
    st.set_page_config(
        page_title="Attention Scaling Lab",
        page_icon=":material/functions:",
        layout="wide",
        initial_sidebar_state="auto",  # collapsed on phones, open on wider screens
    )
    st.html(ROOT / "ui" / "common" / "layout.css")  # formulas and tables scroll in their own box
    controls.start_run()  # warnings about the link go above the page, full width
    completed = False
    try:
        with st.sidebar:
            controls.choice(
                "lang",
                t("app.language"),
                list(LANGUAGES),
                default="en",
                captions=list(LANGUAGES.values()),
            )
            controls.int_input(
                "seed",
                t("app.seed"),
                min_value=0,
                max_value=controls.SEED_MAX,
                default=0,
                help=t("app.seed_help"),
            )
            workshop.presenter_toggle()
            panel_slot = st.container()  # room panel: filled once the page has run (its controls)
        room.start()
        workshop.link_reveals()

        navigation = st.navigation(
            [
                st.Page(
                    spec.script,
                    title=t(f"{spec.name}.nav"),
                    url_path=spec.url_path,
                    icon=spec.icon,
                    default=not spec.url_path,
                )
                for spec in PAGES
            ]
        )
        current = next(spec for spec in PAGES if spec.url_path == navigation.url_path)
        following = PAGES[PAGES.index(current) + 1 :]
        workshop.set_page(
            current.url_path,
            (following[0].script, t(f"{following[0].name}.nav")) if following else None,
        )
        navigation.run()
        workshop.next_step_footer()
        app_params = APP_PARAMS | workshop.WORKSHOP_PARAMS | room.ROOM_PARAMS
        controls.unknown_params_check(app_params)
        params = sorted(app_params | controls.page_params())
        room_panel.panel(
            panel_slot, workshop.link_values(params), presenting=workshop.is_presenting()
        )
        room.end_run()
        workshop.share_panel(params)
        st.sidebar.caption(t("app.sidebar_note"))
        completed = True
    finally:
        controls.end_run(completed)


# runs of all sessions take turns (ui/common/turns.py: a burst of changes ends sooner)
with turns.SCRIPT_RUNS.turn():
    main()
