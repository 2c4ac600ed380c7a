//! llama.cpp's programs the tests run beside Hearth, built by `scripts/build-backend.sh tests`:
//! the Vulkan module (GPU tests on lavapipe), the RPC module with rpc-server, and llama-server
//! (the providers' real peer). `make test` builds them in the background, taking only the CPU the
//! rest leaves idle, and runs the tests that need them last: its first pass over every test sets
//! HEARTH_TEST_LLAMA_PROGRAMS=later, and these tests return at once there; its last pass runs them
//! by name. The build holds its lock until it is done, and these wait for it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../target")
}

/// Returns once a build of the programs under way has ended (`flock`, util-linux, waits for its
/// lock); at once where none was ever started.
fn built() {
    let lock = target().join("backend-build/tests/.lock");
    if lock.exists() {
        let waited = Command::new("flock").arg(&lock).arg("true").status();
        assert!(waited.as_ref().is_ok_and(|status| status.success()), "waiting for {} failed: {waited:?}", lock.display());
    }
}

fn must_exist(path: &Path) {
    assert!(
        path.exists(),
        "{} is missing: run scripts/build-backend.sh tests (a build make test started in the background logs to target/test-backends.log)",
        path.display()
    );
}

/// Whether this is `make test`'s first pass, which leaves the tests of these programs to its last.
fn later() -> bool {
    let later = std::env::var_os("HEARTH_TEST_LLAMA_PROGRAMS").is_some_and(|v| v == "later");
    if later {
        eprintln!("deferred: make test runs this test in its last pass, once its llama.cpp programs are built");
    }
    later
}

/// The folder of modules `make test` names in `var` (HEARTH_TEST_VULKAN_MODULES,
/// HEARTH_TEST_RPC_MODULES), once built; `None` outside `make test`, which CI never is, and in
/// its first pass.
pub fn modules(var: &str) -> Option<PathBuf> {
    if later() {
        return None;
    }
    let Some(folder) = std::env::var_os(var).map(PathBuf::from) else {
        assert!(std::env::var_os("CI").is_none(), "make test builds the tests' llama.cpp programs and sets {var}");
        eprintln!("skipped: {var} is not set (scripts/test.sh sets it)");
        return None;
    };
    built();
    must_exist(&folder);
    Some(folder)
}

/// llama-server (its tests' build), once built; `None` in `make test`'s first pass.
pub fn llama_server() -> Option<PathBuf> {
    if later() {
        return None;
    }
    built();
    let server = target().join("llama-server-tests/bin/llama-server");
    must_exist(&server);
    Some(server)
}
