//! The providers against local servers speaking OpenAI's and Anthropic's real wire formats over
//! real HTTP on 127.0.0.1: replies stream, every failure is the right typed error in words, the
//! partial text of a broken reply is kept, and Stop hangs up at once.

use hearth_testkit::fake_provider as fake;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hearth_core::{
    BackendError, CancelFlag, ChatBackend, ChatMessage, ChatService, FinishReason, GenEvent, HistoryStore, MessageStatus, ModelTarget,
    OfferedTools, ProviderConfig, ProviderError, ProviderKind, ReplyRequest, Role, SamplingParams, ToolChoice, ToolResult, ToolRun,
    ToolRunEnd, ToolSpec, Turn, TurnError, TurnEvent,
};
use hearth_providers::{FixedKeys, HubOptions, Providers, Timeouts};

const TIMEOUTS: Timeouts = Timeouts { connect: Duration::from_secs(2), response: Duration::from_secs(2), idle: Duration::from_millis(700) };

fn config(id: &str, kind: ProviderKind, base_url: &str) -> ProviderConfig {
    ProviderConfig { base_url: base_url.into(), models: vec!["typed-in".into()], ..ProviderConfig::new(id, id, kind) }
}

/// Providers "openai", "anthropic" and "compatible" at the fake server (and the same with a
/// wrong key as "*-badkey"), no hub.
fn providers(url: &str) -> Providers {
    providers_with(url, TIMEOUTS)
}

fn providers_with(url: &str, timeouts: Timeouts) -> Providers {
    let keys = BTreeMap::from([
        ("openai".to_owned(), fake::GOOD_KEY.to_owned()),
        ("anthropic".to_owned(), fake::GOOD_KEY.to_owned()),
        ("compatible".to_owned(), fake::GOOD_KEY.to_owned()),
        ("openai-badkey".to_owned(), "sk-wrong-0000".to_owned()),
        ("anthropic-badkey".to_owned(), "sk-wrong-0000".to_owned()),
    ]);
    let providers =
        Providers::new(Arc::new(FixedKeys(keys)), timeouts, &HubOptions { endpoint: Some("http://127.0.0.1:9".into()), cache_dir: None });
    providers.set_configs(vec![
        config("openai", ProviderKind::OpenAi, url),
        config("anthropic", ProviderKind::Anthropic, url),
        config("compatible", ProviderKind::OpenAiCompatible, url),
        config("openai-badkey", ProviderKind::OpenAi, url),
        config("anthropic-badkey", ProviderKind::Anthropic, url),
        config("nokey", ProviderKind::OpenAi, url),
    ]);
    providers
}

fn request(provider: &str, model: &str, cancel: CancelFlag) -> ReplyRequest {
    let messages = vec![ChatMessage::new(Role::System, "Be brief."), ChatMessage::new(Role::User, "hello there")];
    let mut request = ReplyRequest::new(messages, SamplingParams::default(), cancel);
    request.target = ModelTarget::Remote { provider: provider.into(), model: model.into() };
    request
}

/// The reply's text and how it ended.
async fn reply(providers: &Providers, provider: &str, model: &str) -> (String, Result<FinishReason, BackendError>) {
    let mut stream = match providers.start_reply(request(provider, model, CancelFlag::new())) {
        Ok(stream) => stream,
        Err(e) => return (String::new(), Err(e)),
    };
    let mut text = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => text.push_str(&d),
            GenEvent::Finished { reason, .. } => return (text, Ok(reason)),
            GenEvent::Failed(e) => return (text, Err(e)),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => unreachable!("providers send none"),
        }
    }
    panic!("the stream ended without Finished or Failed")
}

#[tokio::test]
async fn both_apis_stream_a_reply_with_the_system_prompt_where_each_wants_it() {
    let (url, record) = fake::start().await;
    let providers = providers(&url);
    for provider in ["openai", "anthropic", "compatible"] {
        let (text, end) = reply(&providers, provider, "echo").await;
        assert_eq!(text, "You said: hello there", "{provider}");
        assert_eq!(end, Ok(FinishReason::EndOfTurn), "{provider}");
    }
    let bodies = record.requests.lock().unwrap().clone();
    assert_eq!(bodies[0]["messages"][0]["role"], "system", "OpenAI: a system message first");
    assert_eq!(bodies[1]["system"], "Be brief.", "Anthropic: a top-level system field");
    assert_eq!(bodies[1]["messages"][0]["role"], "user");
    assert!(bodies[1]["max_tokens"].is_u64(), "Anthropic requires max_tokens");
    let headers = record.headers.lock().unwrap();
    assert_eq!(headers[1]["anthropic-version"], "2023-06-01");
}

#[tokio::test]
async fn every_failure_is_a_typed_error_that_says_what_to_do() {
    let (url, _record) = fake::start().await;
    let providers = providers(&url);
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        drop(listener);
        url
    };
    providers.set_configs({
        let mut configs = providers.configs();
        configs.push(config("refused", ProviderKind::OpenAi, &refused));
        configs
    });
    let keys_for_refused = BTreeMap::from([("refused".to_owned(), fake::GOOD_KEY.to_owned())]);
    let refused_providers = Providers::new(Arc::new(FixedKeys(keys_for_refused)), TIMEOUTS, &HubOptions::default());
    refused_providers.set_configs(vec![config("refused", ProviderKind::OpenAi, &refused)]);

    type Check = fn(&ProviderError) -> bool;
    let cases: &[(&str, &str, &str, &str, Check)] = &[
        // provider, model, text kept, words in the message, the variant
        ("openai-badkey", "echo", "", "refused the API key (401)", |e| matches!(e, ProviderError::Unauthorized { .. })),
        ("anthropic-badkey", "echo", "", "refused the API key (401): invalid x-api-key", |e| {
            matches!(e, ProviderError::Unauthorized { .. })
        }),
        ("openai", "forbidden", "", "(403)", |e| matches!(e, ProviderError::Forbidden { .. })),
        ("anthropic", "no-such-model", "", "has no model \"no-such-model\" (404)", |e| matches!(e, ProviderError::ModelNotFound { .. })),
        ("openai", "rate-limited", "", "asks to wait 7 s", |e| e.retry_after_s() == Some(7)),
        ("anthropic", "rate-limited", "", "asks to wait 7 s", |e| e.retry_after_s() == Some(7)),
        ("openai", "server-error", "", "failed on its side (500)", |e| matches!(e, ProviderError::Server { status: 500, .. })),
        ("anthropic", "server-error", "", "failed on its side (529): Overloaded", |e| {
            matches!(e, ProviderError::Server { status: 529, .. })
        }),
        ("openai", "slow", "", "did not answer within 1 s", |e| matches!(e, ProviderError::Timeout { .. })),
        ("openai", "cut", "The first words ", "broke off in the middle", |e| matches!(e, ProviderError::StreamCut { .. })),
        ("anthropic", "cut", "The first words ", "broke off in the middle", |e| matches!(e, ProviderError::StreamCut { .. })),
        ("openai", "malformed", "Hello ", "could not read", |e| matches!(e, ProviderError::Malformed { .. })),
        ("openai", "error-event", "Hello ", "failed on its side", |e| matches!(e, ProviderError::Server { .. })),
        ("anthropic", "error-event", "Hello ", "Overloaded", |e| matches!(e, ProviderError::Server { .. })),
        ("nokey", "echo", "", "needs an API key", |e| matches!(e, ProviderError::NoKey { .. })),
        ("gone", "echo", "", "no provider \"gone\"", |e| matches!(e, ProviderError::UnknownProvider { .. })),
    ];
    for (provider, model, kept, words, is_variant) in cases {
        let (text, end) = reply(&providers, provider, model).await;
        let Err(BackendError::Provider(error)) = end else { panic!("{provider}/{model}: {end:?}") };
        assert_eq!(&text, kept, "{provider}/{model}");
        assert!(error.to_string().contains(words), "{provider}/{model}: {error}");
        assert!(is_variant(&error), "{provider}/{model}: {error:?}");
        assert!(!error.to_string().contains("sk-wrong") && !error.to_string().contains(fake::GOOD_KEY), "a key in {error}");
    }

    let started = std::time::Instant::now();
    let (_, end) = reply(&refused_providers, "refused", "echo").await;
    let Err(BackendError::Provider(ProviderError::Unreachable { detail, .. })) = end else { panic!("{end:?}") };
    assert!(detail.to_lowercase().contains("refused"), "{detail}");
    assert!(started.elapsed() < Duration::from_secs(2), "a dead server fails fast");
}

#[tokio::test]
async fn a_fast_stream_is_read_in_gulps_with_nothing_lost() {
    // Each event woke the app on the cores a local model decodes on: once text flows, what has
    // arrived is read together, a gulp at a time, and handed over as one delta.
    let (url, _) = fake::start().await;
    let providers = providers(&url);
    for provider in ["openai", "anthropic"] {
        let cancel = CancelFlag::new();
        let mut stream = providers.start_reply(request(provider, "endless", cancel.clone())).unwrap();
        let mut deltas = Vec::new();
        while let Some(event) = stream.events.recv().await {
            match event {
                GenEvent::Delta(text) => deltas.push(text),
                GenEvent::Finished { reason, .. } => {
                    assert_eq!(reason, FinishReason::Cancelled, "{provider}");
                    break;
                }
                _ => {}
            }
            if deltas.len() == 12 {
                cancel.cancel();
            }
        }
        let words: usize = deltas.iter().map(|d| d.matches("word ").count()).sum();
        assert!(
            deltas.iter().all(|d| !d.is_empty() && d.len() == d.matches("word ").count() * "word ".len()),
            "{provider}: whole events, none split: {deltas:?}"
        );
        assert!(words > deltas.len(), "{provider}: {words} events in {} deltas: not read in gulps", deltas.len());
    }
}

/// A provider that misbehaves costs neither the key nor the app's memory or time: a redirect to
/// another host is refused before any request goes there; a body that is not a stream is read
/// only in part, for a bounded time, and Stop ends it at once; an endless line is cut off.
#[tokio::test]
async fn hostile_answers_are_bounded_and_no_key_follows_a_redirect() {
    let (url, record) = fake::start().await;
    let (elsewhere, elsewhere_record) = fake::start().await;
    *record.redirect_to.lock().unwrap() = Some(format!("{elsewhere}/chat/completions"));
    let providers = providers(&url);
    // An endless line yields no event until its cap: the silence between events must outlast
    // reading 1 MiB through the event parser (slow in a debug build), as the real 90 s does.
    let patient = providers_with(&url, Timeouts { idle: Duration::from_secs(20), ..TIMEOUTS });
    let other_host = elsewhere.trim_start_matches("http://").trim_end_matches("/v1").to_owned();
    for provider in ["openai", "anthropic"] {
        let (_, result) = reply(&providers, provider, "redirect-away").await;
        let Err(BackendError::Provider(ProviderError::Redirected { to, .. })) = &result else { panic!("{provider}: {result:?}") };
        assert_eq!(to, &other_host, "{provider}");

        // (the providers, model, what the error says, at most how long it takes)
        for (providers, model, says, within) in [
            (&providers, "trickle", "expected an event stream, got \"text/html\": <<<", 2_000),
            (&providers, "huge", "expected an event stream, got \"application/json\": [[[[", 2_000),
            (&patient, "endless-line", "it sent an event line longer than 1 MiB", 20_000),
        ] {
            let started = std::time::Instant::now();
            let (_, result) = reply(providers, provider, model).await;
            let Err(BackendError::Provider(error @ ProviderError::Malformed { .. })) = &result else {
                panic!("{provider} {model}: {result:?}")
            };
            assert!(error.to_string().contains(says), "{provider} {model}: {error}");
            assert!(started.elapsed() < Duration::from_millis(within), "{provider} {model}: {:?}", started.elapsed());
        }

        // Stop while a trickle is read: ended within a second.
        let cancel = CancelFlag::new();
        let mut stream = providers.start_reply(request(provider, "trickle", cancel.clone())).unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
        let end = tokio::time::timeout(Duration::from_secs(1), stream.events.recv()).await.expect("Stop ends it within a second");
        assert!(matches!(end, Some(GenEvent::Finished { reason: FinishReason::Cancelled, .. })), "{provider}: {end:?}");
    }
    assert!(elsewhere_record.headers.lock().unwrap().is_empty(), "a request, with its key, reached the other host");
}

#[tokio::test]
async fn stop_hangs_up_the_stream_at_once() {
    let (url, record) = fake::start().await;
    let providers = providers(&url);
    for provider in ["openai", "anthropic"] {
        record.hung_up.store(false, Ordering::SeqCst);
        let cancel = CancelFlag::new();
        let mut stream = providers.start_reply(request(provider, "endless", cancel.clone())).unwrap();
        let mut words = 0;
        while let Some(GenEvent::Delta(_)) = stream.events.recv().await {
            words += 1;
            if words == 5 {
                cancel.cancel();
                break;
            }
        }
        let end = tokio::time::timeout(Duration::from_millis(500), stream.events.recv()).await.expect("ends at once");
        assert!(matches!(end, Some(GenEvent::Finished { reason: FinishReason::Cancelled, .. })), "{provider}: {end:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(record.hung_up.load(Ordering::SeqCst), "{provider}: the server saw the client hang up");
        let sent = record.endless_sent.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(record.endless_sent.load(Ordering::SeqCst), sent, "{provider}: nothing is generated after Stop");
    }
}

#[tokio::test]
async fn models_are_listed_with_their_context_and_the_typed_in_ones() {
    let (url, _record) = fake::start().await;
    let providers = providers(&url);
    for provider in ["openai", "anthropic"] {
        let models = providers.list_models(provider).await.unwrap();
        let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["cut", "echo", "endless", "typed-in"], "{provider}");
        assert_eq!(models[1].context_length, Some(4096));
    }
    let error = providers.list_models("openai-badkey").await.unwrap_err();
    assert!(matches!(error, ProviderError::Unauthorized { .. }), "{error:?}");
}

/// A history longer than the model's context is trimmed before sending, the reply says how many
/// messages were left out, and "stop at limit" refuses in words.
#[tokio::test]
async fn the_context_budget_trims_by_the_chats_policy() {
    let (url, record) = fake::start().await;
    let providers = providers(&url);
    let mut small = config("compatible", ProviderKind::OpenAiCompatible, &url);
    small.context_length = Some(600);
    providers.set_configs(vec![small]);
    let turn = "word ".repeat(60); // 100 tokens by the estimate
    let mut messages: Vec<ChatMessage> =
        (0..8).map(|i| ChatMessage::new(if i % 2 == 0 { Role::User } else { Role::Assistant }, format!("{i} {turn}"))).collect();
    messages.push(ChatMessage::new(Role::User, "last question"));
    for (policy, expect_sent) in [
        (hearth_core::OverflowPolicy::RollingWindow, Some(vec!["4 ", "5 ", "6 ", "7 ", "last"])),
        (hearth_core::OverflowPolicy::StopAtLimit, None),
    ] {
        let sampling = SamplingParams { overflow: policy, max_tokens: 100, ..SamplingParams::default() };
        let mut request = ReplyRequest::new(messages.clone(), sampling, CancelFlag::new());
        request.target = ModelTarget::Remote { provider: "compatible".into(), model: "echo".into() };
        let mut stream = providers.start_reply(request).unwrap();
        let mut end = None;
        while let Some(event) = stream.events.recv().await {
            if !matches!(event, GenEvent::Delta(_)) {
                end = Some(event);
            }
        }
        match (expect_sent, end.unwrap()) {
            (Some(prefixes), GenEvent::Finished { stats, .. }) => {
                let body = record.requests.lock().unwrap().last().unwrap().clone();
                let sent: Vec<String> =
                    body["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap().to_owned()).collect();
                assert_eq!(sent.len(), prefixes.len(), "{sent:?}");
                assert!(sent.iter().zip(&prefixes).all(|(s, p)| s.starts_with(p)), "{sent:?}");
                assert_eq!(stats.dropped_messages, 4);
            }
            (None, GenEvent::Failed(BackendError::ContextOverflow { n_ctx, .. })) => assert_eq!(n_ctx, 600),
            (_, other) => panic!("{policy:?}: {other:?}"),
        }
    }
}

/// Through the chat service and a real SQLite history: a reply cut off mid-stream is saved with
/// the text that arrived, marked failed; the chat records which model wrote each reply.
#[tokio::test]
async fn a_broken_reply_keeps_its_text_and_a_refused_one_the_question() {
    let (url, _record) = fake::start().await;
    let providers = Arc::new(providers(&url));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(hearth_store::Store::open(&dir.path().join("hearth.db")).await.unwrap());
    let service = ChatService::new(providers, store.clone());
    let chat = store.create_chat().await.unwrap().id;

    store.set_chat_target(chat, &ModelTarget::Remote { provider: "openai".into(), model: "echo".into() }).await.unwrap();
    let reply = service.run(chat, Turn::send("first"), SamplingParams::default(), |_| {}).await.unwrap();
    assert_eq!((reply.content.as_str(), reply.model.as_deref()), ("You said: first", Some("echo (openai)")));

    store.set_chat_target(chat, &ModelTarget::Remote { provider: "anthropic".into(), model: "cut".into() }).await.unwrap();
    let failed = service.run(chat, Turn::send("second"), SamplingParams::default(), |_| {}).await;
    let Err(TurnError::Backend { error: BackendError::Provider(ProviderError::StreamCut { .. }), reply: Some(partial) }) = failed else {
        panic!("{failed:?}")
    };
    let saved = store.messages(chat).await.unwrap();
    let last = saved.last().unwrap();
    assert_eq!((last.id, last.content.as_str(), last.status), (partial.id, "The first words ", MessageStatus::Failed));
    assert_eq!(last.model.as_deref(), Some("cut (anthropic)"));
    assert_eq!(saved[1].model.as_deref(), Some("echo (openai)"), "the earlier reply keeps its model");

    // Refused before any request (no API key): the service asks the backend before it saves the
    // question, and saves it all the same.
    store.set_chat_target(chat, &ModelTarget::Remote { provider: "nokey".into(), model: "echo".into() }).await.unwrap();
    let mut events = Vec::new();
    let refused = service.run(chat, Turn::send("third"), SamplingParams::default(), |e| events.push(e)).await;
    let Err(TurnError::Backend { error: BackendError::Provider(ProviderError::NoKey { .. }), reply: None }) = refused else {
        panic!("{refused:?}")
    };
    let last = store.messages(chat).await.unwrap().pop().unwrap();
    assert_eq!((last.role, last.content.as_str()), (Role::User, "third"));
    assert!(matches!(events.as_slice(), [TurnEvent::UserSaved(saved)] if saved.id == last.id), "{events:?}");
}

#[tokio::test]
async fn a_burst_of_events_reaches_the_window_in_a_few_paced_deltas() {
    let (url, _record) = fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(hearth_store::Store::open(&dir.path().join("hearth.db")).await.unwrap());
    let service = ChatService::new(Arc::new(providers(&url)), store.clone());
    let chat = store.create_chat().await.unwrap().id;
    store.set_chat_target(chat, &ModelTarget::Remote { provider: "openai".into(), model: "echo".into() }).await.unwrap();
    // 800 words (the fake's context is 4,096 tokens): ~800 events from the server at once.
    let long: String = (0..800).map(|i| format!("w{i} ")).collect();
    let mut deltas = Vec::new();
    let on_event = |event| {
        if let hearth_core::TurnEvent::Delta(text) = event {
            deltas.push((std::time::Instant::now(), text));
        }
    };
    let reply = service.run(chat, Turn::send(long.trim()), SamplingParams::default(), on_event).await.unwrap();
    let shown: String = deltas.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(shown, reply.content, "every word reaches the window, in order");
    assert!(deltas.len() < 30, "{} deltas for one burst", deltas.len());
    for pair in deltas.windows(2).take(deltas.len().saturating_sub(2)) {
        let gap = pair[1].0 - pair[0].0;
        assert!(gap >= hearth_core::WINDOW_UPDATE_INTERVAL - Duration::from_millis(5), "deltas {gap:?} apart");
    }
}

/// A tool round with each API over real HTTP: the call it streams (OpenAI's `tool_calls`
/// pieces, Anthropic's `tool_use` block) is kept in the reply's text as a local model's is, read
/// back as a call, and its result goes back as each API wants it (a `tool` message, a
/// `tool_result` block) answering the call's id.
#[tokio::test]
async fn both_apis_call_a_tool_and_read_its_result() {
    let (url, record) = fake::start().await;
    let providers = Arc::new(providers(&url));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(hearth_store::Store::open(&dir.path().join("hearth.db")).await.unwrap());
    let service = ChatService::new(providers, store.clone());
    let tools = OfferedTools {
        tools: vec![ToolSpec {
            name: "find_item".into(),
            description: "Says where an item is kept".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"item": {"type": "string"}}}),
        }],
        choice: ToolChoice::Auto,
        parallel: true,
    };
    // Anthropic with a reasoning budget: extended thinking on, and the calling reply's signed
    // thinking block goes back with the result, as the API requires (the fake refuses otherwise).
    for (provider, reasoning_budget) in [("openai", -1), ("anthropic", -1), ("anthropic", 2048)] {
        let thinks = reasoning_budget > 0;
        let sampling = SamplingParams { reasoning_budget, ..SamplingParams::default() };
        let chat = store.create_chat().await.unwrap().id;
        store.set_chat_target(chat, &ModelTarget::Remote { provider: provider.into(), model: "tool-caller".into() }).await.unwrap();
        let caller = service.run_with_tools(chat, Turn::send("Kettle?"), sampling.clone(), Some(tools.clone()), |_| {});
        let caller = caller.await.unwrap();
        let signature = caller.stats.as_ref().and_then(|s| s.reasoning_signature.as_deref());
        assert_eq!(signature, thinks.then_some(fake::THINKING_SIGNATURE), "{provider} {reasoning_budget}");
        assert_eq!(caller.content.starts_with(&format!("<think>{}</think>", fake::TOOL_THINKING)), thinks, "{:?}", caller.content);
        assert_eq!(caller.tool_calls.len(), 1, "{provider}: {:?}", caller.content);
        assert_eq!((caller.tool_calls[0].name.as_str(), caller.tool_calls[0].arguments.as_str()), ("find_item", r#"{"item":"kettle"}"#));
        let run = ToolRun {
            name: "find_item".into(),
            server: None,
            arguments: caller.tool_calls[0].arguments.clone(),
            end: ToolRunEnd::Ran,
            is_error: false,
            elapsed_ms: 1,
            chars: 14,
            cut: false,
        };
        let results = [ToolResult { content: "Left cupboard.".into(), run }];
        let turn = Turn::ToolResults { reply: caller.id, results: &results };
        let answer = service.run_with_tools(chat, turn, sampling, Some(tools.clone()), |_| {}).await.unwrap();
        assert_eq!(answer.content, "The tool said: Left cupboard.", "{provider} {reasoning_budget}");

        let sent = record.requests.lock().unwrap().last().cloned().unwrap();
        // Thinking with tools: Claude may think again after each result (interleaved thinking).
        let beta = record.headers.lock().unwrap().last().and_then(|h| h.get("anthropic-beta").cloned());
        assert_eq!(
            beta.as_ref().is_some_and(|b| b == "interleaved-thinking-2025-05-14"),
            thinks,
            "{provider} {reasoning_budget}: {beta:?}"
        );
        let messages = sent["messages"].as_array().unwrap();
        let (call, result) = (&messages[messages.len() - 2], &messages[messages.len() - 1]);
        match provider {
            "openai" => {
                assert_eq!(sent["tools"][0]["function"]["name"], "find_item");
                let id = call["tool_calls"][0]["id"].clone();
                assert_eq!(call["tool_calls"][0]["function"]["arguments"], r#"{"item":"kettle"}"#);
                assert_eq!((result["role"].clone(), result["tool_call_id"].clone()), (serde_json::json!("tool"), id));
            }
            _ => {
                assert_eq!(sent["tools"][0]["name"], "find_item");
                let blocks = call["content"].as_array().unwrap();
                assert_eq!(blocks[0]["type"] == "thinking", thinks, "{call}");
                let used = blocks.iter().find(|b| b["type"] == "tool_use").unwrap();
                assert_eq!(used["input"], serde_json::json!({"item": "kettle"}));
                assert_eq!(result["content"][0]["tool_use_id"], used["id"]);
            }
        }
    }
}

#[tokio::test]
async fn a_remote_reasoning_streams_into_the_reply_and_is_not_sent_back() {
    let (url, record) = fake::start().await;
    let providers = Arc::new(providers(&url));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(hearth_store::Store::open(&dir.path().join("hearth.db")).await.unwrap());
    let service = ChatService::new(providers, store.clone());
    for (provider, reasoning_tokens) in [("openai", Some(4)), ("compatible", Some(4)), ("anthropic", None)] {
        let chat = store.create_chat().await.unwrap().id;
        store.set_chat_target(chat, &ModelTarget::Remote { provider: provider.into(), model: "thinker".into() }).await.unwrap();
        let mut shown = String::new();
        let first = service
            .run(chat, Turn::send("Two and two?"), SamplingParams::default(), |event| {
                if let TurnEvent::Delta(delta) = event {
                    shown.push_str(&delta);
                }
            })
            .await
            .unwrap();
        // Stored, shown and exported as a local reasoning model's reply is.
        assert_eq!(first.content, "<think>Let me count.</think>Four.", "{provider}");
        assert_eq!(shown, first.content, "{provider}: the window saw it as it came");
        let stats = first.stats.clone().unwrap();
        assert!(stats.reasoning_ms.is_some(), "{provider}: the time it reasoned");
        assert_eq!(stats.reasoning_tokens, reasoning_tokens, "{provider}");

        service.run(chat, Turn::send("And three?"), SamplingParams::default(), |_| {}).await.unwrap();
        let sent = record.requests.lock().unwrap().last().cloned().unwrap();
        let earlier: Vec<&serde_json::Value> = sent["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").collect();
        assert_eq!(earlier.len(), 1, "{provider}: {sent}");
        assert_eq!(earlier[0]["content"], "Four.", "{provider}: its reasoning is not sent back");
    }
}
