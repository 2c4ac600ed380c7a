//! Export and import commands. The file is always chosen by the user in the system's own
//! dialog, opened from here: the window never names a path, so a compromised page cannot read
//! or write files of its choosing.

use std::path::PathBuf;

use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;
use tokio::sync::oneshot;

use hearth_core::{ChatId, ExportFormat, ImportReport};

use crate::AppState;
use crate::ipc::contract::command;
use crate::ipc::{IpcError, IpcErrorKind};
use crate::transfer::{self, TransferError};

command! {
    /// Exports chats `chat_ids` (all when absent) to a file the user picks. Returns the path
    /// written, or nothing when the user cancelled.
    pub async fn export_chats<R: Runtime>(
        app: AppHandle<R>,
        chat_ids: Option<Vec<ChatId>>,
        format: ExportFormat,
        state: State<'_, AppState>,
    ) -> Result<Option<String>, IpcError> {
        let name = match chat_ids.as_deref() {
            Some([id]) => file_stem(&state.store.chat(*id).await?.title),
            _ => "hearth-chats".to_owned(),
        };
        let (label, extension) = match format {
            ExportFormat::Json => ("Hearth export (JSON)", format.extension()),
            ExportFormat::Markdown => ("Markdown", format.extension()),
        };
        let (tx, rx) = oneshot::channel();
        app.dialog()
            .file()
            .set_title("Export chats")
            .set_file_name(format!("{name}.{extension}"))
            .add_filter(label, &[extension])
            .save_file(move |path| {
                let _ = tx.send(path.and_then(|p| p.into_path().ok()));
            });
        let Some(path) = rx.await.ok().flatten() else { return Ok(None) };
        transfer::export_to(&state.store, chat_ids.as_deref(), format, &path).await?;
        Ok(Some(path.display().to_string()))
    }
}

command! {
    /// Imports the chats of an export file the user picks; nothing when the user cancelled.
    pub async fn import_chats<R: Runtime>(app: AppHandle<R>, state: State<'_, AppState>) -> Result<Option<ImportReport>, IpcError> {
        let (tx, rx) = oneshot::channel::<Option<PathBuf>>();
        app.dialog()
            .file()
            .set_title("Import chats")
            .add_filter("Hearth export (JSON)", &["json"])
            .pick_file(move |path| {
                let _ = tx.send(path.and_then(|p| p.into_path().ok()));
            });
        let Some(path) = rx.await.ok().flatten() else { return Ok(None) };
        Ok(Some(transfer::import_from(&state.store, &state.library, &path).await?))
    }
}

/// A chat title as a file name: letters, digits, spaces and dashes; "chat" when nothing is left.
fn file_stem(title: &str) -> String {
    let kept: String = title.chars().map(|c| if c.is_alphanumeric() || c == '-' { c } else { ' ' }).collect();
    let stem = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    if stem.is_empty() { "chat".into() } else { stem.chars().take(60).collect() }
}

impl From<TransferError> for IpcError {
    fn from(e: TransferError) -> Self {
        match e {
            TransferError::Store(e) => e.into(),
            TransferError::Import(hearth_store::ImportError::Store(e)) => e.into(),
            TransferError::Import(_) | TransferError::TooLarge { .. } => IpcError::new(IpcErrorKind::InvalidInput, e),
            TransferError::Write { .. } | TransferError::Read { .. } => IpcError::new(IpcErrorKind::File, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::file_stem;

    #[test]
    fn titles_become_safe_file_names() {
        let cases = [
            ("Tides & the moon?", "Tides the moon"),
            ("../../etc/passwd", "etc passwd"),
            ("", "chat"),
            ("  ***  ", "chat"),
            ("Café-talk", "Café-talk"),
        ];
        for (title, expected) in cases {
            assert_eq!(file_stem(title), expected, "{title:?}");
        }
    }
}
