"""Language-model page: the learner's prompt as the models read it, the sweep's figures
and the frames, against the shipped files read here directly."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from core import char_lm
from ui.language_model import data, frames

DATA = Path(__file__).resolve().parents[3] / "data"
LABELS = tuple((v, v.upper()) for v in data.VARIANTS)


# --- the prompt ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "read", "chinese", "other", "replaced", "cut"),
    [
        ("ROMEO.\nBut soft", "ROMEO.\nBut soft", 0, 0, 0, 0),
        ("", "\n", 0, 0, 0, 0),
        ("生存还是毁灭，这是一个问题。", "\n", 14, 0, 0, 0),
        ("Hi 你好！", "Hi ", 3, 0, 0, 0),
        ("café #1 ☃ $5 <b>", "caf 1  5 b", 0, 6, 0, 0),
        ("“Soft” — she said…\tyes", '"Soft" - she said... yes', 0, 0, 5, 0),
        ("a\r\nb\rc", "a\nb\nc", 0, 0, 1, 0),
        ("x" * 70 + "END", "x" * 61 + "END", 0, 0, 0, 9),
    ],
)
def test_read_prompt(text, read, chinese, other, replaced, cut):
    got = data.read_prompt(text, 64)
    assert got.text == read
    assert (got.chinese, got.other, got.replaced, got.cut) == (chinese, other, replaced, cut)
    assert got.empty == (read == "\n" and "\n" not in text)
    assert set(got.text) <= set(char_lm.VOCAB) and 1 <= len(got.text) <= 64


def test_read_prompt_checks_the_context():
    with pytest.raises(ValueError, match="context"):
        data.read_prompt("x", 0)


def test_chinese_text_is_told_apart():
    assert all(data.is_chinese(ch) for ch in "中文，。：（）")
    assert not any(data.is_chinese(ch) for ch in "aé#☃😀")


# --- the sweep -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sweep():
    with np.load(DATA / "char_lm.npz") as z:
        return {k: z[k] for k in z.files if k != "meta"}, json.loads(str(z["meta"]))


def test_each_cell_is_wortsmans_sensitivity_of_the_seed_means(sweep):
    z, meta = sweep
    for (v, h), cell in data.cells().items():
        a, b = meta["variants"].index(v), meta["head_sizes"].index(h)
        final, l0 = z["final_val_loss"][a, b], z["initial_val_loss"][a, b]
        clipped = np.where(np.isfinite(final), np.minimum(final, l0), l0)
        mean = clipped.mean(axis=1)
        np.testing.assert_allclose(cell.loss, mean, rtol=1e-12)
        np.testing.assert_allclose(cell.lo, clipped.min(axis=1), rtol=1e-12)
        assert cell.best == int(np.argmin(mean))
        assert cell.sensitivity == pytest.approx(np.mean(mean - mean.min()), rel=1e-12)


def test_uniform_entropy_is_the_mean_log_of_the_visible_keys():
    assert data.uniform_entropy(1) == 0.0
    assert data.uniform_entropy(64) == pytest.approx(math.lgamma(65) / 64, rel=1e-12)


def test_the_models_are_the_shipped_best_runs_in_the_pages_order():
    with np.load(DATA / "char_lm_weights.npz") as w:
        meta = json.loads(str(w["meta"]))
        ln1 = {k: w[k] for k in w.files if k.endswith("/ln1_g")}
    for d_h in (16, 64):
        m = data.models(d_h)
        assert m["variants"] == list(data.VARIANTS)
        assert [e["final_val_loss"] for e in m["models"]] == [
            next(
                e["final_val_loss"] for e in meta["models"] if (e["variant"], e["d_h"]) == (v, d_h)
            )
            for v in data.VARIANTS
        ]
        for i, v in enumerate(data.VARIANTS):
            np.testing.assert_array_equal(m["params"]["ln1_g"][i], ln1[f"{v}/{d_h}/ln1_g"])
        exact = data.models(d_h, exact=True)["params"]
        assert exact["w_qkv"].dtype == np.float64
        np.testing.assert_array_equal(exact["w_qkv"], m["params"]["w_qkv"])  # float16 either way


def test_the_labs_verdict_is_read_from_its_sweep():
    lab = data.lab_verdict(64)
    assert lab["uniform"] == pytest.approx(0.5 * (1 - 1 / 16))  # ½(1/m − 1/n_keys), m = 1
    assert 0 < lab["sqrt"] < lab["none"] < lab["uniform"] and lab["seeds"] == 5


# --- the models at work -------------------------------------------------------------------------
def test_continuations_follow_the_seed():
    one = data.continuations("KING.\n", 64, 0.8, 0, 50)
    assert len(one) == 4 and all(len(text) == 50 for text in one)
    assert all(set(text) <= set(char_lm.VOCAB) for text in one)
    assert data.continuations("KING.\n", 64, 0.8, 0, 50) == one
    assert data.continuations("KING.\n", 64, 0.8, 1, 50) != one


def test_the_next_character_is_each_models_softmax():
    df = data.next_char("ROMEO.\nBut soft, what light through yonder window br", 64, 1.0)
    m = data.models(64, exact=True)
    ids, _ = char_lm.encode("ROMEO.\nBut soft, what light through yonder window br")
    logits = char_lm.forward(
        m["params"], ids[None], n_heads=m["n_heads"], scales=m["scales"], qk_norm=m["qk_norm"]
    )[:, 0, -1].astype(np.float64)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    for i, v in enumerate(data.VARIANTS):
        mine = df[df["variant"] == v]
        for _, row in mine.iterrows():
            assert row["p"] == pytest.approx(p[i, char_lm.VOCAB.index(row["char"])], rel=1e-12)
        top = set(np.argsort(-p[i])[: data.TOP_CHARS])
        assert top <= {char_lm.VOCAB.index(c) for c in mine["char"]}
    assert list(df["rank"].drop_duplicates()) == sorted(df["rank"].unique())


# --- frames -------------------------------------------------------------------------------------
def test_frames_have_one_row_per_variant_and_point():
    assert len(frames.loss_against_rate(64, LABELS)) == 4 * 6
    over = frames.over_training(64, 0.3, "max_logit", 0, LABELS)
    assert len(over) == 4 * 11 and {"onehot", "lo", "hi"} <= set(over)
    hist = frames.logits_at_start(16, LABELS)
    for _, part in hist.groupby("series"):
        assert part["share"].sum() == pytest.approx(1.0)
        np.testing.assert_allclose(part["x"], (part["x0"] + part["x1"]) / 2)
    chars = frames.next_chars("ROMEO. ", 16, 0.8, LABELS, ("space", "new line"))
    assert set(chars["series"]) == {label for _, label in LABELS}
    assert frames.shown_char(" ", ("space", "new line")) == "space"
    assert frames.shown_char("\n", ("space", "new line")) == "new line"
    assert frames.shown_char("e", ("space", "new line")) == "e"
