//! Files and settings met in the wild that used to abort llama.cpp, overflow a stack or hang:
//! each gets a specific sentence, the engine lives on, and the next reply on the real model works.
//! The hostile files are built here from the real model (nothing binary is checked in).

mod common;

use hearth_core::{ChatMessage, Constraint, Role, SamplingParams};
use hearth_engine::LoadParams;

use common::{greedy, model_path, reply, reply_error, spawn_engine, user};
use hearth_testkit::gguf::{self, ARRAY, STRING, U32};

const FOREVER: &str = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}";

enum Expect {
    /// The load is refused with these words.
    Refused(&'static str),
    /// It loads, and a reply fails with these words.
    ReplyFails(&'static str),
}

#[tokio::test]
async fn hostile_files_get_words_and_the_engine_lives_on() {
    let real = std::fs::read(model_path()).unwrap();
    let cases: Vec<(&str, Vec<u8>, Expect)> = vec![
        (
            "arrays of arrays 100,000 deep",
            gguf::with_kv(&real, "hearth.test.nested", ARRAY, &gguf::nested_arrays(100_000)),
            Expect::Refused("hearth.test.nested is an array of arrays"),
        ),
        (
            "token list of integers",
            gguf::with_kv(&real, "tokenizer.ggml.tokens", ARRAY, &gguf::array(U32, 3, &[0; 12])),
            Expect::Refused("tokenizer.ggml.tokens must be an array of strings but is an array of type 4"),
        ),
        (
            "tokenizer model as a number",
            gguf::with_kv(&real, "tokenizer.ggml.model", U32, &7u32.to_le_bytes()),
            Expect::Refused("tokenizer.ggml.model must be a string but is an integer"),
        ),
        (
            "an architecture llama.cpp does not know",
            gguf::with_kv(&real, "general.architecture", STRING, &gguf::string("hearthtest")),
            // llama.cpp's own words, from its log.
            Expect::Refused("unknown model architecture: 'hearthtest'"),
        ),
        (
            "a context length past 32 bits",
            gguf::with_kv(&real, "llama.context_length", U32, &u32::MAX.to_le_bytes()),
            Expect::Refused("llama.context_length is 4294967295, outside 0 to 2147483647 (llama.cpp cannot use it)"),
        ),
        (
            "a metadata string of 40 MiB",
            gguf::with_kv(&real, "hearth.test.long", STRING, &gguf::string(&"x".repeat(40 << 20))),
            Expect::Refused("hearth.test.long holds a string of 41943040 bytes, more than the 32 MiB Hearth reads"),
        ),
        (
            "a chat template that loops forever",
            gguf::with_kv(&real, "tokenizer.chat_template", STRING, &gguf::string(FOREVER)),
            Expect::ReplyFails("it ran too long (it may loop forever)"),
        ),
        (
            "a chat template that renders nothing",
            gguf::with_kv(&real, "tokenizer.chat_template", STRING, &gguf::string("{# nothing #}")),
            Expect::ReplyFails("rendered an empty prompt"),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let engine = spawn_engine();
    let params = LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..LoadParams::default() };
    for (name, bytes, expect) in cases {
        let path = dir.path().join(format!("{}.gguf", name.replace([' ', ','], "-")));
        std::fs::write(&path, bytes).unwrap();
        let loaded = engine.load(&path, params.clone()).await;
        match expect {
            Expect::Refused(words) => {
                let message = loaded.expect_err(name).to_string();
                assert!(message.contains(words), "{name}: {message:?} should say {words:?}");
            }
            Expect::ReplyFails(words) => {
                loaded.unwrap_or_else(|e| panic!("{name}: {e}"));
                let message = reply_error(&engine, &user("Hello"), greedy(8)).await;
                assert!(message.contains(words), "{name}: {message:?} should say {words:?}");
            }
        }
        assert!(engine.last_crash().is_none(), "{name} crashed the engine: {:?}", engine.last_crash());
        // The real model still loads and answers.
        engine.load(&model_path(), params.clone()).await.unwrap();
        let after = reply(&engine, &user("Say hi."), greedy(4), None).await;
        assert!(after.stats.completion_tokens > 0, "{name}");
    }
}

/// A chat template that cannot be used as it is: the reply is written anyway, and says how. One
/// that refuses a system prompt gets it folded into the first message; one that fails outright is
/// replaced by llama.cpp's format for the model — each with the template's own words.
#[tokio::test]
async fn a_template_that_fails_is_said_with_the_reply() {
    const NO_SYSTEM: &str = "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n";
    let conversation =
        [ChatMessage::new(Role::System, "Answer in one word."), ChatMessage::new(Role::User, "What is the capital of France?")];
    // (the user's template, what the reply says of it)
    let cases = [
        (NO_SYSTEM, "The model's chat template refuses a system prompt (System role not supported"),
        (
            "{{ raise_exception('Hearth test: this template is broken') }}",
            "The model's chat template failed (Hearth test: this template is broken",
        ),
        ("{% for %}", "The chat template could not be read ("),
    ];
    let engine = spawn_engine();
    for (template, says) in cases {
        let params = LoadParams { n_ctx: Some(1024), n_threads: Some(2), chat_template: Some(template.into()), ..LoadParams::default() };
        engine.load(&model_path(), params).await.unwrap();
        let written = reply(&engine, &conversation, greedy(8), None).await;
        assert!(written.stats.completion_tokens > 0, "{template}");
        let notice = written.stats.template_notice.unwrap_or_default();
        assert!(notice.starts_with(says), "{template}: {notice:?}");
        // Said every time it happens, and only then.
        let plain = reply(&engine, &user("Hello"), greedy(4), None).await;
        assert_eq!(plain.stats.template_notice.is_some(), template != NO_SYSTEM, "{template}");
    }
}

/// A model file without a chat template loads, says so, and chats in ChatML.
#[tokio::test]
async fn a_model_without_a_chat_template_says_so() {
    let real = std::fs::read(model_path()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-template.gguf");
    std::fs::write(&path, gguf::without_kv(&real, "tokenizer.chat_template")).unwrap();
    let engine = spawn_engine();
    let params = LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..LoadParams::default() };
    let info = engine.load(&path, params.clone()).await.unwrap();
    assert_eq!(info.notice.as_deref(), Some(hearth_core::NO_CHAT_TEMPLATE));
    let r = reply(&engine, &user("Say hi."), greedy(4), None).await;
    assert!(r.stats.completion_tokens > 0);
    // A template chosen in the settings: nothing to say.
    let chosen = LoadParams { chat_template: Some("{% for m in messages %}{{ m.content }}{% endfor %}".into()), ..params };
    assert_eq!(engine.load(&path, chosen).await.unwrap().notice, None);
    assert_eq!(engine.load(&model_path(), LoadParams::default()).await.unwrap().notice, None);
}

/// A grammar that can only end, with end-of-turn banned, left llama.cpp nothing to sample.
#[tokio::test]
async fn a_grammar_that_must_end_while_end_of_turn_is_banned() {
    let engine = common::loaded_engine().await;
    let sampling = SamplingParams { constraint: Some(Constraint::Gbnf("root ::= \"yes\"".into())), ignore_eos: true, ..greedy(16) };
    let done = reply(&engine, &user("Answer yes."), sampling, None).await;
    assert!(engine.last_crash().is_none(), "{:?}", engine.last_crash());
    assert_eq!(done.text, "yes");
    assert_eq!(done.reason, hearth_core::FinishReason::EndOfTurn);
}

/// An embedding model (all-MiniLM-L6-v2, converted by setup.sh) embeds texts in the engine
/// process beside the chat model: vectors of unit length, the same text the same vector, texts
/// alike in meaning closer than texts apart (worded apart from each other). What cannot embed
/// — a chat model, a file that is not there, a damaged one — is refused in words, and the
/// engine and its chat model live on.
#[tokio::test]
async fn an_embedding_model_embeds_and_other_files_are_refused() {
    let embedding = model_path().parent().unwrap().join("embedding/all-MiniLM-L6-v2.f16.gguf");
    assert!(embedding.exists(), "{} is missing: run scripts/setup.sh test", embedding.display());
    let engine = spawn_engine();
    engine.load(&model_path(), LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..LoadParams::default() }).await.unwrap();
    let texts = [
        "What are the yearly membership fees?",
        "Annual dues are forty pounds for adults.",
        "Boil the kettle before making tea.",
        "What are the yearly membership fees?",
        "",
    ];
    let vectors = engine.embed(&embedding, texts.iter().map(|t| t.to_string()).collect()).await.unwrap();
    assert_eq!(vectors.len(), texts.len());
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    for v in &vectors {
        assert_eq!(v.len(), 384);
        assert!((dot(v, v) - 1.0).abs() < 1e-4, "unit length");
    }
    assert_eq!(vectors[0], vectors[3], "the same text, the same vector (in one batch)");
    let (near, far) = (dot(&vectors[0], &vectors[1]), dot(&vectors[0], &vectors[2]));
    assert!(near > far + 0.2, "fees ~ dues {near}, fees ~ kettle {far}");
    // Alone, as in another batch, a text gets the vector it got among others.
    let alone = engine.embed(&embedding, vec![texts[1].to_string()]).await.unwrap();
    assert!(dot(&alone[0], &vectors[1]) > 0.999, "{}", dot(&alone[0], &vectors[1]));

    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.gguf");
    std::fs::write(&damaged, &std::fs::read(&embedding).unwrap()[..4096]).unwrap();
    let cases =
        [(model_path(), "it is not an embedding model"), (dir.path().join("missing.gguf"), "missing.gguf"), (damaged, "damaged.gguf")];
    for (path, words) in cases {
        let refused = engine.embed(&path, vec!["Hello".into()]).await.expect_err(words).to_string();
        assert!(refused.contains(words), "{refused:?} should say {words:?}");
    }
    assert!(engine.last_crash().is_none(), "{:?}", engine.last_crash());
    let after = reply(&engine, &user("Say hi."), greedy(4), None).await;
    assert!(after.stats.completion_tokens > 0, "the chat model still answers");
    assert_eq!(engine.embed(&embedding, Vec::new()).await.unwrap(), Vec::<Vec<f32>>::new());
    // Loaded to chat with, it is refused in words; the chat model stays.
    let refused = engine.load(&embedding, LoadParams::default()).await.unwrap_err().to_string();
    assert!(refused.contains("it is an embedding model") && refused.contains("Attachments"), "{refused}");
    assert!(reply(&engine, &user("Say hi."), greedy(4), None).await.stats.completion_tokens > 0, "the chat model stays");
}
