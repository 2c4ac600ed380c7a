//! The program started as the engine process, and what it is started with.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::backoff::RestartBackoff;
use super::child::{HOST_ARG, TEST_HOOKS_ENV};
use super::timing::{REST_AFTER, WEDGED_AFTER};

/// The program run as the engine process: by default this very binary with [`HOST_ARG`]
/// (the app and `hearth-cli` serve it from `main`), or `HEARTH_ENGINE_HOST` if set.
#[derive(Debug, Clone)]
pub struct HostProgram {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    /// How long after Stop an engine still busy with the request counts as wedged.
    pub wedged_after: Duration,
    /// How restarts wait after crashes in a row.
    pub restart_backoff: RestartBackoff,
    /// How long a process that was never asked for a model or a reply lives ([`REST_AFTER`]).
    pub rest_after: Duration,
}

impl HostProgram {
    /// `program` started with [`HOST_ARG`].
    pub fn new(program: impl Into<PathBuf>) -> Self {
        HostProgram {
            program: program.into(),
            args: vec![HOST_ARG.into()],
            env: Vec::new(),
            wedged_after: WEDGED_AFTER,
            restart_backoff: RestartBackoff::default(),
            rest_after: REST_AFTER,
        }
    }

    pub fn from_env() -> Self {
        match std::env::var_os("HEARTH_ENGINE_HOST") {
            Some(program) => HostProgram::new(program),
            None => HostProgram::new(std::env::current_exe().unwrap_or_else(|_| "hearth".into())),
        }
    }

    /// Keeps chats' KV caches on disk in `dir` (see [`crate::kv_memory`]).
    pub fn with_kv_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.env.push((crate::kv_memory::KV_DIR_ENV.into(), dir.into().into_os_string()));
        self
    }

    /// Honours the test-only requests (`Engine::abort_for_test`).
    pub fn with_test_hooks(mut self) -> Self {
        self.env.push((TEST_HOOKS_ENV.into(), "1".into()));
        self
    }
}
