//! What the tests of `hearth-cli serve` share.

pub mod served;

use std::path::PathBuf;

/// The default test model (SmolLM2); the others lie beside it.
pub fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    std::fs::canonicalize(path).expect("the test model: run scripts/fetch-model.sh target/test-data")
}
