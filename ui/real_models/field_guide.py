"""What well-known models put in front of softmax(q·k): the field guide's rows.

The attention logit is z = c · (q·k) (plus masks and biases); d_k is the length of the
vectors actually dotted (one head's query/key width). Every row was checked against the
primary source linked in it (the reference code, a shipped config or the paper); values
the sources leave open are not stated. Model names, formulas and the short notes stay in
English in both languages (they are the terms of the code and the papers); only the
column headers are translated.
"""

from __future__ import annotations

from typing import NamedTuple


class Row(NamedTuple):
    model: str
    d_k: str
    factor: str  # c, and how it is computed
    extras: str  # what else acts on the logits
    source: str  # URL of the primary source


ROWS: tuple[Row, ...] = (
    Row(
        "Transformer (Vaswani et al. 2017), base and big",
        "64",
        "1/√64 = 0.125",
        "—",
        "https://github.com/tensorflow/tensor2tensor/blob/master/tensor2tensor/layers/common_attention.py",
    ),
    Row(
        "GPT-2 (all sizes)",
        "64",
        "1/√64 = 0.125",
        "optional in HF, off by default: scale_attn_by_inverse_layer_idx (extra ÷(layer+1))",
        "https://github.com/openai/gpt-2/blob/master/src/model.py",
    ),
    Row(
        "BERT-base",
        "64",
        "1/√64 = 0.125",
        "—",
        "https://github.com/google-research/bert/blob/master/modeling.py",
    ),
    Row(
        "all-MiniLM-L6-v2 (this page)",
        "32 (384/12)",
        "1/√32 ≈ 0.1768",
        "BERT architecture, 6 layers × 12 heads",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/blob/main/config.json",
    ),
    Row(
        "T5 (all sizes)",
        "64 (d_kv)",
        "1 — no division",
        "1/√d_kv folded into the init: W_q std (d_model·d_kv)^−½, W_k std d_model^−½; "
        "relative-position bias added to the logits",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/models/t5/modeling_t5.py",
    ),
    Row(
        "Gemma 2 2B, 9B",
        "256",
        "256^−½ = 0.0625 (query_pre_attn_scalar = 256)",
        "soft-cap z → 50·tanh(z/50); final logits capped at 30",
        "https://github.com/google-deepmind/gemma/blob/main/gemma/gm/nn/_gemma.py",
    ),
    Row(
        "Gemma 2 27B",
        "128",
        "144^−½ ≈ 0.0833 (query_pre_attn_scalar = 144 = 4608/32, not head_dim)",
        "soft-cap 50; final logits capped at 30",
        "https://github.com/google/gemma_pytorch/blob/main/gemma/config.py",
    ),
    Row(
        "Gemma 3 270M–12B",
        "256",
        "256^−½ = 0.0625",
        "QK-norm (RMSNorm with learned scale on q and k, before RoPE); no soft-caps",
        "https://github.com/google-deepmind/gemma/blob/main/gemma/gm/nn/_gemma.py",
    ),
    Row(
        "Gemma 3 27B",
        "128",
        "168^−½ ≈ 0.0772 (168 = 5376/32)",
        "QK-norm; no soft-caps",
        "https://github.com/google/gemma_pytorch/blob/main/gemma/config.py",
    ),
    Row(
        "DeepSeek-V2 (MLA)",
        "192 (128 + 64 RoPE)",
        "192^−½ × mscale² ≈ 0.1147, mscale = 0.1·0.707·ln 40 + 1",
        "YaRN context extension, factor 40",
        "https://huggingface.co/deepseek-ai/DeepSeek-V2-Chat/blob/main/config.json",
    ),
    Row(
        "DeepSeek-V3 (MLA)",
        "192 (128 + 64 RoPE)",
        "192^−½ × (0.1·ln 40 + 1)² ≈ 0.1352",
        "YaRN, factor 40; the mscale² applies once max_seq_len > 4096",
        "https://github.com/deepseek-ai/DeepSeek-V3/blob/main/inference/model.py",
    ),
    Row(
        "OLMo 2",
        "128",
        "1/√128 ≈ 0.0884 (kept)",
        "QK-norm: RMSNorm over the whole projected q and k (all heads), before RoPE",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/models/olmo2/modular_olmo2.py",
    ),
    Row(
        "Qwen3",
        "128",
        "1/√128 ≈ 0.0884 (kept)",
        "QK-norm: RMSNorm per head (over head_dim), before RoPE",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen3/modular_qwen3.py",
    ),
    Row(
        "ViT-22B",
        "—",
        "1/√d_k (kept)",
        "LayerNorm on q and k: fixed diverging training with near one-hot attention",
        "https://arxiv.org/abs/2302.05442",
    ),
    Row(
        "Llama 4 (Scout, Maverick)",
        "128",
        "1/√128; on NoPE layers (every 4th) q × (1 + 0.1·ln(1 + ⌊t/8192⌋)), t = position + 1",
        "optional weightless QK-norm after RoPE on RoPE layers (use_qk_norm)",
        "https://github.com/meta-llama/llama-models/blob/main/models/llama4/model.py",
    ),
    Row(
        "Grok-1",
        "128",
        "attn_output_multiplier = 0.08839 = 1/√128",
        "tanh cap z → 30·tanh(z/30); softmax in fp32",
        "https://github.com/xai-org/grok-1/blob/main/model.py",
    ),
    Row(
        "μP (Tensor Programs V)",
        "any",
        "1/d_k instead of 1/√d_k",
        "zero-init of W_q recommended; README writes q·kᵀ·8/d (= 1/√d at d = 64)",
        "https://github.com/microsoft/mup",
    ),
    Row(
        "Log-length scaling (Chiang & Cholak 2022)",
        "—",
        "logits × log n (n = input length)",
        "helps attention to one position survive longer inputs",
        "https://arxiv.org/abs/2202.12172",
    ),
    Row(
        "Scalable-Softmax, SSMax (Nakanishi 2025)",
        "—",
        "logits × s·log n, s learned per layer/head",
        "counters attention fading (largest weight → 0 as n grows); cited by Llama 4",
        "https://arxiv.org/abs/2501.19399",
    ),
)
