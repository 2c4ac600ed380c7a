//! GGUF header validation: the real model passes; a corpus of damaged copies of it (cut at
//! hundreds of offsets, bad magic and versions, absurd counts and lengths) each fail with a clear
//! error, never a crash or a huge allocation.

use std::path::PathBuf;

use hearth_core::ReasoningFormat;
use hearth_gguf::{GgufError, MetaValue, parse_prefix, validate};

fn model_bytes() -> Vec<u8> {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (run scripts/fetch-model.sh target/test-data)", path.display()))
}

/// Where the real model's header ends: the shortest prefix that parses.
fn header_len(real: &[u8]) -> usize {
    let (mut lo, mut hi) = (0, real.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        match parse_prefix(&real[..mid], real.len() as u64, "m.gguf") {
            Ok(_) => hi = mid,
            Err(GgufError::NeedMore { .. }) => lo = mid + 1,
            Err(e) => panic!("prefix of {mid} bytes: {e}"),
        }
    }
    lo
}

#[test]
fn the_real_model_validates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, model_bytes()).unwrap();
    let file = validate(&path).unwrap();
    assert_eq!(file.architecture(), Some("llama"));
    assert_eq!(file.version, 3);
    assert!(file.tensor_count > 100);
    assert!(matches!(file.metadata.get("tokenizer.ggml.tokens"), Some(MetaValue::Array(n)) if *n > 40_000));
    assert!(file.str("tokenizer.chat_template").is_some_and(|t| t.contains("im_start")));
    let facts = file.facts();
    assert_eq!(facts.architecture.as_deref(), Some("llama"));
    assert_eq!(facts.quantization.as_deref(), Some("Q4_1"));
    assert_eq!((facts.context_length, facts.layers, facts.has_chat_template), (Some(8192), Some(30), true));
    assert_eq!(facts.reasoning, ReasoningFormat::None, "SmolLM2's template has no reasoning");
    assert!((130_000_000..140_000_000).contains(&facts.parameters.unwrap()), "{facts:?}");
    let shape = file.shape().unwrap();
    assert_eq!((shape.layers, shape.embedding, shape.heads, shape.kv_heads, shape.key_length), (30, 576, 9, 3, 64));
    assert_eq!(shape.vocab, 49_152);
}

/// The header alone (as fetched over HTTP) gives the same facts as the whole file; fewer bytes
/// ask for more, never fail as the file's fault.
#[test]
fn a_header_prefix_gives_the_facts() {
    let real = model_bytes();
    let end = header_len(&real);
    assert!(end > 100_000 && end < real.len() / 10, "header ends at {end}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, &real).unwrap();
    let whole = validate(&path).unwrap();
    let prefix = parse_prefix(&real[..end], real.len() as u64, "m.gguf").unwrap();
    assert_eq!(prefix.facts(), whole.facts());
    assert_eq!(prefix.parameters, whole.parameters);
    for cut in [0, 3, 24, 1000, end / 2, end - 1] {
        assert!(matches!(parse_prefix(&real[..cut], real.len() as u64, "m.gguf"), Err(GgufError::NeedMore { .. })), "{cut}");
    }
    // A header whose tensors claim more than the file holds is the file's fault, whatever the prefix.
    assert!(matches!(parse_prefix(&real[..end], end as u64 + 10, "m.gguf"), Err(GgufError::Truncated { .. })));
}

/// The file cut at hundreds of offsets, all through the header and into the data: each one a
/// truncation error naming the file, and the error says how long it is and what it needed.
#[test]
fn a_file_cut_anywhere_is_refused_as_truncated() {
    let real = model_bytes();
    let end = header_len(&real);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.gguf");
    let mut cuts: Vec<usize> = (4..64).collect();
    cuts.extend((64..end).step_by(end / 300));
    cuts.extend([end - 1, end, end + 1, real.len() / 2, real.len() - 1]);
    for cut in cuts {
        std::fs::write(&path, &real[..cut]).unwrap();
        match validate(&path) {
            Err(GgufError::Truncated { len, needed, .. }) => assert!(len == cut as u64 && needed > len, "{cut}"),
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
}

/// Each damaged variant of the real file must be rejected with the expected kind of error.
#[test]
fn damaged_files_are_rejected() {
    let real = model_bytes();
    let at = layout(&real);
    let dir = tempfile::tempdir().unwrap();
    let with = |offset: usize, bytes: &[u8]| {
        let mut v = real.clone();
        v[offset..offset + bytes.len()].copy_from_slice(bytes);
        v
    };
    type Case = (&'static str, Vec<u8>, fn(&GgufError) -> bool);
    let cases: Vec<Case> = vec![
        ("empty", vec![], |e| matches!(e, GgufError::NotGguf { .. })),
        ("three bytes", b"GGU".to_vec(), |e| matches!(e, GgufError::NotGguf { .. })),
        ("bad magic", with(0, b"GGML"), |e| matches!(e, GgufError::NotGguf { .. })),
        ("version 1", with(4, &1u32.to_le_bytes()), |e| matches!(e, GgufError::UnsupportedVersion { version: 1, .. })),
        ("version 99", with(4, &99u32.to_le_bytes()), |e| matches!(e, GgufError::UnsupportedVersion { version: 99, .. })),
        ("absurd tensor count", with(8, &u64::MAX.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("absurd kv count", with(16, &(1u64 << 40).to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("absurd key length", with(24, &u64::MAX.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("bad value type", with(24 + 8 + 20, &77u32.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("key not UTF-8", with(24 + 8, &[0xFF, 0xFE]), |e| matches!(e, GgufError::Corrupt { .. })),
        // The first entry's value, general.architecture = "llama": its length at byte 56.
        ("absurd string value length", with(56, &(u64::MAX / 2).to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("absurd array count", with(at.array_count, &(u64::MAX / 4).to_le_bytes()), |e| matches!(e, GgufError::Truncated { .. })),
        ("unknown array type", with(at.array_count - 4, &99u32.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("absurd tensor name length", with(at.tensor.name, &u64::MAX.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("zero dimensions", with(at.tensor.n_dims, &0u32.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("five dimensions", with(at.tensor.n_dims, &5u32.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("overflowing dimensions", with(at.tensor.dims, &[u64::MAX.to_le_bytes(), u64::MAX.to_le_bytes()].concat()), |e| {
            matches!(e, GgufError::Corrupt { .. })
        }),
        ("unknown tensor type", with(at.tensor.ty, &200u32.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("half a block", with(at.tensor.dims, &33u64.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("tensor past the end", with(at.tensor.offset, &(1u64 << 40).to_le_bytes()), |e| matches!(e, GgufError::Truncated { .. })),
        ("misaligned tensor", with(at.tensor.offset, &7u64.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("impossible offset", with(at.tensor.offset, &(u64::MAX - 64).to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("header only", real[..24].to_vec(), |e| matches!(e, GgufError::Truncated { .. })),
        ("cut in metadata", real[..4096].to_vec(), |e| matches!(e, GgufError::Truncated { .. })),
        ("cut in tensor data", real[..real.len() - 1].to_vec(), |e| matches!(e, GgufError::Truncated { .. })),
        ("cut at half", real[..real.len() / 2].to_vec(), |e| matches!(e, GgufError::Truncated { .. })),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.path().join(format!("{name}.gguf"));
        std::fs::write(&path, &bytes).unwrap();
        match validate(&path) {
            Ok(_) => panic!("{name}: accepted"),
            Err(e) => {
                assert!(expected(&e), "{name}: unexpected error {e:?}");
                assert!(e.to_string().contains(&*path.display().to_string()), "{name}: {e}");
            }
        }
    }
}

/// Where fields of the real header lie, found by walking it (the cases above damage them).
struct Layout {
    /// The element count of the first array value.
    array_count: usize,
    /// The first two-dimensional, quantized tensor.
    tensor: TensorAt,
}

struct TensorAt {
    name: usize,
    n_dims: usize,
    dims: usize,
    ty: usize,
    offset: usize,
}

fn layout(b: &[u8]) -> Layout {
    let u32_at = |p: usize| u32::from_le_bytes(b[p..p + 4].try_into().unwrap());
    let u64_at = |p: usize| u64::from_le_bytes(b[p..p + 8].try_into().unwrap()) as usize;
    let (tensors, kvs) = (u64_at(8), u64_at(16));
    let mut pos = 24;
    let mut array_count = None;
    // Skips one value of type `ty` at `pos`, returning the position after it.
    fn skip(b: &[u8], ty: u32, pos: usize) -> usize {
        let u64_at = |p: usize| u64::from_le_bytes(b[p..p + 8].try_into().unwrap()) as usize;
        match ty {
            0 | 1 | 7 => pos + 1,
            2 | 3 => pos + 2,
            4..=6 => pos + 4,
            10..=12 => pos + 8,
            8 => pos + 8 + u64_at(pos),
            9 => {
                let item = u32::from_le_bytes(b[pos..pos + 4].try_into().unwrap());
                let count = u64_at(pos + 4);
                (0..count).fold(pos + 12, |p, _| skip(b, item, p))
            }
            _ => panic!("type {ty}"),
        }
    }
    for _ in 0..kvs {
        pos += 8 + u64_at(pos);
        let ty = u32_at(pos);
        pos += 4;
        if ty == 9 && array_count.is_none() {
            array_count = Some(pos + 4);
        }
        pos = skip(b, ty, pos);
    }
    for _ in 0..tensors {
        let name = pos;
        pos += 8 + u64_at(pos);
        let n_dims = u32_at(pos) as usize;
        let at = TensorAt { name, n_dims: pos, dims: pos + 4, ty: pos + 4 + 8 * n_dims, offset: pos + 8 + 8 * n_dims };
        if n_dims == 2 && u32_at(at.ty) > 1 {
            return Layout { array_count: array_count.unwrap(), tensor: at };
        }
        pos = at.offset + 8;
    }
    panic!("no quantized matrix in the real model");
}
