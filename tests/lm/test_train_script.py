"""scripts/train_char_lm.py on its micro configuration: the fixture texts (public-domain
sonnets, a few KB), a one-layer d_model = 16 model, 6 steps per run.

Checked: the file it writes has the shipped format (the shapes the page and
tests/core/test_char_lm_data.py read), the split holds out whole works and never reads a
``*_gut_f.txt`` file, the losses are finite where a run did not diverge, the weights file
holds one float16 model per (variant, head size) in the documented layout, and a second
invocation resumes: it skips the finished runs and trains only a missing one. Training
results are compared only where they are not chaotic (6 steps at a small rate, same process
kind and CPU), within 1e-5.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.lm.conftest import FIXTURES, REPO_ROOT, SCRIPT, need_jax


def _run(tmp_path, *extra):
    cmd = [
        sys.executable,
        str(SCRIPT),
        "--config",
        "micro",
        "--texts",
        str(FIXTURES),
        "--work-dir",
        str(tmp_path / "work"),
        "--out",
        str(tmp_path / "lm.npz"),
        "--weights-out",
        str(tmp_path / "lm_w.npz"),
        *extra,
    ]
    done = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def micro(tmp_path_factory):
    need_jax()
    tmp = tmp_path_factory.mktemp("micro")
    out = _run(tmp)
    return tmp, out


def test_the_micro_sweep_writes_the_shipped_format(micro, train_script):
    tmp, out = micro
    cfg = train_script.CONFIGS["micro"]
    V, H, R, S = len(cfg.variants), len(cfg.head_sizes), len(cfg.lrs), len(cfg.seeds)
    E, L = cfg.steps // cfg.eval_every + 1, cfg.n_layers
    assert out.count("final_val=") == V * H * R * S
    with np.load(tmp / "lm.npz") as z:
        meta = json.loads(str(z["meta"]))
        for name in ("final_val_loss", "final_train_loss", "initial_val_loss", "diverged_step"):
            assert z[name].shape == (V, H, R, S), name
        for name in ("val_loss", "train_loss", "grad_norm"):
            assert z[name].shape == (V, H, R, S, E), name
        for name in ("max_logit", "entropy", "onehot_share"):
            assert z[name].shape == (V, H, R, S, E, L), name
        assert z["logit_hist"].shape == (V, H, S, L, z["logit_hist_edges"].size - 1)
        np.testing.assert_array_equal(z["eval_steps"], np.arange(E) * cfg.eval_every)
        assert z["done"].all()
        ok = z["diverged_step"] < 0
        assert ok.any()
        assert np.isfinite(z["final_val_loss"][ok]).all()
        assert np.isnan(z["final_val_loss"][~ok]).all()
        assert np.isfinite(z["val_loss"][ok]).all() and np.isfinite(z["max_logit"][ok]).all()
        # Entropy of a causal row lies in [0, ln T]; shares in [0, 1].
        ent = z["entropy"][ok]
        assert (ent >= 0).all() and (ent <= np.log(cfg.context) + 1e-6).all()
        share = z["onehot_share"][ok]
        assert ((share >= 0) & (share <= 1)).all()
        # The step-0 histogram counts every allowed logit of the probe rows.
        per_layer = cfg.probe_rows * (cfg.d_model // np.array(cfg.head_sizes))
        per_layer = per_layer * cfg.context * (cfg.context + 1) // 2
        np.testing.assert_array_equal(
            z["logit_hist"].sum(-1), np.broadcast_to(per_layer[None, :, None, None], (V, H, S, L))
        )
    assert meta["variants"] == list(cfg.variants)
    assert meta["lrs"] == list(cfg.lrs) and meta["seeds"] == list(cfg.seeds)
    assert not meta["partial"] and meta["runs_done"] == V * H * R * S
    names = [f["file"] for f in meta["files"]]
    assert names == ["sonnets_a_gut.txt", "sonnets_b_gut.txt"]  # never *_gut_f.txt
    split = {f["file"]: f["split"] for f in meta["files"]}
    assert split == {"sonnets_a_gut.txt": "train", "sonnets_b_gut.txt": "val"}
    sizes = {p.name: p.stat().st_size for p in FIXTURES.glob("*_gut.txt")}
    assert meta["train_chars"] == sizes["sonnets_a_gut.txt"]
    assert meta["val_chars"] == sizes["sonnets_b_gut.txt"]
    assert 0 < meta["unigram_val_loss"] < np.log(len(meta["vocab"]))
    assert len(meta["runs"]) == V * H * R * S
    for run in meta["runs"]:
        env = run["env"]
        assert env["threads"] == 1 and "intra_op_parallelism_threads=1" in env["xla_flags"]
        assert env["jax"] and env["jaxlib"] and run["wall_s"] > 0


def test_the_weights_file_has_the_documented_layout(micro, train_script):
    tmp, _ = micro
    cfg = train_script.CONFIGS["micro"]
    d, L, C, Vo = cfg.d_model, cfg.n_layers, cfg.context, len(train_script.VOCAB)
    shapes = {
        "wte": (Vo, d),
        "wpe": (C, d),
        "ln1_g": (L, d),
        "ln1_b": (L, d),
        "w_qkv": (L, d, 3 * d),
        "b_qkv": (L, 3 * d),
        "q_g": (L, d),
        "k_g": (L, d),
        "w_o": (L, d, d),
        "b_o": (L, d),
        "ln2_g": (L, d),
        "ln2_b": (L, d),
        "w_fc": (L, d, 4 * d),
        "b_fc": (L, 4 * d),
        "w_proj": (L, 4 * d, d),
        "b_proj": (L, d),
        "lnf_g": (d,),
        "lnf_b": (d,),
        "w_head": (d, Vo),
        "b_head": (Vo,),
    }
    with np.load(tmp / "lm_w.npz") as w, np.load(tmp / "lm.npz") as z:
        meta = json.loads(str(w["meta"]))
        models = meta["models"]
        assert {(m["variant"], m["d_h"]) for m in models} == {
            (v, h) for v in cfg.variants for h in cfg.head_sizes
        }
        for m in models:
            a = cfg.variants.index(m["variant"])
            b = cfg.head_sizes.index(m["d_h"])
            # The best run of its cell: the smallest finite final validation loss.
            assert m["final_val_loss"] == pytest.approx(np.nanmin(z["final_val_loss"][a, b]))
            for name, shape in shapes.items():
                x = w[f"{m['variant']}/{m['d_h']}/{name}"]
                assert x.dtype == np.float16 and x.shape == shape, name
        assert len(w.files) == 1 + len(models) * len(shapes)


def test_a_second_run_resumes(micro, train_script, tmp_path):
    tmp, _ = micro
    work = tmp / "work"
    with np.load(tmp / "lm.npz") as z:
        before = z["final_val_loss"].copy()
    # Nothing left to do: no run trains.
    assert "final_val=" not in _run(tmp)
    # One run lost: only it trains again, and it repeats (6 steps at rate 1e-2: not chaotic).
    name = "sqrt_dh4_lr0_s1"
    (work / f"{name}.npz").unlink()
    out = _run(tmp)
    assert out.count("final_val=") == 1 and name in out
    with np.load(tmp / "lm.npz") as z:
        np.testing.assert_allclose(z["final_val_loss"], before, rtol=0, atol=1e-5, equal_nan=True)


def test_an_interrupted_sweep_is_labelled_partial(micro, tmp_path):
    tmp, _ = micro
    part = tmp_path / "work"
    part.mkdir()
    finished = sorted((tmp / "work").glob("*.npz"))[:3]
    for p in finished:
        (part / p.name).write_bytes(p.read_bytes())
    cmd_tmp = tmp_path
    subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--config",
            "micro",
            "--texts",
            str(FIXTURES),
            "--work-dir",
            str(part),
            "--out",
            str(cmd_tmp / "p.npz"),
            "--weights-out",
            str(cmd_tmp / "p_w.npz"),
            "--assemble",
        ],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    with np.load(cmd_tmp / "p.npz") as z:
        meta = json.loads(str(z["meta"]))
        assert meta["partial"] and meta["runs_done"] == 3
        assert int(z["done"].sum()) == 3
        assert np.isnan(z["final_val_loss"][z["done"] == 0]).all()
