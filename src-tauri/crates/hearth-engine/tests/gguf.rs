//! GGUF header validation: the real model passes; damaged copies of it fail with a clear error.

mod common;

use hearth_engine::{GgufError, MetaValue, validate};

fn model_bytes() -> Vec<u8> {
    std::fs::read(common::model_path()).expect("the model file reads")
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
}

/// Each damaged variant of the real file must be rejected with the expected kind of error.
#[test]
fn damaged_files_are_rejected() {
    let real = model_bytes();
    let dir = tempfile::tempdir().unwrap();
    let with = |offset: usize, bytes: &[u8]| {
        let mut v = real.clone();
        v[offset..offset + bytes.len()].copy_from_slice(bytes);
        v
    };
    let cases: Vec<(&str, Vec<u8>, fn(&GgufError) -> bool)> = vec![
        ("empty", vec![], |e| matches!(e, GgufError::NotGguf { .. })),
        ("three bytes", b"GGU".to_vec(), |e| matches!(e, GgufError::NotGguf { .. })),
        ("bad magic", with(0, b"GGML"), |e| matches!(e, GgufError::NotGguf { .. })),
        ("version 1", with(4, &1u32.to_le_bytes()), |e| matches!(e, GgufError::UnsupportedVersion { version: 1, .. })),
        ("version 99", with(4, &99u32.to_le_bytes()), |e| matches!(e, GgufError::UnsupportedVersion { version: 99, .. })),
        ("absurd tensor count", with(8, &u64::MAX.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("absurd kv count", with(16, &(1u64 << 40).to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
        ("absurd key length", with(24, &u64::MAX.to_le_bytes()), |e| matches!(e, GgufError::Truncated { .. })),
        ("bad value type", with(24 + 8 + 20, &77u32.to_le_bytes()), |e| matches!(e, GgufError::Corrupt { .. })),
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
