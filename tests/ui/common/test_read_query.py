"""``params.read_query``: the whole query string checked once against a page's table."""

from __future__ import annotations

from ui.common.pages import by_url
from ui.common.params import read_query

TRAINING = by_url("training").table
REAL_MODELS = by_url("real-models").table


def _reasons(reading):
    return {note.key: note.reason for note in reading.notes}


def test_every_fault_of_a_link_gets_a_note_and_good_values_are_kept():
    query = {"d_k": ["100"], "optimizer": ["sgd"], "seed": ["1", "2"], "step": ["3"],
             "foo": ["1"], "m": ["3"]}  # fmt: skip
    reading = read_query(query, TRAINING)
    assert _reasons(reading) == {
        "d_k": "changed",  # trained at powers of two
        "seed": "repeated",
        "step": "needs",  # without present=1
        "foo": "unknown",
        "m": "bad",
    }
    assert reading.values["d_k"] == 128 and reading.query["d_k"] == ["128"]
    assert reading.values["optimizer"] == "sgd"
    assert reading.values["seed"] == 0 and reading.values["m"] == "2"  # the defaults
    assert set(reading.query) == {"d_k", "optimizer"}  # the URL as it should stand


def test_a_clean_link_has_no_notes():
    reading = read_query({"d_k": ["256"], "m": ["4"], "optimizer": ["adam"]}, TRAINING)
    assert reading.notes == ()
    assert reading.values["d_k"] == 256 and reading.values["m"] == "4"


def test_a_linked_text_longer_than_its_box_is_bad():
    reading = read_query({"text": ["x" * 1001]}, REAL_MODELS)
    assert _reasons(reading) == {"text": "bad"}
    assert reading.values["text"] == ""


def test_a_typed_text_cut_by_its_box_is_the_text_the_session_holds():
    """The box cut a paste to its first 1,000 characters before the run; the URL still
    holds the whole paste. That URL mirrors the box: the cut text is kept, no warning."""
    pasted = "Attention divides q·k by the square root of d_k. " * 200
    reading = read_query({"text": [pasted]}, REAL_MODELS, held={"text": pasted[:1000]})
    assert reading.notes == ()
    assert reading.values["text"] == pasted[:1000]
    assert "foo" not in reading.query
    other = read_query({"text": ["y" * 1001]}, REAL_MODELS, held={"text": pasted[:1000]})
    assert _reasons(other) == {"text": "bad"}  # another text: from the browser's history
