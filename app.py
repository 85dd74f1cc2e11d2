"""Attention Scaling Lab — entry point: page config, sidebar, navigation."""

import os

# Every computation here is a small array op: BLAS threads only add wake-up latency,
# and a Community Cloud app may have a fraction of one core. Set before NumPy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import streamlit as st

from ui.common import controls, room, room_panel, share, turns, workshop
from ui.common.i18n import LANGUAGES, catalog, t
from ui.common.pages import PAGES, ROOT, STORY, PageSpec, by_url, next_in_story


def nav_title(spec: PageSpec, texts: dict[str, str] | None = None) -> str:
    """A page's title in the navigation: numbered in story order (``2 · Saturation``)."""
    title = (texts or {}).get(f"{spec.name}.nav") or t(f"{spec.name}.nav")
    return f"{STORY.index(spec.name) + 1} · {title}" if spec.name in STORY else title


def main() -> None:
    """One run of the app: the shell (page config, sidebar, notices, share panel) around
    the page the URL names."""
    st.set_page_config(
        page_title="Attention Scaling Lab",
        # a file, sent inline: a ":material/…:" icon makes the browser fetch the tab icon
        # from a font host on the internet, which a closed workshop network cannot reach
        page_icon=ROOT / "ui" / "common" / "icon.svg",
        layout="wide",
        initial_sidebar_state="auto",  # collapsed on phones, open on wider screens
    )
    texts = catalog(controls.language())
    navigation = st.navigation(
        [
            st.Page(
                spec.script,
                title=nav_title(spec, texts),
                url_path=spec.url_path,
                icon=spec.icon,
                default=not spec.url_path,
            )
            for spec in PAGES
        ]
    )
    current = by_url(navigation.url_path)
    try:
        controls.start_run(current)  # the URL read against the page's table, before any element
        st.html(workshop.LAYOUT_CSS)  # formulas and tables scroll in a box
        with st.sidebar:
            controls.choice("lang", t("app.language"), labels=list(LANGUAGES.values()))
            controls.int_input("seed", t("app.seed"), help=t("app.seed_help"))
            workshop.presenter_toggle()
            panel_slot = st.container()  # room panel: filled once the page has run
        room.start()
        workshop.link_reveals()

        following = next_in_story(current)
        workshop.set_page(
            current.url_path,
            (following.script, nav_title(following)) if following else None,
        )
        navigation.run()
        workshop.next_step_footer()
        params = [p.key for p in current.table]
        room_panel.panel(panel_slot, share.link_values(params), presenting=workshop.is_presenting())
        room.end_run()
        share.share_panel(params)
        st.sidebar.caption(t("app.sidebar_note"))
        # boxes that scroll sideways on a phone join the tab order (nothing to see: last)
        st.sidebar.html(workshop.SCROLL_REGIONS_JS, unsafe_allow_javascript=True)
    finally:
        controls.end_run()


# runs of all sessions take turns (ui/common/turns.py: a burst of changes ends sooner)
with turns.SCRIPT_RUNS.turn():
    main()
