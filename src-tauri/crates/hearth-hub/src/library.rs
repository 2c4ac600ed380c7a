//! The models on this machine: the Hugging Face cache, Hearth's own models folder, and files the
//! user imported (copied into the folder, or linked where they are). Each is read with the GGUF
//! header check, so a damaged file shows why instead of a Load button.

use std::path::{Path, PathBuf};

use hearth_gguf::ModelFacts;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{HubCache, HubError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ModelSource {
    HubCache,
    ModelsFolder,
    Linked,
    Copied,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ImportMode {
    Copy,
    Link,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LibraryModel {
    pub path: String,
    pub name: String,
    pub source: ModelSource,
    pub repo: Option<String>,
    /// All parts of a split model together.
    #[ts(type = "number")]
    pub size_bytes: u64,
    pub facts: Option<ModelFacts>,
    /// Why the file cannot be loaded, when its header is bad.
    pub error: Option<String>,
    pub loaded: bool,
}

/// An imported file, as remembered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Imported {
    path: PathBuf,
    mode: ImportMode,
}

#[derive(Debug, Clone)]
pub struct Library {
    cache: HubCache,
    models_dir: PathBuf,
    imports_file: PathBuf,
}

impl Library {
    pub fn new(cache: HubCache, models_dir: PathBuf, imports_file: PathBuf) -> Self {
        Library { cache, models_dir, imports_file }
    }

    pub fn models_dir(&self) -> &Path {
        &self.models_dir
    }

    /// Every model, the loaded one marked. Reads each header (a few MB at most).
    pub fn list(&self, loaded: Option<&Path>) -> Vec<LibraryModel> {
        let imports = self.imports();
        let mut found: Vec<(PathBuf, ModelSource, Option<String>)> = Vec::new();
        for file in self.cache.gguf_files() {
            found.push((file.path, ModelSource::HubCache, Some(file.repo)));
        }
        if let Ok(entries) = std::fs::read_dir(&self.models_dir) {
            let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| is_model_file(p)).collect();
            paths.sort();
            for path in paths {
                let copied = imports.iter().any(|i| i.path == path && i.mode == ImportMode::Copy);
                found.push((path, if copied { ModelSource::Copied } else { ModelSource::ModelsFolder }, None));
            }
        }
        for import in imports.iter().filter(|i| i.mode == ImportMode::Link) {
            found.push((import.path.clone(), ModelSource::Linked, None));
        }
        found.into_iter().map(|(path, source, repo)| describe(&path, source, repo, loaded)).collect()
    }

    /// The model files of the library, without reading their headers: what an imported chat may
    /// still name (`Store::import`).
    pub fn paths(&self) -> std::collections::HashSet<PathBuf> {
        let mut paths: std::collections::HashSet<PathBuf> = self.cache.gguf_files().into_iter().map(|f| f.path).collect();
        if let Ok(entries) = std::fs::read_dir(&self.models_dir) {
            paths.extend(entries.flatten().map(|e| e.path()).filter(|p| is_model_file(p)));
        }
        paths.extend(self.imports().into_iter().map(|i| i.path));
        paths
    }

    /// Adds a GGUF file the user chose; a bad file is refused with the reason.
    pub fn import(&self, path: &Path, mode: ImportMode) -> Result<LibraryModel, HubError> {
        let path = std::fs::canonicalize(path).map_err(|e| HubError::io(path, &e))?;
        hearth_gguf::validate(&path)?;
        let kept = match mode {
            ImportMode::Link => path,
            ImportMode::Copy => {
                std::fs::create_dir_all(&self.models_dir).map_err(|e| HubError::io(&self.models_dir, &e))?;
                let target = free_name(&self.models_dir, path.file_name().unwrap_or_default());
                let tmp = target.with_extension("gguf.importing");
                std::fs::copy(&path, &tmp).and_then(|_| std::fs::rename(&tmp, &target)).map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    HubError::io(&target, &e)
                })?;
                target
            }
        };
        let mut imports = self.imports();
        if !imports.iter().any(|i| i.path == kept) {
            imports.push(Imported { path: kept.clone(), mode });
            self.save_imports(&imports)?;
        }
        let source = if mode == ImportMode::Link { ModelSource::Linked } else { ModelSource::Copied };
        Ok(describe(&kept, source, None, None))
    }

    /// Deletes a model of the library: a cached one with its blob, a file of the models folder;
    /// a linked import is only forgotten (the file is the user's). Paths outside the library are refused.
    pub fn delete(&self, path: &Path) -> Result<(), HubError> {
        let model = self
            .list(None)
            .into_iter()
            .find(|m| Path::new(&m.path) == path)
            .ok_or_else(|| HubError::NotInLibrary { path: path.display().to_string() })?;
        let io = |e: std::io::Error| HubError::io(path, &e);
        match model.source {
            ModelSource::HubCache => {
                for part in split_parts(path) {
                    self.cache.remove(&part).map_err(io)?;
                }
            }
            ModelSource::ModelsFolder | ModelSource::Copied => std::fs::remove_file(path).map_err(io)?,
            ModelSource::Linked => {}
        }
        let imports: Vec<Imported> = self.imports().into_iter().filter(|i| i.path != path).collect();
        self.save_imports(&imports)
    }

    fn imports(&self) -> Vec<Imported> {
        std::fs::read(&self.imports_file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    fn save_imports(&self, imports: &[Imported]) -> Result<(), HubError> {
        let write = || -> std::io::Result<()> {
            if let Some(dir) = self.imports_file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&self.imports_file, serde_json::to_vec_pretty(imports).expect("imports serialize"))
        };
        write().map_err(|e| HubError::io(&self.imports_file, &e))
    }
}

/// Whether `path` is a model to list: a GGUF file (a split model's first part), not a projector.
pub(crate) fn is_model_file(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    // A projector is loaded beside its model (the engine finds it), never on its own.
    name.ends_with(".gguf") && !hearth_gguf::is_projector_name(&name) && crate::names::split_part(&name).is_none_or(|(index, _)| index == 1)
}

/// The files of a model: itself, or every part of a split model beside its first.
fn split_parts(first: &Path) -> Vec<PathBuf> {
    let name = first.file_name().unwrap_or_default().to_string_lossy().into_owned();
    match crate::names::split_part(&name) {
        Some((1, count)) => {
            (1..=count).map(|i| first.with_file_name(name.replace("-00001-of-", &format!("-{i:05}-of-")))).filter(|p| p.exists()).collect()
        }
        _ => vec![first.to_path_buf()],
    }
}

fn describe(path: &Path, source: ModelSource, repo: Option<String>, loaded: Option<&Path>) -> LibraryModel {
    let size_bytes = split_parts(path).iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    let (facts, error) = match hearth_gguf::validate(path) {
        Ok(file) => (Some(file.facts()), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    LibraryModel {
        path: path.display().to_string(),
        name: name.strip_suffix(".gguf").unwrap_or(&name).to_owned(),
        source,
        repo,
        size_bytes,
        facts,
        error,
        loaded: loaded.is_some_and(|l| l == path),
    }
}

/// `dir/name`, or `dir/name (2).gguf` … when taken.
fn free_name(dir: &Path, name: &std::ffi::OsStr) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let stem = Path::new(name).file_stem().unwrap_or_default().to_string_lossy().into_owned();
    (2..).map(|n| dir.join(format!("{stem} ({n}).gguf"))).find(|p| !p.exists()).expect("some name is free")
}
