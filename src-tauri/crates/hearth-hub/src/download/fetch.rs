//! One file of a download fetched: resumed from what is on disk, its idle time watched, asked
//! again after a stall or a cut, hashed as it arrives and checked against the sha256 planned.

use super::*;

impl Inner {
    /// Fetches one file into `{sha}.incomplete` from where it stopped, checks it, and makes it the blob.
    pub(super) async fn fetch_file(
        &self,
        id: &str,
        (repo, commit): (&str, &str),
        file: &PlannedFile,
        before: u64,
        control: &Control,
    ) -> Result<(), Halt> {
        let partial = self.cache.incomplete(repo, &file.sha256);
        let dir = partial.parent().expect("a blob has a folder").to_path_buf();
        tokio::fs::create_dir_all(&dir).await.map_err(|e| HubError::io(&dir, &e))?;
        let mut have = tokio::fs::metadata(&partial).await.map(|m| m.len()).unwrap_or(0);
        if have > file.size {
            have = 0;
        }
        check_room(&dir, &file.path, file.size - have)?;
        let mut hasher = Sha256::new();
        let mut out = tokio::fs::OpenOptions::new()
            .create(true)
            // A partial file is resumed from where it stopped.
            .truncate(false)
            .append(false)
            .write(true)
            .read(true)
            .open(&partial)
            .await
            .map_err(|e| HubError::io(&partial, &e))?;
        have = hash_existing(&mut out, &mut hasher, have, &partial).await?;
        let mut meter = Meter::new(before + have);
        if have < file.size {
            let handle = self.hub.repo(repo)?;
            let (length, mut stream) = handle
                .download_file_stream()
                .filename(file.path.clone())
                // The commit planned on: the hashes checked are that commit's.
                .revision(commit.to_owned())
                .range(have..file.size)
                .send()
                .await
                .map_err(|e| self.hub.error(e, repo))?;
            if have > 0 && length == Some(file.size) {
                // The server ignored the range and sends it all: start over.
                out.set_len(0).await.map_err(|e| HubError::io(&partial, &e))?;
                have = 0;
                hasher = Sha256::new();
                meter = Meter::new(before);
            }
            let mut writer = tokio::io::BufWriter::with_capacity(1 << 20, &mut out);
            let idle = self.policy.idle;
            while let Some(chunk) = tokio::select! {
                chunk = tokio::time::timeout(idle, stream.next()) => match chunk {
                    Ok(chunk) => chunk,
                    Err(_) => {
                        writer.flush().await.map_err(|e| write_error(&e, &partial, &dir, file))?;
                        return Err(HubError::Stalled { file: file.path.clone(), got: have, seconds: idle.as_secs().max(1) }.into());
                    }
                },
                () = control.wake.notified() => None,
            } {
                if control.stopped() {
                    break;
                }
                let chunk = match chunk {
                    Ok(chunk) => chunk,
                    Err(e) => {
                        writer.flush().await.map_err(|e| write_error(&e, &partial, &dir, file))?;
                        return Err(self.hub.error(e, repo).into());
                    }
                };
                let room = (file.size - have) as usize;
                let chunk = &chunk[..chunk.len().min(room)];
                writer.write_all(chunk).await.map_err(|e| write_error(&e, &partial, &dir, file))?;
                hasher.update(chunk);
                have += chunk.len() as u64;
                if let Some((rate, eta)) = meter.tick(before + have, before + file.size) {
                    let _ = self.update(id, |job| {
                        job.view.done_bytes = before + have;
                        job.view.bytes_per_second = rate;
                        job.view.eta_seconds = eta;
                        job.view.error = None;
                    });
                }
            }
            writer.flush().await.map_err(|e| write_error(&e, &partial, &dir, file))?;
        }
        if control.stopped() {
            return Err(Halt::Stopped);
        }
        if have < file.size {
            return Err(HubError::Incomplete { file: file.path.clone(), got: have, expected: file.size }.into());
        }
        out.sync_all().await.map_err(|e| write_error(&e, &partial, &dir, file))?;
        drop(out);
        let _ = self.update(id, |job| {
            job.view.state = DownloadState::Verifying;
            job.view.done_bytes = before + have;
        });
        let actual = hex(&hasher.finalize());
        if actual != file.sha256 {
            let _ = tokio::fs::remove_file(&partial).await;
            return Err(HubError::HashMismatch { file: file.path.clone(), expected: file.sha256.clone(), actual }.into());
        }
        let blob = self.cache.blob(repo, &file.sha256);
        tokio::fs::rename(&partial, &blob).await.map_err(|e| HubError::io(&blob, &e))?;
        let _ = self.update(id, |job| job.view.state = DownloadState::Running);
        Ok(())
    }
}
