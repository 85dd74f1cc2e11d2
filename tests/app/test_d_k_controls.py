"""d_k moves the same way on every page: − / + go to the next power of two, ÷2 / ×2 halve
and double, and a value typed or linked is kept (on training: moved to the nearest power
of two, with a note, since the page trains at powers of two only)."""

from __future__ import annotations

import pytest

from tests.app.helpers import run_page, warnings
from ui.common.pages import PAGES

#: Every page whose main control is d_k.
D_K_PAGES = {p.url_path: p.script for p in PAGES if p.main == "d_k"}


def _d_k(at, key="d_k") -> int:
    return at.number_input(key=key).value


@pytest.mark.parametrize("page", list(D_K_PAGES))
def test_minus_plus_and_halve_double_step_through_powers_of_two(page):
    at = run_page(D_K_PAGES[page], reveal=False, d_k="64")
    assert _d_k(at) == 64
    at.number_input(key="d_k").increment().run()  # the input's own +
    assert _d_k(at) == 128
    at.number_input(key="d_k").decrement().run()
    at.number_input(key="d_k").decrement().run()
    assert _d_k(at) == 32
    at.button(key="d_k_double").click().run()
    assert _d_k(at) == 64
    at.button(key="d_k_half").click().run()
    assert _d_k(at) == 32
    assert not at.exception
    assert not warnings(at)
    assert not any("became" in c.value for c in at.caption)  # a step needs no note


@pytest.mark.parametrize("page", [p for p in D_K_PAGES if p != "training"])
def test_a_typed_or_linked_d_k_is_kept(page):
    at = run_page(D_K_PAGES[page], reveal=False, d_k="100")
    assert _d_k(at) == 100  # linked
    at.number_input(key="d_k").increment().run()
    assert _d_k(at) == 128  # + from 100: the next power of two up
    at.number_input(key="d_k").set_value(100).run()  # typed
    assert _d_k(at) == 100
    at.number_input(key="d_k").decrement().run()
    assert _d_k(at) == 64  # − from 100: the next power of two down
    at.number_input(key="d_k").set_value(100).run()
    at.button(key="d_k_double").click().run()
    assert _d_k(at) == 200  # ×2 doubles whatever the value
    assert not at.exception
    assert not warnings(at)


def test_training_moves_a_typed_or_linked_d_k_to_a_power_of_two_and_says_why():
    at = run_page(D_K_PAGES["training"], reveal=False, d_k="100")
    assert _d_k(at) == 128
    # linked: said in the warning about the link, and the link itself corrected
    (warning,) = warnings(at)
    assert "dₖ = 100 became 128" in warning and "powers of two" in warning
    assert at.query_params["d_k"] == "128"
    at.number_input(key="d_k").decrement().run()
    assert _d_k(at) == 64  # − as on every page
    at.number_input(key="d_k").set_value(300).run()  # typed: said under the input
    assert _d_k(at) == 256
    note = [c.value for c in at.caption if "became" in c.value]
    assert note and "dₖ = 300 became 256" in note[0]
    assert not warnings(at)
    assert not at.exception


def test_which_d_projection_size_moves_like_d_k():
    at = run_page("app_pages/which-d.py", reveal=False)
    assert _d_k(at, "d_proj") == 64
    at.number_input(key="d_proj").increment().run()
    assert _d_k(at, "d_proj") == 128
    at.button(key="d_proj_half").click().run()
    at.button(key="d_proj_half").click().run()
    assert _d_k(at, "d_proj") == 32
    at.number_input(key="d_proj").set_value(48).run()  # typed: kept
    assert _d_k(at, "d_proj") == 48
    at.number_input(key="d_model").increment().run()  # d_model moves the same way
    assert at.number_input(key="d_model").value == 1024
    assert not at.exception
