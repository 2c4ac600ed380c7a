//! Export files written and import files read: whole files or nothing.

use std::io::Write;
use std::path::Path;

use hearth_core::{ChatId, ExportFormat, ImportReport};
use hearth_store::{ImportError, Store, StoreError, to_markdown};

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("could not write {path}: {source}. Nothing was exported; check the disk has room and that you may write there")]
    Write { path: String, source: std::io::Error },
    #[error("could not read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path} is {size} bytes; Hearth imports files up to {MAX_IMPORT_BYTES} bytes")]
    TooLarge { path: String, size: u64 },
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Larger files are refused before being read into memory.
pub const MAX_IMPORT_BYTES: u64 = 1 << 30;

/// Writes chats `ids` (all when `None`) to `path`. The file appears whole or not at all: it is
/// written beside its final name and renamed into place.
pub async fn export_to(store: &Store, ids: Option<&[ChatId]>, format: ExportFormat, path: &Path) -> Result<(), TransferError> {
    let archive = store.export(ids).await?;
    let text = match format {
        ExportFormat::Json => serde_json::to_string_pretty(&archive).expect("an archive serializes"),
        ExportFormat::Markdown => to_markdown(&archive),
    };
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || write_whole(&path, text.as_bytes())).await.expect("the export writer does not panic")
}

fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), TransferError> {
    let error = |source| TransferError::Write { path: path.display().to_string(), source };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = path.with_file_name(format!(".{name}.part"));
    let written = std::fs::File::create(&partial)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&partial, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(error(e));
    }
    Ok(())
}

/// Imports every valid chat of the export file at `path`; the model files it names are kept
/// only where `library` has them.
pub async fn import_from(store: &Store, library: &hearth_hub::Library, path: &Path) -> Result<ImportReport, TransferError> {
    let shown = path.display().to_string();
    let size = std::fs::metadata(path).map_err(|source| TransferError::Read { path: shown.clone(), source })?.len();
    if size > MAX_IMPORT_BYTES {
        return Err(TransferError::TooLarge { path: shown, size });
    }
    let text = tokio::fs::read_to_string(path).await.map_err(|source| TransferError::Read { path: shown, source })?;
    let known = library.paths();
    Ok(store.import(&text, |model| known.contains(model)).await?)
}
