"""The shipped language-model sweep (data/char_lm.npz, data/char_lm_weights.npz), by
invariants; written by scripts/train_char_lm.py.

Training at large rates amplifies the last bit of rounding, so nothing here compares a
trained value with a recomputed one. Checked: shapes against the grid, the grid itself
(half-decades), the held-out split (whole works, the 42 modern-spelling texts, no
First-Folio file), finite losses where a run did not diverge, the step-0 identity between
the variants (same initial weights: the first layer's logits differ by the scale factor alone), the
weights file's choice of runs, the size budget, and the conclusions reported from the sweep
(recomputed here with core.char_lm.lr_sensitivity).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from core import char_lm

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def sweep():
    with np.load(DATA / "char_lm.npz") as z:
        arrays = {k: z[k] for k in z.files if k != "meta"}
        meta = json.loads(str(z["meta"]))
    return arrays, meta


def test_shapes_follow_the_grid(sweep):
    z, meta = sweep
    cfg = meta["config"]
    V, H, R, S = (len(meta[k]) for k in ("variants", "head_sizes", "lrs", "seeds"))
    E = cfg["steps"] // cfg["eval_every"] + 1
    L = cfg["n_layers"]
    assert meta["variants"] == ["sqrt", "none", "mup", "qk_ln"]
    assert len(meta["head_sizes"]) >= 2 and len(meta["seeds"]) >= 2
    assert all(cfg["d_model"] % h == 0 for h in meta["head_sizes"])
    for name in ("final_val_loss", "final_train_loss", "initial_val_loss", "diverged_step", "done"):
        assert z[name].shape == (V, H, R, S), name
    for name in ("val_loss", "train_loss", "grad_norm"):
        assert z[name].shape == (V, H, R, S, E), name
    for name in ("max_logit", "entropy", "onehot_share"):
        assert z[name].shape == (V, H, R, S, E, L), name
    np.testing.assert_array_equal(z["eval_steps"], np.arange(E) * cfg["eval_every"])
    assert meta["runs_total"] == V * H * R * S
    assert meta["runs_done"] == int(z["done"].sum()) == len(meta["runs"])
    assert meta["partial"] == (meta["runs_done"] < meta["runs_total"])


def test_the_rates_are_half_decades(sweep):
    _, meta = sweep
    ratios = np.diff(np.log10(meta["lrs"]))
    np.testing.assert_allclose(ratios, 0.5, atol=0.03)  # 3e-3 / 1e-3 is 10^0.477


def test_whole_works_are_held_out(sweep):
    _, meta = sweep
    files = meta["files"]
    names = [f["file"] for f in files]
    assert len(names) == 42 == len(set(names))
    assert all(n.endswith("_gut.txt") and not n.endswith("_gut_f.txt") for n in names)
    held = sorted(f["file"] for f in files if f["split"] == "val")
    assert held == sorted(meta["held_out"]) and len(held) >= 2
    assert {f["split"] for f in files} == {"train", "val"}
    assert sum(f["chars"] for f in files if f["split"] == "train") == meta["train_chars"]
    assert sum(f["chars"] for f in files if f["split"] == "val") == meta["val_chars"]
    assert meta["train_chars"] + meta["val_chars"] == 5_057_198  # the 42 texts, in bytes
    assert all(f["dropped"] == 0 for f in files)  # all 84 characters are in the vocabulary
    assert 0.05 < meta["val_chars"] / (meta["train_chars"] + meta["val_chars"]) < 0.2
    assert meta["vocab"] == char_lm.VOCAB
    assert 3.2 < meta["unigram_val_loss"] < 3.5


def test_losses_are_finite_where_not_diverged(sweep):
    z, meta = sweep
    done = z["done"] == 1
    ok = done & (z["diverged_step"] < 0)
    bad = done & (z["diverged_step"] >= 0)
    assert np.isfinite(z["final_val_loss"][ok]).all()
    assert np.isfinite(z["val_loss"][ok]).all() and np.isfinite(z["max_logit"][ok]).all()
    assert np.isnan(z["final_val_loss"][bad]).all() and np.isnan(z["final_val_loss"][~done]).all()
    assert (z["final_val_loss"][ok] < z["initial_val_loss"][ok]).all()
    assert (z["diverged_step"][bad] <= meta["config"]["steps"]).all()
    np.testing.assert_allclose(
        z["initial_val_loss"][done], z["val_loss"][..., 0][done], rtol=0, atol=1e-12
    )
    # At step 0 the model is untrained: near log V = 4.43 nats (fan-in output layer, so
    # the logits have unit variance and the loss is ≈ log V + ½).
    assert (np.abs(z["initial_val_loss"][done] - (math.log(84) + 0.5)) < 0.3).all()
    C = meta["config"]["context"]
    ent = z["entropy"][ok]
    assert (ent >= 0).all() and (ent <= math.log(C)).all()
    share = z["onehot_share"][ok]
    assert (share >= 1 / C - 1e-9).all() and (share <= 1).all()  # row 0 is one-hot


def test_step_0_logits_differ_by_the_scale_alone(sweep):
    """Same seed, same initial weights: the first layer's logits scale by the factor exactly."""
    z, meta = sweep
    v = meta["variants"]
    done = z["done"][..., 0] == 1  # (V, H, R) at seed 0
    for b, d_h in enumerate(meta["head_sizes"]):
        for c in range(len(meta["lrs"])):
            if not (done[v.index("sqrt"), b, c] and done[v.index("none"), b, c]):
                continue
            base = z["max_logit"][v.index("sqrt"), b, c, :, 0, 0]
            np.testing.assert_allclose(
                z["max_logit"][v.index("none"), b, c, :, 0, 0], base * math.sqrt(d_h), rtol=1e-4
            )
            if done[v.index("mup"), b, c]:
                np.testing.assert_allclose(
                    z["max_logit"][v.index("mup"), b, c, :, 0, 0], base / math.sqrt(d_h), rtol=1e-4
                )


def test_the_runs_record_their_environment(sweep):
    _, meta = sweep
    for run in meta["runs"]:
        env = run["env"]
        assert env["threads"] == 1 and "intra_op_parallelism_threads=1" in env["xla_flags"]
        assert env["jax"] == "0.10.2" and env["jaxlib"] == "0.10.2"
        assert env["cpu_flags"] and run["wall_s"] > 0


def test_the_weights_are_each_cells_best_run(sweep):
    z, meta = sweep
    with np.load(DATA / "char_lm_weights.npz") as w:
        wmeta = json.loads(str(w["meta"]))
        keys = set(w.files)
        dtypes = {w[k].dtype for k in w.files if k != "meta"}
    assert dtypes == {np.dtype(np.float16)}
    for m in wmeta["models"]:
        a = meta["variants"].index(m["variant"])
        b = meta["head_sizes"].index(m["d_h"])
        cell = z["final_val_loss"][a, b]
        c, e = np.unravel_index(np.nanargmin(cell), cell.shape)
        assert (meta["lrs"][c], meta["seeds"][e]) == (m["lr"], m["seed"])
        assert m["final_val_loss"] == pytest.approx(cell[c, e], rel=1e-12)
        assert f"{m['variant']}/{m['d_h']}/w_qkv" in keys
    size = (DATA / "char_lm.npz").stat().st_size + (DATA / "char_lm_weights.npz").stat().st_size
    assert size <= 10 * 2**20


# --- the conclusions reported from the sweep, recomputed ------------------------------
def _cells(z, meta):
    """Per (variant, head): the seed-mean clipped final loss per rate and the sensitivity,
    over the seeds finished at every rate."""
    out = {}
    for a, v in enumerate(meta["variants"]):
        for b, h in enumerate(meta["head_sizes"]):
            seeds = (z["done"][a, b] == 1).all(axis=0)
            assert seeds.any(), (v, h)
            sens, clipped = char_lm.lr_sensitivity(
                z["final_val_loss"][a, b][:, seeds], z["initial_val_loss"][a, b][:, seeds]
            )
            out[v, h] = {"sens": sens, "loss": clipped, "best": int(np.argmin(clipped))}
    return out


def test_the_standard_model_learns_well_past_unigram(sweep):
    z, meta = sweep
    cells = _cells(z, meta)
    for h in meta["head_sizes"]:
        c = cells["sqrt", h]
        assert c["loss"][c["best"]] <= meta["unigram_val_loss"] - 1.0, h


def test_every_best_rate_lies_inside_the_grid(sweep):
    z, meta = sweep
    R = len(meta["lrs"])
    for key, c in _cells(z, meta).items():
        assert 0 < c["best"] < R - 1, key
        assert c["loss"][c["best"] - 1] > c["loss"][c["best"]] < c["loss"][c["best"] + 1], key


def test_without_the_scale_the_best_loss_is_worse_and_more_so_at_larger_heads(sweep):
    z, meta = sweep
    cells = _cells(z, meta)
    gaps = []
    for h in meta["head_sizes"]:
        none, sqrt = cells["none", h], cells["sqrt", h]
        gaps.append(none["loss"][none["best"]] - sqrt["loss"][sqrt["best"]])
    # The spread over seeds at these settings is ~0.02 nats (final losses of two seeds).
    assert min(gaps) > 0.05 and gaps[-1] > gaps[0] + 0.05, gaps


def test_at_the_top_rate_only_qk_layernorm_keeps_its_logits_small(sweep):
    z, meta = sweep
    v = meta["variants"]
    top = len(meta["lrs"]) - 1
    for b, _h in enumerate(meta["head_sizes"]):
        done = z["done"][:, b, top] == 1  # (V, S)
        loss = np.nanmean(np.where(done, z["final_val_loss"][:, b, top], np.nan), axis=1)
        assert np.argmin(loss) == v.index("qk_ln"), loss
        last = z["max_logit"][:, b, top, :, -1, 0]  # first layer, end of training, (V, S)
        assert (last[v.index("qk_ln")][done[v.index("qk_ln")]] < 100).all()
        for other in ("sqrt", "none", "mup"):
            assert (last[v.index(other)][done[v.index(other)]] > 1000).all(), other


def test_unscaled_single_head_attention_is_nearly_one_hot_at_its_best_rate(sweep):
    z, meta = sweep
    v = meta["variants"]
    cells = _cells(z, meta)
    b, h = len(meta["head_sizes"]) - 1, meta["head_sizes"][-1]
    for name, lo, hi in (("none", 0.5, 1.0), ("sqrt", 0.0, 0.05)):
        c = cells[name, h]["best"]
        share = z["onehot_share"][v.index(name), b, c, :, -1, 0]  # first layer, at the end
        share = share[z["done"][v.index(name), b, c] == 1]
        assert ((share >= lo) & (share <= hi)).all(), (name, share)
