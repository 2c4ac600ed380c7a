//! A real peer: llama.cpp's own OpenAI-compatible server (built by
//! scripts/build-backend.sh tests) serving the SmolLM2 model, chatted with through the
//! OpenAI-compatible provider, with the model's tokenizer fetched through hf-hub from a local hub.

#[allow(dead_code)] // The bench's own reply helpers are not used here.
#[path = "../../hearth-cli/src/peer.rs"]
mod peer;
mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use support::hub;

use hearth_core::{
    BackendError, ChatService, HistoryStore, ModelTarget, OfferedTools, OverflowPolicy, ProviderConfig, ProviderError, ProviderKind, Role,
    SamplingParams, ToolChoice, ToolResult, ToolRun, ToolRunEnd, ToolSpec, Turn, TurnError,
};
use hearth_providers::{Counter, FixedKeys, HubOptions, Providers, Timeouts};

const REPO: &str = "HuggingFaceTB/SmolLM2-135M-Instruct";
const PEER_KEY: &str = "sk-peer-51c0ffee";
const N_CTX: u32 = 1024;

fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    assert!(path.exists(), "{} is missing: run scripts/fetch-model.sh target/test-data", path.display());
    path
}

fn config(id: &str, base_url: String) -> ProviderConfig {
    // No context length set: the server says which it runs with.
    ProviderConfig { base_url, extensions: true, ..ProviderConfig::new(id, "llama.cpp", ProviderKind::OpenAiCompatible) }
}

#[tokio::test]
async fn llama_server_answers_through_the_openai_compatible_provider() {
    let Some(llama_server) = hearth_testkit::llama_programs::llama_server() else { return };
    let model = model_path();
    let server = peer::LlamaServer::start(&llama_server, &model, 2, N_CTX, 512, &["--alias", REPO, "--api-key", PEER_KEY])
        .await
        .expect("llama-server starts");
    let tokenizer = hub::tokenizer_json_from_gguf(&model);
    let hub_files = [((REPO.to_owned(), "tokenizer.json".to_owned()), tokenizer)].into_iter().collect();
    let (hub_url, hub) = hub::start(hub::Hub { files: hub_files, ..Default::default() }).await;
    let cache = tempfile::tempdir().unwrap();

    let keys = BTreeMap::from([
        ("peer".to_owned(), PEER_KEY.to_owned()),
        ("peer-tools".to_owned(), PEER_KEY.to_owned()),
        ("peer-badkey".to_owned(), "sk-wrong".to_owned()),
    ]);
    let providers = Providers::new(
        Arc::new(FixedKeys(keys)),
        Timeouts::default(),
        &HubOptions { endpoint: Some(hub_url), cache_dir: Some(cache.path().to_owned()) },
    );
    let base = format!("{}/v1", server.base_url());
    providers.set_configs(vec![config("peer", base.clone()), config("peer-badkey", base)]);

    // The server lists its model under the alias, with the context it runs with (its listing
    // says 8,192, the length the model was trained for).
    let models = providers.list_models("peer").await.unwrap();
    assert_eq!(models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), [REPO]);
    assert_eq!(models[0].context_length, Some(N_CTX));

    // The model id is a repository: its tokenizer comes through hf-hub, into the cache, once,
    // and counts exactly as the server does.
    let counter = providers.token_counter("peer", REPO).await.unwrap();
    assert!(matches!(counter, Counter::Tokenizer(_)), "counted with {}", counter.describe());
    assert!(cache.path().join("models--HuggingFaceTB--SmolLM2-135M-Instruct").is_dir(), "the standard cache layout");
    for text in [
        "The quick brown fox jumps over the lazy dog.",
        "In 1969, 3 astronauts flew 384400 km to the Moon.",
        "fn main() { println!(\"hello\"); }",
        "Où est la bibliothèque ? Ça dépend.",
    ] {
        let theirs = server_token_count(server.base_url(), text).await;
        assert_eq!(counter.count_text(text), theirs, "{text}");
    }
    providers.token_counter("peer", REPO).await.unwrap();
    assert_eq!(hub.downloads.load(Ordering::SeqCst), 1, "fetched once");

    // A chat through the app's turn logic and a real SQLite history.
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(hearth_store::Store::open(&dir.path().join("hearth.db")).await.unwrap());
    let service = ChatService::new(Arc::new(providers.clone()), store.clone());
    let chat = store.create_chat().await.unwrap().id;
    store.set_chat_target(chat, &ModelTarget::Remote { provider: "peer".into(), model: REPO.into() }).await.unwrap();
    let greedy = SamplingParams::greedy(24);
    let mut streamed = String::new();
    let first = service
        .run(chat, Turn::send("What is the capital of France?"), greedy.clone(), |e| {
            if let hearth_core::TurnEvent::Delta(d) = e {
                streamed.push_str(&d);
            }
        })
        .await
        .unwrap();
    assert!(!first.content.trim().is_empty());
    assert_eq!(first.content, streamed, "what streamed is what was saved");
    assert_eq!(first.model.as_deref(), Some(&*format!("{REPO} (llama.cpp)")));
    let stats = first.stats.clone().unwrap();
    assert!(stats.prompt_tokens > 0 && stats.completion_tokens > 0, "{stats:?}");

    // The server reports each token's probabilities (asked for as `logprobs`): the inspector
    // keeps them with the reply, they spell it, and greedy chose the likeliest each time.
    let tokens = store.token_probs(first.id).await.unwrap();
    assert_eq!(tokens.iter().map(|t| t.text.as_str()).collect::<String>(), first.content);
    for token in &tokens {
        assert_eq!((token.top.len(), token.id, token.p), (5, token.top[0].id, token.top[0].p), "{token:?}");
        assert!(token.id >= 0 && token.top.iter().map(|t| t.p).sum::<f32>() <= 1.0 + 1e-5, "{token:?}");
    }
    // A branch from an alternative there: a new version that opens with it, written on by the server.
    let alternative = tokens[2].top[1].clone();
    let branched = service.run(chat, Turn::Branch { reply: first.id, at: 2, token: alternative.id }, greedy.clone(), |_| {}).await.unwrap();
    let opening = format!("{}{}{}", tokens[0].text, tokens[1].text, alternative.text);
    assert!(branched.content.starts_with(&opening) && branched.content.len() > opening.len(), "{:?} → {opening:?}", branched.content);
    assert_eq!(branched.parent_id, first.parent_id);

    // The server keeps its own KV cache across turns: the second prompt reuses the first.
    let second = service.run(chat, Turn::send("And of Italy?"), greedy.clone(), |_| {}).await.unwrap();
    let stats = second.stats.unwrap();
    assert!(stats.cached_tokens > 0, "the peer reused its cache: {stats:?}");

    // A tool round with a real server (its Jinja templates and tool-call parser), given a
    // Hermes/Qwen-style template that offers tools (SmolLM2's own has none): the call it streams
    // as `tool_calls` is kept in the reply's text as a local model's is, read back as a call, and
    // its result goes back as a `tool` message answering it. (This server build does not force a
    // call for `required` on SmolLM2: the question invites the call's tag instead.)
    let template = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/chatml-tools.jinja");
    let tools_server = peer::LlamaServer::start(
        &llama_server,
        &model,
        1,
        N_CTX,
        512,
        &["--alias", REPO, "--api-key", PEER_KEY, "--chat-template-file", template.to_str().unwrap()],
    )
    .await
    .expect("llama-server starts with the tools template");
    let mut configs = providers.configs();
    configs.push(config("peer-tools", format!("{}/v1", tools_server.base_url())));
    providers.set_configs(configs);
    let tool_chat = store.create_chat().await.unwrap().id;
    store.set_chat_target(tool_chat, &ModelTarget::Remote { provider: "peer-tools".into(), model: REPO.into() }).await.unwrap();
    let tools = OfferedTools {
        tools: vec![ToolSpec {
            name: "find_item".into(),
            description: "Says where an item is kept in the kitchen".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        }],
        choice: ToolChoice::Required,
        parallel: false,
    };
    let mut streamed = String::new();
    let caller = service
        .run_with_tools(tool_chat, Turn::send("<tool_call> find_item kettle"), SamplingParams::greedy(64), Some(tools.clone()), |e| {
            if let hearth_core::TurnEvent::Delta(d) = e {
                streamed.push_str(&d);
            }
        })
        .await
        .unwrap();
    assert_eq!(caller.content, streamed);
    assert_eq!(caller.tool_calls.len(), 1, "{:?}", caller.content);
    assert_eq!(caller.tool_calls[0].name, "find_item");
    let arguments: serde_json::Value = serde_json::from_str(&caller.tool_calls[0].arguments).unwrap();
    assert!(arguments["item"].is_string(), "{arguments}");
    let run = ToolRun {
        name: "find_item".into(),
        server: Some("kitchen".into()),
        arguments: caller.tool_calls[0].arguments.clone(),
        end: ToolRunEnd::Ran,
        is_error: false,
        elapsed_ms: 1,
        chars: 35,
        cut: false,
    };
    let results = [ToolResult { content: "The kettle is in the left cupboard.".into(), run }];
    let auto = OfferedTools { choice: ToolChoice::Auto, ..tools };
    let answer = service
        .run_with_tools(
            tool_chat,
            Turn::ToolResults { reply: caller.id, results: &results },
            SamplingParams::greedy(32),
            Some(auto),
            |_| {},
        )
        .await
        .unwrap();
    assert!(!answer.content.trim().is_empty() || !answer.tool_calls.is_empty(), "{answer:?}");
    let path = store.messages(tool_chat).await.unwrap();
    assert_eq!(path.iter().map(|m| m.role).collect::<Vec<_>>(), [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    drop(tools_server);

    // A history longer than the server's context: trimmed by the policy before sending (the
    // server would refuse it), or refused in words under "stop at limit".
    let long = "Tell me more about rivers and mountains and seas. ".repeat(40);
    let mut rolling = greedy.clone();
    rolling.overflow = OverflowPolicy::RollingWindow;
    for _ in 0..3 {
        service.run(chat, Turn::send(&long), rolling.clone(), |_| {}).await.unwrap();
    }
    let trimmed = service.run(chat, Turn::send("Thanks!"), rolling, |_| {}).await.unwrap();
    assert!(trimmed.stats.unwrap().dropped_messages > 0);
    let refused = service.run(chat, Turn::send("Again?"), greedy, |_| {}).await;
    assert!(matches!(refused, Err(TurnError::Backend { error: BackendError::ContextOverflow { n_ctx: N_CTX, .. }, .. })), "{refused:?}");

    // The real server's own 401, in a new chat.
    let chat = store.create_chat().await.unwrap().id;
    store.set_chat_target(chat, &ModelTarget::Remote { provider: "peer-badkey".into(), model: REPO.into() }).await.unwrap();
    let denied = service.run(chat, Turn::send("Hello?"), SamplingParams::greedy(8), |_| {}).await;
    let Err(TurnError::Backend { error: BackendError::Provider(ProviderError::Unauthorized { detail, .. }), .. }) = denied else {
        panic!("{denied:?}")
    };
    assert!(!detail.contains("sk-wrong"), "{detail}");
    assert_eq!(store.messages(chat).await.unwrap().iter().filter(|m| m.content.contains("Hello?")).count(), 1, "the question is kept");
}

/// Tokens llama-server counts for `text` (its /tokenize endpoint, no special tokens).
async fn server_token_count(base: &str, text: &str) -> usize {
    let response: serde_json::Value = reqwest::Client::new()
        .post(format!("{base}/tokenize"))
        .bearer_auth(PEER_KEY)
        .json(&serde_json::json!({ "content": text }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    response["tokens"].as_array().unwrap().len()
}
