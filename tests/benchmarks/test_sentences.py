"""The benchmark texts have the sizes they claim, by the model's own tokenizer."""

from __future__ import annotations

import pytest

from benchmarks import sentences
from ui.real_models import model as mm


@pytest.fixture(scope="module")
def tokenizer():
    folder = mm.package_folder()
    if folder is None:
        pytest.skip("the weights package is not installed (requirements-weights.txt)")
    return mm.load_from_folder(folder)[2]


def test_every_word_is_one_token(tokenizer):
    for word in sentences.WORDS:
        assert mm.tokenize(word, tokenizer).tokens == ("[CLS]", word, "[SEP]"), word


def test_new_texts_have_20_tokens_and_differ(tokenizer):
    texts = [sentences.new_text(i) for i in range(200)]
    assert len(set(texts)) == len(texts)
    assert {len(mm.tokenize(text, tokenizer).tokens) for text in texts} == {20}
    assert len(mm.tokenize(sentences.SEEN_TEXT, tokenizer).tokens) == 13


def test_long_texts_are_cut_at_the_limit(tokenizer):
    tokens = mm.tokenize(sentences.long_text(3), tokenizer)
    assert tokens.truncated and tokens.n_text_tokens == 70
    assert len(tokens.tokens) == mm.MAX_TOKENS
