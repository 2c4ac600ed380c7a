use std::path::Path;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

/// llama.cpp logs every tensor at info level; keep its warnings only unless RUST_LOG says otherwise.
const DEFAULT_FILTER: &str = "info,llama-cpp-2=warn,llama_cpp_2=warn,llama.cpp=warn,ggml=warn";

/// Logs to stderr and to `hearth.log` (rotated daily) in `log_dir`. A second call (tests build
/// several apps in one process) keeps the first subscriber.
pub fn init(log_dir: &Path) {
    let file = tracing_appender::rolling::daily(log_dir, "hearth.log");
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false).with_writer(std::io::stderr.and(file)).try_init();
}
