"""The run's language: held once per complete run, never seen by another thread."""

import threading

import pytest

from ui.common import i18n


@pytest.fixture
def held():
    yield i18n.set_run_language
    i18n.set_run_language(None)


def test_the_run_language_is_the_one_looked_up(held):
    held("zh")
    assert i18n.current_language() == "zh"
    assert i18n.t("app.language") == i18n.CATALOGS["zh"]["app.language"]


@pytest.mark.parametrize("lang", [None, "xx", ""])
def test_no_run_language_falls_back_to_the_session(held, lang):
    held("zh")
    held(lang)  # cleared (None), or a value no catalog has
    assert i18n.current_language() == i18n.DEFAULT_LANGUAGE  # no session here: English


def test_another_thread_does_not_see_the_run_language(held):
    """Each script run has its own thread: one session's language never reaches another."""
    held("zh")
    seen = []
    worker = threading.Thread(target=lambda: seen.append(i18n.current_language()))
    worker.start()
    worker.join()
    assert seen == [i18n.DEFAULT_LANGUAGE]
    assert i18n.current_language() == "zh"
