//! The engine thread and its in-process handle: what runs inside the engine process (and, for
//! tests of other crates, in their own process).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use tokio::sync::{mpsc as tokio_mpsc, oneshot};

use hearth_core::{
    BackendError, CacheBudgets, CancelFlag, ChatBackend, FinishReason, GenEvent, ModelInfo, ReadAhead, ReplyRequest, ReplyStats,
    ReplyStream,
};

use crate::LoadParams;
use crate::devices::llama_backend;
use crate::kept::{KeptModels, ModelId, Weights};
use crate::kv_memory::{self, ConversationId, KvConfig, KvMemory};
use crate::session::{SEQUENCES, Session};
use crate::vision::{ImageTokens, Projector};
use hearth_gguf::ValidatedGguf;

mod error;
mod inbox;

pub use error::EngineError;

use inbox::{Inbox, Request, Requests, channel};

/// Context length of the aside context: a title prompt and its few tokens.
const ASIDE_N_CTX: u32 = 512;
/// Small batches, so a reply asked for during an aside's prefill waits one small batch at most.
const ASIDE_N_BATCH: u32 = 64;

struct LoadRequest {
    file: ValidatedGguf,
    params: LoadParams,
    reply: oneshot::Sender<Result<ModelInfo, EngineError>>,
    /// Told llama.cpp's load progress, 0 to 1.
    progress: Option<Progress>,
    /// Raised to give up the load (checked at each of llama.cpp's progress steps).
    cancel: CancelFlag,
}

pub(crate) type Progress = Box<dyn FnMut(f32) + Send>;

/// Handle to the engine thread in this process. Cloning is cheap; the thread ends when the last
/// handle is dropped. The app uses [`crate::Engine`], which runs this in a supervised process.
#[derive(Clone)]
pub struct LocalEngine {
    requests: Requests,
    loaded: Arc<Mutex<Option<ModelInfo>>>,
    /// The aside queued or running, cancelled when a reply is asked for.
    aside: Arc<Mutex<Option<CancelFlag>>>,
    thread: Arc<Mutex<Option<thread::JoinHandle<()>>>>,
    /// What the engine holds in RAM besides the model in use, as of its last request.
    held: Arc<Held>,
}

/// What the engine holds in RAM besides the model in use and its context.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HeldMemory {
    /// Other chats' caches (bytes).
    pub chat_caches: u64,
    /// Models kept after another was loaded (bytes of their weights).
    pub kept_models: u64,
}

/// [`HeldMemory`] as the engine thread updates it.
#[derive(Default)]
struct Held {
    chat_caches: AtomicU64,
    kept_models: AtomicU64,
}

impl LocalEngine {
    pub fn spawn() -> LocalEngine {
        let (requests, inbox) = channel();
        let loaded = Arc::new(Mutex::new(None));
        let worker_loaded = Arc::clone(&loaded);
        let held = Arc::new(Held::default());
        let worker_held = Arc::clone(&held);
        let thread = thread::Builder::new()
            .name("hearth-engine".into())
            .spawn(move || run(inbox, worker_loaded, &worker_held))
            .expect("cannot spawn the engine thread");
        LocalEngine { requests, loaded, aside: Arc::default(), thread: Arc::new(Mutex::new(Some(thread))), held }
    }

    /// Ends the engine thread and waits for it: llama.cpp must not be decoding while the process
    /// exits (its teardown then crashes). An aside is cancelled; a reply should be stopped first.
    pub fn shutdown(&self) {
        if let Some(aside) = self.aside.lock().expect("engine state poisoned").take() {
            aside.cancel();
        }
        let _ = self.requests.send(Request::Quit);
        if let Some(thread) = self.thread.lock().expect("engine state poisoned").take() {
            let _ = thread.join();
        }
    }

    /// The model currently loaded, if any.
    pub fn loaded(&self) -> Option<ModelInfo> {
        self.loaded.lock().expect("engine state poisoned").clone()
    }

    /// Validates the file at `path` and loads it, replacing the current model (kept in memory if
    /// the budget for other models allows, see [`crate::kept`]).
    pub async fn load(&self, path: &Path, params: LoadParams) -> Result<ModelInfo, EngineError> {
        let file = validate_chat_model(path).await?;
        self.load_validated(file, params).await
    }

    pub async fn load_validated(&self, file: ValidatedGguf, params: LoadParams) -> Result<ModelInfo, EngineError> {
        self.submit_load(file, params, None, CancelFlag::new())?.await.map_err(|_| EngineError::Gone)?
    }

    /// Queues a load; the answer comes on the returned channel (usable without a runtime).
    pub(crate) fn submit_load(
        &self,
        file: ValidatedGguf,
        params: LoadParams,
        progress: Option<Progress>,
        cancel: CancelFlag,
    ) -> Result<oneshot::Receiver<Result<ModelInfo, EngineError>>, EngineError> {
        params.validate().map_err(|e| EngineError::InvalidSettings(e.message))?;
        let (reply, answer) = oneshot::channel();
        let load = LoadRequest { file, params, reply, progress, cancel };
        self.requests.send(Request::Load(load)).map_err(|_| EngineError::Gone)?;
        Ok(answer)
    }

    /// Frees the model and its context; replies then fail with "no model".
    pub async fn unload(&self) -> Result<(), EngineError> {
        self.submit_unload()?.await.map_err(|_| EngineError::Gone)
    }

    /// Drops `conversation`'s KV cache, in RAM and on disk (its chat was deleted); `None`:
    /// every conversation's.
    pub fn forget(&self, conversation: Option<ConversationId>) {
        let _ = self.requests.send(Request::Forget(conversation));
    }

    /// Drops the weights of the model at `path` if they are kept in memory (not the loaded one).
    pub fn release(&self, path: &Path) {
        let _ = self.requests.send(Request::Release(path.to_path_buf()));
    }

    /// Puts the user's budgets for chats' caches in force (states past them spill or go).
    pub fn set_cache_budgets(&self, budgets: CacheBudgets) {
        let _ = self.requests.send(Request::CacheBudgets(budgets));
    }

    /// What the engine holds in RAM besides the model in use, as of its last request.
    pub fn held_memory(&self) -> HeldMemory {
        HeldMemory {
            chat_caches: self.held.chat_caches.load(Ordering::Relaxed),
            kept_models: self.held.kept_models.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn submit_unload(&self) -> Result<oneshot::Receiver<()>, EngineError> {
        let (done, unloaded) = oneshot::channel();
        self.requests.send(Request::Unload(done)).map_err(|_| EngineError::Gone)?;
        Ok(unloaded)
    }

    fn send(&self, to_request: impl FnOnce(tokio_mpsc::UnboundedSender<GenEvent>) -> Request) -> Result<ReplyStream, BackendError> {
        let model = self.loaded().ok_or(BackendError::NoModel)?.name;
        let events = self.queue(to_request)?;
        Ok(ReplyStream { model, events })
    }

    /// Queues a request behind the ones before it (a reply after a load in flight waits for it).
    fn queue(
        &self,
        to_request: impl FnOnce(tokio_mpsc::UnboundedSender<GenEvent>) -> Request,
    ) -> Result<tokio_mpsc::UnboundedReceiver<GenEvent>, BackendError> {
        let (events, receiver) = tokio_mpsc::unbounded_channel();
        self.requests.send(to_request(events)).map_err(|_| BackendError::EngineGone)?;
        Ok(receiver)
    }

    /// As `start_reply` / `start_aside`, but queued even while a load is still in flight: the
    /// engine process takes requests in the order the app sent them.
    pub(crate) fn queue_reply(&self, request: ReplyRequest, aside: bool) -> Result<tokio_mpsc::UnboundedReceiver<GenEvent>, BackendError> {
        if aside {
            self.queue(|events| Request::Aside { request, events })
        } else {
            if let Some(aside) = self.aside.lock().expect("engine state poisoned").take() {
                aside.cancel();
            }
            self.queue(|events| Request::Generate { request, events })
        }
    }
}

impl ChatBackend for LocalEngine {
    /// The loaded model's (the chat's own model, when another, is loaded before its reply: its
    /// context length is then taken as the loaded one's).
    fn context_tokens(&self, _target: &hearth_core::ModelTarget) -> Option<u32> {
        self.loaded().map(|model| model.n_ctx)
    }

    fn start_reply(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        if let Some(aside) = self.aside.lock().expect("engine state poisoned").take() {
            aside.cancel();
        }
        self.send(|events| Request::Generate { request, events })
    }

    fn start_aside(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        let previous = self.aside.lock().expect("engine state poisoned").replace(request.cancel.clone());
        if let Some(previous) = previous {
            previous.cancel();
        }
        self.send(|events| Request::Aside { request, events })
    }

    fn prefill(&self, request: ReplyRequest) -> ReadAhead {
        let (end, ahead) = ReadAhead::started();
        let _ = self.requests.send(Request::Prefill(request, end));
        ahead
    }
}

/// The header check, on a blocking thread (it reads the file); an embedding model is no model to
/// chat with.
pub(crate) async fn validate_chat_model(path: &Path) -> Result<ValidatedGguf, EngineError> {
    let path = path.to_path_buf();
    let file = tokio::task::spawn_blocking(move || hearth_gguf::validate(&path)).await.map_err(|_| EngineError::Gone)??;
    if file.is_embedding_model() {
        let reason = "it is an embedding model, which finds passages by meaning and cannot chat: choose it in Settings → Sampling & model → Attachments";
        return Err(EngineError::Load { path: file.path.display().to_string(), reason: reason.into() });
    }
    Ok(file)
}

/// What ended the service of one model.
enum Next {
    Load(Box<LoadRequest>),
    Unloaded(oneshot::Sender<()>),
    Quit,
}

fn run(inbox: Inbox, loaded: Arc<Mutex<Option<ModelInfo>>>, held: &Held) {
    let backend = match llama_backend() {
        Ok(backend) => backend,
        Err(e) => {
            tracing::error!(error = %e, "llama.cpp backend failed to initialise");
            return; // Every handle call now fails with EngineGone.
        }
    };
    let mut kv_config = KvConfig::from_env();
    let mut kept = KeptModels::new(kv_config.models_budget);
    let mut next = next_load(&inbox, &mut kv_config, &mut kept, held);
    // The next load's model, when it was identified already (to decide what to keep), and the
    // weights in use when the next load asks for the same (new context settings: no file read).
    let mut identified = None;
    let mut same = None;
    loop {
        held.kept_models.store(kept.bytes(), Ordering::Relaxed);
        let mut load = match next {
            Next::Load(load) => *load,
            Next::Unloaded(done) => {
                kept.clear();
                held.kept_models.store(0, Ordering::Relaxed);
                let _ = done.send(());
                next = next_load(&inbox, &mut kv_config, &mut kept, held);
                continue;
            }
            Next::Quit => return,
        };
        *loaded.lock().expect("engine state poisoned") = None;
        let id = identified.take().unwrap_or_else(|| identify(&load));
        let opened = match same.take() {
            Some(weights) => Ok((weights, true)),
            None => open_model(backend, &mut load, id, &mut kept),
        };
        let (weights, from_memory) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                let _ = load.reply.send(Err(error));
                next = next_load(&inbox, &mut kv_config, &mut kept, held);
                continue;
            }
        };
        held.kept_models.store(kept.bytes(), Ordering::Relaxed);
        next = serve(backend, &weights, from_memory, load, &inbox, &loaded, &mut kv_config, &mut kept, held);
        held.chat_caches.store(0, Ordering::Relaxed); // Its caches went to disk with the model.
        match &next {
            // The model may stay in memory beside the next one (which needs no more if it is kept).
            Next::Load(following) => {
                let id = identify(following);
                if !id.content.is_empty() && id == weights.id {
                    same = Some(weights);
                } else {
                    let more = if kept.holds(&id) { 0 } else { following.file.file_size };
                    kept.keep(weights, more, crate::load::available_memory());
                }
                identified = Some(id);
            }
            Next::Unloaded(_) => {
                drop(weights);
                *loaded.lock().expect("engine state poisoned") = None;
                tracing::info!("model unloaded");
            }
            Next::Quit => {}
        }
    }
}

/// What a load asks for, as kept models are found: a file that cannot be read for its content
/// key gets none (it is never taken from memory, and llama.cpp says what is wrong with it).
fn identify(load: &LoadRequest) -> ModelId {
    let content = kv_memory::model_key(&load.file.path).unwrap_or_default();
    ModelId::new(load.file.path.clone(), content, &load.params)
}

/// The weights `load` asks for: kept in memory (true), or read from the file (false).
fn open_model(
    backend: &LlamaBackend,
    load: &mut LoadRequest,
    id: ModelId,
    kept: &mut KeptModels<LlamaModel>,
) -> Result<(Weights<LlamaModel>, bool), EngineError> {
    let path = load.file.path.display().to_string();
    if !id.content.is_empty()
        && let Some(weights) = kept.take(&id)
    {
        tracing::info!(%path, "model taken up from memory");
        return Ok((weights, true));
    }
    crate::rpc::add_servers(&load.params.rpc_servers).map_err(EngineError::Device)?;
    let plan = crate::offload::plan(&load.params, &load.file, &crate::devices::report());
    match read_weights(backend, load, &plan) {
        Ok(model) => Ok((Weights { id, model, bytes: load.file.file_size, offload: plan.offload() }, false)),
        Err(EngineError::Load { reason, .. }) if !plan.gpus.is_empty() && !load.cancel.is_cancelled() => {
            // The GPU could not take it (out of its memory, a kernel missing): the CPU can.
            let device = plan.devices();
            let fallback = format!("{device} could not hold the model ({reason}); it runs on the CPU");
            tracing::warn!(%path, %fallback, "GPU load failed");
            let cpu = plan.on_cpu();
            let model = read_weights(backend, load, &cpu)?;
            Ok((Weights { id, model, bytes: load.file.file_size, offload: cpu.offload().with_fallback(fallback) }, false))
        }
        Err(e) => Err(e),
    }
}

/// Reads the weights from the file onto the devices `plan` names.
fn read_weights(backend: &LlamaBackend, load: &mut LoadRequest, plan: &crate::offload::Plan) -> Result<LlamaModel, EngineError> {
    let path = load.file.path.display().to_string();
    crate::llama_log::clear();
    let cancelled = load.cancel.clone();
    let mut progress = load.progress.take();
    let mut model_params = crate::load::model_params(&load.params, plan);
    model_params = model_params.with_progress_callback(move |fraction| {
        if let Some(progress) = progress.as_mut() {
            progress(fraction);
        }
        !cancelled.is_cancelled() // false makes llama.cpp give up the load.
    });
    match LlamaModel::load_from_file(backend, &load.file.path, &model_params) {
        Ok(model) => Ok(model),
        Err(_) if load.cancel.is_cancelled() => {
            tracing::info!(%path, "model load cancelled");
            Err(EngineError::LoadCancelled { path })
        }
        Err(e) => {
            tracing::warn!(%path, error = %e, "model load failed");
            let reason = crate::llama_log::last_error().unwrap_or_else(|| {
                let arch = load.file.architecture().unwrap_or("unknown");
                format!("llama.cpp gave no reason (architecture {arch}); the file may be damaged or too new for this Hearth")
            });
            Err(EngineError::Load { path, reason })
        }
    }
}

/// The model's image projector (chosen, or found beside it), and what the user should know when
/// one was found but cannot be used: the model then reads text only. `step`: the most tokens one
/// decode of the context takes.
fn load_projector(
    params: &LoadParams,
    step: u32,
    model_path: &std::path::Path,
    model: &LlamaModel,
    threads: u32,
    use_gpu: bool,
) -> (Option<Projector>, Option<String>) {
    let Some(path) = Projector::find(params.projector.as_deref(), model_path) else { return (None, None) };
    match Projector::load(&path, model, ImageTokens::of(params, step), threads, use_gpu) {
        Ok(projector) => {
            tracing::info!(projector = %path.display(), "the model reads images");
            (Some(projector), None)
        }
        Err(e) => {
            tracing::warn!(projector = %path.display(), error = %e, "projector refused");
            (None, Some(format!("images cannot be read: {e}")))
        }
    }
}

/// Answers requests with one model until another load (or an unload, or quitting) is asked for.
#[allow(clippy::too_many_arguments)]
fn serve(
    backend: &LlamaBackend,
    weights: &Weights<LlamaModel>,
    from_memory: bool,
    load: LoadRequest,
    inbox: &Inbox,
    loaded: &Mutex<Option<ModelInfo>>,
    kv_config: &mut KvConfig,
    kept: &mut KeptModels<LlamaModel>,
    held: &Held,
) -> Next {
    let LoadRequest { file, params, reply, .. } = load;
    let model = &weights.model;
    let path = file.path.display().to_string();
    let (resolved, context_params) = crate::load::context_params(&params, model, SEQUENCES, &weights.offload);
    let context = match model.new_context(backend, context_params) {
        Ok(context) => context,
        Err(e) => {
            tracing::warn!(%path, error = %e, "context creation failed");
            let _ = reply.send(Err(EngineError::Context { path, n_ctx: resolved.n_ctx }));
            return next_load(inbox, kv_config, kept, held);
        }
    };
    let step = context.n_ubatch().min(context.n_batch());
    let (projector, projector_notice) =
        load_projector(&params, step, &file.path, model, resolved.threads.batch, weights.offload.gpu_layers > 0);
    let notice = (params.chat_template.is_none() && model.chat_template(None).is_err()).then(|| hearth_core::NO_CHAT_TEMPLATE.to_owned());
    let info = ModelInfo {
        name: display_name(&file),
        path,
        size_bytes: file.file_size,
        load: params.clone(),
        n_ctx: resolved.n_ctx,
        n_ctx_train: model.n_ctx_train(),
        n_threads: resolved.threads.decode,
        n_threads_batch: resolved.threads.batch,
        kv_bytes: Some(crate::load::kv_bytes(model, params.kv_cache_type, resolved.n_ctx)),
        notice: match (notice, projector_notice) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        },
        from_memory,
        offload: weights.offload.clone(),
        projector: projector.as_ref().map(|p| p.path.clone()),
        projectors: Projector::beside(&file.path).iter().map(|p| p.display().to_string()).collect(),
    };
    tracing::info!(model = %info.name, n_ctx = info.n_ctx, threads = info.n_threads, threads_batch = info.n_threads_batch, from_memory, ?params, "model loaded");
    *loaded.lock().expect("engine state poisoned") = Some(info.clone());
    let _ = reply.send(Ok(info));

    let layout =
        format!("kv={:?};flash={:?};n_ctx={};swa_full={}", params.kv_cache_type, params.flash_attention, resolved.n_ctx, resolved.swa_full);
    let memory = if weights.id.content.is_empty() {
        tracing::warn!("the model file could not be read for its cache key; chats' caches are not kept");
        None
    } else {
        Some(KvMemory::new(kv_config.clone(), kv_memory::layout_key(&weights.id.content, &layout)))
    };
    let mut session = Session::new(model, context, &params, &resolved, memory, SEQUENCES, projector);
    session.interrupt_drafts_on(inbox.replies_waiting());
    let mut aside = None;
    // A load, unload or quit waits for the replies asked for before it.
    let mut ending = None;
    let next = loop {
        held.chat_caches.store(session.kv_ram_bytes(), Ordering::Relaxed);
        if let Some(next) = ending.take() {
            if !session.is_busy() {
                break next;
            }
            ending = Some(next);
            session.step();
            continue;
        }
        // While replies run, requests are taken between steps; otherwise the thread sleeps.
        let request = if session.is_busy() {
            match inbox.try_recv() {
                Ok(request) => Some(request),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => Some(Request::Quit),
            }
        } else {
            Some(inbox.recv().unwrap_or(Request::Quit))
        };
        match request {
            None => {}
            Some(Request::Generate { request, events }) => session.submit(request, events),
            Some(Request::Forget(conversation)) => session.forget(conversation),
            Some(Request::Release(path)) => {
                kept.release(&path);
                held.kept_models.store(kept.bytes(), Ordering::Relaxed);
            }
            Some(Request::CacheBudgets(budgets)) => {
                kv_config.set_budgets(budgets);
                kept.set_budget(kv_config.models_budget);
                held.kept_models.store(kept.bytes(), Ordering::Relaxed);
                session.set_cache_budgets(budgets);
            }
            Some(Request::Prefill(request, end)) => {
                session.prefill_draft(&request, || inbox.has_waiting());
                let _ = end.send(());
            }
            Some(Request::Aside { request, events }) => {
                if request.cancel.is_cancelled() {
                    let _ = events.send(GenEvent::Finished { reason: FinishReason::Cancelled, stats: ReplyStats::default() });
                    continue;
                }
                match aside_session(&mut aside, backend, model, &params, &weights.offload) {
                    Ok(session) => session.reply(request, &events),
                    Err(error) => {
                        let _ = events.send(GenEvent::Failed(error));
                    }
                }
            }
            Some(Request::Load(next)) => ending = Some(Next::Load(Box::new(next))),
            Some(Request::Unload(done)) => ending = Some(Next::Unloaded(done)),
            Some(Request::Quit) => ending = Some(Next::Quit),
        }
        // Every request waiting is taken before the next step, so replies asked for together
        // start together (their prompts read in one batch).
        if session.is_busy() && !inbox.has_waiting() {
            session.step();
        }
    };
    session.retire();
    next
}

/// The aside session, created at first use (most chats never need one after their title).
fn aside_session<'s, 'm>(
    aside: &'s mut Option<Session<'m>>,
    backend: &LlamaBackend,
    model: &'m LlamaModel,
    params: &LoadParams,
    offload: &hearth_core::Offload,
) -> Result<&'s mut Session<'m>, BackendError> {
    if aside.is_none() {
        let small = LoadParams { n_ctx: Some(ASIDE_N_CTX), n_batch: ASIDE_N_BATCH, n_ubatch: ASIDE_N_BATCH, ..params.clone() };
        let (resolved, context_params) = crate::load::context_params(&small, model, 1, offload);
        let context = model
            .new_context(backend, context_params)
            .map_err(|e| BackendError::Engine(format!("no memory for a second, small context: {e}")))?;
        *aside = Some(Session::new(model, context, &small, &resolved, None, 1, None));
    }
    Ok(aside.as_mut().expect("just created"))
}

/// With no model loaded, only a load request is useful; anything else fails at once.
fn next_load(inbox: &Inbox, kv_config: &mut KvConfig, kept: &mut KeptModels<LlamaModel>, held: &Held) -> Next {
    loop {
        held.kept_models.store(kept.bytes(), Ordering::Relaxed);
        match inbox.recv() {
            Ok(Request::Load(next)) => return Next::Load(Box::new(next)),
            Ok(Request::Forget(conversation)) => kv_memory::forget_on_disk(kv_config, conversation),
            Ok(Request::Release(path)) => kept.release(&path),
            Ok(Request::CacheBudgets(budgets)) => {
                kv_config.set_budgets(budgets);
                kept.set_budget(kv_config.models_budget);
                kv_memory::trim_disk(kv_config);
            }
            Ok(Request::Prefill(..)) => {}
            Ok(Request::Generate { events, .. } | Request::Aside { events, .. }) => {
                let _ = events.send(GenEvent::Failed(BackendError::NoModel));
            }
            Ok(Request::Unload(done)) => return Next::Unloaded(done),
            Ok(Request::Quit) | Err(_) => return Next::Quit,
        }
    }
}

/// The file name without extension: it names the quantization too, unlike `general.name`.
fn display_name(file: &ValidatedGguf) -> String {
    match file.path.to_str() {
        Some(path) => hearth_core::model_name(path),
        None => file.str("general.name").unwrap_or("model").to_owned(),
    }
}
