use std::path::Path;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

/// llama.cpp logs every tensor at info level; keep its warnings only unless RUST_LOG says otherwise.
const DEFAULT_FILTER: &str = "info,llama-cpp-2=warn,llama_cpp_2=warn,llama.cpp=warn,ggml=warn";

/// Logs to stderr and to `hearth.log.<date>` in `log_dir` (rotated daily, kept a week, capped a
/// day: `hearth_app::log_file`). A second call (tests build several apps in one process) keeps the
/// first subscriber.
pub fn init(log_dir: &Path) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false);
    let _ = match hearth_app::log_file::open(log_dir) {
        Ok(file) => logs.with_writer(std::io::stderr.and(file)).try_init(),
        Err(e) => {
            eprintln!("hearth: no log file in {}: {e}", log_dir.display());
            logs.with_writer(std::io::stderr).try_init()
        }
    };
}
