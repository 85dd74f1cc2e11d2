"""Workshop mode through AppTest: presenter steps, predictions, share link, defaults."""

from urllib.parse import parse_qsl

from tests.app.helpers import chart_data, open_code_panels, open_share_panel, run_page, warnings

VARIANCE = "app_pages/variance.py"


def _share_link(at) -> str:
    """The link in the sidebar's share panel, opened first (closed, it draws nothing)."""
    if not at.session_state["share_open"]:
        open_share_panel(at)
    links = [c.value for c in at.code if c.value.startswith(("?", "http"))]
    assert len(links) == 1, [c.value for c in at.code]
    return links[0]


def test_presenter_mode_reveals_one_step_at_a_time():
    at = run_page(VARIANCE, reveal=False, present="1")
    assert not at.exception
    assert at.toggle(key="present").value is True
    assert at.selectbox(key="step").value == 1
    assert not at.get("vega_lite_chart")  # step 1: the question, then moments
    assert at.button(key="variance_std_reveal").disabled  # no guess yet
    assert not at.metric  # the measured moments would give the answer away
    # controls moved to the sidebar
    assert at.sidebar.number_input(key="d_k").value == 64
    at.button(key="step_next").click().run()
    assert at.selectbox(key="step").value == 2
    assert not at.get("vega_lite_chart") and not at.metric  # still waiting for the guess
    assert "answer or skip the question above" in " ".join(c.value for c in at.caption)
    at.button(key="variance_std_skip").click().run()
    assert len(at.metric) == 4 and len(at.get("vega_lite_chart")) == 2
    at.button(key="step_next").click().run()
    at.button(key="step_next").click().run()
    assert at.selectbox(key="step").value == 4
    assert at.button(key="step_next").disabled
    at.button(key="step_prev").click().run()
    assert at.selectbox(key="step").value == 3


def test_next_step_button_under_the_last_section_shown():
    at = run_page(VARIANCE, reveal=False, present="1")
    footer = at.button(key="step_next_footer")
    assert footer.label == "Next: step 2 · The spread of q·k, unscaled and scaled"
    footer.click().run()
    assert at.selectbox(key="step").value == 2
    at = run_page(VARIANCE, reveal=False, present="1", step="4")
    assert "step_next_footer" not in [b.key for b in at.button]  # the last step
    at = run_page(VARIANCE, reveal=False)
    assert "step_next_footer" not in [b.key for b in at.button]  # not presenting


def test_a_bad_link_warns_above_the_page_not_inside_a_control_column():
    at = run_page("app_pages/saturation.py", reveal=False, d_k="99999999", n_keys="-3")
    assert sorted(w for w in warnings(at) if "`d_k`" in w or "`n_keys`" in w)
    # in document order the warnings come before the page's title, not in its controls
    # one warning, naming both
    order = [el.type for el in at.main if el.type in ("warning", "title")]
    assert order[:2] == ["warning", "title"], order
    assert "`d_k`" in warnings(at)[0] and "`n_keys`" in warnings(at)[0]


def test_step_from_the_url_and_bad_step_warns():
    at = run_page(VARIANCE, present="1", step="3")
    assert at.selectbox(key="step").value == 3
    assert len(at.get("vega_lite_chart")) == 3  # both histograms (revealed) + the sweep
    at = run_page(VARIANCE, reveal=False, present="1", step="9")
    assert any("`step`" in w for w in warnings(at))
    assert at.selectbox(key="step").value == 1


def test_turning_presenter_mode_off_takes_the_step_out_of_the_link():
    """``step`` means something only with ``present``: off, the link drops both, and the
    next complete run has nothing to warn about."""
    at = run_page(VARIANCE, reveal=False, present="1", step="3")
    assert at.selectbox(key="step").value == 3 and at.query_params.get("step") == "3"
    at.toggle(key="present").set_value(False).run()
    assert "present" not in at.query_params and "step" not in at.query_params
    at.run()  # a complete run reads the link again
    assert not at.exception and not warnings(at)


def test_the_share_link_carries_the_values_under_a_closed_go_deeper():
    """ "Go deeper" closed draws its controls nowhere, yet their values hold: which-d's
    section 1 draws with the link's initialisation (chosen in section 3). The share link
    carries them, so its view opens the same when "Go deeper" is opened."""
    at = run_page(
        "app_pages/which-d.py", deeper="false", w_init="zero_q", x_scale="8", d_q_in="768"
    )
    assert "w_init" not in at.session_state  # its radio is under the closed "Go deeper"
    shared = dict(parse_qsl(_share_link(at).split("?", 1)[1]))
    assert shared["w_init"] == "zero_q" and shared["x_scale"] == "8"
    assert shared["d_q_in"] == "768" and shared["d_kv_in"] == "1024"  # a default too
    assert shared["head_divisor"] == "d_k" and shared["d_model"] == "512"


def test_present_param_forms():
    assert run_page(VARIANCE, present="true").toggle(key="present").value is True
    assert run_page(VARIANCE, present="0").toggle(key="present").value is False
    at = run_page(VARIANCE, reveal=False, present="maybe")
    assert at.toggle(key="present").value is False
    assert any("`present`" in w for w in warnings(at))


def test_prediction_is_recorded_and_compared():
    at = run_page(VARIANCE, reveal=False, d_k="256")
    assert len(at.get("vega_lite_chart")) == 3  # histograms wait for the guess
    assert not at.metric  # and so do the measured moments
    at.radio(key="variance_std_guess").set_value(2).run()  # guess d_k·σ² = 256
    at.button(key="variance_std_reveal").click().run()
    assert len(at.get("vega_lite_chart")) == 5
    text = " ".join(m.value for m in at.markdown)
    assert "**256**" in text and "**16**" in text  # the guess and the measured answer
    assert at.session_state["_predictions"] == {"variance_std": 2}
    at.button(key="variance_std_again").click().run()
    assert len(at.get("vega_lite_chart")) == 3


def test_a_guess_is_not_graded_against_a_question_it_did_not_answer():
    at = run_page(VARIANCE, reveal=False, d_k="64")
    at.radio(key="variance_std_guess").set_value(1).run()  # √64 = 8: right at d_k = 64
    at.button(key="variance_std_reveal").click().run()
    text = " ".join(m.value for m in at.markdown)
    assert "right" in text and "not graded" not in text
    at.radio(key="lang").set_value("zh").run()  # the same question in Chinese: still graded
    assert any("猜对了" in m.value for m in at.markdown)
    at.radio(key="lang").set_value("en").run()
    at.number_input(key="d_k").set_value(256).run()  # another question: charts stay
    assert len(at.get("vega_lite_chart")) == 5
    text = " ".join(m.value for m in at.markdown)
    assert "not graded" in text and "right" not in text and "You guessed" not in text
    assert "**16**" in text  # the answer for d_k = 256
    at.radio(key="lang").set_value("zh").run()  # other settings, other language: still not
    text = " ".join(m.value for m in at.markdown)
    assert "不再评判" in text and "猜对了" not in text and "你猜的是" not in text
    at.radio(key="lang").set_value("en").run()
    at.number_input(key="d_k").set_value(64).run()  # back to the question answered
    assert any("right" in m.value for m in at.markdown)
    at.button(key="variance_std_again").click().run()
    assert len(at.get("vega_lite_chart")) == 3


def test_a_guess_for_more_options_than_the_question_now_has():
    # saturation's mean-max question has fewer options at n_keys = 2 than at 10
    at = run_page("app_pages/saturation.py", reveal=False)
    guess = at.radio(key="saturation_mean_max_guess")
    guess.set_value(len(guess.options) - 1).run()
    at.button(key="saturation_mean_max_reveal").click().run()
    at.number_input(key="n_keys").set_value(2).run()
    at.radio(key="lang").set_value("zh").run()
    assert not at.exception
    assert any("不再评判" in m.value for m in at.markdown)


def test_right_guess():
    at = run_page(VARIANCE, reveal=False, d_k="64")
    at.radio(key="variance_std_guess").set_value(1).run()
    at.button(key="variance_std_reveal").click().run()
    assert any("right" in m.value for m in at.markdown)


def test_share_link_reproduces_the_view():
    at = run_page(VARIANCE, d_k="300", dist="uniform", sigma_k="2.5", seed="11", lang="zh")
    params = dict(parse_qsl(_share_link(at).split("?", 1)[1]))
    assert params["d_k"] == "300" and params["dist"] == "uniform" and params["seed"] == "11"
    assert params["sigma_k"] == "2.5" and params["lang"] == "zh" and params["n_samples"] == "20000"
    again = run_page(VARIANCE, **params)
    assert not again.exception and not warnings(again)
    assert [c["datasets"] for c in chart_data(again)] == [c["datasets"] for c in chart_data(at)]


def test_defaults_and_new_seed():
    at = open_share_panel(run_page(VARIANCE, d_k="300", dist="uniform", seed="5", lang="zh"))
    at.button(key="restore_defaults").click().run()
    assert at.number_input(key="d_k").value == 64
    assert at.radio(key="dist").value == "normal"
    assert at.number_input(key="seed").value == 0
    assert at.radio(key="lang").value == "zh"  # language is not a "control" to reset
    before = chart_data(at)[0]["datasets"]
    at.button(key="new_seed").click().run()
    assert at.number_input(key="seed").value != 0
    assert chart_data(at)[0]["datasets"] != before


def test_show_code_expanders_hold_core_source():
    at = run_page(VARIANCE)
    assert not at.code and not at.get("download_button")  # closed panels draw nothing inside
    sources = [c.value for c in open_code_panels(at).code if c.value.startswith("def ")]
    assert any(s.startswith("def dot_products(") for s in sources)
    assert any(s.startswith("def variance_sweep(") for s in sources)


def test_defaults_on_which_d_restore_the_heads_of_the_default_width():
    # n_heads' default depends on d_model (the divisor giving d_k nearest 64), so it must
    # be the default of the restored d_model = 512, not of the width the page was at
    at = run_page("app_pages/which-d.py", d_model="2048")
    assert at.selectbox(key="n_heads").value == "32"
    open_share_panel(at).button(key="restore_defaults").click().run()
    assert at.number_input(key="d_model").value == 512
    assert at.selectbox(key="n_heads").value == "8"
    assert not at.exception and not at.info
    at.run()  # and it stays there
    assert at.selectbox(key="n_heads").value == "8"
    assert at.query_params.get("n_heads") in (None, [])


def test_bad_present_warns_even_when_another_bad_param_reruns_the_page():
    at = run_page(VARIANCE, reveal=False, present="maybe", d_k="x")
    shown = warnings(at)
    assert any("`present`" in w for w in shown) and any("`d_k`" in w for w in shown), shown
    at.run()  # shown once, then gone
    assert not warnings(at)


def _next_page_links(at) -> list:
    """The page links but the glossary's (under "Terms on this page")."""
    return [link for link in at.get("page_link") if "glossary" not in link.proto.page]


def test_the_last_step_links_to_the_next_page_and_a_new_page_starts_at_step_1():
    at = run_page(VARIANCE, reveal=False, present="1", step="4")
    links = _next_page_links(at)
    assert len(links) == 1 and "Saturation" in links[0].proto.label
    at.switch_page("app_pages/saturation.py").run()
    assert at.selectbox(key="step").value == 4  # its first section in the page's order
    at.button(key="step_next").click().run()
    assert at.selectbox(key="step").value == 2
    at.run()  # the same page: the step stays
    assert at.selectbox(key="step").value == 2
    at = run_page("app_pages/which-d.py", reveal=False, present="1", step="5")
    links = _next_page_links(at)
    assert len(links) == 1 and "In real models" in links[0].proto.label
    at = run_page("app_pages/real-models.py", reveal=False, present="1", step="4")
    links = _next_page_links(at)
    assert len(links) == 1 and "What to remember" in links[0].proto.label
    at = run_page("app_pages/recap.py", reveal=False, present="1", step="2")
    # the story's last page: its links are its sentences', none to a next page
    assert not [link for link in _next_page_links(at) if link.proto.label.startswith("Next")]


def test_an_open_share_panel_follows_a_control_inside_a_fragment():
    # AppTest reruns the whole script (the fragment-only path is covered in the browser,
    # tests/e2e/test_gradients.py); here: an open panel causes no rerun loop
    at = run_page("app_pages/gradients.py", reveal=False)
    assert dict(parse_qsl(_share_link(at).split("?", 1)[1]))["gap"] == "6"  # opens it
    at.session_state["gap"] = 8.0  # as the gap explorer's chart reports a drag's pause
    at.run()
    assert not at.exception
    assert dict(parse_qsl(_share_link(at).split("?", 1)[1]))["gap"] == "8"
