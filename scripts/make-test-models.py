#!/usr/bin/env python3
"""Writes two tiny GGUF models with the memory layouts whose caches cannot simply be cut back:

- tiny-gemma3-swa.gguf: Gemma 3's architecture with a sliding window (5 of every 6 layers see
  only the last `SWA_WINDOW` tokens), shaped like Gemma 3 1B's cache: 26 layers, one KV head of
  256 dimensions, so its KV memory per token is that model's.
- tiny-lfm2-hybrid.gguf: LFM2's hybrid architecture, short-convolution (recurrent) layers
  between attention layers, whose state holds only the latest position.
- tiny-llama.gguf: SmolLM2's own (llama) architecture, four small layers: an ordinary cache at a
  fraction of the work, for the GPU tests on lavapipe (which reads SmolLM2 at ~2 tokens a second).
- tiny-harmony.gguf: tiny-llama with gpt-oss's special tokens (`<|channel|>`, `<|message|>`,
  `<|start|>`, `<|end|>`, `<|return|>`, `<|call|>`, `<|constrain|>`: seven of SmolLM2's unused
  control tokens renamed) and a chat template in the shape of gpt-oss's
  (src-tauri/crates/hearth-engine/tests/data/harmony.jinja): llama.cpp treats it as it treats
  gpt-oss's vocabulary, so the engine reads its channels as it would gpt-oss's.
- tiny-llama3.gguf: the same with Llama 3.x's special tokens (`<|start_header_id|>`,
  `<|end_header_id|>`, `<|eot_id|>`, `<|eom_id|>`, `<|python_tag|>`) and a chat template in the
  shape of Llama 3.1's (src-tauri/crates/hearth-engine/tests/data/llama3.jinja): its calls are
  Llama 3.x's bare JSON.
- tiny-mistral.gguf: the same with Mistral's control tokens (`[INST]`, `[TOOL_CALLS]`, `[ARGS]`…:
  ten of SmolLM2's, ids 3–12) and a chat template in the shape of Mistral Small 3.2's
  (src-tauri/crates/hearth-engine/tests/data/mistral.jinja): its calls are `[TOOL_CALLS]NAME[ARGS]{…}`.
- tiny-gpt-oss.gguf: tiny-harmony with gpt-oss's real chat template, and tiny-qwen3.gguf:
  tiny-llama with Qwen3's tokens of its own (`<think>`, `</think>`, `<tool_call>`…, ids 3–8,
  user-defined as Qwen3's are) and its real template (`enable_thinking`, past reasoning dropped,
  Hermes tool calls); tiny-mistral-nemo.gguf: tiny-mistral with Mistral Nemo's real template (a
  turn's calls as `[TOOL_CALLS][{…, "id": "…"}]`); tiny-command-r7b.gguf: tiny-llama with Command
  R7B's control tokens (`<|START_OF_TURN_TOKEN|>`…`<|END_TOOL_RESULT|>`, ids 3–15, the end of a
  turn its end-of-sequence token as Command R7B's is) and its real template (a plan between
  `<|START_THINKING|>` and `<|END_THINKING|>`, calls as a JSON list between `<|START_ACTION|>` and
  `<|END_ACTION|>`). The templates are read from the llama.cpp of the pinned
  llama-cpp-python sdist (`models/templates/`, as its tests keep them; the models' own licence,
  Apache-2.0, with their source): they are not copied into this repository.
- vision/mmproj-hearth-test.gguf: a LLaVA-1.5 projector (llama.cpp's `mlp`: a CLIP ViT, then two
  linear layers) whose output is SmolLM2's embedding width, so SmolLM2 beside it reads images
  (`vision/` links the model beside its projector, as a vision model's repository holds them);
  vision/mismatched/mmproj-tiny.gguf: the same projector for a 64-wide model, which SmolLM2
  must refuse. 32×32 pixels in 8×8 patches: an image is 16 tokens.
- vision-mrope/tiny-qwen2vl.gguf beside vision-mrope/mmproj-tiny-qwen2vl.gguf: tiny-llama's shape
  in Qwen2-VL's text architecture (M-RoPE: an image token's position is its time, row and column)
  with Qwen2's q/k/v biases, and a Qwen2-VL projector (`qwen2vl_merger`: a ViT of 14×14 patches
  under 2D rotary positions, each 2×2 square of patches merged into one of the model's tokens).
  llama.cpp scales an image to at least 8 tokens (Qwen2-VL's floor): 32×32 pixels become 84×84,
  9 tokens (3×3) that take 3 positions (an image takes as many as its longer side has tokens).

The weights are random (seeded): the replies are nonsense but deterministic, which is all the
cache tests need — llama.cpp builds the real graphs and real caches for them. The tokenizer and
chat template are SmolLM2's, copied from the default model, so the app renders and tokenizes
chats exactly as it does for it. No such model can be fetched here (Hugging Face is out of reach).

    make-test-models.py SMOLLM2.gguf OUT_DIR SDIST [WINDOW]   # WINDOW: Gemma 3 1B's is 512 (benchmarks)

SDIST: scripts/build-llama-server.sh --sdist (the real templates' source).
"""
import sys
import tarfile
from pathlib import Path

import gguf
import numpy as np

SWA_WINDOW = 64  # Gemma 3 uses 512 (1B) or 1,024; small here so short test chats leave it.
# Small embeddings, so that what the layers read from the context outweighs the token itself in
# the residual stream: a reply then depends on every cached cell (a wrong cache shows).
EMBEDDING_SCALE = 0.1
VERSION = 9
# SmolLM2's unused control tokens (ids 3–9: `<repo_name>`…`<issue_comment>`) renamed for
# tiny-harmony.gguf.
HARMONY_TOKENS = ["<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>", "<|constrain|>"]
TEMPLATES = Path(__file__).resolve().parent.parent / "src-tauri/crates/hearth-engine/tests/data"
HARMONY_TEMPLATE = TEMPLATES / "harmony.jinja"
# The same ids renamed for tiny-llama3.gguf.
LLAMA3_TOKENS = ["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"]
LLAMA3_TEMPLATE = TEMPLATES / "llama3.jinja"
# And for tiny-functionary.gguf (Llama 3.1's tokens).
FUNCTIONARY_TEMPLATE = TEMPLATES / "functionary.jinja"
# Ids 3–12 renamed for tiny-mistral.gguf.
MISTRAL_TOKENS = ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                  "[TOOL_CALLS]", "[ARGS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]"]
MISTRAL_TEMPLATE = TEMPLATES / "mistral.jinja"
# Ids 3–13 renamed for tiny-deepseek.gguf and tiny-deepseek-r1.gguf.
DEEPSEEK_TOKENS = ["<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
                   "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>",
                   "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"]
DEEPSEEK_TEMPLATE = TEMPLATES / "deepseek.jinja"
DEEPSEEK_R1_TEMPLATE = TEMPLATES / "deepseek-r1.jinja"
# Ids 3–8 renamed for tiny-qwen3.gguf, as Qwen3 has them: tokens of the text (user-defined), not
# control tokens.
QWEN3_TOKENS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
# Real templates, by their file name in llama.cpp's models/templates/.
GPT_OSS_TEMPLATE = "openai-gpt-oss-120b.jinja"
QWEN3_TEMPLATE = "Qwen-Qwen3-0.6B.jinja"
NEMO_TEMPLATE = "mistralai-Mistral-Nemo-Instruct-2407.jinja"
COMMAND_R7B_TEMPLATE = "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja"
# Ids 3–15 renamed for tiny-command-r7b.gguf; the first ends a turn (its end-of-sequence token).
COMMAND_R7B_TOKENS = ["<|END_OF_TURN_TOKEN|>", "<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>",
                      "<|SYSTEM_TOKEN|>", "<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>",
                      "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TOOL_RESULT|>", "<|END_TOOL_RESULT|>"]
# tiny-llama.gguf's width, which tiny-qwen2vl.gguf shares and its projector writes.
TINY_EMBD = 64
# Its M-RoPE sections (time, row, column, none) of a head's 8 rotary pairs: Qwen2-VL's
# [16, 24, 24] of 64, scaled down.
QWEN2VL_ROPE_SECTIONS = [2, 3, 3, 0]
# Qwen2-VL's image normalisation (OpenAI CLIP's).
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


def real_templates(sdist: Path, names) -> dict:
    """The chat templates `names` from llama.cpp's models/templates/ in the sdist."""
    found = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if parts[-2:-1] == ["templates"] and parts[-3:-2] == ["models"] and parts[-1] in names:
                found[parts[-1]] = tar.extractfile(member).read().decode("utf-8")
    missing = set(names) - set(found)
    if missing:
        sys.exit(f"{sdist} holds no {', '.join(sorted(missing))} in llama.cpp's models/templates/")
    return found


def copy_tokenizer(reader: gguf.GGUFReader, writer: gguf.GGUFWriter, renamed=None, template=None, renamed_type=None,
                   eos=None) -> int:
    """Copies every tokenizer.* field (`renamed`: token id → new text; `template`: the chat
    template instead of the source's; `renamed_type`: the renamed tokens' type, else control;
    `eos`: the end-of-sequence token's id instead of the source's); returns the vocabulary's size."""
    n_vocab = 0
    for name, field in reader.fields.items():
        if not name.startswith("tokenizer."):
            continue
        kind = field.types[0]
        if name == "tokenizer.chat_template" and template is not None:
            writer.add_string(name, template)
        elif name == "tokenizer.ggml.eos_token_id" and eos is not None:
            writer.add_uint32(name, eos)
        elif kind == gguf.GGUFValueType.ARRAY:
            values = [field.contents(i) for i in range(len(field.data))]
            if name == "tokenizer.ggml.tokens":
                for id, text in (renamed or {}).items():
                    values[id] = text
            if name == "tokenizer.ggml.token_type" and renamed_type is not None:
                for id in renamed or {}:
                    values[id] = int(renamed_type)
            writer.add_array(name, values)
            if name == "tokenizer.ggml.tokens":
                n_vocab = len(values)
        else:
            writer.add_key_value(name, field.contents(), kind)
    return n_vocab


def tensor(rng, *shape, scale=None):
    """A random weight of numpy shape `shape` (GGUF's dims reversed), F16."""
    fan_in = shape[-1]
    return (rng.standard_normal(shape) * (scale or fan_in ** -0.5)).astype(np.float16)


def ones(n):
    return np.ones(n, dtype=np.float32)


def common(writer, arch, n_layer, n_embd, n_ff, n_head, n_ctx=8192):
    writer.add_name(f"hearth-test-{arch}")
    writer.add_context_length(n_ctx)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(10000.0)
    writer.add_uint32("hearth.test_model_version", VERSION)


def attention(writer, rng, b, n_embd, q_dim, kv_dim):
    """A layer's attention projections, in the order every model here draws them."""
    writer.add_tensor(b + "attn_q.weight", tensor(rng, q_dim, n_embd))
    writer.add_tensor(b + "attn_k.weight", tensor(rng, kv_dim, n_embd))
    writer.add_tensor(b + "attn_v.weight", tensor(rng, kv_dim, n_embd))
    writer.add_tensor(b + "attn_output.weight", tensor(rng, n_embd, q_dim))


def feed_forward(writer, rng, b, n_embd, n_ff):
    """A layer's normed gated feed-forward block."""
    writer.add_tensor(b + "ffn_norm.weight", ones(n_embd))
    writer.add_tensor(b + "ffn_gate.weight", tensor(rng, n_ff, n_embd))
    writer.add_tensor(b + "ffn_up.weight", tensor(rng, n_ff, n_embd))
    writer.add_tensor(b + "ffn_down.weight", tensor(rng, n_embd, n_ff))


def gemma3(reader, path, rng):
    arch = "gemma3"
    n_layer, n_embd, n_ff, n_head, n_head_kv, head_dim = 26, 64, 128, 1, 1, 256
    writer = gguf.GGUFWriter(str(path), arch)
    common(writer, arch, n_layer, n_embd, n_ff, n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_sliding_window(SWA_WINDOW)
    n_vocab = copy_tokenizer(reader, writer)
    writer.add_tensor("token_embd.weight", tensor(rng, n_vocab, n_embd, scale=EMBEDDING_SCALE))
    writer.add_tensor("output_norm.weight", ones(n_embd))
    for i in range(n_layer):
        b = f"blk.{i}."
        writer.add_tensor(b + "attn_norm.weight", ones(n_embd))
        attention(writer, rng, b, n_embd, n_head * head_dim, n_head_kv * head_dim)
        writer.add_tensor(b + "post_attention_norm.weight", ones(n_embd))
        writer.add_tensor(b + "attn_q_norm.weight", ones(head_dim))
        writer.add_tensor(b + "attn_k_norm.weight", ones(head_dim))
        feed_forward(writer, rng, b, n_embd, n_ff)
        writer.add_tensor(b + "post_ffw_norm.weight", ones(n_embd))
    finish(writer)


def lfm2(reader, path, rng):
    arch = "lfm2"
    # LFM2-350M's pattern, shortened: convolution layers with an attention layer every third.
    kv_heads = [0, 0, 2, 0, 0, 2, 0, 0, 2]
    n_layer, n_embd, n_ff, n_head, l_cache = len(kv_heads), 64, 128, 4, 3
    head_dim = n_embd // n_head
    writer = gguf.GGUFWriter(str(path), arch)
    common(writer, arch, n_layer, n_embd, n_ff, n_head)
    writer.add_head_count_kv(kv_heads)
    writer.add_shortconv_l_cache(l_cache)
    n_vocab = copy_tokenizer(reader, writer)
    writer.add_tensor("token_embd.weight", tensor(rng, n_vocab, n_embd, scale=EMBEDDING_SCALE))
    writer.add_tensor("token_embd_norm.weight", ones(n_embd))
    for i, n_kv in enumerate(kv_heads):
        b = f"blk.{i}."
        writer.add_tensor(b + "attn_norm.weight", ones(n_embd))
        if n_kv:
            attention(writer, rng, b, n_embd, n_embd, n_kv * head_dim)
            writer.add_tensor(b + "attn_q_norm.weight", ones(head_dim))
            writer.add_tensor(b + "attn_k_norm.weight", ones(head_dim))
        else:
            writer.add_tensor(b + "shortconv.conv.weight", tensor(rng, n_embd, l_cache).astype(np.float32))
            writer.add_tensor(b + "shortconv.in_proj.weight", tensor(rng, 3 * n_embd, n_embd))
            writer.add_tensor(b + "shortconv.out_proj.weight", tensor(rng, n_embd, n_embd))
        feed_forward(writer, rng, b, n_embd, n_ff)
    finish(writer)


def llama(reader, path, rng, renamed=None, template=None, renamed_type=None, eos=None, arch="llama", rope_sections=None):
    """`rope_sections`: M-RoPE's (Qwen2-VL's architecture, whose q, k and v have biases: zero)."""
    n_layer, n_embd, n_ff, n_head, n_head_kv = 4, TINY_EMBD, 128, 4, 2
    head_dim = n_embd // n_head
    kv_dim = n_head_kv * head_dim
    writer = gguf.GGUFWriter(str(path), arch)
    common(writer, arch, n_layer, n_embd, n_ff, n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_rope_dimension_count(head_dim)
    if rope_sections:
        writer.add_rope_dimension_sections(rope_sections)
    n_vocab = copy_tokenizer(reader, writer, renamed, template, renamed_type, eos)
    # The output layer is the embeddings' (tied, as SmolLM2's and Qwen2-VL 2B's).
    writer.add_tensor("token_embd.weight", tensor(rng, n_vocab, n_embd, scale=EMBEDDING_SCALE))
    writer.add_tensor("output_norm.weight", ones(n_embd))
    for i in range(n_layer):
        b = f"blk.{i}."
        writer.add_tensor(b + "attn_norm.weight", ones(n_embd))
        attention(writer, rng, b, n_embd, n_embd, kv_dim)
        if rope_sections:
            for name, n in (("attn_q", n_embd), ("attn_k", kv_dim), ("attn_v", kv_dim)):
                writer.add_tensor(b + name + ".bias", np.zeros(n, dtype=np.float32))
        feed_forward(writer, rng, b, n_embd, n_ff)
    finish(writer)


def qwen2vl(reader, path, rng):
    """tiny-llama's shape in Qwen2-VL's text architecture: M-RoPE, and biases on q, k and v."""
    llama(reader, path, rng, arch="qwen2vl", rope_sections=QWEN2VL_ROPE_SECTIONS)


def renamed_llama(tokens, template, renamed_type=None, eos=None):
    """tiny-llama with SmolLM2's unused control tokens renamed to `tokens` (of `renamed_type`, else
    control), and `template` (a path, or the template's text); `eos`: one of `tokens` that ends a
    sequence (else SmolLM2's)."""
    source = template.read_text(encoding="utf-8") if isinstance(template, Path) else template
    def build(reader, path, rng):
        eos_id = None if eos is None else 3 + tokens.index(eos)
        llama(reader, path, rng, {3 + i: text for i, text in enumerate(tokens)}, source, renamed_type, eos_id)
    return build


def vision_block(writer, rng, b, n_embd, n_ff):
    """A ViT layer: attention and a feed-forward block, each after a layer norm, all with biases."""
    for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
        writer.add_tensor(b + name + ".weight", tensor(rng, n_embd, n_embd))
        writer.add_tensor(b + name + ".bias", np.zeros(n_embd, dtype=np.float32))
    for norm in ("ln1", "ln2"):
        writer.add_tensor(b + norm + ".weight", ones(n_embd))
        writer.add_tensor(b + norm + ".bias", np.zeros(n_embd, dtype=np.float32))
    writer.add_tensor(b + "ffn_up.weight", tensor(rng, n_ff, n_embd))
    writer.add_tensor(b + "ffn_up.bias", np.zeros(n_ff, dtype=np.float32))
    writer.add_tensor(b + "ffn_down.weight", tensor(rng, n_embd, n_ff))
    writer.add_tensor(b + "ffn_down.bias", np.zeros(n_embd, dtype=np.float32))


def projection(writer, rng, n_in, hidden, n_out):
    """A projector's two linear layers (`mm.0`, `mm.2`) into the model's `n_out`-wide embeddings."""
    writer.add_tensor("mm.0.weight", tensor(rng, hidden, n_in))
    writer.add_tensor("mm.0.bias", np.zeros(hidden, dtype=np.float32))
    # Scaled as the model's own embeddings are, so an image weighs like a few words.
    writer.add_tensor("mm.2.weight", tensor(rng, n_out, hidden, scale=0.02))
    writer.add_tensor("mm.2.bias", np.zeros(n_out, dtype=np.float32))


def vit_writer(path, name, kind, image, patch, n_embd_text, pool=None, merge=None, clip=False):
    """A `kind` projector's file with its ViT's keys: pooled `pool` × `pool` after it, or patches
    merged `merge` × `merge` (Qwen2-VL's); CLIP's normalisation (and no GELU flag) when `clip`.
    The writer, the ViT's width, feed-forward width and layers."""
    # n_ff ≠ n_embd: llama.cpp swaps some projectors' ffn_up and ffn_down (Qwen2-VL's) when
    # ffn_down's input is n_embd wide (old exports had them swapped).
    n_embd, n_ff, n_head, n_layer = 64, 128, 4, 2
    writer = gguf.GGUFWriter(str(path), "clip")
    writer.add_name(name)
    writer.add_bool("clip.has_vision_encoder", True)
    writer.add_string("clip.projector_type", kind)
    if not clip:
        writer.add_bool("clip.use_gelu", True)
    v = "clip.vision."
    writer.add_uint32(v + "image_size", image)
    writer.add_uint32(v + "patch_size", patch)
    if merge:
        writer.add_uint32(v + "spatial_merge_size", merge)
    writer.add_uint32(v + "embedding_length", n_embd)
    writer.add_uint32(v + "feed_forward_length", n_ff)
    writer.add_uint32(v + "projection_dim", n_embd_text)
    writer.add_uint32(v + "attention.head_count", n_head)
    writer.add_float32(v + "attention.layer_norm_epsilon", 1e-6 if clip else 1e-5)
    writer.add_uint32(v + "block_count", n_layer)
    writer.add_array(v + "image_mean", CLIP_MEAN if clip else [0.5, 0.5, 0.5])
    writer.add_array(v + "image_std", CLIP_STD if clip else [0.5, 0.5, 0.5])
    if pool:
        writer.add_uint32("clip.vision.projector.scale_factor", pool)
    writer.add_uint32("hearth.test_model_version", VERSION)
    return writer, n_embd, n_ff, n_layer


def vit_tensors(writer, rng, image, patch, n_embd, n_ff, n_layer, pre_ln):
    """The ViT's patch and position embeddings and layers (after a layer norm when `pre_ln`)."""
    n_pos = (image // patch) ** 2
    writer.add_tensor("v.patch_embd.weight", tensor(rng, n_embd, 3, patch, patch, scale=(3 * patch * patch) ** -0.5))
    writer.add_tensor("v.position_embd.weight", tensor(rng, n_pos, n_embd, scale=0.02).astype(np.float32))
    if pre_ln:
        writer.add_tensor("v.pre_ln.weight", ones(n_embd))
        writer.add_tensor("v.pre_ln.bias", np.zeros(n_embd, dtype=np.float32))
    for i in range(n_layer):
        vision_block(writer, rng, f"v.blk.{i}.", n_embd, n_ff)


def projector(n_embd_text):
    """A LLaVA-1.5 (`mlp`) projector writing `n_embd_text`-wide embeddings."""
    def build(reader, path, rng):
        image, patch, hidden = 32, 8, 256
        writer, n_embd, n_ff, n_layer = vit_writer(path, "hearth-test-mmproj", "mlp", image, patch, n_embd_text)
        vit_tensors(writer, rng, image, patch, n_embd, n_ff, n_layer, pre_ln=True)
        projection(writer, rng, n_embd, hidden, n_embd_text)
        finish(writer)
    return build


def gemma3_projector(n_embd_text):
    """A Gemma 3 (`gemma3`) projector writing `n_embd_text`-wide embeddings: the model reads an
    image's cells all at once (each sees the others), so an image must fit one micro-batch."""
    def build(reader, path, rng):
        # 64 × 64 pixels in 8 × 8 patches, pooled 2 × 2: 16 tokens, whatever the image's size.
        image, patch, pool = 64, 8, 2
        writer, n_embd, n_ff, n_layer = vit_writer(path, "hearth-test-mmproj-gemma3", "gemma3", image, patch, n_embd_text, pool)
        vit_tensors(writer, rng, image, patch, n_embd, n_ff, n_layer, pre_ln=False)
        # An RMS norm, then one linear layer (stored as the model's width by the encoder's).
        writer.add_tensor("mm.soft_emb_norm.weight", ones(n_embd))
        writer.add_tensor("mm.input_projection.weight", tensor(rng, n_embd, n_embd_text, scale=0.02))
        finish(writer)
    return build


def gemma4_projector(n_embd_text):
    """A Gemma 4 (`gemma4v`) projector writing `n_embd_text`-wide embeddings: an image keeps its
    aspect, between 70 and 1,120 tokens (llama.cpp's bounds for it), 16 × 16 pixels a token; a
    model this wide (not Gemma 4's small ones) reads an image's cells all at once."""
    def build(reader, path, rng):
        image, patch, pool, positions = 64, 8, 2, 1024
        writer, n_embd, n_ff, n_layer = vit_writer(path, "hearth-test-mmproj-gemma4", "gemma4v", image, patch, n_embd_text, pool)
        writer.add_tensor("v.patch_embd.weight", tensor(rng, n_embd, 3, patch, patch, scale=(3 * patch * patch) ** -0.5))
        # Two tables, a patch's column's row added to its row's.
        writer.add_tensor("v.position_embd.weight", tensor(rng, 2, positions, n_embd, scale=0.02))
        for i in range(n_layer):
            vision_block(writer, rng, f"v.blk.{i}.", n_embd, n_ff)
        writer.add_tensor("mm.input_projection.weight", tensor(rng, n_embd_text, n_embd, scale=0.02))
        finish(writer)
    return build


def qwen2vl_projector(n_embd_text):
    """A Qwen2-VL (`qwen2vl_merger`) projector writing `n_embd_text`-wide embeddings."""
    def build(reader, path, rng):
        patch = 14
        # image_size is unused (an image keeps its aspect, between 8 and 4,096 tokens); Qwen2-VL's
        # converter's. A merge of 2 is the only one llama.cpp's graph builds.
        writer, n_embd, n_ff, n_layer = vit_writer(
            path, "hearth-test-mmproj-qwen2vl", "qwen2vl_merger", 560, patch, n_embd_text, merge=2, clip=True)
        merged = 4 * n_embd  # a 2×2 square of patches, side by side
        # Qwen2-VL's patch embedding is a Conv3D over two frames, written as two Conv2Ds whose
        # outputs are summed (a still image is both frames); no bias, no position embedding.
        scale = (2 * 3 * patch * patch) ** -0.5
        writer.add_tensor("v.patch_embd.weight", tensor(rng, n_embd, 3, patch, patch, scale=scale))
        writer.add_tensor("v.patch_embd.weight.1", tensor(rng, n_embd, 3, patch, patch, scale=scale))
        for i in range(n_layer):
            vision_block(writer, rng, f"v.blk.{i}.", n_embd, n_ff)
        # The merger: a layer norm per patch, then two linear layers over each merged square.
        writer.add_tensor("v.post_ln.weight", ones(n_embd))
        writer.add_tensor("v.post_ln.bias", np.zeros(n_embd, dtype=np.float32))
        projection(writer, rng, merged, merged, n_embd_text)
        finish(writer)
    return build


def finish(writer):
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main():
    global SWA_WINDOW
    source, out, sdist = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    if len(sys.argv) > 4:
        SWA_WINDOW = int(sys.argv[4])
    real = real_templates(sdist, [GPT_OSS_TEMPLATE, QWEN3_TEMPLATE, NEMO_TEMPLATE, COMMAND_R7B_TEMPLATE])
    out.mkdir(parents=True, exist_ok=True)
    reader = gguf.GGUFReader(str(source))
    n_embd = int(reader.fields["llama.embedding_length"].contents())
    (out / "vision" / "mismatched").mkdir(parents=True, exist_ok=True)
    (out / "vision-mrope").mkdir(exist_ok=True)
    for folder in ("vision-gemma3", "vision-gemma4"):
        (out / folder).mkdir(exist_ok=True)
    for folder in ("vision", "vision-gemma3", "vision-gemma4"):
        beside = out / folder / source.name
        if not beside.exists():
            beside.symlink_to(source.resolve())
    for name, build in (
        ("tiny-gemma3-swa.gguf", gemma3),
        ("tiny-lfm2-hybrid.gguf", lfm2),
        ("vision/mmproj-hearth-test.gguf", projector(n_embd)),
        ("vision/mismatched/mmproj-tiny.gguf", projector(64)),
        ("vision-gemma3/mmproj-tiny-gemma3.gguf", gemma3_projector(n_embd)),
        ("vision-gemma4/mmproj-tiny-gemma4.gguf", gemma4_projector(n_embd)),
        ("vision-mrope/tiny-qwen2vl.gguf", qwen2vl),
        ("vision-mrope/mmproj-tiny-qwen2vl.gguf", qwen2vl_projector(TINY_EMBD)),
        ("tiny-harmony.gguf", renamed_llama(HARMONY_TOKENS, HARMONY_TEMPLATE)),
        ("tiny-llama3.gguf", renamed_llama(LLAMA3_TOKENS, LLAMA3_TEMPLATE)),
        ("tiny-mistral.gguf", renamed_llama(MISTRAL_TOKENS, MISTRAL_TEMPLATE)),
        ("tiny-functionary.gguf", renamed_llama(LLAMA3_TOKENS, FUNCTIONARY_TEMPLATE)),
        ("tiny-deepseek.gguf", renamed_llama(DEEPSEEK_TOKENS, DEEPSEEK_TEMPLATE)),
        ("tiny-deepseek-r1.gguf", renamed_llama(DEEPSEEK_TOKENS, DEEPSEEK_R1_TEMPLATE)),
        ("tiny-gpt-oss.gguf", renamed_llama(HARMONY_TOKENS, real[GPT_OSS_TEMPLATE])),
        ("tiny-qwen3.gguf", renamed_llama(QWEN3_TOKENS, real[QWEN3_TEMPLATE], gguf.TokenType.USER_DEFINED)),
        ("tiny-mistral-nemo.gguf", renamed_llama(MISTRAL_TOKENS, real[NEMO_TEMPLATE])),
        ("tiny-command-r7b.gguf",
         renamed_llama(COMMAND_R7B_TOKENS, real[COMMAND_R7B_TEMPLATE], eos=COMMAND_R7B_TOKENS[0])),
        ("tiny-llama.gguf", llama),  # last: setup.sh reads its date as the whole set's
    ):
        path = out / name
        partial = path.with_suffix(".partial")
        build(reader, partial, np.random.default_rng(7))
        partial.replace(path)
        print(path)


if __name__ == "__main__":
    main()
