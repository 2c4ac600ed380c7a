//! `hearth-cli serve` with the real model over real HTTP on 127.0.0.1: the official `openai`
//! Python client (a real peer) chats, streams and gets its errors; malformed and hostile requests
//! get OpenAI's error shapes and leave the server serving; a key guards it when set.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

mod support;
use support::model_path;
use support::served::{Served, client, post, serve_command};

/// The Python with the `openai` client (scripts/setup.sh test installs it).
fn python() -> PathBuf {
    let python = std::env::var_os("HEARTH_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/openai-venv/bin/python"));
    assert!(python.exists(), "{} is missing: run scripts/setup.sh test (it installs the openai client)", python.display());
    python
}

fn hearth_cli(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
    command.arg("serve").arg("--model").arg(model_path()).args(["--ctx", "1024", "--threads", "2"]).args(args);
    command
}

/// Starts the server on a free port and waits for the line that says where it listens.
fn serve(args: &[&str]) -> Served {
    let mut command = hearth_cli(&["--port", "0"]);
    command.args(args);
    serve_command(command)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_client_and_hostile_requests_get_what_openai_would_give() {
    let served = serve(&["--allow-origin", "https://chat.example.org"]);

    // The official client: ten streamed turns, a whole reply, and its errors.
    let out = Command::new(python())
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/openai_client.py"))
        .args([&served.base, &served.model])
        .output()
        .unwrap();
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{printed}");
    assert!(printed.contains("checks passed"), "{printed}");

    // Bad requests: each a JSON error in OpenAI's shape, with the status OpenAI gives.
    let hello = |extra: Value| {
        let mut body = json!({ "model": served.model, "messages": [{ "role": "user", "content": "hi" }], "max_tokens": 4 });
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body.to_string()
    };
    let cases: Vec<(&str, String, u16, Option<&str>)> = vec![
        ("malformed JSON", "{\"model\": ".into(), 400, None),
        ("not an object", "[]".into(), 400, None),
        ("a wrong type", hello(json!({ "temperature": "warm" })), 400, Some("temperature")),
        ("an unknown field", hello(json!({ "functions": [] })), 400, Some("functions")),
        ("a missing model", hello(json!({ "model": "no-such-model" })), 404, Some("model")),
        ("several choices", hello(json!({ "n": 2 })), 400, Some("n")),
        ("an image for a text model", image_question(&served.model, &hearth_testkit::images::gradient().data_url()), 400, None),
    ];
    for (name, body, status, param) in cases {
        let (got, error) = post(&served.base, body).await;
        assert_eq!(got, status, "{name}: {error}");
        assert_eq!(error["error"]["type"], "invalid_request_error", "{name}");
        assert_eq!(error["error"]["param"].as_str(), param, "{name}: {error}");
        assert!(error["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{name}");
        if name.contains("image") {
            assert!(error["error"]["message"].as_str().unwrap().contains("this model cannot read images"), "{error}");
        }
    }
    // What a web page can make a browser send: a name rebound to 127.0.0.1, a foreign origin (a
    // simple POST and a preflight), a body not declared JSON (no preflight needed for it).
    let port = served.base.rsplit(':').next().unwrap().trim_end_matches("/v1").to_owned();
    let rebound = format!("rebound.example:{port}");
    let ok = hello(json!({}));
    type Headers<'a> = Vec<(&'a str, &'a str)>;
    let cases: Vec<(&str, reqwest::Method, Headers, u16)> = vec![
        ("a rebound Host", reqwest::Method::POST, vec![("host", &rebound), ("content-type", "application/json")], 403),
        ("a foreign Origin", reqwest::Method::POST, vec![("origin", "https://evil.example"), ("content-type", "application/json")], 403),
        (
            "its preflight",
            reqwest::Method::OPTIONS,
            vec![("origin", "https://evil.example"), ("access-control-request-method", "POST")],
            403,
        ),
        ("a text/plain body", reqwest::Method::POST, vec![("content-type", "text/plain;charset=UTF-8")], 415),
        ("a body with no type", reqwest::Method::POST, vec![], 415),
        ("an allowed origin's preflight", reqwest::Method::OPTIONS, vec![("origin", "https://chat.example.org")], 204),
        (
            "an allowed origin",
            reqwest::Method::POST,
            vec![("origin", "https://chat.example.org"), ("content-type", "application/json")],
            200,
        ),
    ];
    for (name, method, headers, status) in cases {
        let mut request = client().request(method, format!("{}/chat/completions", served.base)).body(ok.clone());
        for (header, value) in &headers {
            request = request.header(*header, *value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{name}");
        let origin = headers.iter().find(|(h, _)| *h == "origin").map(|(_, v)| *v);
        let allowed = response.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(allowed.as_deref(), origin.filter(|_| status < 300), "{name}: CORS only for the allowed origin");
        if status >= 400 {
            let error: Value = response.json().await.unwrap();
            assert!(error["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{name}: {error}");
        }
    }

    // A body past the cap (12 MiB: once between the server's cap and the engine's frame, it ended
    // the engine process) is refused; the next requests below are answered. The refusal comes
    // before the whole body is read, and the connection is closed after it: a client still
    // writing (a loaded machine) sees the close rather than the 413.
    let past_cap = hello(json!({ "stop": ["x".repeat(12 << 20)] }));
    let sent =
        client().post(format!("{}/chat/completions", served.base)).header("content-type", "application/json").body(past_cap).send().await;
    match sent {
        Ok(response) => assert_eq!(response.status().as_u16(), 413),
        Err(e) => assert!(closed_mid_upload(&e), "{e:?}"),
    }

    let missing = client().get(format!("{}/completions/nowhere", served.base)).send().await.unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert!(missing.json::<Value>().await.unwrap()["error"]["message"].is_string());

    // A client that goes away mid-stream frees the engine: the next requests are answered.
    let long = hello(json!({ "stream": true, "max_tokens": 400, "ignore_eos": true }));
    let mut response = client()
        .post(format!("{}/chat/completions", served.base))
        .header("content-type", "application/json")
        .body(long)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let first = response.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).starts_with("data: "), "{first:?}");
    drop(response);

    // A hundred requests at once: 64 are taken (four decoded at a time, the rest queued), the
    // others are told to come back (429), and every one taken is answered in full.
    let asks = (0..100).map(|i| post(&served.base, hello(json!({ "max_tokens": 2, "seed": i }))));
    let mut answered = 0;
    for (status, reply) in futures_util::future::join_all(asks).await {
        match status {
            200 => {
                answered += 1;
                assert_eq!(reply["object"], "chat.completion");
                assert!(reply["usage"]["completion_tokens"].as_u64().unwrap() <= 2, "{reply}");
            }
            _ => assert_eq!((status, reply["error"]["code"].as_str()), (429, Some("rate_limit_exceeded")), "{reply}"),
        }
    }
    assert!(answered >= 64, "{answered} answered");
}

/// A question about an image, in OpenAI's content parts.
fn image_question(model: &str, url: &str) -> String {
    let parts = json!([{ "type": "image_url", "image_url": { "url": url } }, { "type": "text", "text": "What is in the picture?" }]);
    json!({ "model": model, "max_tokens": 4, "temperature": 0, "messages": [{ "role": "user", "content": parts }] }).to_string()
}

/// A vision model (SmolLM2 beside the test projector) reads an image sent as a data URL (16
/// tokens more than the question alone) and the same image again from its cache; a web URL is
/// refused by name, fetched by no one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vision_model_reads_an_image_sent_as_a_data_url() {
    let vision = model_path().parent().unwrap().join("vision/SmolLM2-135M-Instruct.Q4_1.gguf");
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
    command.arg("serve").arg("--model").arg(&vision).args(["--ctx", "1024", "--threads", "2", "--port", "0"]);
    let served = serve_command(command);
    let image = hearth_testkit::images::gradient().data_url();
    let (status, seen) = post(&served.base, image_question(&served.model, &image)).await;
    assert_eq!(status, 200, "{seen}");
    let text_only =
        json!({ "model": served.model, "max_tokens": 4, "messages": [{ "role": "user", "content": "What is in the picture?" }] });
    let (_, plain) = post(&served.base, text_only.to_string()).await;
    let tokens = |reply: &Value| reply["usage"]["prompt_tokens"].as_u64().unwrap();
    assert!(tokens(&seen) >= tokens(&plain) + 16, "{seen} vs {plain}");
    let (_, again) = post(&served.base, image_question(&served.model, &image)).await;
    assert_eq!(again["choices"][0]["message"]["content"], seen["choices"][0]["message"]["content"], "the same image, the same reply");

    let (status, error) = post(&served.base, image_question(&served.model, "https://example.com/cat.png")).await;
    assert_eq!((status, error["error"]["param"].as_str()), (400, Some("messages[0].content[0].image_url.url")), "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("fetches no images from the web"), "{error}");
}

/// gpt-oss's channels through the API (the tiny model with its special tokens and gpt-oss's real
/// chat template, made by `scripts/make-test-models.py`): its analysis answered as `reasoning_content`, whole and
/// streamed, its final as the content; its call to a function as `tool_calls`; an effort taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpt_oss_channels_come_back_as_reasoning_content_and_tool_calls() {
    let harmony = model_path().with_file_name("tiny-gpt-oss.gguf");
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
    command.arg("serve").arg("--model").arg(&harmony).args(["--ctx", "1024", "--threads", "2", "--port", "0"]);
    let served = serve_command(command);
    let grammar =
        r#"root ::= <|channel|> "analysis" <|message|> "Easy sum." <|end|> <|start|> "assistant" <|channel|> "final" <|message|> "Four.""#;
    let question = json!([{ "role": "user", "content": "What is 2 + 2?" }]);
    let body = json!({ "model": served.model, "messages": question, "max_tokens": 40, "grammar": grammar, "reasoning_effort": "low" });
    let (status, whole) = post(&served.base, body.to_string()).await;
    assert_eq!(status, 200, "{whole}");
    let message = &whole["choices"][0]["message"];
    assert_eq!((message["reasoning_content"].as_str(), message["content"].as_str()), (Some("Easy sum."), Some("Four.")), "{whole}");

    let mut body = body;
    body["stream"] = true.into();
    let events = client().post(format!("{}/chat/completions", served.base)).header("content-type", "application/json");
    let events = events.body(body.to_string()).send().await.unwrap();
    let events = events.text().await.unwrap();
    let (mut reasoning, mut content) = (String::new(), String::new());
    for line in events.lines().filter_map(|l| l.strip_prefix("data: ")).filter(|l| *l != "[DONE]") {
        let chunk: Value = serde_json::from_str(line).unwrap();
        let delta = &chunk["choices"][0]["delta"];
        reasoning.push_str(delta["reasoning_content"].as_str().unwrap_or_default());
        content.push_str(delta["content"].as_str().unwrap_or_default());
    }
    assert_eq!((reasoning.as_str(), content.as_str()), ("Easy sum.", "Four."), "{events}");

    let weather = json!({ "type": "function", "function": { "name": "get_weather", "parameters": {
        "type": "object", "properties": { "city": { "type": "string", "maxLength": 20 } }, "required": ["city"] } } });
    let asked = json!({ "model": served.model, "messages": question, "max_tokens": 60, "tools": [weather], "tool_choice": "required" });
    let (status, called) = post(&served.base, asked.to_string()).await;
    assert_eq!(status, 200, "{called}");
    let choice = &called["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls", "{called}");
    let call = &choice["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather", "{called}");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert!(arguments["city"].is_string(), "{called}");
}

/// The engine processes `served` has started and still runs (children of any of its threads).
fn engine_pids(served: &Served) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{}/task", served.child.id())).unwrap();
    let mut pids: Vec<String> = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|children| children.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    pids.sort();
    pids
}

/// Floods and slow clients are bounded: requests past the queue get 429, connections that send
/// nothing or half their headers are closed after the read timeout and hold no one else up, a
/// body that never arrives gets 408 — and the engine process lives through all of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floods_and_slow_clients_are_bounded_and_the_engine_lives_on() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let served = serve(&["--queue", "2", "--read-timeout", "2"]);
    let engines = engine_pids(&served);
    assert_eq!(engines.len(), 1, "{engines:?}");
    let addr = served.base.trim_start_matches("http://").trim_end_matches("/v1").to_owned();
    let ask = |stream: bool, max_tokens: u32| {
        json!({ "model": served.model, "messages": [{ "role": "user", "content": "Tell a story." }], "max_tokens": max_tokens,
                "stream": stream, "ignore_eos": true })
        .to_string()
    };
    let open_stream = || async {
        let mut response = client()
            .post(format!("{}/chat/completions", served.base))
            .header("content-type", "application/json")
            .body(ask(true, 400))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        response.chunk().await.unwrap().unwrap();
        response
    };

    // Two replies streaming fill the queue: the next eight are refused at once, with a wait.
    let streams = [open_stream().await, open_stream().await];
    let refused = (0..8).map(|_| {
        client().post(format!("{}/chat/completions", served.base)).header("content-type", "application/json").body(ask(false, 4)).send()
    });
    for response in futures_util::future::join_all(refused).await {
        let response = response.unwrap();
        assert_eq!(response.status().as_u16(), 429);
        assert_eq!(response.headers()["retry-after"], "1");
        let error: Value = response.json().await.unwrap();
        assert!(error["error"]["message"].as_str().unwrap().contains("2 requests are being answered"), "{error}");
    }
    drop(streams); // Their replies stop, and their places are free again.

    // 200 connections that send nothing and 200 that stop mid-headers: an ordinary request is
    // still answered, and each of them is closed once the read timeout has passed.
    let mut idle = Vec::new();
    for i in 0..400 {
        let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
        if i % 2 == 1 {
            tcp.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.unwrap();
        }
        idle.push(tcp);
    }
    let (status, reply) = post(&served.base, ask(false, 4)).await;
    assert_eq!(status, 200, "{reply}");
    let closed = idle.into_iter().map(|mut tcp| async move {
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(8), tcp.read_to_end(&mut rest)).await.is_ok()
    });
    let closed = futures_util::future::join_all(closed).await;
    assert!(closed.iter().all(|&c| c), "{} of 400 connections were still open", closed.iter().filter(|&&c| !c).count());

    // A body that stops short of its length: 408 once the read timeout has passed.
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":";
    slow.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0; 4096];
    let read = tokio::time::timeout(Duration::from_secs(8), slow.read(&mut answer)).await.expect("no answer to a stalled body").unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 2 s"), "{answer}");

    // None of it reached the engine process: the same one answers the next request.
    let (status, reply) = post(&served.base, ask(false, 4)).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(engine_pids(&served), engines, "the engine process was started again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_guards_the_server_and_the_network_needs_one() {
    // Beyond loopback without a key: refused before the model is even loaded.
    let out = hearth_cli(&["--host", "0.0.0.0", "--port", "0"]).env_remove("HEARTH_SERVER_KEY").output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("API key"), "{}", String::from_utf8_lossy(&out.stderr));

    let served = serve(&["--api-key", "sk-hearth-test"]);
    let models = |key: Option<&'static str>| {
        let request = client().get(format!("{}/models", served.base));
        async move {
            let request = match key {
                Some(key) => request.bearer_auth(key),
                None => request,
            };
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        }
    };
    for key in [None, Some("sk-hearth-tes"), Some("sk-hearth-test2")] {
        let (status, error) = models(key).await;
        assert_eq!((status, error["error"]["code"].as_str()), (401, Some("invalid_api_key")), "{key:?}");
    }
    let (status, listed) = models(Some("sk-hearth-test")).await;
    assert_eq!(status, 200);
    assert_eq!(listed["data"][0]["id"], served.model.as_str());
}

/// `name`.gguf in `dir`: the test model under another name (a hard link where it can be).
fn model_named(dir: &std::path::Path, name: &str) -> String {
    let path = dir.join(format!("{name}.gguf"));
    if std::fs::hard_link(model_path(), &path).is_err() {
        std::fs::copy(model_path(), &path).unwrap();
    }
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_of_the_folder_is_loaded_when_asked_for_and_requests_wait_for_it() {
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target");
    let dir = tempfile::tempdir_in(&target).unwrap();
    let alpha = model_named(dir.path(), "alpha");
    model_named(dir.path(), "beta");
    std::fs::write(dir.path().join("broken.gguf"), b"GGUF but not really").unwrap();
    let folder = dir.path().display().to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
    command.args(["serve", "--model", &alpha, "--models-dir", &folder, "--ctx", "1024", "--threads", "2", "--port", "0"]);
    let served = serve_command(command);
    let ids = |listed: Value| listed["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
    let models = || async { client().get(format!("{}/models", served.base)).send().await.unwrap().json::<Value>().await.unwrap() };
    assert_eq!(ids(models().await), ["alpha", "beta", "broken"]);

    let ask = |model: &str, stream: bool| {
        json!({ "model": model, "messages": [{ "role": "user", "content": "Name a colour." }], "max_tokens": 24, "stream": stream, "ignore_eos": true })
            .to_string()
    };
    // alpha is writing; beta is asked for twice meanwhile: its load waits for alpha's reply to
    // end, and the second request, sent while beta is on its way, waits for that load.
    let mut writing = client()
        .post(format!("{}/chat/completions", served.base))
        .header("content-type", "application/json")
        .body(ask("alpha", true))
        .send()
        .await
        .unwrap();
    assert_eq!(writing.status().as_u16(), 200);
    writing.chunk().await.unwrap().unwrap();
    let (first_beta, second_beta) = tokio::join!(post(&served.base, ask("beta", false)), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        post(&served.base, ask("beta", false)).await
    });
    let mut alpha_text = String::new();
    while let Some(chunk) = writing.chunk().await.unwrap() {
        alpha_text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(alpha_text.contains("\"model\":\"alpha\"") && alpha_text.contains("[DONE]"), "{alpha_text}");
    for (status, reply) in [first_beta, second_beta] {
        assert_eq!(status, 200, "{reply}");
        assert_eq!(reply["model"], "beta");
        assert_eq!(reply["usage"]["completion_tokens"], 24, "{reply}");
    }
    assert_eq!(ids(models().await)[0], "beta", "the loaded model is listed first");

    // A file of the folder that does not load, and a name that is not there: words, and the
    // model in place keeps answering.
    let (status, error) = post(&served.base, ask("broken", false)).await;
    assert_eq!((status, error["error"]["code"].as_str()), (500, Some("model_load_failed")), "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("broken"), "{error}");
    let (status, error) = post(&served.base, ask("gamma", false)).await;
    assert_eq!((status, error["error"]["code"].as_str()), (404, Some("model_not_found")), "{error}");
    let (status, reply) = post(&served.base, ask("beta", false)).await;
    assert_eq!((status, reply["model"].as_str()), (200, Some("beta")), "{reply}");
}

/// The server closed the connection while the request's body was still being written.
fn closed_mid_upload(error: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return matches!(io.kind(), std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset);
        }
        source = e.source();
    }
    false
}
