//! Downloads into the Hugging Face cache: several at once, each resumable (after a pause, a
//! dropped connection or an app restart), retried with backoff, checked against the hub's
//! sha256 before it becomes a model, and refused up front when the disk lacks room.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use ts_rs::TS;

use crate::{Hub, HubCache, HubError, RepoFile, names};

mod disk;
mod fetch;
#[cfg(test)]
use disk::free_space;
use disk::{Meter, check_room, hash_existing, hex, write_error};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum DownloadState {
    Queued,
    Running,
    Paused,
    Retrying,
    Verifying,
    Done,
    Failed,
    Cancelled,
}

/// A download as the user sees it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Download {
    pub id: String,
    pub repo: String,
    pub quant: String,
    pub files: Vec<String>,
    pub state: DownloadState,
    #[ts(type = "number")]
    pub done_bytes: u64,
    #[ts(type = "number")]
    pub total_bytes: u64,
    pub bytes_per_second: f64,
    #[ts(type = "number | null")]
    pub eta_seconds: Option<u64>,
    pub attempt: u32,
    pub max_attempts: u32,
    #[ts(type = "number | null")]
    pub retry_in_s: Option<u64>,
    pub error: Option<String>,
    /// The model's path once done (a split model's first part).
    pub model_path: Option<String>,
}

/// How often and how patiently a dropped download is tried again.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub first_delay: Duration,
    pub max_delay: Duration,
    /// A connection that sends nothing this long is given up and asked again from where it
    /// stopped (a stalled connection would otherwise hold the download for ever).
    pub idle: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            first_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            idle: Duration::from_secs(30),
        }
    }
}

type Watcher = Arc<dyn Fn(&Download) + Send + Sync>;

/// The downloads of this app; cheap to clone.
#[derive(Clone)]
pub struct Downloads {
    inner: Arc<Inner>,
}

struct Inner {
    hub: Hub,
    cache: HubCache,
    /// Unfinished downloads, so that they resume after a restart.
    state_file: PathBuf,
    policy: RetryPolicy,
    jobs: Mutex<Vec<Job>>,
    watchers: Mutex<Vec<Watcher>>,
}

struct Job {
    view: Download,
    plan: Plan,
    control: Arc<Control>,
}

/// What a download fetches: each file with its size and hash, at one commit.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Plan {
    commit: String,
    files: Vec<PlannedFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct PlannedFile {
    path: String,
    size: u64,
    sha256: String,
}

#[derive(Serialize, Deserialize)]
struct Saved {
    id: String,
    repo: String,
    quant: String,
    state: DownloadState,
    error: Option<String>,
    plan: Plan,
}

/// Tells a running download to stop, and why; and says when its transfer has ended.
#[derive(Default)]
struct Control {
    stop: AtomicU8,
    wake: Notify,
    /// A transfer runs with this control (from its spawn to its last write and save).
    running: AtomicBool,
    ended: Notify,
}

const GO: u8 = 0;
const PAUSE: u8 = 1;
const CANCEL: u8 = 2;

impl Control {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) != GO
    }

    fn request(&self, why: u8) {
        self.stop.store(why, Ordering::SeqCst);
        self.wake.notify_waiters();
    }

    /// Returns once no transfer runs with this control: at once when none does.
    async fn ended(&self) {
        loop {
            let ended = self.ended.notified();
            if !self.running.load(Ordering::SeqCst) {
                return;
            }
            ended.await;
        }
    }

    fn end(&self) {
        self.running.store(false, Ordering::SeqCst);
        self.ended.notify_waiters();
    }
}

/// Why a transfer ended without its file.
enum Halt {
    Stopped,
    Failed(HubError),
}

impl From<HubError> for Halt {
    fn from(e: HubError) -> Self {
        Halt::Failed(e)
    }
}

impl Downloads {
    /// Downloads into `cache`; unfinished ones are remembered in `state_file`.
    pub fn new(hub: Hub, cache: HubCache, state_file: PathBuf, policy: RetryPolicy) -> Downloads {
        let inner = Inner { hub, cache, state_file, policy, jobs: Mutex::default(), watchers: Mutex::default() };
        Downloads { inner: Arc::new(inner) }
    }

    /// Picks up the downloads of a previous run: those that were under way resume, paused and
    /// failed ones wait for the user. Call once, inside the runtime.
    pub fn restore(&self) {
        let saved: Vec<Saved> =
            std::fs::read(&self.inner.state_file).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default();
        for s in saved {
            let resume = !matches!(s.state, DownloadState::Paused | DownloadState::Failed);
            let state = if resume { DownloadState::Queued } else { s.state };
            let mut view = self.inner.new_view(&s.id, &s.repo, &s.quant, &s.plan, state);
            view.error = s.error;
            view.done_bytes = self.inner.bytes_on_disk(&s.repo, &s.plan);
            self.inner.lock().push(Job { view, plan: s.plan, control: Arc::default() });
            if resume {
                self.spawn(&s.id);
            }
        }
    }

    /// Calls `watcher` with every change of every download.
    pub fn watch(&self, watcher: impl Fn(&Download) + Send + Sync + 'static) {
        self.inner.watchers.lock().expect("watchers poisoned").push(Arc::new(watcher));
    }

    pub fn list(&self) -> Vec<Download> {
        self.inner.lock().iter().map(|j| j.view.clone()).collect()
    }

    /// Starts fetching `files` (one quantization: a file or a split model's parts) of `repo`.
    /// Starting one that exists resumes it.
    pub async fn start(&self, repo: &str, quant: &str, files: &[String]) -> Result<Download, HubError> {
        names::repo_id(repo)?;
        for file in files {
            names::repo_path(file)?;
        }
        let id = format!("{repo}/{}", files.first().ok_or(HubError::NotFound { what: "a file to download".into() })?);
        if self.inner.lock().iter().any(|j| j.view.id == id) {
            return self.resume(&id);
        }
        // The commit first, and the files as they are at it: the hashes checked and the bytes
        // fetched are of one commit, however the repository changes meanwhile.
        let commit = self.inner.hub.head_commit(repo).await?;
        names::repo_path(&commit)?;
        let listing = self.inner.hub.repo_files_at(repo, Some(&commit)).await?;
        let mut planned = Vec::new();
        for file in files {
            let RepoFile { path, size, sha256 } = listing
                .iter()
                .find(|f| &f.path == file)
                .cloned()
                .ok_or_else(|| HubError::NotFound { what: format!("{file} in {repo}") })?;
            let sha256 = sha256.ok_or_else(|| HubError::NoChecksum { file: path.clone() })?;
            if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(HubError::NoChecksum { file: path });
            }
            planned.push(PlannedFile { path, size, sha256: sha256.to_ascii_lowercase() });
        }
        // A vision model's projector comes with it, into the same snapshot: the engine finds it
        // beside the model.
        if let Some(projector) = files.first().and_then(|model| crate::search::projector_for(&listing, model))
            && !planned.iter().any(|f| f.path == projector.path)
            && let Some(sha256) = projector.sha256.as_ref().filter(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            planned.push(PlannedFile { path: projector.path.clone(), size: projector.size, sha256: sha256.to_ascii_lowercase() });
        }
        let plan = Plan { commit, files: planned };
        let mut view = self.inner.new_view(&id, repo, quant, &plan, DownloadState::Queued);
        view.done_bytes = self.inner.bytes_on_disk(repo, &plan);
        {
            let mut jobs = self.inner.lock();
            if jobs.iter().any(|j| j.view.id == id) {
                drop(jobs);
                return self.resume(&id);
            }
            jobs.push(Job { view: view.clone(), plan, control: Arc::default() });
        }
        self.inner.save();
        self.inner.emit(&view);
        self.spawn(&id);
        Ok(view)
    }

    /// Stops a download, keeping what arrived.
    pub fn pause(&self, id: &str) -> Result<Download, HubError> {
        let view = self.inner.update(id, |job| {
            if !matches!(job.view.state, DownloadState::Done | DownloadState::Cancelled | DownloadState::Failed) {
                job.control.request(PAUSE);
                job.view.state = DownloadState::Paused;
                job.view.bytes_per_second = 0.0;
                job.view.eta_seconds = None;
                job.view.retry_in_s = None;
            }
        })?;
        self.inner.save();
        Ok(view)
    }

    /// Goes on from where a paused or failed download stopped.
    pub fn resume(&self, id: &str) -> Result<Download, HubError> {
        let mut start = false;
        let mut previous = None;
        let view = self.inner.update(id, |job| {
            if matches!(job.view.state, DownloadState::Paused | DownloadState::Failed) {
                previous = Some(std::mem::take(&mut job.control));
                job.view.state = DownloadState::Queued;
                job.view.error = None;
                job.view.attempt = 1;
                start = true;
            }
        })?;
        if start {
            self.inner.save();
            self.spawn_after(id, previous);
        }
        Ok(view)
    }

    /// Returns once download `id`'s transfer has ended — after a pause, its last bytes written
    /// and its state saved — or at once when none runs (or there is no such download).
    pub async fn settled(&self, id: &str) {
        let control = self.inner.lock().iter().find(|j| j.view.id == id).map(|j| Arc::clone(&j.control));
        if let Some(control) = control {
            control.ended().await;
        }
    }

    /// Stops a download and deletes what arrived.
    pub fn cancel(&self, id: &str) -> Result<(), HubError> {
        let (repo, plan, was_running) = {
            let mut jobs = self.inner.lock();
            let at = jobs.iter().position(|j| j.view.id == id).ok_or_else(|| HubError::NoDownload { id: id.into() })?;
            let job = jobs.remove(at);
            let running = matches!(
                job.view.state,
                DownloadState::Queued | DownloadState::Running | DownloadState::Retrying | DownloadState::Verifying
            );
            job.control.request(CANCEL);
            let mut view = job.view;
            view.state = DownloadState::Cancelled;
            self.inner.emit(&view);
            (view.repo, job.plan, running)
        };
        self.inner.save();
        // A running transfer removes its own partial file when it sees the cancel.
        if !was_running {
            for file in &plan.files {
                let _ = std::fs::remove_file(self.inner.cache.incomplete(&repo, &file.sha256));
            }
        }
        Ok(())
    }

    fn spawn(&self, id: &str) {
        self.spawn_after(id, None);
    }

    /// Starts download `id`'s transfer once `previous` (a paused one resumed) has ended: one
    /// transfer at a time writes a partial file, and the next reads all the last one wrote.
    fn spawn_after(&self, id: &str, previous: Option<Arc<Control>>) {
        let inner = Arc::clone(&self.inner);
        if let Some(job) = inner.lock().iter().find(|j| j.view.id == id) {
            job.control.running.store(true, Ordering::SeqCst);
        }
        let id = id.to_owned();
        tokio::spawn(async move {
            if let Some(previous) = previous {
                previous.ended().await;
            }
            inner.run(&id).await
        });
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Job>> {
        self.jobs.lock().expect("downloads poisoned")
    }

    fn new_view(&self, id: &str, repo: &str, quant: &str, plan: &Plan, state: DownloadState) -> Download {
        Download {
            id: id.to_owned(),
            repo: repo.to_owned(),
            quant: quant.to_owned(),
            files: plan.files.iter().map(|f| f.path.clone()).collect(),
            state,
            done_bytes: 0,
            total_bytes: plan.files.iter().map(|f| f.size).sum(),
            bytes_per_second: 0.0,
            eta_seconds: None,
            attempt: 1,
            max_attempts: self.policy.max_attempts,
            retry_in_s: None,
            error: None,
            model_path: None,
        }
    }

    /// Bytes of the plan already on disk, verified or partial.
    fn bytes_on_disk(&self, repo: &str, plan: &Plan) -> u64 {
        plan.files
            .iter()
            .map(|f| {
                let len = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).ok();
                len(self.cache.blob(repo, &f.sha256)).or_else(|| len(self.cache.incomplete(repo, &f.sha256))).unwrap_or(0).min(f.size)
            })
            .sum()
    }

    fn emit(&self, view: &Download) {
        let watchers = self.watchers.lock().expect("watchers poisoned").clone();
        for watcher in watchers {
            watcher(view);
        }
    }

    /// Changes job `id` and tells the watchers.
    fn update(&self, id: &str, change: impl FnOnce(&mut Job)) -> Result<Download, HubError> {
        let view = {
            let mut jobs = self.lock();
            let job = jobs.iter_mut().find(|j| j.view.id == id).ok_or_else(|| HubError::NoDownload { id: id.into() })?;
            change(job);
            job.view.clone()
        };
        self.emit(&view);
        Ok(view)
    }

    fn save(&self) {
        let saved: Vec<Saved> = self
            .lock()
            .iter()
            .filter(|j| !matches!(j.view.state, DownloadState::Done | DownloadState::Cancelled))
            .map(|j| Saved {
                id: j.view.id.clone(),
                repo: j.view.repo.clone(),
                quant: j.view.quant.clone(),
                state: j.view.state,
                error: j.view.error.clone(),
                plan: j.plan.clone(),
            })
            .collect();
        let write = || -> std::io::Result<()> {
            if let Some(dir) = self.state_file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = self.state_file.with_extension("json.tmp");
            std::fs::write(&tmp, serde_json::to_vec_pretty(&saved).expect("downloads serialize"))?;
            std::fs::rename(&tmp, &self.state_file)
        };
        if let Err(e) = write() {
            tracing::warn!(error = %e, file = %self.state_file.display(), "could not remember the downloads");
        }
    }

    /// Runs a download to its end: done, failed, paused or cancelled.
    async fn run(self: Arc<Self>, id: &str) {
        let Some((repo, plan, control)) =
            self.lock().iter().find(|j| j.view.id == id).map(|j| (j.view.repo.clone(), j.plan.clone(), Arc::clone(&j.control)))
        else {
            return;
        };
        let mut attempt = 1;
        loop {
            if control.stopped() {
                break;
            }
            let _ = self.update(id, |job| {
                job.view.state = DownloadState::Running;
                job.view.attempt = attempt;
                job.view.retry_in_s = None;
            });
            match self.fetch_all(id, &repo, &plan, &control).await {
                Ok(path) => {
                    let _ = self.update(id, |job| {
                        job.view.state = DownloadState::Done;
                        job.view.done_bytes = job.view.total_bytes;
                        job.view.bytes_per_second = 0.0;
                        job.view.eta_seconds = Some(0);
                        job.view.model_path = Some(path.display().to_string());
                    });
                    tracing::info!(download = id, path = %path.display(), "download verified");
                    break;
                }
                Err(Halt::Stopped) => {
                    if control.stop.load(Ordering::SeqCst) == CANCEL {
                        for file in &plan.files {
                            let _ = tokio::fs::remove_file(self.cache.incomplete(&repo, &file.sha256)).await;
                        }
                    }
                    break;
                }
                Err(Halt::Failed(error)) if error.is_transient() && attempt < self.policy.max_attempts => {
                    let delay = self.policy.first_delay.saturating_mul(1 << (attempt - 1).min(16)).min(self.policy.max_delay);
                    tracing::warn!(download = id, attempt, error = %error, "download interrupted; trying again");
                    let _ = self.update(id, |job| {
                        job.view.state = DownloadState::Retrying;
                        job.view.error = Some(error.to_string());
                        job.view.retry_in_s = Some(delay.as_secs_f64().ceil() as u64);
                        job.view.bytes_per_second = 0.0;
                    });
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = control.wake.notified() => {}
                    }
                    if control.stopped() {
                        break;
                    }
                    attempt += 1;
                }
                Err(Halt::Failed(error)) => {
                    tracing::warn!(download = id, error = %error, "download failed");
                    let _ = self.update(id, |job| {
                        job.view.state = DownloadState::Failed;
                        job.view.error = Some(error.to_string());
                        job.view.bytes_per_second = 0.0;
                        job.view.eta_seconds = None;
                    });
                    break;
                }
            }
        }
        self.save();
        control.end();
    }

    /// Fetches each file not yet verified, then links them into the snapshot.
    async fn fetch_all(&self, id: &str, repo: &str, plan: &Plan, control: &Control) -> Result<PathBuf, Halt> {
        let mut before = 0;
        for file in &plan.files {
            if !self.cache.blob(repo, &file.sha256).is_file() {
                self.fetch_file(id, (repo, &plan.commit), file, before, control).await?;
            }
            before += file.size;
        }
        let mut first = None;
        for file in &plan.files {
            let link = self
                .cache
                .publish(repo, &plan.commit, &file.path, &file.sha256)
                .map_err(|e| HubError::io(&self.cache.repo_dir(repo), &e))?;
            first.get_or_insert(link);
        }
        Ok(first.expect("a plan has at least one file"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `df` says is available to this user on the file system holding `dir`.
    fn df_available(dir: &Path) -> u64 {
        let out = std::process::Command::new("df").args(["-B1", "--output=avail"]).arg(dir).output().unwrap();
        String::from_utf8(out.stdout).unwrap().lines().nth(1).unwrap().trim().parse().unwrap()
    }

    #[test]
    fn free_space_is_what_df_reports_for_the_folder_or_its_nearest_existing_parent() {
        let dir = tempfile::tempdir().unwrap();
        for (asked, existing) in [
            (dir.path().to_path_buf(), dir.path().to_path_buf()),
            (dir.path().join("not/yet"), dir.path().to_path_buf()),
            (PathBuf::from("/"), PathBuf::from("/")),
        ] {
            let (ours, df) = (free_space(&asked).unwrap(), df_available(&existing));
            // Other programs write meanwhile: a few MiB either way.
            assert!(ours.abs_diff(df) < 64 << 20, "{}: {ours} vs df {df}", asked.display());
        }
    }
}
