//! The engine against the real SmolLM2-135M-Instruct Q4_1 model (fetched by scripts/fetch-model.sh).

mod common;

use std::time::Instant;

use hearth_core::{CancelFlag, ChatBackend, ChatMessage, FinishReason, GenEvent, ReplyRequest, Role, SamplingParams};
use hearth_engine::{EngineError, GgufError, LoadParams};

use common::{greedy, loaded_engine, model_path, reply, user};

#[tokio::test]
async fn replies_to_a_real_prompt_deterministically_and_reuses_the_cache() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let prompt = user("What is the capital of France? Answer in one sentence.");
    let first = reply(&engine, &prompt, greedy(48), None).await;
    assert!(first.text.contains("Paris"), "{:?}", first.text);
    assert!(first.stats.completion_tokens > 0 && first.stats.prompt_tokens > 10, "{:?}", first.stats);
    assert_eq!(first.stats.cached_tokens, 0);
    assert!(first.stats.ttft_ms > 0.0);

    // Greedy decoding is deterministic, and the identical prompt is served from the KV cache,
    // all but the last token (whose logits must be recomputed).
    let again = reply(&engine, &prompt, greedy(48), None).await;
    assert_eq!(again.text, first.text);
    assert_eq!(again.stats.cached_tokens, again.stats.prompt_tokens - 1);

    // The next turn reuses the previous prompt and the reply.
    let mut next = prompt.clone();
    next.push(ChatMessage::new(Role::Assistant, first.text.clone()));
    next.push(ChatMessage::new(Role::User, "And of Italy?"));
    let second = reply(&engine, &next, greedy(16), None).await;
    assert!(second.stats.cached_tokens >= first.stats.prompt_tokens, "{:?} vs {:?}", second.stats, first.stats);
}

#[tokio::test]
async fn a_reply_spelled_in_unusual_tokens_is_still_reused_from_the_cache() {
    let _one = common::one_at_a_time().await;
    use hearth_core::{BiasTarget, LogitBias};

    // With the tokens that spell "London" pushed down, the model writes the word in smaller
    // pieces, which tokenizing the reply's text again would not give back.
    let engine = loaded_engine().await;
    let prompt = user("What is the capital of England?");
    let push_down = LogitBias { target: BiasTarget::Text { text: "London".into() }, bias: -10.0 };
    let first = reply(&engine, &prompt, SamplingParams { logit_bias: vec![push_down], ..greedy(16) }, None).await;
    assert!(first.text.contains("London"), "{:?}", first.text);

    let mut next = prompt.clone();
    next.push(ChatMessage::new(Role::Assistant, first.text.clone()));
    next.push(ChatMessage::new(Role::User, "Thanks."));
    let second = reply(&engine, &next, greedy(4), None).await;
    let whole_first_turn = first.stats.prompt_tokens + first.stats.completion_tokens - 1;
    assert!(second.stats.cached_tokens >= whole_first_turn, "{:?} vs {:?}", second.stats, first.stats);
}

#[tokio::test]
async fn stops_mid_reply_and_honours_max_tokens() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let long = user("Write a long story about a dragon who learns to bake bread.");
    // Deltas come in batches of up to 40 ms; the stop lands within a token of the flag.
    let stopped = reply(&engine, &long, greedy(400), Some(2)).await;
    assert_eq!(stopped.reason, FinishReason::Cancelled);
    assert!(stopped.stats.completion_tokens < 40, "{:?}", stopped.stats);

    let capped = reply(&engine, &long, greedy(5), None).await;
    assert_eq!(capped.reason, FinishReason::Length);
    assert_eq!(capped.stats.completion_tokens, 5);
    assert!(capped.deltas >= 1);

    // A fixed seed reproduces a sampled reply.
    let seeded = SamplingParams { temperature: 1.0, seed: Some(42), max_tokens: 24, ..SamplingParams::default() };
    let a = reply(&engine, &long, seeded.clone(), None).await;
    let b = reply(&engine, &long, seeded, None).await;
    assert_eq!(a.text, b.text);
}

#[tokio::test]
async fn bad_files_give_clear_errors_and_keep_the_loaded_model() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read(model_path()).unwrap();

    let not_gguf = dir.path().join("notes.gguf");
    std::fs::write(&not_gguf, b"this is a text file, not a model").unwrap();
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, &real[..real.len() / 2]).unwrap();
    let missing = dir.path().join("missing.gguf");
    // A named pipe with a model's name: opening it would wait for a writer for ever.
    let fifo = dir.path().join("fifo.gguf");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) on a path in this test's own folder.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);

    let check = |result: Result<_, EngineError>, expected: &str| {
        let message = result.expect_err("a bad file must not load").to_string();
        assert!(message.contains(expected), "{message:?} should contain {expected:?}");
    };
    check(engine.load(&not_gguf, LoadParams::default()).await, "is not a GGUF model file");
    check(engine.load(&truncated, LoadParams::default()).await, "is truncated");
    check(engine.load(&missing, LoadParams::default()).await, "cannot be read");
    check(engine.load(&fifo, LoadParams::default()).await, "is a named pipe (FIFO), not a model file");
    check(engine.load(dir.path(), LoadParams::default()).await, "is a folder, not a model file");

    let after = reply(&engine, &user("Say hi."), greedy(4), None).await;
    assert!(after.stats.completion_tokens > 0);
    assert!(matches!(engine.load(&not_gguf, LoadParams::default()).await, Err(EngineError::InvalidFile(GgufError::NotGguf { .. }))));
}

/// A conversation longer than the context: refused in words by default, trimmed by the other
/// policies, which report how many messages they left out and keep what they promise to keep.
#[tokio::test]
async fn overflow_policies_trim_or_refuse() {
    let _one = common::one_at_a_time().await;
    use hearth_core::OverflowPolicy;

    let engine = common::engine_with_context(512).await;
    let mut history = vec![ChatMessage::new(Role::System, "You are terse.")];
    for n in 1..=12 {
        history.push(ChatMessage::new(Role::User, format!("Tell me something about the number {n}, at some length please.")));
        history.push(ChatMessage::new(Role::Assistant, format!("The number {n} is a fine number. ").repeat(6)));
    }
    history.push(ChatMessage::new(Role::User, "And what about 13?"));
    let with = |overflow| SamplingParams { overflow, ..greedy(16) };

    let refused = common::reply_error(&engine, &history, with(OverflowPolicy::StopAtLimit)).await;
    assert!(refused.contains("context holds 512"), "{refused}");

    for policy in [OverflowPolicy::TruncateMiddle, OverflowPolicy::RollingWindow] {
        let r = reply(&engine, &history, with(policy), None).await;
        assert!(r.stats.dropped_messages >= 2 && r.stats.dropped_messages % 2 == 0, "{policy:?}: {:?}", r.stats);
        assert!(r.stats.prompt_tokens as usize + 16 <= 512, "{policy:?}: {:?}", r.stats);
        assert!(r.stats.completion_tokens > 0);
    }
}

/// Load settings take effect: a quantized KV cache with flash attention still chats; a custom
/// chat template replaces the model's own; combinations llama.cpp would refuse obscurely are
/// refused in words.
#[tokio::test]
async fn load_settings_apply() {
    let _one = common::one_at_a_time().await;
    use hearth_engine::{FlashAttention, KvType};

    let engine = common::spawn_engine();
    let base = LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..LoadParams::default() };
    let load = |params: LoadParams| {
        let engine = engine.clone();
        async move { engine.load(&model_path(), params).await }
    };
    load(LoadParams { kv_cache_type: KvType::Q8_0, flash_attention: FlashAttention::On, ..base.clone() }).await.unwrap();
    let quantized = reply(&engine, &user("What is the capital of France?"), greedy(12), None).await;
    assert!(quantized.stats.completion_tokens > 0);

    let plain = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:";
    load(LoadParams { chat_template: Some(plain.into()), ..base.clone() }).await.unwrap();
    let custom = reply(&engine, &user("Hi"), greedy(4), None).await;
    // A template that opens the reasoning block after the assistant's turn (as DeepSeek-R1's does)
    // unless asked not to think (as Qwen3's does, with an empty block).
    let thinking = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n\
                    {% if enable_thinking %}<think>\n{% else %}<think>\n\n</think>\n\n{% endif %}";
    load(LoadParams { chat_template: Some(thinking.into()), ..base.clone() }).await.unwrap();
    let budget = |tokens: i32| SamplingParams { reasoning_budget: tokens, ..greedy(12) };
    let question = user("What is 2 + 2?");
    // No limit: the reply's text opens the block too (so it is shown and stored as reasoning);
    // every token this model writes is reasoning (it never closes the block).
    let free = reply(&engine, &question, budget(-1), None).await;
    assert!(free.text.starts_with("<think>\n") && !free.text.contains("</think>"), "{:?}", free.text);
    assert_eq!(free.stats.reasoning_tokens, Some(free.stats.completion_tokens), "{:?}", free.stats);
    // Continued (cut at its length): written on from its own text, the opening the prompt wrote
    // not written twice — the cache's own tokens, and the text one longer reply gives.
    let mut cut = question.clone();
    cut.push(ChatMessage::new(Role::Assistant, free.text.clone()));
    let mut going_on = ReplyRequest::new(cut, budget(-1), CancelFlag::new());
    going_on.continue_last = true;
    let more = common::reply_to(&engine, going_on, None).await;
    assert!(
        more.stats.cached_tokens + 1 >= free.stats.prompt_tokens + free.stats.completion_tokens,
        "{:?} after {:?}",
        more.stats,
        free.stats
    );
    let longer = reply(&engine, &question, SamplingParams { max_tokens: 24, ..budget(-1) }, None).await;
    assert_eq!(format!("{}{}", free.text, more.text), longer.text, "continued as one reply");
    // A budget of 3: the block is closed after three tokens, and the model answers.
    let capped = reply(&engine, &question, budget(3), None).await;
    let parts = hearth_core::split_reasoning(&capped.text);
    assert!(parts.closed && parts.reasoning.is_some() && !parts.answer.is_empty(), "{:?}", capped.text);
    let thought = capped.stats.reasoning_tokens.unwrap_or(0);
    assert!(thought > 3 && thought < capped.stats.completion_tokens, "three tokens and the closing: {:?}", capped.stats);
    let reasoned = parts.reasoning.unwrap_or_default();
    assert!(
        free.text["<think>".len()..].trim_start().starts_with(reasoned),
        "the same reasoning up to the budget: {reasoned:?} in {:?}",
        free.text
    );
    // A beam search is bound the same: each beam closes its block at the budget, and the best
    // reply's reasoning is counted.
    let searched = SamplingParams { strategy: hearth_core::Strategy::Beam, beam_width: 2, n_best: 2, ..budget(3) };
    let beamed = reply(&engine, &question, searched, None).await;
    let parts = hearth_core::split_reasoning(&beamed.text);
    assert!(parts.closed && parts.reasoning.is_some(), "{:?}", beamed.text);
    let thought = beamed.stats.reasoning_tokens.unwrap_or(0);
    assert!(thought > 3 && thought <= beamed.stats.completion_tokens, "three tokens and the closing: {:?}", beamed.stats);
    let hypotheses = beamed.stats.beams.iter().flatten();
    assert!(
        hypotheses.clone().count() == 2 && hypotheses.clone().all(|b| hearth_core::split_reasoning(&b.text).closed),
        "{:?}",
        beamed.stats.beams
    );
    // Off: the template is told (enable_thinking false), and the reply has no reasoning.
    let off = reply(&engine, &question, budget(0), None).await;
    assert!(!off.text.contains("<think>") && off.stats.reasoning_tokens.is_none(), "{:?} {:?}", off.text, off.stats);
    assert_eq!(custom.stats.reasoning_tokens, None, "a reply that opened no block");
    // A title is written without reasoning, from the reply's answer.
    let titled = |reply: String| {
        let engine = engine.clone();
        async move { hearth_core::generate_title(&engine, hearth_core::ModelTarget::LOADED, "What is 2 + 2?", &reply).await.unwrap() }
    };
    let title = titled(capped.text.clone()).await;
    assert!(title.as_deref().is_some_and(|t| !t.contains("think")), "{title:?}");

    // A template that drops past reasoning (as Qwen3's and DeepSeek-R1's do): the next turn's
    // prompt leaves the cache where the first reply began, so only that much is reused, and the
    // reply is the one an empty cache gives.
    let drops = "{% for m in messages %}<|im_start|>{{ m.role }}\n\
                 {% if m.role == 'assistant' %}{{ m.content.split('</think>')[-1].lstrip() }}{% else %}{{ m.content }}{% endif %}\
                 <|im_end|>\n{% endfor %}<|im_start|>assistant\n<think>\n";
    let with_drops = LoadParams { chat_template: Some(drops.into()), ..base.clone() };
    load(with_drops.clone()).await.unwrap();
    let first = reply(&engine, &question, budget(3), None).await;
    assert!(hearth_core::split_reasoning(&first.text).closed, "{:?}", first.text);
    let mut turns = question.clone();
    turns.push(ChatMessage::new(Role::Assistant, first.text.clone()));
    turns.push(ChatMessage::new(Role::User, "And 3 + 3?"));
    let second = reply(&engine, &turns, budget(3), None).await;
    let opened = first.stats.prompt_tokens; // ends in "<think>\n", which the next prompt does not hold
    assert!((opened - 4..opened).contains(&second.stats.cached_tokens), "{:?} after {:?}", second.stats, first.stats);
    load(with_drops).await.unwrap();
    let fresh = reply(&engine, &turns, budget(3), None).await;
    assert_eq!((fresh.stats.cached_tokens, &fresh.text), (0, &second.text), "the same reply from an empty cache");
    // A template that opens the block whatever it is told (no switch): closed at once for a title.
    let title = titled(first.text.clone()).await;
    assert!(title.as_deref().is_some_and(|t| !t.contains("think")), "{title:?}");
    load(base.clone()).await.unwrap();
    let own = reply(&engine, &user("Hi"), greedy(4), None).await;
    // The model's own template adds a system prompt and ChatML markers: many more tokens.
    assert!(custom.stats.prompt_tokens + 10 < own.stats.prompt_tokens, "{:?} vs {:?}", custom.stats, own.stats);

    let refused = load(LoadParams { kv_cache_type: KvType::Q4_0, flash_attention: FlashAttention::Off, ..base }).await;
    assert!(refused.unwrap_err().to_string().contains("quantized KV cache needs flash attention"));
}

/// A reply cut short, then an edit of the last message and a regeneration leave the cache as if
/// the conversation had gone straight there: the edited turn's greedy reply is the one an engine
/// that never saw the first version gives, while the common prefix is reused. (The yardstick is a
/// twin whose cache was written the same way — the reply decoded token by token — not a cold
/// prefill: the two part at greedy near-ties however valid the cache.)
#[tokio::test]
async fn stop_edit_and_regenerate_keep_the_cache_valid() {
    let _one = common::one_at_a_time().await;
    let warm = loaded_engine().await;
    let mut history = user("Write a long story about a lighthouse keeper.");
    // Cut at a fixed length, as a stop leaves it: the last token written was never decoded.
    let stopped = reply(&warm, &history, greedy(30), None).await;
    assert_eq!(stopped.reason, FinishReason::Length);
    history.push(ChatMessage::new(Role::Assistant, stopped.text.clone()));
    history.push(ChatMessage::new(Role::User, "Now tell me about his cat."));
    let after_stop = reply(&warm, &history, greedy(24), None).await;
    assert!(after_stop.stats.cached_tokens >= stopped.stats.prompt_tokens, "{:?} vs {:?}", after_stop.stats, stopped.stats);

    let last = history.len() - 1;
    history[last] = ChatMessage::new(Role::User, "Now tell me about his dog.");
    let edited = reply(&warm, &history, greedy(24), None).await;
    assert!(edited.stats.cached_tokens >= stopped.stats.prompt_tokens, "{:?}", edited.stats);
    assert!(edited.stats.cached_tokens < edited.stats.prompt_tokens, "{:?}", edited.stats);
    let twin = loaded_engine().await;
    let twin_first = reply(&twin, &history[..1], greedy(30), None).await;
    assert_eq!(twin_first.text, stopped.text);
    assert_eq!(edited.text, reply(&twin, &history, greedy(24), None).await.text, "edited last message");

    let regenerated = reply(&warm, &history, greedy(24), None).await;
    assert_eq!(regenerated.stats.cached_tokens, regenerated.stats.prompt_tokens - 1);
    assert_eq!(regenerated.text, edited.text, "regenerate");
}

#[tokio::test]
async fn an_aside_leaves_the_conversation_cache_alone_and_gives_way_to_a_reply() {
    let _one = common::one_at_a_time().await;
    use hearth_core::{CancelFlag, ChatBackend, GenEvent, ReplyRequest};

    let engine = loaded_engine().await;
    let prompt = user("What is the capital of France? Answer in one sentence.");
    let first = reply(&engine, &prompt, greedy(24), None).await;

    // An aside (a title) in between: served, and the conversation's next turn still finds its
    // whole prompt and reply in the KV cache.
    let title = ReplyRequest::new(user("Write a title for a chat about Paris."), greedy(8), CancelFlag::new());
    let mut aside = engine.start_aside(title).unwrap();
    let mut titled = String::new();
    loop {
        match aside.events.recv().await.unwrap() {
            GenEvent::Delta(d) => titled.push_str(&d),
            GenEvent::Finished { reason, .. } => break assert_ne!(reason, FinishReason::Cancelled),
            GenEvent::Failed(e) => panic!("{e}"),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => panic!("log-probabilities were not asked for"),
        }
    }
    assert!(!titled.trim().is_empty());
    // A title for a reply that went off the rails into characters spelled byte by byte (300 of
    // them are ~800 tokens, past the aside's context): shorter excerpts are tried, a title comes.
    let wild = "⇑\u{1F6F8}\u{2FA1D}".repeat(100);
    let title = hearth_core::generate_title(&engine, hearth_core::ModelTarget::LOADED, "Say hello.", &wild).await;
    assert!(matches!(title, Ok(Some(_))), "{title:?}");
    let mut next = prompt.clone();
    next.push(ChatMessage::new(Role::Assistant, first.text.clone()));
    next.push(ChatMessage::new(Role::User, "And of Italy?"));
    let second = reply(&engine, &next, greedy(8), None).await;
    assert!(second.stats.cached_tokens >= first.stats.prompt_tokens + first.stats.completion_tokens - 1, "{:?}", second.stats);

    // A long aside is cancelled the moment a reply is asked for.
    let long = SamplingParams { ignore_eos: true, ..greedy(400) };
    let mut aside = engine.start_aside(ReplyRequest::new(user("Count to one thousand."), long, CancelFlag::new())).unwrap();
    while !matches!(aside.events.recv().await.unwrap(), GenEvent::Delta(_)) {}
    let third = reply(&engine, &next, greedy(8), None).await;
    let ended = loop {
        match aside.events.recv().await.unwrap() {
            GenEvent::Finished { reason, stats } => break (reason, stats),
            GenEvent::Delta(_) | GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => {}
            GenEvent::Failed(e) => panic!("{e}"),
        }
    };
    assert_eq!(ended.0, FinishReason::Cancelled);
    assert!(ended.1.completion_tokens < 400, "{:?}", ended.1);
    assert_eq!(third.text, second.text, "the reply after a cancelled aside is the one without it");
}

/// Reads a stream to its end: the text, why it ended, when its first words and its end came.
async fn read_timed(mut stream: hearth_core::ReplyStream) -> (String, FinishReason, Instant, Instant) {
    let (mut text, mut first) = (String::new(), None);
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => {
                first.get_or_insert_with(Instant::now);
                text.push_str(&d);
            }
            GenEvent::Finished { reason, .. } => return (text, reason, first.expect("words came"), Instant::now()),
            GenEvent::Failed(e) => panic!("generation failed: {e}"),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => {}
        }
    }
    panic!("the stream ended without Finished");
}

#[tokio::test]
async fn replies_asked_at_once_are_written_together_and_each_is_its_reply_alone() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let topics = ["a lighthouse keeper", "a clockmaker", "a lost kite", "a river otter", "a snow leopard"];
    let prompts: Vec<_> = topics.iter().map(|t| user(&format!("Write a short story about {t}."))).collect();
    let mut alone = Vec::new();
    for prompt in &prompts {
        alone.push(reply(&engine, prompt, greedy(40), None).await.text);
    }

    // Five at once — one more than the engine's sequences, so one waits for a slot — and a
    // sixth that its client abandons after its first words.
    let ask = |prompt: &Vec<ChatMessage>| engine.start_reply(ReplyRequest::new(prompt.clone(), greedy(40), CancelFlag::new())).unwrap();
    let tasks: Vec<_> = prompts.iter().map(|p| tokio::spawn(read_timed(ask(p)))).collect();
    let mut abandoned = ask(&prompts[0]);
    let abandon = tokio::spawn(async move { while !matches!(abandoned.events.recv().await, Some(GenEvent::Delta(_)) | None) {} });
    let mut together = Vec::new();
    for task in tasks {
        together.push(task.await.unwrap());
    }
    abandon.await.unwrap();

    // The first four start together in empty sequences: each one's cells lie in position order,
    // as alone, so its greedy text is its text alone. The fifth reuses a finished sequence's
    // opening, its new cells wherever the cache has room; its text may part at a near-tie
    // (attention sums its cells in another order), as with llama-server's unified cache.
    for ((text, reason, _, _), (alone, topic)) in together.iter().zip(alone.iter().zip(topics)).take(4) {
        assert_eq!(text, alone, "{topic}: greedy text among others differs from its text alone");
        assert_eq!(*reason, FinishReason::Length);
    }
    let (fifth, reason, _, _) = &together[4];
    assert_eq!(*reason, FinishReason::Length);
    assert!(fifth.contains("snow leopard"), "{fifth:?}");
    // The first four were written side by side: each had its first words before any ended.
    let first_end = together.iter().map(|r| r.3).min().unwrap();
    for (topic, (_, _, first_words, _)) in topics.iter().zip(&together).take(4) {
        assert!(*first_words < first_end, "{topic} began only after another reply had ended");
    }
    // Nothing is left behind: a prompt that needs nearly the whole context finds it free.
    let long = user(&format!("Count the words: {}", "word ".repeat(1_800)));
    let whole = reply(&engine, &long, greedy(8), None).await;
    assert!(whole.stats.prompt_tokens > 1_800 && whole.stats.completion_tokens == 8, "{:?}", whole.stats);
}

#[tokio::test]
async fn a_reply_beside_another_reads_only_what_follows_the_opening_they_share() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let system = ChatMessage::new(Role::System, "You are a patient teacher. ".repeat(20));
    let ask = |question: &str| vec![system.clone(), ChatMessage::new(Role::User, question)];
    let alone = reply(&engine, &ask("Name a planet."), greedy(12), None).await;

    // A long reply is being written when another with the same system prompt comes: the
    // second shares the first's cells for the opening and reads only its own question.
    let cancel = CancelFlag::new();
    let mut writing = engine.start_reply(ReplyRequest::new(ask("Write a long story."), greedy(300), cancel.clone())).unwrap();
    while !matches!(writing.events.recv().await.expect("the story ended before its first text"), GenEvent::Delta(_)) {}
    let beside = reply(&engine, &ask("Name a planet."), greedy(12), None).await;
    cancel.cancel();
    while writing.events.recv().await.is_some() {}

    assert!(beside.stats.cached_tokens > 100, "{:?}", beside.stats);
    assert!(beside.stats.prompt_tokens - beside.stats.cached_tokens < 20, "{:?}", beside.stats);
    assert_eq!(beside.text, alone.text, "the shared cells are the very ones its own reading would give");
}

/// A question carrying documents whole: each one's tokens counted apart (its block as the model
/// reads it), in the order it carries them, within the question's count; a question with none
/// has no such counts.
#[tokio::test]
async fn each_document_a_question_carries_is_counted() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let document = |hash: &str, name: &str| hearth_core::Attachment {
        hash: hash.into(),
        name: name.into(),
        kind: hearth_core::AttachmentKind::Document,
        bytes: 1,
        chars: 1,
    };
    let texts = hearth_core::DocumentTexts::from([
        ("a".into(), "The kettle holds 1.7 litres and boils in three minutes.".into()),
        ("b".into(), "Notes: descale monthly. ".repeat(20)),
    ]);
    let content = hearth_core::with_documents("How much does it hold?", &[document("a", "kettle.md"), document("b", "notes.txt")], &texts);
    let (_, stats) = common::chat_reply(&engine, 41, &user(&content), greedy(2)).await;
    let (question, documents) = (stats.question_tokens.expect("counted"), stats.document_tokens.clone().expect("counted"));
    assert_eq!(documents.len(), 2, "{stats:?}");
    assert!(documents[0] > 12 && documents[1] > documents[0] * 3, "the longer the more: {documents:?}");
    let words = question - documents.iter().sum::<u32>();
    assert!((4..=12).contains(&words), "the rest is the question's words: {question} in all, {documents:?}");
    let (_, plain) = common::chat_reply(&engine, 42, &user("How much does it hold?"), greedy(2)).await;
    assert_eq!(plain.document_tokens, None, "{plain:?}");
}

/// SmolLM2 beside the test projector (scripts/make-test-models.py) reads images: each is 16
/// tokens of the prompt, its cells reused on the next turn like text, read again only from where
/// another image stands in its place; the same image gives the same greedy reply. A projector
/// made for another model, or none, leaves the model reading text, and an image is refused in
/// words.
#[tokio::test]
async fn images_are_read_through_the_projector_beside_the_model_and_cached_like_text() {
    use hearth_testkit::images::{checkerboard, gradient};
    let _one = common::one_at_a_time().await;
    let (engine, dir, params) = vision_engine("vision", "SmolLM2-135M-Instruct.Q4_1.gguf", "mmproj-hearth-test.gguf").await;
    let question = user("What is in the picture?");
    let (_, plain) = common::chat_reply(&engine, 1, &question, greedy(8)).await;
    let with = |image| with_image(&question, image);
    let (answer, first) = common::chat_reply(&engine, 2, &with(gradient()), greedy(8)).await;
    assert!(first.prompt_tokens >= plain.prompt_tokens + 16, "the image is read as 16 tokens: {first:?} vs {plain:?}");
    // The question's own count, as its message shows it: its words, and the image's 16 tokens.
    let words = plain.question_tokens.expect("a question is counted");
    assert!(words > 0 && words < plain.prompt_tokens, "{plain:?}");
    assert_eq!(first.question_tokens, Some(words + 16), "{first:?}");
    assert_eq!(first.cached_tokens, 0);

    let mut next = with(gradient());
    next.push(ChatMessage::new(Role::Assistant, answer.clone()));
    next.push(ChatMessage::new(Role::User, "And what colour is it?"));
    let (_, second) = common::chat_reply(&engine, 2, &next, greedy(8)).await;
    assert!(second.cached_tokens >= first.prompt_tokens, "the image's cells are reused: {second:?} after {first:?}");

    next[0].images = vec![checkerboard()];
    let (_, other) = common::chat_reply(&engine, 2, &next, greedy(8)).await;
    // What comes before the image (the system prompt, the turn's opening) is less than the
    // question alone with its turn.
    assert!(other.cached_tokens < plain.prompt_tokens, "read again from the other image on: {other:?}");
    assert_eq!(other.prompt_tokens, second.prompt_tokens);

    let (again, _) = common::chat_reply(&engine, 3, &with(gradient()), greedy(8)).await;
    assert_eq!(again, answer, "the same image, the same greedy reply");

    let mismatched = LoadParams { projector: dir.join("mismatched/mmproj-tiny.gguf").to_str().map(String::from), ..params.clone() };
    let info = engine.load(&dir.join("SmolLM2-135M-Instruct.Q4_1.gguf"), mismatched).await.expect("the model loads without it");
    assert_eq!(info.projector, None);
    let notice = info.notice.unwrap_or_default();
    assert!(notice.contains("images cannot be read: mmproj-tiny.gguf cannot be read as this model's image projector"), "{notice}");
    assert!(notice.contains("n_embd = 576") && notice.contains("n_embd = 64"), "llama.cpp's reason: {notice}");
    let refused = common::reply_error(&engine, &with(gradient()), greedy(8)).await;
    assert!(refused.contains("this model cannot read images"), "{refused}");
    let after = reply(&engine, &question, greedy(4), None).await;
    assert!(after.stats.completion_tokens > 0, "text is read as before");
}

/// A model that places an image in two dimensions (Qwen2-VL's M-RoPE: tiny-qwen2vl beside its
/// projector, scripts/make-test-models.py): a 32 × 32 image is 9 cells at 3 positions. The next
/// turn reads on after its cells, and its greedy reply is the one a cache read from nothing
/// gives; another image in its place is read again from where it stands (the image whole).
#[tokio::test]
async fn an_image_placed_in_two_dimensions_is_cached_and_read_on_from_as_from_nothing() {
    use hearth_testkit::images::{checkerboard, gradient};
    let _one = common::one_at_a_time().await;
    let (engine, dir, params) = vision_engine("vision-mrope", "tiny-qwen2vl.gguf", "mmproj-tiny-qwen2vl.gguf").await;
    let model = dir.join("tiny-qwen2vl.gguf");
    let question = user("What is in the picture?");
    let (_, plain) = common::chat_reply(&engine, 1, &question, greedy(8)).await;
    let with = |image| with_image(&question, image);
    let (answer, first) = common::chat_reply(&engine, 2, &with(gradient()), greedy(8)).await;
    assert_eq!(first.question_tokens, plain.question_tokens.map(|words| words + 9), "{first:?} vs {plain:?}");
    let mut next = with(gradient());
    next.push(ChatMessage::new(Role::Assistant, answer));
    next.push(ChatMessage::new(Role::User, "And what colour is it?"));
    let (cached, second) = common::chat_reply(&engine, 2, &next, greedy(8)).await;
    assert!(second.cached_tokens >= first.prompt_tokens, "the image's cells are reused: {second:?} after {first:?}");

    next[0].images = vec![checkerboard()];
    let (_, other) = common::chat_reply(&engine, 2, &next, greedy(8)).await;
    assert!(other.cached_tokens < plain.prompt_tokens, "read again from the other image on: {other:?}");
    next[0].images = vec![gradient()];
    let (back, again) = common::chat_reply(&engine, 2, &next, greedy(8)).await;
    assert!(again.cached_tokens < plain.prompt_tokens, "read again from the first image on: {again:?}");
    assert_eq!(back, cached, "the same prompt, the same greedy reply");

    let from_nothing = LoadParams { reuse_kv: false, ..params };
    engine.load(&model, from_nothing).await.expect("the model loads");
    let (fresh, read) = common::chat_reply(&engine, 3, &next, greedy(8)).await;
    assert_eq!(read.cached_tokens, 0, "{read:?}");
    assert_eq!(fresh, cached, "read on from the cached image as from nothing");
}

/// A projector whose images the model reads whole, each cell seeing the others (Gemma 3's:
/// SmolLM2 beside a tiny one, scripts/make-test-models.py): an image is 16 tokens, read at once.
/// With a micro-batch of fewer tokens llama.cpp would abort on it (or, with a batch as small, read
/// it in parts): it is refused in words, the model still reads text, and the image is read once
/// a step holds it. A projector whose images vary in size has them held to the micro-batch.
#[tokio::test]
async fn an_image_read_whole_fits_one_step_or_is_refused_in_words() {
    use hearth_testkit::images::gradient;
    let _one = common::one_at_a_time().await;
    let (engine, dir, params) = vision_engine("vision-gemma3", "SmolLM2-135M-Instruct.Q4_1.gguf", "mmproj-tiny-gemma3.gguf").await;
    let model = dir.join("SmolLM2-135M-Instruct.Q4_1.gguf");
    let question = user("What is in the picture?");
    let (_, plain) = common::chat_reply(&engine, 1, &question, greedy(4)).await;
    let (answer, read) = common::chat_reply(&engine, 2, &with_image(&question, gradient()), greedy(8)).await;
    assert_eq!(read.question_tokens, plain.question_tokens.map(|words| words + 16), "{read:?} vs {plain:?}");

    // llama.cpp aborts on the first; the second would read the image in halves, each blind to the other.
    for small in [LoadParams { n_ubatch: 8, ..params.clone() }, LoadParams { n_batch: 8, n_ubatch: 8, ..params.clone() }] {
        engine.load(&model, small).await.expect("the model loads");
        let refused = common::reply_error(&engine, &with_image(&question, gradient()), greedy(8)).await;
        let words = ["reads an image whole", "this image is 16 tokens, and a step takes at most 8", "micro-batch size"];
        assert!(words.iter().all(|w| refused.contains(w)), "{refused}");
        let after = reply(&engine, &question, greedy(4), None).await;
        assert!(after.stats.completion_tokens > 0, "text is read as before");
    }

    let holds = LoadParams { n_batch: 16, n_ubatch: 16, ..params.clone() };
    engine.load(&model, holds).await.expect("the model loads");
    let (again, holds) = common::chat_reply(&engine, 3, &with_image(&question, gradient()), greedy(8)).await;
    assert!(holds.question_tokens == read.question_tokens && !again.is_empty() && !answer.is_empty(), "{holds:?}");

    // A projector that keeps an image's shape (Gemma 4's, 70 to 1,120 tokens an image) is held
    // to the micro-batch: a 400 × 400 image, 625 tokens unbounded, is read as 121 (11 × 11).
    let gemma4 = dir.with_file_name("vision-gemma4");
    let info = engine.load(&gemma4.join("SmolLM2-135M-Instruct.Q4_1.gguf"), LoadParams { n_ubatch: 128, ..params }).await.unwrap();
    assert!(info.projector.is_some_and(|p| p.ends_with("mmproj-tiny-gemma4.gguf")), "{:?}", info.notice);
    let large = hearth_testkit::images::image(hearth_testkit::images::bmp(400, 400, |x, y| [x as u8, y as u8, 64]));
    let (reply, held) = common::chat_reply(&engine, 4, &with_image(&question, large), greedy(4)).await;
    assert_eq!(held.question_tokens, plain.question_tokens.map(|words| words + 121), "{held:?}");
    assert!(!reply.is_empty());
}

/// An engine with `model` of the test models' `folder` loaded (scripts/make-test-models.py), its
/// `projector` found beside it; the folder, and the load's settings.
async fn vision_engine(folder: &str, model: &str, projector: &str) -> (hearth_engine::Engine, std::path::PathBuf, LoadParams) {
    let engine = common::spawn_engine();
    let params = LoadParams { n_ctx: Some(2048), n_threads: Some(2), ..LoadParams::default() };
    let dir = model_path().parent().unwrap().join(folder);
    let info = engine.load(&dir.join(model), params.clone()).await.expect("the model loads");
    assert_eq!(info.projector.as_deref(), dir.join(projector).to_str(), "{:?}", info.notice);
    (engine, dir, params)
}

/// `question` with `image` on its first message.
fn with_image(question: &[ChatMessage], image: hearth_core::ImageInput) -> Vec<ChatMessage> {
    let mut messages = question.to_vec();
    messages[0].images = vec![image];
    messages
}
