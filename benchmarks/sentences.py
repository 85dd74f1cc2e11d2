"""Texts for the benchmarks of "your own sentence" (real-models' text box).

A new text is 17 words and a full stop, each word one token of all-MiniLM-L6-v2's
vocabulary: 20 tokens with [CLS] and [SEP], the issue's "new sentence of 20 tokens"
(tests/benchmarks/test_sentences.py checks it with the tokenizer). A long text is 70 of
them: past the 64 tokens the model reads, the largest result a text gives.
"""

from __future__ import annotations

import random

#: Words the model's vocabulary holds whole (one token each).
WORDS = """the a one every my your our this that cat dog bird fish horse cow man woman child
teacher doctor farmer king queen sat ran saw found took gave made kept sold bought liked
chased helped watched met called on under near behind over in at with from into by red blue
green small big old new happy quiet warm cold dark bright house tree river road garden
school market table window door book letter ball car boat because and but when after before
while so then""".split()

#: A text already seen (the first shipped sentence, 13 tokens).
SEEN_TEXT = "The cat sat on the mat because it was warm."


def new_text(i: int, n_words: int = 17) -> str:
    """The i-th new text: ``n_words`` of :data:`WORDS` drawn with seed i, and a stop."""
    return " ".join(random.Random(i).choices(WORDS, k=n_words)).capitalize() + "."


def long_text(i: int) -> str:
    """The i-th text past the limit: 70 words (72 tokens with [CLS] and [SEP])."""
    return new_text(i, 69)
