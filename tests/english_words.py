"""English words in a text meant to be Chinese: the check behind the Chinese-page tests.

A Chinese page keeps names, symbols and code as written (MiniLM, Adam, QK-norm, d_k) and
translates everything else. :func:`english_words` returns the words of a text that are
neither: English prose left untranslated.

What is not English prose, in the order it is removed or recognised:

1. **Not words at all**: URLs, file paths and model ids (``data/NOTICE``,
   ``sentence-transformers/all-MiniLM-L6-v2``), query strings (``?present=1``), inline
   code in backticks, math in ``$…$``, Streamlit icons (``:material/report:``) and keys
   to press (``Ctrl+Enter``).
   A single word in quotation marks is named, not used (the token “it”).
2. **Citations**: the title of a cited work, in italics with no Chinese inside
   (``*Attention Is All You Need*``), and authors, a capitalised name followed by “等” or
   by a year (``Vaswani 等，2017``, ``Chiang 与 Cholak，2022``).
3. **Symbols**: a single letter (q, k, d, n); a token with a digit or an underscore (d_k,
   n_keys, float16, GPT-2, Qwen3); a word written straight before “(”, a sub- or
   superscript (``diag(p)``, ``Var(q·k)``, ``ppᵀ``, ``maxⱼ``) or “ =” (``out = …``): a
   function or a named quantity in a formula.
4. **Names and abbreviations**: a word with a capital letter after its first letter
   (BERT, MiniLM, LayerNorm, QK-norm, arXiv, CSV, SGD).
5. **The reviewed terms** in :data:`TERMS`: the few words a Chinese technical writer
   keeps in Latin letters, each with the reason.

Whatever is left is an English word; the tests fail on it.
"""

from __future__ import annotations

import re

#: Words a Chinese text may keep as they are, and why. Keep this list short: a word goes
#: here only if Chinese technical writing about attention keeps it in Latin letters.
TERMS: dict[str, str] = {
    # the terms of the field, kept untranslated in Chinese papers and courses
    "softmax": "the function's name; Chinese texts write softmax",
    "logit": "the standard term (logits: the scores fed to softmax); kept in Chinese texts",
    "logits": "plural of logit, as used in Chinese texts too",
    "one-hot": "the standard term for a vector with one 1 (独热 is rarely used)",
    "nat": "unit of entropy (natural logarithm), written like a unit symbol",
    "nats": "plural of nat",
    "fan-in": "the initialisation's name (fan-in 初始化), kept in Latin letters in Chinese texts",
    # functions inside formulas, written as in mathematics
    "ln": "natural logarithm in a formula (ln n_keys)",
    "log": "logarithm in a formula or axis (log n, log₂)",
    "exp": "exponential in a formula",
    "max": "maximum in a formula (max p, max ε)",
    "tanh": "hyperbolic tangent in a formula (50·tanh(z/50))",
    # names of people, methods and models that are ordinary capitalised words
    "Transformer": "the model's name (the Transformer of Vaswani et al.)",
    "Adam": "the optimizer's name (Kingma & Ba)",
    "Rademacher": "the distribution's name (a person's name)",
    "Frobenius": "the norm's name (a person's name)",
    "Gemma": "a model family in the field guide",
    "Llama": "a model family in the field guide",
    "Scout": "a Llama 4 model's name",
    "Maverick": "a Llama 4 model's name",
    "Grok": "a model's name (Grok-1)",
}

_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_SUBSUP = "\u00b2\u00b3\u00b9\u1d40\u2070-\u209f\u1d62-\u1d6a\u2c7c"

#: Pieces of text that are not prose (rule 1), removed first.
_NOT_WORDS = re.compile(
    r"https?://\S+"  # URLs
    r"|`[^`]*`"  # inline code
    r"|\$\$[^$]*\$\$"  # display math
    r"|\$[^$]*\$"  # math
    r"|:material/[a-z_]+:"  # Streamlit icons
    r"|[?&][A-Za-z_]+=[^\s&，。、；）)]*"  # query strings
    r"|\b[\w.+-]+(?:/[\w.+-]+)+"  # paths, model ids, hosts with a path
    r"|\b[\w-]+\.(?:com|org|co|io|py|json|npz|toml|txt|md)\b"  # hosts, file names
    r"|(?:\b\w+|⌘)(?:\+\w+)+"  # keys to press: Ctrl+Enter, ⌘+Enter
    r"|[“\"‘'][A-Za-z]+[”\"’']"  # a word named in quotation marks: the token “it”
)
#: Titles of cited works (italics without Chinese) and authors of citations (rule 2).
_CITATIONS = re.compile(
    rf"\*[^*{_CJK}\n]+\*"  # *Title Of A Work*
    rf"|\b[A-Z][a-z]+(?:\s*(?:&|与|和)\s*[A-Z][a-z]+)?(?=\s*(?:等|[（(，,]?\s*(?:19|20)\d\d))"
)
_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[-'][A-Za-z0-9_]+)*")


def english_words(text: str) -> list[str]:
    """The English words of ``text`` that are not names, symbols, code or reviewed terms
    (see the module docstring), in order, with repeats."""
    text = _CITATIONS.sub(" ", _NOT_WORDS.sub(" ", text))
    found = []
    for match in _TOKEN.finditer(text):
        word, after = match.group(), text[match.end() : match.end() + 2]
        if not re.search("[A-Za-z]", word) or len(word) == 1:
            continue  # a number or a one-letter symbol
        if re.search(r"[0-9_]", word):
            continue  # an identifier: d_k, float16, GPT-2
        if re.search("[A-Z]", word[1:]):
            continue  # a name or an abbreviation: BERT, MiniLM, arXiv, QK-norm
        if after[:1] == "(" or (after[:1] and after[0] in _SUBSUP) or after == " =":
            continue  # a function or a named quantity in a formula
        if word in TERMS:
            continue
        found.append(word)
    return found
