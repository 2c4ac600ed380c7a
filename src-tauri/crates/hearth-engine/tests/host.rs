//! The engine process dies under a reply — aborted as llama.cpp aborts, or killed — and the app's
//! side survives it: the reply keeps its text and says why, a new process loads the model again,
//! and the next reply works. Stop and quit answer in bounded time.

mod common;

use std::time::{Duration, Instant};

use hearth_core::{BackendError, CancelFlag, ChatBackend, GenEvent, ReplyRequest};
use hearth_engine::host::RestartBackoff;
use hearth_engine::{Engine, HostProgram, LoadParams};

use common::{greedy, loaded_engine, reply, user};

/// Starts a long reply, waits for its first text, runs `kill`, and returns the text seen and the
/// error the reply ended with.
async fn die_mid_reply(engine: &Engine, kill: impl FnOnce(&Engine)) -> (String, BackendError) {
    let mut sampling = greedy(2000);
    sampling.ignore_eos = true;
    let request = ReplyRequest::new(user("Write a long story about a dragon."), sampling, CancelFlag::new());
    let mut stream = engine.start_reply(request).unwrap();
    let mut text = String::new();
    let mut kill = Some(kill);
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(delta) => {
                text.push_str(&delta);
                if let Some(kill) = kill.take() {
                    kill(engine);
                }
            }
            GenEvent::Failed(error) => return (text, error),
            GenEvent::Finished { reason, .. } => panic!("the reply finished ({reason:?}) instead of dying"),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => panic!("log-probabilities were not asked for"),
        }
    }
    panic!("the stream ended without a word");
}

async fn next_reply_works(engine: &Engine) {
    let after = reply(engine, &user("What is the capital of France? Answer in one sentence."), greedy(48), None).await;
    assert!(after.text.contains("Paris"), "{:?}", after.text);
}

#[tokio::test]
async fn an_abort_in_the_engine_costs_one_reply_and_says_why() {
    let engine = loaded_engine().await;
    let first_pid = engine.host_pid().unwrap();
    let (text, error) = die_mid_reply(&engine, Engine::abort_for_test).await;
    assert!(!text.is_empty());
    let BackendError::EngineCrashed { cause } = &error else { panic!("{error:?}") };
    // llama.cpp's own words, from its last line on stderr.
    assert_eq!(cause, "the model crashed: GGML_ASSERT(engine test hook) failed in hearth-test-hook.c:1");
    assert!(error.to_string().contains("the model is loaded again"), "{error}");
    assert_eq!(engine.last_crash().as_deref(), Some(cause.as_str()));

    // A new process, the same model, and the next reply works.
    next_reply_works(&engine).await;
    assert_ne!(engine.host_pid(), Some(first_pid));
    assert_eq!(engine.loaded().unwrap().name, "SmolLM2-135M-Instruct.Q4_1");
}

#[tokio::test]
async fn a_request_too_long_for_the_pipe_fails_alone_and_the_engine_lives_on() {
    let engine = loaded_engine().await;
    let pid = engine.host_pid();
    // 20 MiB of text: past the 16 MiB frame, which once ended the pipe's writer and the process.
    let request = ReplyRequest::new(user(&"word ".repeat(4 << 20)), greedy(4), CancelFlag::new());
    let Err(BackendError::InvalidRequest(message)) = engine.start_reply(request) else { panic!("a 20 MiB request was taken") };
    assert!(message.contains("20.0 MiB") && message.contains("16 MiB"), "{message}");
    next_reply_works(&engine).await;
    assert_eq!(engine.host_pid(), pid, "the same engine process answers");
}

#[tokio::test]
async fn a_killed_engine_is_started_again() {
    let engine = loaded_engine().await;
    let kill = |engine: &Engine| {
        let pid = engine.host_pid().unwrap() as i32;
        // SAFETY: kill(2) on the engine process this test started.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    };
    let (text, error) = die_mid_reply(&engine, kill).await;
    assert!(!text.is_empty());
    assert!(
        matches!(&error, BackendError::EngineCrashed { cause } if cause.contains("killed (SIGKILL)") && cause.contains("out of memory")),
        "{error:?}"
    );
    next_reply_works(&engine).await;
}

/// Crashes in a row make the restart wait: a request in the meantime is refused in words with
/// the wait (nothing reaches a process), and the engine comes back by itself when it is over.
#[tokio::test]
async fn an_engine_that_keeps_dying_restarts_after_a_wait() {
    let mut program = HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host")).with_test_hooks();
    program.restart_backoff = RestartBackoff { free_restarts: 1, first_wait: Duration::from_secs(2), ..RestartBackoff::default() };
    let engine = Engine::spawn_with(program);
    let params = LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..LoadParams::default() };
    engine.load(&common::model_path(), params).await.unwrap();

    // The first crash is answered by a restart at once.
    let (_, error) = die_mid_reply(&engine, Engine::abort_for_test).await;
    assert!(matches!(&error, BackendError::EngineCrashed { cause } if !cause.contains("starts again in")), "{error:?}");
    next_reply_works(&engine).await;

    // The second in a row waits, and says so.
    let (_, error) = die_mid_reply(&engine, Engine::abort_for_test).await;
    let died = Instant::now();
    let BackendError::EngineCrashed { cause } = &error else { panic!("{error:?}") };
    assert!(cause.ends_with("The engine has died 2 times in a row, so it starts again in 2 s"), "{cause}");
    assert_eq!(engine.host_pid(), None, "no process runs during the wait");
    let request = ReplyRequest::new(user("Hello"), greedy(4), CancelFlag::new());
    let Err(refused @ BackendError::EngineRestarting { retry_after_s: 1..=2, .. }) = engine.start_reply(request) else {
        panic!("a request during the wait was taken")
    };
    assert!(refused.to_string().starts_with("the engine has died 2 times in a row (last: the model crashed"), "{refused}");
    assert_eq!(engine.host_pid(), None, "the refused request started no process");

    let deadline = Instant::now() + Duration::from_secs(10);
    while engine.host_pid().is_none() {
        assert!(Instant::now() < deadline, "the engine never came back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(died.elapsed() >= Duration::from_millis(1900), "restarted after {:?}", died.elapsed());
    next_reply_works(&engine).await;
}

#[tokio::test]
async fn stop_and_quit_answer_in_bounded_time() {
    let engine = loaded_engine().await;
    let long = user("Write a long story about a dragon who learns to bake bread.");
    let stopped_at = Instant::now();
    let stopped = reply(&engine, &long, greedy(2000), Some(1)).await;
    assert!(stopped_at.elapsed() < Duration::from_secs(10));
    assert_eq!(stopped.reason, hearth_core::FinishReason::Cancelled);

    // Quit while a reply streams: the process is gone within the bound.
    let request = ReplyRequest::new(long, greedy(2000), CancelFlag::new());
    let mut stream = engine.start_reply(request).unwrap();
    let _ = stream.events.recv().await;
    let pid = engine.host_pid().unwrap() as i32;
    let quitting = Instant::now();
    engine.shutdown();
    assert!(quitting.elapsed() <= hearth_engine::host::QUIT_WAIT + Duration::from_millis(500));
    // SAFETY: signal 0 only asks whether the process exists.
    assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "the engine process outlived quit");
    assert!(engine.loaded().is_none());
}

#[tokio::test]
async fn a_wedged_engine_answers_stop_in_a_second_and_is_replaced() {
    let mut program = hearth_engine::HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host")).with_test_hooks();
    program.wedged_after = Duration::from_secs(2);
    let engine = Engine::spawn_with(program);
    let params = hearth_engine::LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..Default::default() };
    engine.load(&common::model_path(), params).await.unwrap();
    let wedged_pid = engine.host_pid().unwrap();

    let cancel = CancelFlag::new();
    let request = ReplyRequest::new(user("Write a long story about a dragon."), greedy(2000), cancel.clone());
    let mut stream = engine.start_reply(request).unwrap();
    assert!(matches!(stream.events.recv().await, Some(GenEvent::Delta(_))));
    // Freeze and then Stop reach the engine in that order, through the one pipe: Stop is never
    // answered by the engine itself.
    engine.freeze_for_test();
    let stopped_at = Instant::now();
    cancel.cancel();
    let last = loop {
        match stream.events.recv().await.expect("the reply ends") {
            GenEvent::Delta(_) => continue,
            other => break other,
        }
    };
    let waited = stopped_at.elapsed();
    assert!(matches!(last, GenEvent::Finished { reason: hearth_core::FinishReason::Cancelled, .. }), "{last:?}");
    assert!(waited >= hearth_engine::host::STOP_ANSWER && waited < Duration::from_millis(1500), "{waited:?}");

    // Still wedged two seconds later: killed, started again, the model loaded again.
    let deadline = Instant::now() + Duration::from_secs(10);
    while engine.host_pid().is_none_or(|pid| pid == wedged_pid) {
        assert!(Instant::now() < deadline, "the wedged engine was never replaced");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(engine.last_crash().as_deref(), Some("the engine stopped responding for 2 s after Stop and was restarted"));
    next_reply_works(&engine).await;
}

#[tokio::test]
async fn a_load_can_be_cancelled_and_the_next_one_works() {
    let engine = loaded_engine().await;
    let cancel = CancelFlag::new();
    let raise = cancel.clone();
    let params = hearth_engine::LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..Default::default() };
    // Another file (the model loaded would be taken from memory, with no steps to give up at).
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.gguf");
    std::fs::copy(common::model_path(), &other).unwrap();
    // Given up at llama.cpp's first progress step.
    let given_up = engine.load_with_progress(&other, params.clone(), move |_| raise.cancel(), cancel).await;
    assert!(matches!(&given_up, Err(hearth_engine::EngineError::LoadCancelled { .. })), "{given_up:?}");
    assert!(given_up.unwrap_err().to_string().ends_with("was cancelled"));
    assert!(engine.loaded().is_none());
    assert!(engine.last_crash().is_none());
    engine.load(&common::model_path(), params).await.unwrap();
    next_reply_works(&engine).await;
}

/// A GPU backend whose start kills the process (a driver that aborts at init): the engine is
/// started again without GPU backends, says why, and the model runs on the CPU.
#[tokio::test]
async fn a_gpu_backend_that_aborts_at_start_costs_the_gpu_not_the_chat() {
    let modules = tempfile::tempdir().unwrap();
    let cpu = std::path::Path::new(env!("GGML_BACKEND_DIR")).join("libggml-cpu.so");
    std::os::unix::fs::symlink(&cpu, modules.path().join("libggml-cpu.so")).unwrap();
    let source = modules.path().join("broken.c");
    std::fs::write(
        &source,
        "#include <stdlib.h>\nint ggml_backend_score(void) { return 1; }\nvoid *ggml_backend_init(void) { abort(); }\n",
    )
    .unwrap();
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(modules.path().join("libggml-broken.so"))
        .arg(&source)
        .status()
        .expect("a C compiler (build-essential)");
    assert!(built.success());

    let mut program = HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host"));
    program.env.push((hearth_engine::devices::BACKENDS_DIR_ENV.into(), modules.path().into()));
    let engine = Engine::spawn_with(program);
    let report = engine.devices().await;
    assert_eq!(report.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["CPU"], "{report:?}");
    let problem = report.problems.iter().find(|p| p.module == "GPU backends").unwrap_or_else(|| panic!("{report:?}"));
    assert!(problem.reason.contains("turned off after the engine died loading them"), "{}", problem.reason);
    assert!(problem.reason.contains("the CPU took over"), "{}", problem.reason);

    let params = LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..LoadParams::default() };
    let info = engine.load(&common::model_path(), params).await.expect("the model loads on the CPU");
    assert_eq!((info.offload.backend.as_str(), info.offload.gpu_layers), ("CPU", 0));
    next_reply_works(&engine).await;
}

#[tokio::test]
async fn an_engine_never_asked_for_a_model_ends_at_rest_and_starts_again_when_needed() {
    let mut program = HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host"));
    program.rest_after = Duration::from_millis(300);
    let engine = Engine::spawn_with(program);
    let report = engine.devices().await;
    assert!(!report.devices.is_empty(), "{report:?}");
    let resting = engine.host_pid().expect("an engine process reported the devices") as i32;
    assert!(engine.rests_when_idle());

    let deadline = Instant::now() + Duration::from_secs(10);
    while engine.host_pid().is_some() {
        assert!(Instant::now() < deadline, "the engine process never rested");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // SAFETY: signal 0 only asks whether the process exists.
    while unsafe { libc::kill(resting, 0) } == 0 {
        assert!(Instant::now() < deadline, "the resting engine process did not end");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(engine.last_crash(), None, "an end at rest is no crash");
    assert_eq!(engine.devices().await, report, "the devices are still known without a process");
    assert_eq!(engine.host_pid(), None);

    // Asked for a model, it starts again, and with the model it stays.
    let params = LoadParams { n_ctx: Some(512), n_threads: Some(2), ..Default::default() };
    engine.load(&common::model_path(), params.clone()).await.unwrap();
    let working = engine.host_pid().expect("a load starts an engine process");
    assert!(!engine.rests_when_idle(), "an engine asked for a model does not rest");
    engine.unload().await.unwrap();
    assert!(!engine.rests_when_idle(), "nor once its model is let go of");
    engine.load(&common::model_path(), params).await.unwrap();
    assert_eq!(engine.host_pid(), Some(working));
    next_reply_works(&engine).await;
}
