//! The standard Hugging Face cache layout, shared with other tools (huggingface_hub, llama.cpp):
//! `models--{owner}--{name}/blobs/{sha256}`, `snapshots/{commit}/{path}` → the blob, `refs/main`.
//! A blob appears only once verified; until then it is `{sha256}.incomplete`.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct HubCache {
    root: PathBuf,
}

/// A model file found in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedFile {
    pub repo: String,
    /// The snapshot path (a link to its blob).
    pub path: PathBuf,
}

impl HubCache {
    pub fn new(root: PathBuf) -> Self {
        HubCache { root }
    }

    /// `HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub` (as hf-hub resolves it).
    pub fn default_root() -> PathBuf {
        if let Some(dir) = std::env::var_os("HF_HUB_CACHE") {
            return dir.into();
        }
        if let Some(home) = std::env::var_os("HF_HOME") {
            return PathBuf::from(home).join("hub");
        }
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).unwrap_or_default();
        PathBuf::from(home).join(".cache/huggingface/hub")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn repo_dir(&self, repo: &str) -> PathBuf {
        self.root.join(format!("models--{}", repo.replace('/', "--")))
    }

    pub fn blob(&self, repo: &str, sha256: &str) -> PathBuf {
        self.repo_dir(repo).join("blobs").join(sha256)
    }

    pub fn incomplete(&self, repo: &str, sha256: &str) -> PathBuf {
        self.repo_dir(repo).join("blobs").join(format!("{sha256}.incomplete"))
    }

    pub fn snapshot(&self, repo: &str, commit: &str, path: &str) -> PathBuf {
        self.repo_dir(repo).join("snapshots").join(commit).join(path)
    }

    /// Points `snapshots/{commit}/{path}` at its verified blob and records `commit` as main's.
    pub fn publish(&self, repo: &str, commit: &str, path: &str, sha256: &str) -> std::io::Result<PathBuf> {
        let link = self.snapshot(repo, commit, path);
        std::fs::create_dir_all(link.parent().expect("a snapshot path has a parent"))?;
        let _ = std::fs::remove_file(&link);
        // snapshots/{commit}/a/b.gguf → ../../../blobs/{sha}: one `..` per folder below the repo.
        let depth = path.matches('/').count() + 2;
        let target = PathBuf::from("../".repeat(depth)).join("blobs").join(sha256);
        link_or_copy(&target, &self.blob(repo, sha256), &link)?;
        let refs = self.repo_dir(repo).join("refs");
        std::fs::create_dir_all(&refs)?;
        std::fs::write(refs.join("main"), commit)?;
        Ok(link)
    }

    /// Every GGUF model in the cache: one entry per model (a split model's first part; no
    /// projector), only files whose blob is complete.
    pub fn gguf_files(&self) -> Vec<CachedFile> {
        let mut found = Vec::new();
        let Ok(repos) = std::fs::read_dir(&self.root) else { return found };
        for repo_dir in repos.flatten() {
            let dir_name = repo_dir.file_name().to_string_lossy().into_owned();
            let Some(repo) = dir_name.strip_prefix("models--").map(|r| r.replacen("--", "/", 1)) else { continue };
            let Ok(snapshots) = std::fs::read_dir(repo_dir.path().join("snapshots")) else { continue };
            for snapshot in snapshots.flatten() {
                walk(&snapshot.path(), &mut |path| {
                    // `is_file` follows the link: a dangling one (blob deleted) is skipped.
                    if crate::library::is_model_file(path) && path.is_file() {
                        found.push(CachedFile { repo: repo.clone(), path: path.to_path_buf() });
                    }
                });
            }
        }
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found
    }

    /// The repository a path in this cache belongs to.
    pub fn repo_of(&self, path: &Path) -> Option<String> {
        let rest = path.strip_prefix(&self.root).ok()?;
        let first = rest.components().next()?.as_os_str().to_string_lossy().into_owned();
        first.strip_prefix("models--").map(|r| r.replacen("--", "/", 1))
    }

    /// Removes a snapshot entry and its blob when no other snapshot points at it.
    pub fn remove(&self, link: &Path) -> std::io::Result<()> {
        let blob = std::fs::canonicalize(link).ok();
        std::fs::remove_file(link)?;
        let Some(blob) = blob else { return Ok(()) };
        let Some(repo) = self.repo_of(link) else { return Ok(()) };
        let mut still_used = false;
        if let Ok(snapshots) = std::fs::read_dir(self.repo_dir(&repo).join("snapshots")) {
            for snapshot in snapshots.flatten() {
                walk(&snapshot.path(), &mut |p| still_used |= std::fs::canonicalize(p).ok().as_ref() == Some(&blob));
            }
        }
        if !still_used && blob.starts_with(self.repo_dir(&repo).canonicalize()?.join("blobs")) {
            std::fs::remove_file(&blob)?;
        }
        Ok(())
    }
}

fn walk(dir: &Path, visit: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        // `file_type` does not follow links: a link to a folder is not walked into.
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, visit),
            Ok(_) => visit(&path),
            Err(_) => {}
        }
    }
}

#[cfg(unix)]
fn link_or_copy(target: &Path, _blob: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Windows needs a privilege for symbolic links; huggingface_hub copies then, and so do we.
#[cfg(not(unix))]
fn link_or_copy(_target: &Path, blob: &Path, link: &Path) -> std::io::Result<()> {
    std::fs::copy(blob, link).map(drop)
}
