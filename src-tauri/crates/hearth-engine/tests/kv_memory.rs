//! Each chat keeps its KV cache across chat switches and restarts, with the real model: the
//! reply with a fixed seed is the one an engine without any cache gives, and a state file that
//! is damaged, foreign or stale is dropped for a normal (prefilled) reply.

mod common;

use std::path::{Path, PathBuf};

use hearth_core::{
    CacheBudgets, CancelFlag, ChatBackend, ChatMessage, GenEvent, PromptSource, ReadAhead, ReplyRequest, ReplyStats, Role, SamplingParams,
    TokenLogprob,
};
use hearth_engine::{Engine, HeldMemory, HostProgram, LoadParams};

use common::{chat_reply, model_path};
use hearth_testkit::gguf;

/// One test at a time: each runs engines with two threads on a two-core machine, and the
/// read-ahead test's timing must not depend on the others.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn load_params(reuse_kv: bool) -> LoadParams {
    LoadParams { n_ctx: Some(2048), n_threads: Some(2), reuse_kv, ..LoadParams::default() }
}

async fn engine(kv_dir: &Path, model: &Path, params: LoadParams) -> Engine {
    let engine = Engine::spawn_with(HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host")).with_kv_dir(kv_dir));
    engine.load(model, params).await.expect("the model loads");
    engine
}

fn seeded() -> SamplingParams {
    SamplingParams { temperature: 0.8, seed: Some(42), max_tokens: 24, ..SamplingParams::default() }
}

async fn reply(engine: &Engine, conversation: i64, messages: &[ChatMessage]) -> (String, ReplyStats) {
    chat_reply(engine, conversation, messages, seeded()).await
}

fn turn(history: &mut Vec<ChatMessage>, reply: &str, next: &str) {
    history.push(ChatMessage::new(Role::Assistant, reply));
    history.push(ChatMessage::new(Role::User, next));
}

fn state_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        files.extend(std::fs::read_dir(folder.path()).into_iter().flatten().flatten().map(|e| e.path()));
    }
    files
}

const A_TURNS: [&str; 4] = ["Tell me about the moon in two sentences.", "And about the sun?", "Thanks.", "Which is bigger?"];

/// Chat A's replies on an engine that serves nothing else: its cache stays in place throughout.
async fn live_replies(model: &Path) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), model, load_params(true)).await;
    let mut history = Vec::new();
    let mut replies: Vec<String> = Vec::new();
    for (i, line) in A_TURNS.iter().enumerate() {
        if i > 0 {
            history.push(ChatMessage::new(Role::Assistant, replies[i - 1].clone()));
        }
        history.push(ChatMessage::new(Role::User, *line));
        let (text, stats) = reply(&engine, 1, &history).await;
        assert_eq!(stats.prompt_source, if i == 0 { PromptSource::New } else { PromptSource::Live });
        replies.push(text);
    }
    engine.shutdown();
    replies
}

/// A cache brought back is the very cache that was put away: the seeded replies are those of a
/// chat whose cache never left (cached text's keys were computed token by token while it was
/// written, so the yardstick is the live cache, not a cold prefill of the same text).
#[tokio::test]
async fn a_chat_switched_back_to_or_reopened_after_a_restart_answers_from_its_cache() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let model = model_path();
    let live = live_replies(&model).await;
    let engine = engine(dir.path(), &model, load_params(true)).await;
    let mut a = vec![ChatMessage::new(Role::User, A_TURNS[0])];
    let b = vec![ChatMessage::new(Role::User, "Name three colours.")];

    let (first, stats) = reply(&engine, 1, &a).await;
    assert_eq!((first.as_str(), stats.prompt_source), (live[0].as_str(), PromptSource::New));
    let a_cached = stats.prompt_tokens + stats.completion_tokens - 1;
    reply(&engine, 2, &b).await;

    // Back to A after B: its cache comes back from RAM.
    turn(&mut a, &first, A_TURNS[1]);
    let (second, stats) = reply(&engine, 1, &a).await;
    assert_eq!(stats.prompt_source, PromptSource::Ram, "{stats:?}");
    assert!(stats.cached_tokens >= a_cached, "{stats:?} vs {a_cached}");
    assert_eq!(second, live[1]);

    // The next turn of the same chat: its cache is in place.
    turn(&mut a, &second, A_TURNS[2]);
    let (third, stats) = reply(&engine, 1, &a).await;
    assert_eq!((third.as_str(), stats.prompt_source), (live[2].as_str(), PromptSource::Live));

    // A restart: the caches were written at quit and A's is read back from disk.
    engine.shutdown();
    assert_eq!(state_files(dir.path()).len(), 2, "A and B");
    let engine = crate::engine(dir.path(), &model, load_params(true)).await;
    turn(&mut a, &third, A_TURNS[3]);
    let (fourth, stats) = reply(&engine, 1, &a).await;
    assert_eq!(stats.prompt_source, PromptSource::Disk, "{stats:?}");
    assert!(stats.cached_tokens > a_cached, "{stats:?}");
    assert_eq!(fourth, live[3]);

    // A deleted chat's cache goes with it.
    engine.forget(2);
    engine.shutdown();
    let names: Vec<String> = state_files(dir.path()).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["chat-1.kv"]);
}

/// Each bad state file: dropped (with a log line), and the reply is the uncached one.
#[tokio::test]
async fn a_damaged_foreign_or_stale_state_file_is_dropped_for_a_prefilled_reply() {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().unwrap();
    // A model file of its own, which one case replaces under the same name.
    let model = work.path().join("model.gguf");
    std::fs::copy(model_path(), &model).unwrap();
    let first = vec![ChatMessage::new(Role::User, "Say something about rivers.")];

    type Spoil = Box<dyn Fn(&Path, &Path)>;
    let cases: Vec<(&str, Spoil, LoadParams)> = vec![
        ("cut short", Box::new(|file: &Path, _: &Path| truncate(file)), load_params(true)),
        ("a flipped byte", Box::new(|file: &Path, _: &Path| flip(file)), load_params(true)),
        ("junk", Box::new(|file: &Path, _: &Path| std::fs::write(file, b"not a state").unwrap()), load_params(true)),
        ("another cache layout", Box::new(|_: &Path, _: &Path| {}), LoadParams { n_ctx: Some(1024), ..load_params(true) }),
        (
            "the model replaced under the same name",
            Box::new(|_: &Path, model: &Path| {
                let real = std::fs::read(model_path()).unwrap();
                std::fs::write(model, gguf::with_kv(&real, "hearth.test", gguf::STRING, &gguf::string("other weights"))).unwrap();
            }),
            load_params(true),
        ),
    ];
    for (name, spoil, params) in cases {
        std::fs::copy(model_path(), &model).unwrap();
        let dir = work.path().join(name.replace(' ', "-"));
        let engine = engine(&dir, &model, load_params(true)).await;
        let (text, _) = reply(&engine, 7, &first).await;
        engine.shutdown();
        let files = state_files(&dir);
        assert_eq!(files.len(), 1, "{name}");
        spoil(&files[0], &model);

        let mut next = first.clone();
        turn(&mut next, &text, "Name one.");
        let engine = crate::engine(&dir, &model, params.clone()).await;
        let (answer, stats) = reply(&engine, 7, &next).await;
        engine.shutdown();
        assert_eq!(stats.prompt_source, PromptSource::New, "{name}: {stats:?}");
        let dir = tempfile::tempdir().unwrap();
        let plain = crate::engine(dir.path(), &model, LoadParams { reuse_kv: false, ..params }).await;
        let (expected, _) = reply(&plain, 7, &next).await;
        plain.shutdown();
        assert_eq!(answer, expected, "{name}");
    }
}

fn truncate(file: &Path) {
    let bytes = std::fs::read(file).unwrap();
    std::fs::write(file, &bytes[..bytes.len() / 2]).unwrap();
}

fn flip(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(file, bytes).unwrap();
}

/// What the user typed is read while they type: at Enter only what was typed since the last
/// read-ahead and the turn's closing are left to prefill, after a pause nothing — and the message
/// is read in the tokens it would be pasted in (a word cut by a read-ahead is not spelled in two
/// pieces: 95 tokens where pasting reads 92, before the fix). (Not the same seeded reply: what was read ahead was read in other batches than one
/// paste, and llama.cpp's batch kernels may part the logits in their last bits.)
#[tokio::test]
async fn a_draft_read_while_typing_leaves_little_to_prefill_at_enter() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), &model_path(), load_params(true)).await;
    let mut history = vec![ChatMessage::new(Role::User, "Tell me about the moon in two sentences.")];
    let (first, _) = reply(&engine, 1, &history).await;
    history.push(ChatMessage::new(Role::Assistant, first));
    // Another chat answers meanwhile: the draft brings chat 1's cache back too.
    reply(&engine, 2, &[ChatMessage::new(Role::User, "Name three colours.")]).await;
    let message = "Now tell me about its craters, its mountains and the dark seas people saw from Earth.";
    for (typed, then_typing_for) in [(12, Some(300)), (40, Some(300)), (message.len() - 5, None)] {
        let mut draft = history.clone();
        draft.push(ChatMessage::new(Role::User, &message[..typed]));
        let ahead = read_ahead(&engine, 1, draft);
        // The user types on; then pauses until the draft is read ahead (a reply sent sooner
        // would take over, as it should).
        match then_typing_for {
            Some(ms) => tokio::time::sleep(std::time::Duration::from_millis(ms)).await,
            None => ahead.finished().await,
        }
    }
    history.push(ChatMessage::new(Role::User, message));
    let sent = history.clone();
    let (answer, stats) = reply(&engine, 1, &history).await;
    assert_eq!(stats.prompt_source, PromptSource::Typed, "{stats:?}");
    assert!(stats.prompt_tokens - stats.cached_tokens <= 12, "{stats:?}");

    // Enter after a pause: the whole message was read ahead, reply's opening included, and the
    // logits after it kept: nothing is read again. The same draft sent twice reads nothing the
    // second time either.
    history.push(ChatMessage::new(Role::Assistant, answer));
    history.push(ChatMessage::new(Role::User, "And what about its far side?"));
    read_ahead(&engine, 1, history.clone()).finished().await;
    read_ahead(&engine, 1, history.clone()).finished().await;
    let (kept, paused) = first_token(&engine, &history).await;
    assert_eq!(paused.prompt_source, PromptSource::Typed, "{paused:?}");
    assert_eq!(paused.prompt_tokens - paused.cached_tokens, 0, "{paused:?}");
    // They are the logits the last token gives when it is read again (within the last bits a
    // batch's kernels may part them in).
    let (read, read_last) = first_token(&engine, &history).await;
    assert_eq!(read_last.prompt_tokens - read_last.cached_tokens, 1, "{read_last:?}");
    let ids = |first: &TokenLogprob| first.top.iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(ids(&kept), ids(&read), "{kept:?} / {read:?}");
    for (a, b) in kept.top.iter().zip(&read.top) {
        assert!((a.logprob - b.logprob).abs() < 0.05, "{kept:?} / {read:?}");
    }

    // Sent while keys still came: read up to the last word, which may yet grow ("side?": " side"
    // and "?"); it, the turn's closing and the reply's opening (6 tokens in SmolLM2's template,
    // "assistant" spelled in two) are left.
    history.push(ChatMessage::new(Role::Assistant, "It is never seen from Earth."));
    history.push(ChatMessage::new(Role::User, "Why is that so, and who first saw its far side?"));
    send_ahead(&engine, 1, history.clone(), true).finished().await;
    let (_, typing_on) = reply(&engine, 1, &history).await;
    assert_eq!(typing_on.prompt_source, PromptSource::Typed, "{typing_on:?}");
    assert_eq!(typing_on.prompt_tokens - typing_on.cached_tokens, 2 + 6, "{typing_on:?}");
    history.pop();

    // Enter while a long paste is still read ahead: the reply starts from what was read, the
    // chunk in flight stopped and its cells dropped (not waited for), and the cache stays exact:
    // asked again, only the token whose logits start the reply is read.
    history.push(ChatMessage::new(Role::User, "The tide rises and falls twice a day along the coast. ".repeat(60)));
    read_ahead(&engine, 1, history.clone());
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let (_, interrupted) = reply(&engine, 1, &history).await;
    assert_eq!(interrupted.prompt_source, PromptSource::Typed, "{interrupted:?}");
    assert!(interrupted.prompt_tokens - interrupted.cached_tokens > 100, "the reply did not wait for the paste: {interrupted:?}");
    let (_, again) = reply(&engine, 1, &history).await;
    assert_eq!(again.prompt_tokens - again.cached_tokens, 1, "{again:?}");
    engine.shutdown();

    let dir = tempfile::tempdir().unwrap();
    let plain = crate::engine(dir.path(), &model_path(), load_params(false)).await;
    let (_, pasted) = reply(&plain, 1, &sent).await;
    plain.shutdown();
    assert_eq!(stats.prompt_tokens, pasted.prompt_tokens, "the typed message is tokenized as the pasted one");
}

/// The first token of chat 1's greedy reply to `messages`, with its 5 likeliest alternatives.
async fn first_token(engine: &Engine, messages: &[ChatMessage]) -> (TokenLogprob, ReplyStats) {
    let mut request = ReplyRequest::new(messages.to_vec(), SamplingParams::greedy(1), CancelFlag::new());
    request.conversation = Some(1);
    request.logprobs = Some(5);
    let mut stream = engine.start_reply(request).expect("a model is loaded");
    let mut first = None;
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Logprobs(tokens) => first = first.or(tokens.into_iter().next()),
            GenEvent::Finished { stats, .. } => return (first.expect("a token's log-probabilities"), stats),
            GenEvent::Failed(e) => panic!("generation failed: {e}"),
            _ => {}
        }
    }
    panic!("the stream ended without Finished");
}

/// Hands `messages`, the last a draft being typed, to the engine to read ahead (after a pause).
fn read_ahead(engine: &Engine, conversation: i64, messages: Vec<ChatMessage>) -> ReadAhead {
    send_ahead(engine, conversation, messages, false)
}

/// … sent while keys still come (`still_typing`) or after a pause.
fn send_ahead(engine: &Engine, conversation: i64, messages: Vec<ChatMessage>, still_typing: bool) -> ReadAhead {
    let mut request = ReplyRequest::new(messages, seeded(), CancelFlag::new());
    request.conversation = Some(conversation);
    request.continue_last = still_typing;
    engine.prefill(request)
}

/// Waits (at most 10 s) until the engine reports `bytes` of chats' caches in RAM.
async fn until_ram_is(engine: &Engine, bytes: impl Fn(u64) -> bool) {
    until_held(engine, |held| bytes(held.chat_caches)).await;
}

/// Waits (at most 10 s) until what the engine holds besides its model passes `check`.
async fn until_held(engine: &Engine, check: impl Fn(HeldMemory) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = engine.held_memory().await;
        if check(now) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the engine holds {now:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A model left for another stays in memory while the budget for other models allows: loading
/// it again takes it up without reading its file, and its chat answers as before (the seeded
/// reply of the first load). A file replaced under the same name is read again; a budget of 0
/// drops the kept models at once (with no model loaded too, after a refused file) and keeps none; the model in use loaded again with another
/// context keeps its weights; an unload drops them all.
#[tokio::test]
async fn a_model_left_for_another_is_taken_up_again_from_memory() {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().unwrap();
    let real = std::fs::read(model_path()).unwrap();
    let (a, b) = (work.path().join("a.gguf"), work.path().join("b.gguf"));
    std::fs::write(&a, &real).unwrap();
    std::fs::write(&b, gguf::with_kv(&real, "hearth.test", gguf::STRING, &gguf::string("model b"))).unwrap();
    let size = |path: &Path| std::fs::metadata(path).unwrap().len();
    let chat = vec![ChatMessage::new(Role::User, "Say something about rivers.")];

    let engine = engine(&work.path().join("kv"), &a, load_params(true)).await;
    let (first, _) = reply(&engine, 1, &chat).await;
    let loaded = |info: hearth_core::ModelInfo| (info.name, info.from_memory);
    assert_eq!(loaded(engine.load(&b, load_params(true)).await.unwrap()), ("b".into(), false));
    assert_eq!(engine.held_memory().await.kept_models, size(&a), "A kept while B answers");
    assert_eq!(loaded(engine.load(&a, load_params(true)).await.unwrap()), ("a".into(), true));
    let (again, _) = reply(&engine, 1, &chat).await;
    assert_eq!(again, first, "the kept model answers as it did");
    assert_eq!(engine.held_memory().await.kept_models, size(&b), "B kept now");

    // B replaced under its name: its kept weights are not the file's any more.
    std::fs::write(&b, gguf::with_kv(&real, "hearth.test", gguf::STRING, &gguf::string("model b, retrained"))).unwrap();
    assert_eq!(loaded(engine.load(&b, load_params(true)).await.unwrap()), ("b".into(), false));

    // A file llama.cpp refuses: no model loaded now, B's copy still kept (and counted) until the
    // budget says otherwise.
    let refused = work.path().join("refused.gguf");
    std::fs::write(&refused, gguf::with_kv(&real, "general.architecture", gguf::STRING, &gguf::string("hearthtest"))).unwrap();
    assert!(engine.load(&refused, load_params(true)).await.is_err());
    assert!(engine.held_memory().await.kept_models > 0);
    engine.set_cache_budgets(CacheBudgets { models_ram_mb: 0, ..CacheBudgets::default() });
    until_held(&engine, |held| held.kept_models == 0).await;
    assert_eq!(loaded(engine.load(&a, load_params(true)).await.unwrap()), ("a".into(), false));
    assert_eq!(engine.held_memory().await.kept_models, 0, "no budget, nothing kept");
    // The loaded model again with another context: its weights serve as they are, whatever the budget.
    let other_context = LoadParams { n_ctx: Some(1024), ..load_params(true) };
    assert_eq!(loaded(engine.load(&a, other_context).await.unwrap()), ("a".into(), true));

    engine.set_cache_budgets(CacheBudgets::default());
    engine.load(&b, load_params(true)).await.unwrap();
    until_held(&engine, |held| held.kept_models == size(&a)).await;
    engine.unload().await.unwrap();
    assert_eq!(engine.held_memory().await.kept_models, 0, "an unload frees every model");
    engine.shutdown();
}

/// The user's budgets are in force at once, and in an engine process started after a crash:
/// no RAM sends a kept cache to disk (the chat answers from its file), no disk keeps no file.
#[tokio::test]
async fn the_users_budgets_move_caches_at_once_and_outlive_an_engine_crash() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let program = HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host")).with_kv_dir(dir.path()).with_test_hooks();
    let engine = Engine::spawn_with(program);
    engine.load(&model_path(), load_params(true)).await.expect("the model loads");
    let mut a = vec![ChatMessage::new(Role::User, A_TURNS[0])];
    let b = vec![ChatMessage::new(Role::User, "Name three colours.")];
    let (first, _) = reply(&engine, 1, &a).await;
    reply(&engine, 2, &b).await;
    until_ram_is(&engine, |bytes| bytes > 0).await; // A's cache, kept while B answers
    assert!(state_files(dir.path()).is_empty());

    engine.set_cache_budgets(CacheBudgets { ram_mb: 0, ..CacheBudgets::default() });
    until_ram_is(&engine, |bytes| bytes == 0).await;
    assert_eq!(state_files(dir.path()).len(), 1, "A's cache went to disk");
    turn(&mut a, &first, A_TURNS[1]);
    let (_, stats) = reply(&engine, 1, &a).await;
    assert_eq!(stats.prompt_source, PromptSource::Disk, "{stats:?}");

    let none = CacheBudgets { ram_mb: 0, disk_mb: 0, ..CacheBudgets::default() };
    engine.set_cache_budgets(none);
    reply(&engine, 2, &b).await;
    assert!(state_files(dir.path()).is_empty(), "{:?}", state_files(dir.path()));

    // A new engine process after a crash is told the budgets before anything else.
    let crashed = engine.host_pid();
    engine.abort_for_test();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while engine.host_pid() == crashed || engine.host_pid().is_none() {
        assert!(std::time::Instant::now() < deadline, "no new engine process");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    reply(&engine, 1, &a).await;
    reply(&engine, 2, &b).await;
    until_ram_is(&engine, |bytes| bytes == 0).await;
    engine.shutdown();
    assert!(state_files(dir.path()).is_empty(), "no disk budget, no file: {:?}", state_files(dir.path()));
}
