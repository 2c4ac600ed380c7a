//! Discovery: GGUF repositories matching a query, and a repository's GGUF files grouped by
//! quantization (a split model's parts as one entry).

use serde::Serialize;
use ts_rs::TS;

use crate::{Hub, HubError, names};

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HubRepo {
    pub id: String,
    #[ts(type = "number")]
    pub downloads: u64,
    #[ts(type = "number")]
    pub likes: u64,
    pub updated_at: Option<String>,
    pub gated: bool,
}

/// One file of a repository, as its tree listing says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoFile {
    pub path: String,
    pub size: u64,
    /// The LFS object id (sha256 of the content); `None` for files kept in git itself.
    pub sha256: Option<String>,
}

/// One quantization of a model: its file, or its parts in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RepoQuant {
    pub quant: String,
    pub files: Vec<String>,
    /// The image projector (`mmproj-….gguf`) downloaded beside it, when the repository holds one:
    /// a vision model reads images through it ([`projector_for`]).
    pub projector: Option<String>,
    /// What the download fetches: the model's files and its projector.
    #[ts(type = "number")]
    pub size_bytes: u64,
}

impl Hub {
    /// GGUF repositories matching `query`, most downloaded first.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<HubRepo>, HubError> {
        let found = self.api().search(query.trim(), limit).await?;
        Ok(found
            .into_iter()
            .map(|m| HubRepo {
                id: m.id,
                downloads: m.downloads.unwrap_or(0),
                likes: m.likes.unwrap_or(0),
                updated_at: m.last_modified,
                gated: m.gated.is_some_and(|g| g != serde_json::Value::Bool(false)),
            })
            .collect())
    }

    /// The repository's GGUF files (with sizes and LFS hashes).
    pub async fn repo_files(&self, repo: &str) -> Result<Vec<RepoFile>, HubError> {
        self.repo_files_at(repo, None).await
    }

    /// As [`Hub::repo_files`], at `commit` (`None`: the main branch).
    pub async fn repo_files_at(&self, repo: &str, commit: Option<&str>) -> Result<Vec<RepoFile>, HubError> {
        let (owner, name) = names::repo_id(repo)?;
        let entries = self.api().tree(owner, name, commit.unwrap_or("main")).await?;
        let mut files = Vec::new();
        for entry in entries {
            if entry.kind == "file" && entry.path.ends_with(".gguf") && names::repo_path(&entry.path).is_ok() {
                let is_lfs = entry.lfs.is_some();
                let sha256 = entry.lfs.and_then(|l| l.sha256.or(l.oid)).filter(|s| is_sha256(s));
                files.push((RepoFile { path: entry.path, size: entry.size, sha256 }, is_lfs));
            }
        }
        // An LFS file the tree gives no sha256 for: the file's ETag is the same sha256.
        let handle = self.repo(repo)?;
        let mut out = Vec::with_capacity(files.len());
        for (mut file, is_lfs) in files {
            if file.sha256.is_none() && is_lfs {
                let meta = handle
                    .get_file_metadata()
                    .filepath(file.path.clone())
                    .maybe_revision(commit)
                    .send()
                    .await
                    .map_err(|e| self.error(e, repo))?;
                file.sha256 = Some(meta.etag).filter(|e| is_sha256(e));
            }
            out.push(file);
        }
        Ok(out)
    }

    /// The commit `main` points at, which names the cache's snapshot folder.
    pub async fn head_commit(&self, repo: &str) -> Result<String, HubError> {
        let (owner, name) = names::repo_id(repo)?;
        let sha = self.api().head_commit(owner, name).await?.filter(|sha| sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()));
        sha.ok_or_else(|| HubError::Server { status: 200, detail: format!("the hub did not say which commit {repo} is at") })
    }
}

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `path` names an image projector rather than a model.
fn is_projector(path: &str) -> bool {
    hearth_gguf::is_projector_name(path.rsplit('/').next().unwrap_or(path))
}

/// The projector to fetch with the model at `model` (a path in the repository): one in the same
/// folder before one elsewhere, then F16 (llama.cpp's vision models ship it so, and a quantized
/// projector loses more than a quantized model), then by name.
pub fn projector_for<'a>(files: &'a [RepoFile], model: &str) -> Option<&'a RepoFile> {
    let folder = |path: &str| path.rsplit_once('/').map_or("", |(folder, _)| folder).to_owned();
    let model_folder = folder(model);
    files.iter().filter(|f| is_projector(&f.path)).min_by_key(|f| {
        let name = f.path.to_ascii_lowercase();
        (folder(&f.path) != model_folder, !(name.contains("f16") || name.contains("bf16")), f.path.clone())
    })
}

/// Groups files by quantization; a split model's parts (`-0000N-of-0000M`) form one entry, and
/// only complete sets count; an image projector is not a model, but goes with each. Smallest
/// first.
pub fn group_quants(files: &[RepoFile]) -> Vec<RepoQuant> {
    let mut groups: Vec<RepoQuant> = Vec::new();
    let mut sorted: Vec<&RepoFile> = files.iter().filter(|f| !is_projector(&f.path)).collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    for file in sorted {
        let part = names::split_part(&file.path);
        let key = match part {
            Some(_) => split_base(&file.path),
            None => file.path.clone(),
        };
        let quant = names::quant_label(&file.path);
        match groups.iter_mut().find(|g| part.is_some() && g.files.first().is_some_and(|f| split_base(f) == key)) {
            Some(group) => {
                group.files.push(file.path.clone());
                group.size_bytes += file.size;
            }
            None => groups.push(RepoQuant { quant, files: vec![file.path.clone()], projector: None, size_bytes: file.size }),
        }
    }
    groups.retain(|g| match names::split_part(&g.files[0]) {
        Some((1, count)) => g.files.len() == count as usize,
        Some(_) => false,
        None => true,
    });
    // Two files with the same label (a model in two sizes) keep their file names apart.
    let labels: Vec<String> = groups.iter().map(|g| g.quant.clone()).collect();
    for group in &mut groups {
        if labels.iter().filter(|l| **l == group.quant).count() > 1 {
            group.quant = format!("{} ({})", group.quant, group.files[0].rsplit('/').next().unwrap_or(&group.files[0]));
        }
    }
    for group in &mut groups {
        if let Some(projector) = projector_for(files, &group.files[0]) {
            group.projector = Some(projector.path.clone());
            group.size_bytes += projector.size;
        }
    }
    groups.sort_by_key(|g| g.size_bytes);
    groups
}

/// A split file's name without its `-0000N-of-0000M.gguf`.
fn split_base(path: &str) -> String {
    const SUFFIX: usize = "-00001-of-00002.gguf".len();
    path[..path.len().saturating_sub(SUFFIX)].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, size: u64) -> RepoFile {
        RepoFile { path: path.into(), size, sha256: None }
    }

    #[test]
    fn quantizations_group_split_parts_and_drop_incomplete_sets() {
        let files = [
            file("m-Q8_0.gguf", 800),
            file("m-Q4_K_M.gguf", 400),
            file("F16/m-F16-00002-of-00002.gguf", 700),
            file("F16/m-F16-00001-of-00002.gguf", 900),
            file("Q2/m-Q2_K-00001-of-00003.gguf", 100),
            file("Q2/m-Q2_K-00002-of-00003.gguf", 100),
        ];
        let groups = group_quants(&files);
        let got: Vec<(&str, usize, u64)> = groups.iter().map(|g| (g.quant.as_str(), g.files.len(), g.size_bytes)).collect();
        assert_eq!(got, [("Q4_K_M", 1, 400), ("Q8_0", 1, 800), ("F16", 2, 1600)]);
        assert_eq!(groups[2].files, ["F16/m-F16-00001-of-00002.gguf", "F16/m-F16-00002-of-00002.gguf"]);
        assert!(groups.iter().all(|g| g.projector.is_none()));
    }

    /// A vision model's repository: its projectors are not quantizations; each model goes with
    /// the one beside it, F16 first.
    #[test]
    fn each_model_goes_with_the_projector_beside_it() {
        let files = [
            file("v-Q4_K_M.gguf", 400),
            file("mmproj-v-Q8_0.gguf", 30),
            file("mmproj-v-f16.gguf", 60),
            file("big/v-Q8_0.gguf", 800),
            file("big/MMPROJ-v-Q8_0.gguf", 35),
        ];
        let groups = group_quants(&files);
        let got: Vec<(&str, Option<&str>, u64)> = groups.iter().map(|g| (g.quant.as_str(), g.projector.as_deref(), g.size_bytes)).collect();
        assert_eq!(got, [("Q4_K_M", Some("mmproj-v-f16.gguf"), 460), ("Q8_0", Some("big/MMPROJ-v-Q8_0.gguf"), 835)]);
        assert_eq!(projector_for(&files[..1], "v-Q4_K_M.gguf"), None);
    }
}
