//! Beyond one machine: a model's layers on another machine's device, through llama.cpp's RPC
//! backend, proven on loopback. `make test` builds llama.cpp's rpc-server and the RPC module from
//! the engine's own llama.cpp (scripts/build-backend.sh tests) and names the folder in
//! HEARTH_TEST_RPC_MODULES: the module beside a link to this build's CPU module, the server in
//! `rpc-server/` computing with that same CPU module, so a reply written there is the reply
//! written here.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hearth_core::{BackendError, CancelFlag, ChatBackend, GenEvent, ReplyRequest};
use hearth_engine::{Engine, EngineError, HostProgram, LoadParams};

use common::{greedy, model_path, reply, user};

/// The folder `make test` built, or `None` outside it (CI always builds it).
fn modules() -> Option<PathBuf> {
    hearth_testkit::llama_programs::modules("HEARTH_TEST_RPC_MODULES")
}

/// llama.cpp's rpc-server on a free port of 127.0.0.1, stopped when dropped.
struct RpcServer {
    child: Child,
    endpoint: String,
}

impl RpcServer {
    fn start(modules: &std::path::Path) -> RpcServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(modules.join("rpc-server/ggml-rpc-server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string(), "-t", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rpc-server starts");
        let endpoint = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&endpoint).is_err() {
            assert!(Instant::now() < deadline, "rpc-server did not listen on {endpoint} within 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        RpcServer { child, endpoint }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RpcServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An engine process that loads the RPC module beside the CPU's.
fn rpc_engine(modules: &std::path::Path) -> Engine {
    let mut program = HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host"));
    program.env.push((hearth_engine::devices::BACKENDS_DIR_ENV.into(), modules.as_os_str().to_owned()));
    Engine::spawn_with(program)
}

fn params(rpc_servers: &[&str]) -> LoadParams {
    let rpc_servers = rpc_servers.iter().map(|s| s.to_string()).collect();
    LoadParams { n_ctx: Some(2048), n_threads: Some(2), rpc_servers, ..LoadParams::default() }
}

#[tokio::test]
async fn a_model_on_another_machines_device_writes_what_it_writes_here() {
    let _one = common::one_at_a_time().await;
    let Some(modules) = modules() else { return };
    let server = RpcServer::start(&modules);
    let engine = rpc_engine(&modules);
    // Threads left to choose: with every layer on a device the CPU only feeds it, on one thread.
    let on_server = LoadParams { n_threads: None, ..params(&[&server.endpoint]) };
    let info = engine.load(&model_path(), on_server).await.expect("the model loads onto the server's device");
    assert_eq!((info.offload.backend.as_str(), info.offload.gpu_layers, info.offload.total_layers), ("RPC", 30, 30));
    assert_eq!(info.offload.label, format!("{} (RPC): all 30 layers", server.endpoint));
    assert_eq!((info.n_threads, info.n_threads_batch), (1, 1));
    let report = engine.devices().await;
    let device = report.devices.iter().find(|d| d.backend == "RPC").unwrap_or_else(|| panic!("no RPC device: {report:?}"));
    assert_eq!(device.description, server.endpoint);
    assert!(device.free_bytes > 0, "{device:?}");

    let here = common::spawn_engine();
    assert_eq!(here.load(&model_path(), params(&[])).await.unwrap().offload.backend, "CPU");
    for prompt in ["What is the capital of France?", "Name three colours of the rainbow.", "Write a haiku about tea."] {
        let (there, here) = (reply(&engine, &user(prompt), greedy(32), None).await, reply(&here, &user(prompt), greedy(32), None).await);
        assert_eq!(there.text, here.text, "{prompt:?}");
    }
    // The chat's cache is reused there as here: a second turn reads only what is new.
    let mut turn = user("What is the capital of France?");
    let (first, _) = common::chat_reply(&engine, 7, &turn, greedy(16)).await;
    turn.push(hearth_core::ChatMessage::new(hearth_core::Role::Assistant, &first));
    turn.push(hearth_core::ChatMessage::new(hearth_core::Role::User, "And of Italy?"));
    let (_, stats) = common::chat_reply(&engine, 7, &turn, greedy(16)).await;
    assert!(stats.cached_tokens > 20 && stats.cached_tokens < stats.prompt_tokens, "{stats:?}");
}

#[tokio::test]
async fn a_server_that_goes_away_costs_the_reply_in_words_and_the_cpu_takes_over() {
    let _one = common::one_at_a_time().await;
    let Some(modules) = modules() else { return };
    let mut server = RpcServer::start(&modules);
    let engine = rpc_engine(&modules);
    engine.load(&model_path(), params(&[&server.endpoint])).await.expect("the model loads onto the server's device");

    let mut sampling = greedy(2000);
    sampling.ignore_eos = true;
    let mut stream =
        engine.start_reply(ReplyRequest::new(user("Write a long story about a dragon."), sampling, CancelFlag::new())).unwrap();
    let mut text = String::new();
    let error = loop {
        match stream.events.recv().await.expect("the reply ends with a word") {
            GenEvent::Delta(delta) => {
                text.push_str(&delta);
                server.stop();
            }
            GenEvent::Failed(error) => break error,
            GenEvent::Finished { reason, .. } => panic!("the reply finished ({reason:?}) with its server gone"),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => {}
        }
    };
    assert!(!text.is_empty(), "the text written before is kept");
    let BackendError::EngineCrashed { cause } = &error else { panic!("{error:?}") };
    assert!(cause.contains("RPC server"), "{cause}");

    // Loaded again, the server is said to be gone, and the model loads here without it.
    let again = engine.load(&model_path(), params(&[&server.endpoint])).await.unwrap_err();
    assert!(matches!(&again, EngineError::Device(words) if words.contains("does not answer")), "{again:?}");
    let info = engine.load(&model_path(), params(&[])).await.expect("the model loads on the CPU");
    assert_eq!(info.offload.backend, "CPU");
    let after = reply(&engine, &user("What is the capital of France? Answer in one sentence."), greedy(48), None).await;
    assert!(after.text.contains("Paris"), "{:?}", after.text);
}

#[tokio::test]
async fn a_server_that_does_not_answer_or_no_rpc_module_is_refused_in_words() {
    let _one = common::one_at_a_time().await;
    let Some(modules) = modules() else { return };
    let engine = rpc_engine(&modules);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let error = engine.load(&model_path(), params(&[&closed.to_string()])).await.unwrap_err();
    let EngineError::Device(words) = &error else { panic!("{error:?}") };
    assert!(words.contains(&closed.to_string()) && words.contains("does not answer") && words.contains("rpc-server"), "{words}");
    assert_eq!(engine.last_crash(), None, "refused before llama.cpp was asked: no crash");

    // An engine without the RPC module says what is missing.
    let server = RpcServer::start(&modules);
    let error = common::spawn_engine().load(&model_path(), params(&[&server.endpoint])).await.unwrap_err();
    assert!(matches!(&error, EngineError::Device(words) if words.contains("libggml-rpc.so")), "{error:?}");
}
