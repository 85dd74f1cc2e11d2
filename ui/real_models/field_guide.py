"""What well-known models put in front of softmax(q·k): the field guide's rows.

The attention logit is z = c · (q·k) (plus masks and biases); d_k is the length of the
vectors actually dotted (one head's query/key width). Every row was checked against the
primary source linked in it (the reference code, a shipped config or the paper); values
the sources leave open are not stated.

A row's cells are in the catalogs (``real_models.guide_<id>_model``, ``_d_k``,
``_factor``, ``_extras``), in both languages: the notes are translated, while model
names, formulas and the identifiers of the code (``query_pre_attn_scalar``) stay as in
the sources.
"""

from __future__ import annotations

from typing import NamedTuple

#: The columns of a row whose text is in the catalogs, in the order shown.
COLUMNS = ("model", "d_k", "factor", "extras")


class Row(NamedTuple):
    id: str  # its cells are the catalog keys real_models.guide_<id>_<column>
    source: str  # URL of the primary source


ROWS: tuple[Row, ...] = (
    Row(
        "transformer",
        "https://github.com/tensorflow/tensor2tensor/blob/master/tensor2tensor/layers/common_attention.py",
    ),
    Row(
        "gpt2",
        "https://github.com/openai/gpt-2/blob/master/src/model.py",
    ),
    Row(
        "bert",
        "https://github.com/google-research/bert/blob/master/modeling.py",
    ),
    Row(
        "minilm",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/blob/main/config.json",
    ),
    Row(
        "t5",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/models/t5/modeling_t5.py",
    ),
    Row(
        "t5_3b",
        "https://huggingface.co/google-t5/t5-3b/blob/main/config.json",
    ),
    Row(
        "gemma2",
        "https://github.com/google-deepmind/gemma/blob/main/gemma/gm/nn/_gemma.py",
    ),
    Row(
        "gemma2_27b",
        "https://github.com/google/gemma_pytorch/blob/main/gemma/config.py",
    ),
    Row(
        "gemma3",
        "https://github.com/google-deepmind/gemma/blob/main/gemma/gm/nn/_gemma.py",
    ),
    Row(
        "gemma3_27b",
        "https://github.com/google/gemma_pytorch/blob/main/gemma/config.py",
    ),
    Row(
        "deepseek_v2",
        "https://huggingface.co/deepseek-ai/DeepSeek-V2-Chat/blob/main/config.json",
    ),
    Row(
        "deepseek_v3",
        "https://github.com/deepseek-ai/DeepSeek-V3/blob/main/inference/model.py",
    ),
    Row(
        "olmo2",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/models/olmo2/modular_olmo2.py",
    ),
    Row(
        "qwen3",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen3/modular_qwen3.py",
    ),
    Row(
        "vit22b",
        "https://arxiv.org/abs/2302.05442",
    ),
    Row(
        "llama4",
        "https://github.com/meta-llama/llama-models/blob/main/models/llama4/model.py",
    ),
    Row(
        "grok1",
        "https://github.com/xai-org/grok-1/blob/main/model.py",
    ),
    Row(
        "mup",
        "https://github.com/microsoft/mup",
    ),
    Row(
        "log_length",
        "https://arxiv.org/abs/2202.12172",
    ),
    Row(
        "ssmax",
        "https://arxiv.org/abs/2501.19399",
    ),
)
