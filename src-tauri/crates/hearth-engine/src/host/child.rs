//! The engine process: reads requests from stdin, runs them on the in-process engine
//! ([`LocalEngine`]), and writes what comes back as frames on the pipe that was its stdout.
//! Whatever else writes to fd 1 (llama.cpp prints now and then) goes to stderr instead, so it can
//! never corrupt a frame; stderr is the log the supervisor reads to explain a crash.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread;

use tracing_subscriber::prelude::*;
use tracing_subscriber::{EnvFilter, fmt};

use hearth_core::{CancelFlag, ChatBackend, GenEvent, ReplyRequest};

use super::protocol::{FrameReader, FrameWriter, FromHost, RequestId, ToHost};
use super::timing::QUIT_WAIT;
use crate::llama_log::CaptureLlamaErrors;
use crate::{EngineError, LocalEngine};

/// The argument that makes the app's binary (or `hearth-cli`) the engine process.
pub const HOST_ARG: &str = "--hearth-engine-host";

/// Set to 1 in the engine process's environment to honour test-only requests (`Abort`).
pub const TEST_HOOKS_ENV: &str = "HEARTH_ENGINE_TEST_HOOKS";
/// Test-only, with the hooks on: loading a file whose path contains this aborts the engine.
pub const ABORT_ON_LOAD_ENV: &str = "HEARTH_ENGINE_TEST_ABORT_ON_LOAD";

/// Call first in `main` of a binary that can host the engine: if it was started as the engine
/// process, serves and exits; otherwise returns at once.
pub fn serve_if_asked() {
    if std::env::args_os().nth(1).is_some_and(|arg| arg == HOST_ARG) {
        std::process::exit(serve_stdio());
    }
}

/// Serves requests from stdin until it closes or `Quit` comes; returns the exit status.
pub fn serve_stdio() -> i32 {
    // A panic anywhere leaves an engine in an unknown state: die, and let the supervisor start a
    // fresh one (its message, printed first, is what the user reads).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        std::process::abort();
    }));
    let frames = match take_stdout() {
        Ok(frames) => frames,
        Err(e) => {
            eprintln!("the engine process could not set up its pipe: {e}");
            return 2;
        }
    };
    init_logging();
    let outbox = spawn_writer(frames);
    let _ = outbox.send(FromHost::Ready { pid: std::process::id() });

    let engine = LocalEngine::spawn();
    // The backends load on their own thread (a GPU driver takes a while to start): requests are
    // read meanwhile, and wait for the engine as they always do.
    let devices_outbox = outbox.clone();
    let _ = thread::Builder::new().name("engine-devices".into()).spawn(move || {
        let _ = devices_outbox.send(FromHost::Devices { report: crate::devices::report() });
    });
    let embeds = spawn_embedder(outbox.clone());
    let cancels: Arc<Mutex<HashMap<RequestId, CancelFlag>>> = Arc::default();
    let mut requests = FrameReader::new(std::io::stdin().lock());
    let status = loop {
        let request = match requests.read::<ToHost>() {
            Ok(Some(request)) => request,
            Ok(None) => break 0, // The app is gone.
            Err(e) => {
                tracing::error!(error = %e, "unreadable request; the engine process ends");
                break 3;
            }
        };
        match request {
            ToHost::Load { id, path, params, progress } => {
                let cancel = CancelFlag::new();
                cancels.lock().expect("cancel map poisoned").insert(id, cancel.clone());
                load(&engine, &outbox, &cancels, id, (path, params, progress), cancel);
            }
            ToHost::Reply { id, aside, spec } => {
                let cancel = CancelFlag::new();
                cancels.lock().expect("cancel map poisoned").insert(id, cancel.clone());
                relay_reply(&engine, &outbox, &cancels, id, spec.into_request(cancel), aside);
            }
            ToHost::Forget { conversation } => engine.forget(conversation),
            ToHost::Release { path } => engine.release(&path),
            ToHost::CacheBudgets { budgets } => engine.set_cache_budgets(budgets),
            ToHost::Usage { id } => {
                let _ = outbox.send(FromHost::Usage { id, held: engine.held_memory() });
            }
            ToHost::Embed { id, model, texts } => {
                let _ = embeds.send((id, model, texts));
            }
            ToHost::Prefill { id, spec } => {
                let ahead = engine.prefill(spec.into_request(CancelFlag::new()));
                let outbox = outbox.clone();
                thread::spawn(move || {
                    ahead.wait();
                    let _ = outbox.send(FromHost::Prefilled { id });
                });
            }
            ToHost::Cancel { id } => {
                if let Some(flag) = cancels.lock().expect("cancel map poisoned").get(&id) {
                    flag.cancel();
                }
            }
            ToHost::Unload { id } => {
                let outbox = outbox.clone();
                let done = engine.submit_unload();
                thread::spawn(move || {
                    if let Ok(done) = done {
                        let _ = done.blocking_recv();
                    }
                    let _ = outbox.send(FromHost::Unloaded { id });
                });
            }
            ToHost::Quit => break 0,
            ToHost::Abort => {
                if testing() {
                    abort_for_test();
                }
            }
            ToHost::Freeze => {
                if testing() {
                    FROZEN.store(true, Ordering::Relaxed);
                }
            }
        }
    };
    for flag in cancels.lock().expect("cancel map poisoned").values() {
        flag.cancel();
    }
    // llama.cpp must not be decoding while the process exits; but an engine stuck in llama.cpp
    // must not keep an orphaned process alive either.
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        engine.shutdown();
        let _ = done.send(());
    });
    if finished.recv_timeout(QUIT_WAIT).is_err() {
        tracing::warn!("the engine did not stop in time; exiting anyway");
    }
    status
}

fn load(
    engine: &LocalEngine,
    outbox: &Sender<FromHost>,
    cancels: &Arc<Mutex<HashMap<RequestId, CancelFlag>>>,
    id: RequestId,
    (path, params, progress): (std::path::PathBuf, hearth_core::LoadParams, bool),
    cancel: CancelFlag,
) {
    if let Some(marker) = std::env::var_os(ABORT_ON_LOAD_ENV)
        && path.to_string_lossy().contains(&*marker.to_string_lossy())
        && testing()
    {
        abort_for_test(); // Test-only: a file that crashes llama.cpp while it loads.
    }
    let adds_devices = !params.rpc_servers.is_empty();
    // Queued on the engine here, in the order requests came: a reply sent after this load must
    // find the model loaded. Only the wait for the answer moves to a thread.
    let submitted = (|| {
        // The app checked the header too; the file may have changed since.
        let file = hearth_gguf::validate(&path)?;
        let progress: Option<crate::local::Progress> = progress.then(|| {
            let outbox = outbox.clone();
            Box::new(move |fraction| {
                let _ = outbox.send(FromHost::Progress { id, fraction });
            }) as crate::local::Progress
        });
        engine.submit_load(file, params, progress, cancel)
    })();
    let outbox = outbox.clone();
    let cancels = Arc::clone(cancels);
    thread::spawn(move || {
        let result = submitted.and_then(|answer| answer.blocking_recv().map_err(|_| EngineError::Gone)?);
        cancels.lock().expect("cancel map poisoned").remove(&id);
        if adds_devices && result.is_ok() {
            // The RPC servers' devices joined this process's: the app hears of them first.
            let _ = outbox.send(FromHost::Devices { report: crate::devices::report() });
        }
        let _ = outbox.send(FromHost::Loaded { id, result: result.map(Box::new) });
    });
}

fn relay_reply(
    engine: &LocalEngine,
    outbox: &Sender<FromHost>,
    cancels: &Arc<Mutex<HashMap<RequestId, CancelFlag>>>,
    id: RequestId,
    request: ReplyRequest,
    aside: bool,
) {
    let outbox = outbox.clone();
    let cancels = Arc::clone(cancels);
    let events = engine.queue_reply(request, aside);
    thread::spawn(move || {
        match events {
            Ok(mut events) => {
                while let Some(event) = events.blocking_recv() {
                    while FROZEN.load(Ordering::Relaxed) {
                        thread::sleep(std::time::Duration::from_millis(50));
                    }
                    let last = event.is_last();
                    let _ = outbox.send(FromHost::Event { id, event });
                    if last {
                        break;
                    }
                }
            }
            Err(error) => {
                let _ = outbox.send(FromHost::Event { id, event: GenEvent::Failed(error) });
            }
        }
        cancels.lock().expect("cancel map poisoned").remove(&id);
    });
}

/// The thread that embeds texts, beside the engine thread (a question's vector need not wait for
/// a reply to end), one request at a time.
fn spawn_embedder(outbox: Sender<FromHost>) -> Sender<(RequestId, std::path::PathBuf, Vec<String>)> {
    let (embeds, requests) = mpsc::channel::<(RequestId, std::path::PathBuf, Vec<String>)>();
    thread::Builder::new()
        .name("engine-embed".into())
        .spawn(move || {
            let mut embedder = crate::embed::Embedder::new();
            for (id, model, texts) in requests {
                let _ = outbox.send(FromHost::Embedded { id, result: embedder.embed(&model, &texts) });
            }
        })
        .expect("cannot spawn the embedding thread");
    embeds
}

/// One thread owns the pipe, so frames never interleave. If the app is gone, so is the point of
/// this process.
fn spawn_writer(pipe: File) -> Sender<FromHost> {
    let (outbox, messages) = mpsc::channel::<FromHost>();
    thread::Builder::new()
        .name("engine-frames".into())
        .spawn(move || {
            let mut frames = FrameWriter::new(pipe);
            for message in messages {
                if frames.write(&message).is_err() {
                    std::process::exit(0);
                }
            }
        })
        .expect("cannot spawn the frame writer");
    outbox
}

/// The pipe that was stdout becomes the frame pipe; fd 1 then points at stderr.
fn take_stdout() -> std::io::Result<File> {
    let stdout = std::io::stdout();
    let _ = stdout.lock().flush();
    let frames = File::from(stdout.as_fd().try_clone_to_owned()?);
    let stderr = std::io::stderr();
    // SAFETY: dup2 on two descriptors this process owns; fd 1 is replaced atomically, and the
    // frame pipe keeps its own duplicate.
    if unsafe { libc::dup2(stderr.as_fd().as_raw_fd(), stdout.as_fd().as_raw_fd()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(frames)
}

/// Plain lines on stderr, which the supervisor forwards to the app's log. llama.cpp's info lines
/// are left out unless `RUST_LOG` asks for them.
fn init_logging() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn,hearth_engine=info"));
    let _ = tracing_subscriber::registry()
        .with(fmt::layer().with_writer(std::io::stderr).without_time().with_ansi(false).with_filter(filter))
        .with(CaptureLlamaErrors)
        .try_init();
}

/// Set by the test-only `Freeze`: replies' events are no longer relayed.
static FROZEN: AtomicBool = AtomicBool::new(false);

fn testing() -> bool {
    let on = std::env::var_os(TEST_HOOKS_ENV).is_some_and(|v| v == "1");
    if !on {
        tracing::warn!("ignoring a test-only request");
    }
    on
}

/// Test-only: die the way llama.cpp dies on a failed assertion, through ggml's own abort.
fn abort_for_test() {
    // SAFETY: ggml_abort prints "file:line: message" and aborts the process; the strings are
    // NUL-terminated literals and the format has one %s for one string argument.
    unsafe {
        llama_cpp_sys_2::ggml_abort(c"hearth-test-hook.c".as_ptr(), 1, c"GGML_ASSERT(%s) failed".as_ptr(), c"engine test hook".as_ptr())
    }
}
