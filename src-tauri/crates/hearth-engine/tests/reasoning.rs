//! Reasoning models' templates on tiny models with their families' special tokens
//! (`scripts/make-test-models.py`): gpt-oss's channels in a template of its shape, and the real
//! chat templates of Qwen3 and gpt-oss (read from llama.cpp's models/templates/ of the pinned
//! sdist): how a model reasons is read from its template, a reply's reasoning is read apart as it
//! is written, switched off where the template takes that, and the next turn, whose prompt drops
//! past reasoning, reuses the cache exactly up to where the reply began.

mod common;

use hearth_core::{CancelFlag, ChatMessage, Constraint, ReasoningFormat, ReplyRequest, Role, SamplingParams, split_reasoning};
use hearth_engine::tools::{COMMAND_R_THINKING, ToolFormat};
use hearth_engine::{ChatTemplate, LoadParams};

use common::{greedy, model_path, user};

/// gpt-oss's channels, on a tiny model with its special tokens and a template in its shape
/// (`scripts/make-test-models.py`): what the model writes in `analysis` is the reply's leading
/// reasoning block and `final` its answer; a budget closes the analysis and opens the answer; the
/// budget's reasoning effort and the request's other variables reach the template; the next turn
/// drops past reasoning and reuses the cache exactly up to where the reply began.
#[tokio::test]
async fn gpt_oss_channels_are_read_as_reasoning_and_bounded() {
    let _one = common::one_at_a_time().await;
    let engine = common::spawn_engine();
    let path = model_path().with_file_name("tiny-harmony.gguf");
    let params = LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..LoadParams::default() };
    engine.load(&path, params.clone()).await.unwrap();
    let question = user("What is 2 + 2?");
    let ask = |messages: &[ChatMessage], sampling: SamplingParams, kwargs: serde_json::Value| {
        let mut request = ReplyRequest::new(messages.to_vec(), sampling, CancelFlag::new());
        request.conversation = Some(7);
        request.template_kwargs = kwargs.as_object().cloned().unwrap_or_default();
        let engine = engine.clone();
        async move { common::reply_to(&engine, request, None).await }
    };
    let no_kwargs = serde_json::json!({});

    // The model writes its channels (a grammar makes the random weights write them).
    let grammar =
        r#"root ::= <|channel|> "analysis" <|message|> "Easy sum." <|end|> <|start|> "assistant" <|channel|> "final" <|message|> "Four.""#;
    let written_sampling = |grammar: &str| SamplingParams { constraint: Some(hearth_core::Constraint::Gbnf(grammar.into())), ..greedy(40) };
    let constrained = written_sampling(grammar);
    let written = ask(&question, constrained, no_kwargs.clone()).await;
    assert_eq!(written.text, "<think>Easy sum.</think>Four.");
    let thought = written.stats.reasoning_tokens.unwrap_or(0);
    assert!(thought > 3 && thought < written.stats.completion_tokens, "{:?}", written.stats);
    // A beam search's reply is read the same (its best, and each of its hypotheses).
    let searched = SamplingParams { strategy: hearth_core::Strategy::Beam, beam_width: 2, n_best: 2, ..written_sampling(grammar) };
    let beamed = ask(&question, searched, no_kwargs.clone()).await;
    assert_eq!(beamed.text, "<think>Easy sum.</think>Four.", "{:?}", beamed.stats.beams);
    assert!(beamed.stats.beams.iter().flatten().all(|b| !b.text.contains("<|")), "{:?}", beamed.stats.beams);

    // The effort follows the budget in the system message: the same effort reuses the whole
    // prompt, another is read again from there.
    let budget = |tokens: i32| SamplingParams { reasoning_budget: tokens, ..greedy(12) };
    let medium = ask(&question, budget(-1), no_kwargs.clone()).await;
    let low = ask(&question, budget(100), no_kwargs.clone()).await;
    assert!(low.stats.cached_tokens < 20, "low: the system message differs: {:?} after {:?}", low.stats, medium.stats);
    let named = ask(&question, budget(100), serde_json::json!({"reasoning_effort": "medium"})).await;
    assert!(named.stats.cached_tokens < 20, "an effort named by the request wins: {:?}", named.stats);
    let same = ask(&question, budget(5000), no_kwargs.clone()).await;
    assert!(same.stats.cached_tokens + 1 >= named.stats.prompt_tokens, "medium both times: {:?} after {:?}", same.stats, named.stats);

    // The template opens the analysis (a variable of the request's): the reply reasons from its
    // first token, and a budget of 3 closes it and makes the model answer.
    let opened = serde_json::json!({"open_analysis": true, "reasoning_effort": "low"});
    let free = ask(&question, budget(-1), opened.clone()).await;
    assert!(free.text.starts_with("<think>") && free.stats.reasoning_tokens.is_some(), "{:?}", free.text);
    let capped = ask(&question, budget(3), opened.clone()).await;
    let parts = hearth_core::split_reasoning(&capped.text);
    assert!(parts.closed && !parts.answer.is_empty(), "{:?}", capped.text);
    let reasoned = parts.reasoning.unwrap_or_default();
    assert!(
        free.text["<think>".len()..].trim_start().starts_with(reasoned),
        "the same reasoning up to the budget: {reasoned:?} in {:?}",
        free.text
    );
    let thought = capped.stats.reasoning_tokens.unwrap_or(0);
    assert!(thought > 3 && thought < capped.stats.completion_tokens, "three tokens and the closing: {:?}", capped.stats);

    // The next turn: the template shows the past reply's answer alone (its text holds no
    // channels, or the template refuses it), so the cache is kept up to the reply's channel.
    let mut turns = question.clone();
    turns.push(ChatMessage::new(Role::Assistant, capped.text.clone()));
    turns.push(ChatMessage::new(Role::User, "And 3 + 3?"));
    let second = ask(&turns, budget(3), opened.clone()).await;
    let opened_at = capped.stats.prompt_tokens; // ends in "<|channel|>analysis<|message|>"
    assert!((opened_at - 4..opened_at).contains(&second.stats.cached_tokens), "{:?} after {:?}", second.stats, capped.stats);
    engine.load(&path, params).await.unwrap();
    let fresh = ask(&turns, budget(3), opened).await;
    assert_eq!((fresh.stats.cached_tokens, &fresh.text), (0, &second.text), "the same reply from an empty cache");
}

/// A model's real template, as its GGUF carries it.
fn template_of(model: &str) -> String {
    let file = hearth_engine::validate(&model_path().with_file_name(model)).unwrap();
    file.str("tokenizer.chat_template").expect("a chat template").to_owned()
}

/// Qwen3's, gpt-oss's and Command R7B's real templates: the reasoning format and the tools'
/// format read from them; the model's think block (Qwen3), analysis channel (gpt-oss) or plan
/// (Command R7B's markers), made by a grammar, read as the reply's reasoning and counted; Qwen3's switch writes an empty block into the prompt and
/// the reply has no reasoning; a block Qwen3's model opens itself is closed at the budget; gpt-oss's effort follows the budget in its system message; the
/// next turn drops the past reasoning (both templates do) and the cache is reused exactly up to
/// where the first reply began: the next reply is the one an empty cache gives.
#[tokio::test]
async fn real_reasoning_templates_are_read_switched_and_cached_exactly() {
    let _one = common::one_at_a_time().await;
    let qwen3 = template_of("tiny-qwen3.gguf");
    assert_eq!(hearth_core::reasoning_format(&qwen3), ReasoningFormat::ThinkTags { switchable: true });
    assert_eq!(ChatTemplate::new(&qwen3, "", "").unwrap().tool_format(), ToolFormat::Hermes);
    let gpt_oss = template_of("tiny-gpt-oss.gguf");
    assert_eq!(hearth_core::reasoning_format(&gpt_oss), ReasoningFormat::Channels);
    assert_eq!(ChatTemplate::new(&gpt_oss, "", "").unwrap().tool_format(), ToolFormat::Harmony);
    let command_r = template_of("tiny-command-r7b.gguf");
    assert_eq!(hearth_core::reasoning_format(&command_r), ReasoningFormat::ThinkTags { switchable: true });
    let command_r = ChatTemplate::new(&command_r, "", "").unwrap();
    assert_eq!((command_r.tool_format(), command_r.think_markers()), (ToolFormat::CommandR, Some(COMMAND_R_THINKING)));

    let engine = common::spawn_engine();
    let params = LoadParams { n_ctx: Some(2048), n_threads: Some(2), ..LoadParams::default() };
    let ask = |messages: &[ChatMessage], sampling: SamplingParams| {
        let mut request = ReplyRequest::new(messages.to_vec(), sampling, CancelFlag::new());
        request.conversation = Some(3);
        let engine = engine.clone();
        async move { common::reply_to(&engine, request, None).await }
    };
    let written_by = |grammar: &str| SamplingParams { constraint: Some(Constraint::Gbnf(grammar.into())), ..greedy(40) };
    let budget = |tokens: i32| SamplingParams { reasoning_budget: tokens, ..greedy(12) };
    let question = user("What is 2 + 2?");
    let cases = [
        ("tiny-qwen3.gguf", r#"root ::= "<think>\nEasy sum.\n</think>\n\nFour.""#),
        (
            "tiny-gpt-oss.gguf",
            r#"root ::= <|channel|> "analysis" <|message|> "Easy sum." <|end|> <|start|> "assistant" <|channel|> "final" <|message|> "Four.""#,
        ),
        (
            "tiny-command-r7b.gguf",
            r#"root ::= <|START_THINKING|> "Easy sum." <|END_THINKING|> <|START_RESPONSE|> "Four." <|END_RESPONSE|>"#,
        ),
    ];
    for (model, grammar) in cases {
        let path = model_path().with_file_name(model);
        engine.load(&path, params.clone()).await.unwrap();
        let written = ask(&question, written_by(grammar)).await;
        let parts = split_reasoning(&written.text);
        assert_eq!((parts.reasoning, parts.closed, parts.answer), (Some("Easy sum."), true, "Four."), "{model}: {:?}", written.text);
        let thought = written.stats.reasoning_tokens.unwrap_or(0);
        assert!(thought > 3 && thought < written.stats.completion_tokens, "{model}: {:?}", written.stats);

        // The next turn: the past reply's answer alone, so the cache is kept up to the reply (and
        // its first token, where the answer's channel is opened as the analysis's was).
        let mut turns = question.clone();
        turns.push(ChatMessage::new(Role::Assistant, written.text.clone()));
        turns.push(ChatMessage::new(Role::User, "And 3 + 3?"));
        let second = ask(&turns, budget(-1)).await;
        let began = written.stats.prompt_tokens;
        assert!((began - 2..=began + 1).contains(&second.stats.cached_tokens), "{model}: {:?} after {:?}", second.stats, written.stats);
        engine.load(&path, params.clone()).await.unwrap();
        let fresh = ask(&turns, budget(-1)).await;
        assert_eq!((fresh.stats.cached_tokens, &fresh.text), (0, &second.text), "{model}: the same reply from an empty cache");
    }

    // Qwen3 told not to think: its template closes an empty block in the prompt.
    engine.load(&model_path().with_file_name("tiny-qwen3.gguf"), params.clone()).await.unwrap();
    let on = ask(&question, budget(-1)).await;
    let off = ask(&question, budget(0)).await;
    assert!(off.stats.prompt_tokens > on.stats.prompt_tokens + 3, "the empty block: {:?} vs {:?}", off.stats, on.stats);
    assert!(off.stats.cached_tokens + 1 >= on.stats.prompt_tokens, "the prompt up to the block is kept: {:?}", off.stats);
    assert!(!off.text.contains("<think>") && off.stats.reasoning_tokens.is_none(), "{:?} {:?}", off.text, off.stats);
    // The model made to open its block (its `<think>` token, id 3, pushed up): unbounded, it
    // never closes it; a budget of 3 closes it after three tokens, and the model answers.
    let opens = |budget: i32| SamplingParams {
        logit_bias: vec![hearth_core::LogitBias { target: hearth_core::BiasTarget::Token { id: 3 }, bias: 30.0 }],
        reasoning_budget: budget,
        ..greedy(12)
    };
    let free = ask(&question, opens(-1)).await;
    let parts = split_reasoning(&free.text);
    assert!(parts.reasoning.is_some() && !parts.closed, "{:?}", free.text);
    assert_eq!(free.stats.reasoning_tokens, Some(free.stats.completion_tokens), "{:?}", free.stats);
    let capped = ask(&question, opens(3)).await;
    let parts = split_reasoning(&capped.text);
    assert!(parts.closed && !parts.answer.is_empty(), "{:?}", capped.text);
    let thought = capped.stats.reasoning_tokens.unwrap_or(0);
    assert!(thought > 3 && thought < capped.stats.completion_tokens, "three tokens and the closing: {:?}", capped.stats);

    // Command R7B's model opens its plan itself (its `<|START_THINKING|>`, id 8, pushed up): read
    // as `<think>`, and closed at the budget with its own `<|END_THINKING|>`, read as `</think>`.
    engine.load(&model_path().with_file_name("tiny-command-r7b.gguf"), params.clone()).await.unwrap();
    let opens = |budget: i32| SamplingParams {
        logit_bias: vec![hearth_core::LogitBias { target: hearth_core::BiasTarget::Token { id: 8 }, bias: 30.0 }],
        reasoning_budget: budget,
        ..greedy(12)
    };
    let capped = ask(&question, opens(3)).await;
    let parts = split_reasoning(&capped.text);
    assert!(capped.text.starts_with("<think>") && parts.closed && !capped.text.contains("<|"), "{:?}", capped.text);
    let thought = capped.stats.reasoning_tokens.unwrap_or(0);
    assert!(thought > 3 && thought < capped.stats.completion_tokens, "three tokens and the closing: {:?}", capped.stats);

    // gpt-oss's effort follows the budget ("Reasoning: low" in its system message): the same
    // effort reuses the whole prompt, another is read again from there.
    engine.load(&model_path().with_file_name("tiny-gpt-oss.gguf"), params).await.unwrap();
    let medium = ask(&question, budget(-1)).await;
    let low = ask(&question, budget(100)).await;
    assert!(
        low.stats.cached_tokens + 20 < medium.stats.prompt_tokens,
        "read again from the effort on: {:?} after {:?}",
        low.stats,
        medium.stats
    );
    let again = ask(&question, budget(100)).await;
    assert!(again.stats.cached_tokens + 1 >= low.stats.prompt_tokens, "low both times: {:?} after {:?}", again.stats, low.stats);
}
