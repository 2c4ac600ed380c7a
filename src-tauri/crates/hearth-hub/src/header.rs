//! A model's header fetched with HTTP range requests: its facts and shape before a download.

use futures_util::StreamExt;
use hearth_gguf::{GgufError, ValidatedGguf, parse_prefix};

use crate::{Hub, HubError, RepoFile, names};

/// Headers are read in growing ranges; a vocabulary of 250k tokens takes a few MB.
const FIRST_RANGE: u64 = 1 << 20;
const MAX_RANGE: u64 = 64 << 20;

impl Hub {
    /// Reads `file`'s GGUF header from the hub without downloading the model.
    pub async fn header(&self, repo: &str, file: &RepoFile) -> Result<ValidatedGguf, HubError> {
        names::repo_path(&file.path)?;
        let handle = self.repo(repo)?;
        let mut want = FIRST_RANGE.min(file.size);
        loop {
            let (_, mut stream) =
                handle.download_file_stream().filename(file.path.clone()).range(0..want).send().await.map_err(|e| self.error(e, repo))?;
            // A server that ignores the range sends the whole file: read no more than asked.
            let mut bytes = Vec::with_capacity(want as usize);
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| self.error(e, repo))?;
                let room = want as usize - bytes.len();
                bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if bytes.len() as u64 >= want {
                    break;
                }
            }
            match parse_prefix(&bytes, file.size, &file.path) {
                Err(GgufError::NeedMore { .. }) if (bytes.len() as u64) < want => {
                    return Err(HubError::Incomplete { file: file.path.clone(), got: bytes.len() as u64, expected: want });
                }
                Err(GgufError::NeedMore { .. }) if want < file.size && want < MAX_RANGE => {
                    want = (want * 4).min(file.size).min(MAX_RANGE);
                }
                Err(GgufError::NeedMore { .. }) => return Err(HubError::HeaderTooLarge { limit: MAX_RANGE >> 20 }),
                other => return other.map_err(HubError::from),
            }
        }
    }
}
