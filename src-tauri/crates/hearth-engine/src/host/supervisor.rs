//! The app's side of the engine process: [`Engine`] starts it, speaks to it, and when it dies
//! (abort, signal, out-of-memory kill, a wedge) fails what was in flight with the cause in words,
//! starts a new one and loads the model again. It needs no async runtime: three threads per
//! engine process (frames in, frames out, stderr) and one watchdog per `Engine`. If the app dies,
//! the engine process sees its stdin close and exits.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc as tokio_mpsc, oneshot};

use hearth_core::{
    BackendError, CacheBudgets, CancelFlag, ChatBackend, DeviceReport, FinishReason, GenEvent, LoadParams, ModelInfo, ReadAhead,
    ReplyRequest, ReplyStats, ReplyStream,
};
use hearth_gguf::ValidatedGguf;

use super::cause::LastLines;
use super::program::HostProgram;
use host_process::Host;
use process_end::{Exit, read_replies, spawn_stderr_reader};

mod devices;
mod dispatch;
mod embed;
mod host_process;
mod process_end;
mod watchdog;
use super::backoff::{CrashStreak, waiting_words};
use super::protocol::{FrameError, FrameWriter, ReplySpec, RequestId, ToHost, encode};
use crate::local::{Progress, validate_chat_model};
use crate::{EngineError, HeldMemory};

/// Handle to the supervised engine process. Cloning is cheap; the process ends when the last
/// handle is dropped or [`Engine::shutdown`] is called.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
}

pub(super) struct Shared {
    me: Weak<Shared>,
    program: HostProgram,
    state: Mutex<State>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct State {
    host: Option<Host>,
    pending: HashMap<RequestId, Pending>,
    loaded: Option<ModelInfo>,
    /// What to load again in a new engine process: the file and settings of the loaded model.
    model: Option<(PathBuf, LoadParams)>,
    /// The aside queued or running, cancelled when a reply is asked for.
    aside: Option<CancelFlag>,
    /// Why the last engine process died, if one did.
    last_crash: Option<String>,
    /// Crashes in a row, and when the next process may start.
    crashes: CrashStreak,
    /// The user's budgets for chats' caches, sent to every engine process once set.
    cache_budgets: Option<CacheBudgets>,
    shutting_down: bool,
    epoch: u64,
    /// When a request was last sent, or a reply last ended (`None`: never).
    last_used: Option<Instant>,
    /// The running process's devices, once it has loaded its backends.
    devices: Option<DeviceReport>,
    /// Callers of [`Engine::devices`] waiting for that report.
    device_waiters: Vec<oneshot::Sender<DeviceReport>>,
    /// Why GPU backends are off in the engine processes started from now on: one died loading
    /// them (a driver that aborts at init), so the CPU takes over.
    gpu_off: Option<String>,
}

enum Pending {
    Load {
        reply: Option<oneshot::Sender<Result<ModelInfo, EngineError>>>,
        progress: Option<Progress>,
        path: PathBuf,
        params: LoadParams,
        cancel: CancelFlag,
        cancel_sent: bool,
    },
    Reply {
        events: tokio_mpsc::UnboundedSender<GenEvent>,
        cancel: CancelFlag,
        cancel_sent: Option<Instant>,
    },
    Unload(oneshot::Sender<()>),
    Usage(oneshot::Sender<HeldMemory>),
    Embed {
        reply: oneshot::Sender<Result<Vec<Vec<f32>>, EngineError>>,
        model: PathBuf,
    },
    /// A read-ahead: ended when the engine says so, or dropped with the process.
    Prefill(oneshot::Sender<()>),
}

impl Engine {
    /// Starts the engine process from [`HostProgram::from_env`].
    pub fn spawn() -> Engine {
        Engine::spawn_with(HostProgram::from_env())
    }

    pub fn spawn_with(program: HostProgram) -> Engine {
        let shared = Arc::new_cyclic(|me| Shared { me: me.clone(), program, state: Mutex::default(), next_id: AtomicU64::new(1) });
        {
            let mut state = shared.lock();
            if let Err(e) = shared.start_host(&mut state) {
                tracing::error!(error = %e, "the engine process could not start");
            }
        }
        let watched = Arc::downgrade(&shared);
        thread::Builder::new()
            .name("engine-watchdog".into())
            .spawn(move || watchdog::watchdog(watched))
            .expect("cannot spawn the engine watchdog");
        Engine { shared }
    }

    /// Ends the engine process: asks it to quit, and kills it if it has not within [`QUIT_WAIT`](super::timing::QUIT_WAIT).
    /// Replies still running are cancelled.
    pub fn shutdown(&self) {
        self.shared.shutdown();
    }

    /// The model currently loaded, if any.
    pub fn loaded(&self) -> Option<ModelInfo> {
        self.shared.lock().loaded.clone()
    }

    /// How long no reply, aside, load or read-ahead has been asked for or running; `None` while
    /// one is, or before the first (an idle model may be unloaded after a time the user sets).
    pub fn idle_for(&self) -> Option<Duration> {
        let state = self.shared.lock();
        let busy = state.pending.values().any(|p| matches!(p, Pending::Reply { .. } | Pending::Load { .. }));
        state.last_used.filter(|_| !busy).map(|at| at.elapsed())
    }

    /// Whether the engine process running now ends at rest once idle for
    /// [`HostProgram::rest_after`]: one that only reported the devices does, one asked for a
    /// model never does.
    pub fn rests_when_idle(&self) -> bool {
        Shared::may_rest(&self.shared.lock())
    }

    /// The engine process's id, while one runs.
    pub fn host_pid(&self) -> Option<u32> {
        self.shared.lock().host.as_ref().map(|h| h.pid)
    }

    /// Why the last engine process died, if one did since this handle was made.
    pub fn last_crash(&self) -> Option<String> {
        self.shared.lock().last_crash.clone()
    }

    /// Validates the file at `path` and loads it, replacing the current model.
    pub async fn load(&self, path: &Path, params: LoadParams) -> Result<ModelInfo, EngineError> {
        let file = validate_chat_model(path).await?;
        self.load_validated(file, params).await
    }

    pub async fn load_validated(&self, file: ValidatedGguf, params: LoadParams) -> Result<ModelInfo, EngineError> {
        self.submit_load(file.path, params, None, CancelFlag::new()).await
    }

    /// As [`Engine::load`], telling `progress` how far llama.cpp got (0 to 1); raising `cancel`
    /// gives the load up at llama.cpp's next progress step ([`EngineError::LoadCancelled`]; no
    /// model is loaded then).
    pub async fn load_with_progress(
        &self,
        path: &Path,
        params: LoadParams,
        progress: impl FnMut(f32) + Send + 'static,
        cancel: CancelFlag,
    ) -> Result<ModelInfo, EngineError> {
        let file = validate_chat_model(path).await?;
        self.submit_load(file.path, params, Some(Box::new(progress)), cancel).await
    }

    async fn submit_load(
        &self,
        path: PathBuf,
        params: LoadParams,
        progress: Option<Progress>,
        cancel: CancelFlag,
    ) -> Result<ModelInfo, EngineError> {
        params.validate().map_err(|e| EngineError::InvalidSettings(e.message))?;
        let (reply, answer) = oneshot::channel();
        let id = self.shared.id();
        let request = ToHost::Load { id, path: path.clone(), params: params.clone(), progress: progress.is_some() };
        let pending = Pending::Load { reply: Some(reply), progress, path, params, cancel, cancel_sent: false };
        self.shared.submit(id, pending, request)?;
        answer.await.map_err(|_| EngineError::Gone)?
    }

    /// Drops `conversation`'s KV cache, in RAM and on disk (its chat was deleted). Nothing to
    /// do when no engine process runs: the next one finds no file.
    pub fn forget(&self, conversation: i64) {
        self.send_forget(Some(conversation));
    }

    /// Drops the weights of the model at `path` if they are kept in memory (its file is about to
    /// be deleted: its pages would otherwise hold the disk space until they leave memory).
    pub fn release_model(&self, path: &Path) {
        if let Some(host) = &self.shared.lock().host {
            let _ = host.send(&ToHost::Release { path: path.to_path_buf() });
        }
    }

    /// Drops every chat's KV cache in RAM (the caller deletes the folder of state files).
    pub fn forget_all(&self) {
        self.send_forget(None);
    }

    /// Puts the user's budgets for chats' caches in force, now and in any later engine process.
    pub fn set_cache_budgets(&self, budgets: CacheBudgets) {
        let mut state = self.shared.lock();
        state.cache_budgets = Some(budgets);
        if let Some(host) = &state.host {
            let _ = host.send(&ToHost::CacheBudgets { budgets });
        }
    }

    /// What the engine process holds in RAM besides the model in use: chats' caches and models
    /// kept after another was loaded (nothing when none runs).
    pub async fn held_memory(&self) -> HeldMemory {
        let (reply, answer) = oneshot::channel();
        {
            let mut state = self.shared.lock();
            let Some(host) = &state.host else { return HeldMemory::default() };
            let id = self.shared.id();
            let _ = host.send(&ToHost::Usage { id });
            state.pending.insert(id, Pending::Usage(reply));
        }
        answer.await.unwrap_or_default() // The process died: what it held died with it.
    }

    fn send_forget(&self, conversation: Option<i64>) {
        if let Some(host) = &self.shared.lock().host {
            let _ = host.send(&ToHost::Forget { conversation });
        }
    }

    /// Frees the model and its context; replies then fail with "no model".
    pub async fn unload(&self) -> Result<(), EngineError> {
        let (done, unloaded) = oneshot::channel();
        let id = self.shared.id();
        self.shared.submit(id, Pending::Unload(done), ToHost::Unload { id })?;
        unloaded.await.map_err(|_| EngineError::Gone)
    }

    /// Test-only: makes the engine process abort through ggml's own abort, as llama.cpp does on
    /// a failed assertion. Honoured only by a process started [`HostProgram::with_test_hooks`].
    pub fn abort_for_test(&self) {
        self.send_test_hook(ToHost::Abort);
    }

    /// Test-only, likewise: the engine process stops answering about replies, as if wedged.
    pub fn freeze_for_test(&self) {
        self.send_test_hook(ToHost::Freeze);
    }

    fn send_test_hook(&self, hook: ToHost) {
        if let Some(host) = &self.shared.lock().host {
            let _ = host.send(&hook);
        }
    }

    fn start(&self, request: ReplyRequest, aside: bool) -> Result<ReplyStream, BackendError> {
        let mut state = self.shared.lock();
        let model = state.loaded.as_ref().ok_or(BackendError::NoModel)?.name.clone();
        if aside {
            if let Some(previous) = state.aside.replace(request.cancel.clone()) {
                previous.cancel();
            }
        } else if let Some(running) = state.aside.take() {
            running.cancel();
        }
        let (events, receiver) = tokio_mpsc::unbounded_channel();
        let id = self.shared.id();
        let (spec, cancel) = ReplySpec::of(request);
        let pending = Pending::Reply { events, cancel, cancel_sent: None };
        self.shared.submit_locked(&mut state, id, pending, ToHost::Reply { id, aside, spec }).map_err(|e| match e {
            // This request alone: the pipe and every other reply carry on.
            SubmitError::Frame(e) => BackendError::InvalidRequest(format!("{e}: shorten the conversation")),
            SubmitError::Waiting { wait, streak, cause } => BackendError::EngineRestarting {
                cause: format!("the engine has died {streak} times in a row (last: {cause})"),
                retry_after_s: wait,
            },
            SubmitError::Start(_) => BackendError::EngineGone,
        })?;
        Ok(ReplyStream { model, events: receiver })
    }
}

impl ChatBackend for Engine {
    /// The loaded model's (the chat's own model, when another, is loaded before its reply: its
    /// context length is then taken as the loaded one's).
    fn context_tokens(&self, _target: &hearth_core::ModelTarget) -> Option<u32> {
        self.loaded().map(|model| model.n_ctx)
    }

    fn start_reply(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        self.start(request, false)
    }

    fn start_aside(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        self.start(request, true)
    }

    fn prefill(&self, request: ReplyRequest) -> ReadAhead {
        let mut state = self.shared.lock();
        state.last_used = Some(Instant::now());
        let (Some(host), Some(_)) = (&state.host, &state.loaded) else { return ReadAhead::ended() };
        let id = self.shared.id();
        let (end, ahead) = ReadAhead::started();
        if host.send(&ToHost::Prefill { id, spec: ReplySpec::of(request).0 }).is_ok() {
            state.pending.insert(id, Pending::Prefill(end));
        }
        ahead
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the engine process {program} could not be started: {reason}")]
struct StartError {
    program: String,
    reason: String,
}

#[derive(Debug, thiserror::Error)]
enum SubmitError {
    #[error(transparent)]
    Start(#[from] StartError),
    /// The request cannot be framed (too long): refused before it reaches the pipe.
    #[error(transparent)]
    Frame(FrameError),
    /// The engine keeps dying: the next process starts in `wait` seconds.
    #[error("the engine has died {streak} times in a row (last: {cause}); it starts again in {wait} s")]
    Waiting { wait: u64, streak: u32, cause: String },
}

impl From<SubmitError> for EngineError {
    fn from(e: SubmitError) -> Self {
        match e {
            SubmitError::Waiting { .. } => EngineError::Restarting(e.to_string()),
            SubmitError::Start(_) | SubmitError::Frame(_) => EngineError::Gone,
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("engine supervisor state poisoned")
    }

    fn id(&self) -> RequestId {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn submit(self: &Arc<Self>, id: RequestId, pending: Pending, request: ToHost) -> Result<(), SubmitError> {
        let mut state = self.lock();
        self.submit_locked(&mut state, id, pending, request)
    }

    /// Records `pending` and sends `request`, starting an engine process first if none runs.
    fn submit_locked(&self, state: &mut State, id: RequestId, pending: Pending, request: ToHost) -> Result<(), SubmitError> {
        // Measured first: a request too long for a frame fails alone, before it is pending.
        let frame = encode(&request).map_err(SubmitError::Frame)?;
        if state.shutting_down {
            return Err(StartError { program: self.program.program.display().to_string(), reason: "Hearth is quitting".into() }.into());
        }
        self.ensure_host(state)?;
        let host = state.host.as_mut().expect("just started");
        host.asked |= matches!(pending, Pending::Load { .. } | Pending::Reply { .. });
        state.pending.insert(id, pending);
        state.last_used = Some(Instant::now());
        let _ = host.frames.send(frame); // If the process is dying, its reader fails `pending`.
        Ok(())
    }

    /// Starts an engine process if none runs, unless restarts are backing off.
    fn ensure_host(&self, state: &mut State) -> Result<(), SubmitError> {
        if state.host.is_some() {
            return Ok(());
        }
        if let Some(wait) = state.crashes.waiting(Instant::now()) {
            let cause = state.last_crash.clone().unwrap_or_default();
            return Err(SubmitError::Waiting { wait: wait.as_secs_f32().ceil() as u64, streak: state.crashes.streak(), cause });
        }
        Ok(self.start_host(state)?)
    }

    /// Starts an engine process and the threads that serve it.
    fn start_host(&self, state: &mut State) -> Result<(), StartError> {
        let fail = |reason: String| StartError { program: self.program.program.display().to_string(), reason };
        let mut command = Command::new(&self.program.program);
        command
            .args(&self.program.args)
            .envs(self.program.env.iter().map(|(k, v)| (k, v)))
            // ggml would attach gdb for a backtrace on abort: slow, and useless to a user.
            .env("GGML_NO_BACKTRACE", "1")
            .envs(state.gpu_off.as_ref().map(|_| (crate::devices::DEVICE_ENV, "cpu")))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| fail(e.to_string()))?;
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            let _ = child.kill();
            return Err(fail("its pipes could not be opened".into()));
        };
        state.epoch += 1;
        let epoch = state.epoch;
        let pid = child.id();
        let child = Arc::new(Mutex::new(child));
        let (frames, outgoing) = mpsc::channel::<Vec<u8>>();
        thread::Builder::new()
            .name("engine-requests".into())
            .spawn(move || {
                let mut writer = FrameWriter::new(stdin);
                // Every frame was measured before it was queued: only the pipe can fail here.
                for request in outgoing {
                    if writer.write_encoded(request).is_err() {
                        break; // The process is gone; its reader reports why.
                    }
                }
            })
            .map_err(|e| fail(e.to_string()))?;
        let last_lines = Arc::new(Mutex::new(LastLines::default()));
        let stderr_thread = spawn_stderr_reader(stderr, Arc::clone(&last_lines)).map_err(|e| fail(e.to_string()))?;
        let exit = Exit { epoch, child: Arc::clone(&child), last_lines, stderr_thread };
        let shared = self.weak();
        thread::Builder::new()
            .name("engine-replies".into())
            .spawn(move || read_replies(shared, stdout, exit))
            .map_err(|e| fail(e.to_string()))?;
        tracing::info!(pid, "engine process started");
        if let Some(budgets) = state.cache_budgets {
            let _ = frames.send(encode(&ToHost::CacheBudgets { budgets }).expect("a few numbers fit a frame"));
        }
        state.host =
            Some(Host { epoch, pid, started: Instant::now(), child, frames, wedged_since: None, killed_as_wedged: false, asked: false });
        state.devices = None;
        Ok(())
    }

    /// A weak handle for the threads: they must not keep the engine alive once the app drops it.
    fn weak(&self) -> Weak<Shared> {
        self.me.clone()
    }

    /// The engine process of `epoch` is gone: fail what it held, say why, start a new one and
    /// load the model again.
    pub(super) fn on_exit(&self, epoch: u64, cause: String) {
        let mut state = self.lock();
        let Some(host) = state.host.take_if(|h| h.epoch == epoch) else { return };
        let cause = if host.killed_as_wedged {
            format!("the engine stopped responding for {} s after Stop and was restarted", self.program.wedged_after.as_secs())
        } else {
            cause
        };
        let quitting = state.shutting_down;
        let wait = if quitting {
            Duration::ZERO
        } else {
            state.crashes.record(&self.program.restart_backoff, host.started.elapsed(), Instant::now())
        };
        // What the replies that died are told: the cause, and the wait if there is one.
        let told = if wait.is_zero() { cause.clone() } else { waiting_words(&cause, state.crashes.streak(), wait) };
        let mut crashed_loading = false;
        for (_, pending) in state.pending.drain() {
            match pending {
                Pending::Reply { events, .. } => {
                    let _ = events.send(GenEvent::Failed(BackendError::EngineCrashed { cause: told.clone() }));
                }
                Pending::Load { reply, path, .. } => {
                    crashed_loading = true;
                    let error = EngineError::Crashed { path: path.display().to_string(), cause: told.clone() };
                    match reply {
                        Some(reply) => {
                            let _ = reply.send(Err(error));
                        }
                        None => tracing::error!(%error, "reloading the model after a crash failed"),
                    }
                }
                Pending::Unload(done) => {
                    let _ = done.send(());
                }
                Pending::Embed { reply, model } => {
                    let _ = reply.send(Err(EngineError::Crashed { path: model.display().to_string(), cause: told.clone() }));
                }
                Pending::Usage(_) | Pending::Prefill(_) => {}
            }
        }
        if quitting {
            return;
        }
        tracing::error!(cause = %told, "the engine process died");
        state.died_before_devices(&cause);
        state.last_crash = Some(cause);
        if crashed_loading {
            // That file or those settings crash llama.cpp: do not load them again by ourselves.
            state.loaded = None;
            state.model = None;
        }
        if wait.is_zero() {
            self.restart(&mut state);
        } // Else the watchdog restarts it when the wait is over.
    }

    /// Starts a new engine process after a crash and loads the model again in it.
    fn restart(&self, state: &mut State) {
        if let Err(e) = self.start_host(state) {
            tracing::error!(error = %e, "the engine process could not be started again");
            state.loaded = None;
            return;
        }
        if let Some((path, params)) = state.model.clone() {
            tracing::info!(path = %path.display(), "loading the model again in the new engine process");
            let id = self.id();
            let request = ToHost::Load { id, path: path.clone(), params: params.clone(), progress: false };
            let pending = Pending::Load { reply: None, progress: None, path, params, cancel: CancelFlag::new(), cancel_sent: false };
            let _ = self.submit_locked(state, id, pending, request);
        }
    }

    /// The process ends at rest: it only ever reported its devices (kept for the callers to come),
    /// nothing is pending, and it has been idle [`HostProgram::rest_after`]. Taken out of `state`
    /// here, so that its end is not a crash and the next request starts another.
    fn take_resting(&self, state: &mut State, now: Instant) -> Option<Host> {
        let host = state.host.as_ref()?;
        let idle_since = state.last_used.map_or(host.started, |used| used.max(host.started));
        let resting = Self::may_rest(state) && now.duration_since(idle_since) >= self.program.rest_after;
        resting.then(|| state.host.take()).flatten()
    }

    /// Whether the process running now ends at rest once idle long enough.
    fn may_rest(state: &State) -> bool {
        state.host.as_ref().is_some_and(|host| !host.asked)
            && state.model.is_none()
            && state.pending.is_empty()
            && state.aside.is_none()
            && state.devices.is_some()
    }

    fn shutdown(&self) {
        let host = {
            let mut state = self.lock();
            state.shutting_down = true;
            if let Some(aside) = state.aside.take() {
                aside.cancel();
            }
            state.host.take()
        };
        let Some(host) = host else { return };
        host.quit();
        let mut state = self.lock();
        for (_, pending) in state.pending.drain() {
            match pending {
                Pending::Reply { events, .. } => {
                    let _ = events.send(GenEvent::Finished { reason: FinishReason::Cancelled, stats: ReplyStats::default() });
                }
                Pending::Load { reply: Some(reply), .. } => {
                    let _ = reply.send(Err(EngineError::Gone));
                }
                Pending::Embed { reply, .. } => {
                    let _ = reply.send(Err(EngineError::Gone));
                }
                Pending::Load { reply: None, .. } | Pending::Usage(_) | Pending::Prefill(_) => {}
                Pending::Unload(done) => {
                    let _ = done.send(());
                }
            }
        }
        state.loaded = None;
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.shutdown();
    }
}
