//! `hearth-cli models list|inspect|search|pull`: the model manager without a window, over the
//! same hub, cache and library as the app (`HF_ENDPOINT`, `HF_HUB_CACHE`, `HEARTH_DATA_DIR`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use hearth_hub::{DownloadState, Downloads, Hub, HubCache, HubConfig, Library, RetryPolicy, group_quants};

/// Hearth's data folder: `HEARTH_DATA_DIR`, else where the app keeps it (scripts/data-dir.sh).
fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HEARTH_DATA_DIR") {
        return dir.into();
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let base = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).unwrap_or_else(|| home.join(".local/share"));
    base.join("dev.hearth.desktop")
}

fn library() -> Library {
    let data = data_dir();
    Library::new(HubCache::new(HubCache::default_root()), data.join("models"), data.join("imports.json"))
}

fn hub() -> Result<Hub, String> {
    let token = std::env::var("HF_TOKEN").ok();
    Hub::new(&HubConfig { token, ..HubConfig::default() }).map_err(|e| e.to_string())
}

pub async fn run(args: &[String]) -> Result<(), String> {
    match args {
        [cmd] if cmd == "list" => list(),
        [cmd, path] if cmd == "inspect" => inspect(Path::new(path)),
        [cmd, query @ ..] if cmd == "search" && !query.is_empty() => search(&query.join(" ")).await,
        [cmd, repo, file] if cmd == "pull" => pull(repo, file).await,
        _ => Err("expected: models list | models inspect PATH | models search QUERY | models pull REPO FILE".into()),
    }
}

fn list() -> Result<(), String> {
    let models = library().list(None);
    if models.is_empty() {
        println!("no models yet: `hearth-cli models search QUERY`, then `hearth-cli models pull REPO FILE`");
    }
    for m in models {
        let facts = match (&m.facts, &m.error) {
            (Some(f), _) => format!(
                "{} {} {} ctx {}",
                f.architecture.as_deref().unwrap_or("?"),
                f.parameters.map(params).unwrap_or_default(),
                f.quantization.as_deref().unwrap_or("?"),
                f.context_length.map(|c| c.to_string()).unwrap_or_else(|| "?".into()),
            ),
            (None, Some(error)) => format!("unusable: {error}"),
            (None, None) => String::new(),
        };
        println!("{}\t{}\t{:?}\t{}\t{}", m.name, mb(m.size_bytes), m.source, facts, m.path);
    }
    Ok(())
}

fn inspect(path: &Path) -> Result<(), String> {
    let file = hearth_gguf::validate(path).map_err(|e| e.to_string())?;
    let facts = file.facts();
    println!("file:           {}", path.display());
    println!("size:           {}", mb(file.file_size));
    println!("GGUF version:   {}", file.version);
    println!("architecture:   {}", facts.architecture.as_deref().unwrap_or("unknown"));
    println!("parameters:     {}", facts.parameters.map(params).unwrap_or_else(|| "unknown".into()));
    println!("quantization:   {}", facts.quantization.as_deref().unwrap_or("unknown"));
    println!("context length: {}", facts.context_length.map(|c| c.to_string()).unwrap_or_else(|| "unknown".into()));
    println!("layers:         {}", facts.layers.map(|c| c.to_string()).unwrap_or_else(|| "unknown".into()));
    println!("tensors:        {}", file.tensor_count);
    println!("chat template:  {}", if facts.has_chat_template { "yes" } else { hearth_core::NO_CHAT_TEMPLATE });
    Ok(())
}

async fn search(query: &str) -> Result<(), String> {
    let found = hub()?.search(query, 30).await.map_err(|e| e.to_string())?;
    if found.is_empty() {
        println!("no GGUF repositories match \"{query}\"");
    }
    for r in found {
        let gated = if r.gated { "  (gated)" } else { "" };
        println!("{}\t{} downloads\t{} likes\t{}{gated}", r.id, r.downloads, r.likes, r.updated_at.unwrap_or_default());
    }
    Ok(())
}

/// Downloads `file` of `repo` (with the other parts, for a split model) into the HF cache.
async fn pull(repo: &str, file: &str) -> Result<(), String> {
    let hub = hub()?;
    let listing = hub.repo_files(repo).await.map_err(|e| e.to_string())?;
    let quants = group_quants(&listing);
    let Some(quant) = quants.iter().find(|q| q.files.iter().any(|f| f == file)) else {
        let names: Vec<&str> = quants.iter().flat_map(|q| q.files.iter().map(String::as_str)).collect();
        return Err(format!("{repo} has no GGUF file {file}; it has: {}", names.join(", ")));
    };
    let state = std::env::temp_dir().join(format!("hearth-cli-pull-{}.json", std::process::id()));
    let downloads = Downloads::new(hub, HubCache::new(HubCache::default_root()), state.clone(), RetryPolicy::default());
    let (tx, updates) = mpsc::channel();
    downloads.watch(move |d| {
        let _ = tx.send(d.clone());
    });
    let started = downloads.start(repo, &quant.quant, &quant.files).await.map_err(|e| e.to_string())?;
    let outcome = tokio::task::spawn_blocking(move || {
        let mut stderr = std::io::stderr();
        for d in updates {
            let percent = (d.done_bytes * 100).checked_div(d.total_bytes).unwrap_or(0);
            let bar: String = (0..30).map(|i| if i * 100 / 30 < percent { '#' } else { '.' }).collect();
            let eta = d.eta_seconds.map(|s| format!(", {s} s left")).unwrap_or_default();
            let state = match d.state {
                DownloadState::Retrying => format!(" retrying ({})", d.error.as_deref().unwrap_or("")),
                DownloadState::Verifying => " verifying sha256".into(),
                _ => String::new(),
            };
            let _ = write!(
                stderr,
                "\r[{bar}] {percent:>3}% {} of {} at {}/s{eta}{state}   ",
                mb(d.done_bytes),
                mb(d.total_bytes),
                mb(d.bytes_per_second as u64)
            );
            if matches!(d.state, DownloadState::Done | DownloadState::Failed) {
                let _ = writeln!(stderr);
                return d;
            }
        }
        started
    })
    .await
    .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(state);
    match (outcome.state, outcome.model_path) {
        (DownloadState::Done, Some(path)) => {
            println!("{path}");
            Ok(())
        }
        _ => Err(outcome.error.unwrap_or_else(|| "the download did not finish".into())),
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn params(n: u64) -> String {
    if n >= 1_000_000_000 { format!("{:.1}B", n as f64 / 1e9) } else { format!("{}M", n / 1_000_000) }
}
