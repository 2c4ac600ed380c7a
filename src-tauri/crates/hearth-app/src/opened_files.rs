//! Files the desktop opens Hearth with: a `.gguf` opened from the file manager, whose desktop
//! entry offers Hearth for GGUF models. Each is imported into the library where it lies (a link,
//! not a copy of gigabytes), and the first becomes the model loaded at start, or, handed over by a
//! second launch while Hearth runs, the model loaded now.

use std::path::PathBuf;

use hearth_core::ModelInfo;
use hearth_hub::ImportMode;

use crate::App;
use crate::model_memory::ACTIVE_MODEL_KEY;

/// The files a command line names: everything after the program's own name.
pub fn command_line_files<A: Into<PathBuf>>(command_line: impl IntoIterator<Item = A>) -> impl Iterator<Item = PathBuf> {
    command_line.into_iter().skip(1).map(Into::into)
}

impl App {
    /// Imports the GGUF files among `args` (the command line after the program) and makes the
    /// first the model to load at start; a file that cannot be imported is said where a failed
    /// start-up load is (the banner), and the others go on. Answers the first one imported.
    pub async fn open_files(&self, args: impl IntoIterator<Item = PathBuf>) -> Option<String> {
        let mut first = true;
        let mut opened = None;
        for path in args.into_iter().filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf"))) {
            let library = self.library.clone();
            let shown = path.display().to_string();
            let imported = tokio::task::spawn_blocking(move || library.import(&path, ImportMode::Link)).await;
            match imported {
                Ok(Ok(model)) => {
                    tracing::info!(model = %model.path, "opened with Hearth");
                    if std::mem::take(&mut first) {
                        if let Err(e) = self.store.set_setting(ACTIVE_MODEL_KEY, &model.path).await {
                            tracing::warn!(error = %e, "the opened model could not be remembered");
                        }
                        opened = Some(model.path);
                    }
                }
                Ok(Err(e)) => self.models.note_startup_problem(format!("{shown} could not be opened: {e}")),
                Err(e) => self.models.note_startup_problem(format!("{shown} could not be opened: {e}")),
            }
        }
        opened
    }

    /// Files opened with Hearth while it runs (a second launch hands its command line over, run
    /// from `cwd`): imported as at start, and the first loaded now.
    pub async fn open_files_now(&self, args: impl IntoIterator<Item = PathBuf>, cwd: &std::path::Path) -> Option<ModelInfo> {
        let path = self.open_files(args.into_iter().map(|arg| cwd.join(arg))).await?;
        match self.models.load(&path, |_| {}).await {
            Ok(model) => Some(model),
            Err(e) => {
                self.models.note_startup_problem(format!("{path} could not be loaded: {e}"));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_names_its_files_after_the_program() {
        let cases: [(&[&str], &[&str]); 3] = [
            (&["/usr/bin/hearth"], &[]),
            (&["/usr/bin/hearth", "a.gguf"], &["a.gguf"]),
            (&["hearth", "a.gguf", "/m/b.gguf"], &["a.gguf", "/m/b.gguf"]),
        ];
        for (line, files) in cases {
            let got: Vec<PathBuf> = command_line_files(line.iter().copied()).collect();
            assert_eq!(got, files.iter().map(PathBuf::from).collect::<Vec<_>>(), "{line:?}");
        }
    }
}
