//! Each decoding parameter changes what the real model writes, the way it should.

mod common;

use hearth_core::{
    BiasTarget, CancelFlag, ChatBackend, ChatMessage, Constraint, FinishReason, LogitBias, Mirostat, OfferedTools, ReplyRequest, Role,
    SamplerStage, SamplingParams, ToolChoice, ToolSpec, read_calls, split_reasoning,
};
use serde_json::{Value, json};

use common::{Reply, greedy, loaded_engine, reply, reply_to, user};

const CAPITAL: &str = "What is the capital of France? Answer in one sentence.";
const STORY: &str = "Write a short story about a cat who finds a key.";

fn sampled(seed: u32, max_tokens: u32) -> SamplingParams {
    SamplingParams { temperature: 1.0, seed: Some(seed), max_tokens, ..SamplingParams::default() }
}

#[tokio::test]
async fn each_parameter_has_its_effect_on_the_real_model() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let run = |prompt: &str, params: SamplingParams| {
        let engine = engine.clone();
        let messages = user(prompt);
        async move { reply(&engine, &messages, params, None).await }
    };
    let base = run(CAPITAL, greedy(40)).await;
    assert!(base.text.contains("Paris"), "{:?}", base.text);

    // A banned word never appears; a banned token id never appears either.
    let ban_paris = SamplingParams {
        logit_bias: vec![LogitBias { target: BiasTarget::Text { text: "Paris".into() }, bias: LogitBias::BAN }],
        ..greedy(40)
    };
    let banned = run(CAPITAL, ban_paris).await;
    assert!(!banned.text.contains("Paris"), "{:?}", banned.text);

    // A stop string ends the reply before it, and is not part of it.
    let cut = base.text.find("Paris").unwrap();
    let stopped = run(CAPITAL, SamplingParams { stop: vec!["Paris".into()], ..greedy(40) }).await;
    assert_eq!(stopped.reason, FinishReason::StopString);
    assert_eq!(stopped.text, base.text[..cut]);

    // Truncation to the single best token is greedy decoding, whatever the temperature.
    for narrow in [
        SamplingParams { top_k: 1, ..sampled(7, 40) },
        SamplingParams { top_p: 0.0, top_k: 0, ..sampled(7, 40) },
        SamplingParams { min_p: 1.0, top_k: 0, top_p: 1.0, ..sampled(7, 40) },
    ] {
        assert_eq!(run(CAPITAL, narrow.clone()).await.text, base.text, "{narrow:?}");
    }

    // A grammar constrains the reply to its language.
    let yes_no = SamplingParams { constraint: Some(Constraint::Gbnf(r#"root ::= "yes" | "no""#.into())), ..greedy(8) };
    let answer = run("Is Paris in France? Answer yes or no.", yes_no).await;
    assert!(["yes", "no"].contains(&answer.text.as_str()), "{:?}", answer.text);

    // A JSON schema makes the reply parse as JSON of that shape.
    let schema =
        r#"{"type":"object","properties":{"city":{"type":"string"},"population":{"type":"integer"}},"required":["city","population"]}"#;
    let json = run(
        "Give the capital of France and its population as JSON.",
        SamplingParams { constraint: Some(Constraint::JsonSchema(schema.into())), ..greedy(60) },
    )
    .await;
    let value: serde_json::Value = serde_json::from_str(&json.text).unwrap_or_else(|e| panic!("{e}: {:?}", json.text));
    assert!(value["city"].is_string() && value["population"].is_i64(), "{value}");

    // Penalties make repetition rarer: over a long greedy reply, fewer words repeat earlier ones.
    let repeats = |r: &Reply| {
        let words: Vec<String> = r.text.split_whitespace().map(|w| w.to_lowercase()).collect();
        let distinct: std::collections::HashSet<&String> = words.iter().collect();
        words.len() - distinct.len()
    };
    let long = |p: SamplingParams| run(STORY, SamplingParams { ignore_eos: true, ..p });
    let plain = long(greedy(160)).await;
    assert!(repeats(&plain) >= 20, "{:?}", plain.text);
    for (name, params) in [
        ("repeat", SamplingParams { repeat_penalty: 1.5, ..greedy(160) }),
        ("presence/frequency", SamplingParams { presence_penalty: 1.5, frequency_penalty: 1.0, ..greedy(160) }),
        ("dry", SamplingParams { dry_multiplier: 1.5, dry_allowed_length: 1, ..greedy(160) }),
    ] {
        let r = long(params).await;
        assert!(repeats(&r) < repeats(&plain), "{name}: {} vs {} repeats\n{:?}", repeats(&r), repeats(&plain), r.text);
    }

    // Stochastic stages: a fixed seed reproduces, and each stage changes the sampled text.
    let story = |p: SamplingParams| run(STORY, p);
    let plain = story(sampled(3, 48)).await;
    assert_eq!(story(sampled(3, 48)).await.text, plain.text);
    let variants = [
        ("xtc", SamplingParams { xtc_probability: 1.0, xtc_threshold: 0.05, ..sampled(3, 48) }),
        ("typical", SamplingParams { typical_p: 0.2, ..sampled(3, 48) }),
        ("top-n-sigma", SamplingParams { top_n_sigma: 0.5, ..sampled(3, 48) }),
        ("dynatemp", SamplingParams { dynatemp_range: 1.0, ..sampled(3, 48) }),
        ("mirostat v1", SamplingParams { mirostat: Mirostat::V1, mirostat_tau: 2.0, ..sampled(3, 48) }),
        ("mirostat v2", SamplingParams { mirostat: Mirostat::V2, mirostat_tau: 2.0, ..sampled(3, 48) }),
        ("order", SamplingParams { sampler_order: vec![SamplerStage::Temperature, SamplerStage::TopK], top_k: 2, ..sampled(3, 48) }),
        ("seed", sampled(4, 48)),
    ];
    for (name, params) in variants {
        let a = story(params.clone()).await;
        let b = story(params).await;
        assert_eq!(a.text, b.text, "{name}: a fixed seed must reproduce");
        assert_ne!(a.text, plain.text, "{name}: should change the sampled text");
    }

    // ignore_eos runs to max_tokens; max_tokens caps.
    let forced = run("Say hi.", SamplingParams { ignore_eos: true, ..greedy(30) }).await;
    assert_eq!((forced.reason, forced.stats.completion_tokens), (FinishReason::Length, 30));
}

#[tokio::test]
async fn invalid_requests_fail_in_words_and_the_engine_keeps_working() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let bad = [
        (SamplingParams { constraint: Some(Constraint::Gbnf("root ::= (".into())), ..greedy(4) }, "grammar does not parse"),
        (SamplingParams { constraint: Some(Constraint::JsonSchema("{not json".into())), ..greedy(4) }, "JSON schema cannot be used"),
        (
            SamplingParams { logit_bias: vec![LogitBias { target: BiasTarget::Token { id: 9_999_999 }, bias: 1.0 }], ..greedy(4) },
            "vocabulary has",
        ),
    ];
    for (params, expected) in bad {
        let error = common::reply_error(&engine, &user("hi"), params).await;
        assert!(error.contains(expected), "{error:?} should contain {expected:?}");
    }
    assert!(reply(&engine, &user("Say hi."), greedy(4), None).await.stats.completion_tokens > 0);
}

/// Each token's log-probability is the model's own score for it: greedy writes the likeliest, so
/// it heads its alternatives; they come likeliest first with probabilities summing to at most 1;
/// the tokens spell the reply; zero alternatives gives the tokens alone.
#[tokio::test]
async fn log_probabilities_are_the_models_scores_of_the_tokens_it_wrote() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let question = user("Name three colours.");
    let (text, tokens) = common::reply_with_logprobs(&engine, &question, greedy(16), 5).await;
    assert!(!tokens.is_empty());
    let spelled: Vec<u8> = tokens.iter().flat_map(|t| t.token.bytes.clone()).collect();
    assert_eq!(String::from_utf8_lossy(&spelled), text);
    for t in &tokens {
        assert_eq!(t.top.len(), 5, "{t:?}");
        assert_eq!(t.top[0].logprob, t.token.logprob, "greedy writes the likeliest token: {t:?}");
        assert!(t.top.windows(2).all(|w| w[0].logprob >= w[1].logprob), "{t:?}");
        let mass: f32 = t.top.iter().map(|c| c.logprob.exp()).sum();
        assert!(mass <= 1.0 + 1e-4 && t.token.logprob <= 0.0, "{t:?}");
    }
    let (_, bare) = common::reply_with_logprobs(&engine, &question, greedy(16), 0).await;
    assert!(!bare.is_empty() && bare.iter().all(|t| t.top.is_empty()));
}

/// Turn N reuses exactly what turn N-1 decoded into the KV cache: its whole prompt and every
/// reply token fed back to the model. A reply that ended by its end-of-turn token decoded all of
/// its tokens; one cut by max_tokens did not decode its last (it was sampled, never fed back).
#[tokio::test]
async fn kv_cache_is_reused_across_ten_turns() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let mut history = Vec::new();
    let mut decoded_last_turn = 0;
    for n in 1..=10 {
        history.push(ChatMessage::new(Role::User, format!("Give me fact number {n} about the sea, in one sentence.")));
        let r = reply(&engine, &history, greedy(80), None).await;
        assert_eq!(r.stats.cached_tokens, decoded_last_turn, "turn {n}: {:?}, reply {:?}", r.stats, r.text);
        let fed_back = match r.reason {
            FinishReason::EndOfTurn => r.stats.completion_tokens,
            _ => r.stats.completion_tokens - 1,
        };
        decoded_last_turn = r.stats.prompt_tokens + fed_back;
        history.push(ChatMessage::new(Role::Assistant, r.text));
    }
}

/// Tools whose calls are checked below: a string, an enum and an integer; and one with no arguments.
fn weather_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "get_weather".into(),
            description: "The weather forecast for a city".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "maxLength": 40},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7},
                },
                "required": ["city", "unit"],
            }),
        },
        ToolSpec { name: "get_time".into(), description: "The time now".into(), parameters: json!({"type": "object", "properties": {}}) },
    ]
}

/// Whether `arguments` satisfy `tool`'s schema above, in words when they do not.
fn check_arguments(tool: &str, arguments: &str) -> Result<(), String> {
    let value: Value = serde_json::from_str(arguments).map_err(|e| format!("not JSON: {e}"))?;
    let object = value.as_object().ok_or("not an object")?;
    match tool {
        "get_time" => object.is_empty().then_some(()).ok_or_else(|| format!("get_time takes nothing: {object:?}")),
        "get_weather" => {
            let city = object.get("city").and_then(Value::as_str).ok_or("no city")?;
            (city.chars().count() <= 40).then_some(()).ok_or("city longer than 40")?;
            let unit = object.get("unit").and_then(Value::as_str).ok_or("no unit")?;
            ["celsius", "fahrenheit"].contains(&unit).then_some(()).ok_or_else(|| format!("unit {unit}"))?;
            if let Some(days) = object.get("days") {
                let days = days.as_i64().ok_or("days not an integer")?;
                (1..=7).contains(&days).then_some(()).ok_or_else(|| format!("days {days}"))?;
            }
            let extra: Vec<&String> = object.keys().filter(|k| !["city", "unit", "days"].contains(&k.as_str())).collect();
            extra.is_empty().then_some(()).ok_or_else(|| format!("extra fields {extra:?}"))
        }
        other => Err(format!("no tool {other}")),
    }
}

fn with_tools(prompt: &str, sampling: SamplingParams, choice: ToolChoice, parallel: bool) -> ReplyRequest {
    let mut request = ReplyRequest::new(user(prompt), sampling, CancelFlag::new());
    request.tools = Some(OfferedTools { tools: weather_tools(), choice, parallel });
    request
}

/// While a call runs, the next round's prompt is read ahead with its result empty and the tools
/// offered as the round offers them (the app's agent loop asks for it): the round then reads the
/// result and its turn's end, not the turn's opening; without the read-ahead it reads them all.
#[tokio::test]
async fn a_results_turn_read_ahead_leaves_the_round_its_results_alone() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let mut read = Vec::new();
    for (conversation, ahead) in [(31, false), (32, true)] {
        let ask = |messages: Vec<ChatMessage>, choice: ToolChoice, sampling: SamplingParams| {
            let mut request = ReplyRequest::new(messages, sampling, CancelFlag::new());
            request.tools = Some(OfferedTools { tools: weather_tools(), choice, parallel: false });
            request.conversation = Some(conversation);
            request
        };
        let question = user("What is the weather in Paris tomorrow?");
        let first = reply_to(&engine, ask(question.clone(), ToolChoice::Required, greedy(120)), None).await;
        assert_eq!(read_calls(&first.text).calls.len(), 1, "{:?}", first.text);
        let answered = |result: &str| {
            let turn = [ChatMessage::new(Role::Assistant, first.text.clone()), ChatMessage::new(Role::Tool, result)];
            ask([&question[..], &turn].concat(), ToolChoice::Auto, greedy(4))
        };
        if ahead {
            engine.prefill(answered("")).finished().await;
        }
        let second = reply_to(&engine, answered("Sunny, 24 degrees."), None).await;
        assert!(second.stats.cached_tokens >= first.stats.prompt_tokens, "{:?} after {:?}", second.stats, first.stats);
        read.push(second.stats.prompt_tokens - second.stats.cached_tokens);
    }
    // SmolLM2's template: the opening is `<|im_end|>`, the user's turn and `<tool_response>` (11 tokens).
    assert!(read[1] + 8 <= read[0], "read {} tokens after the read-ahead, {} without", read[1], read[0]);
}

/// With a call required, the real model (whose template knows no tools: the generic format,
/// said) writes calls that are valid JSON for the tool's schema, over a seeded set, sampled at
/// temperature 1; parallel calls each valid too; a named tool is the one called.
#[tokio::test]
async fn a_required_tool_call_is_valid_for_its_schema_every_time() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let asks = ["What is the weather in Paris tomorrow?", "Do I need an umbrella in Lisbon this week?", "What time is it?"];
    for seed in 1..=9u32 {
        let ask = asks[seed as usize % asks.len()];
        let parallel = seed % 3 == 0;
        // Parallel: room for the most calls a turn may hold (a model this small repeats its call).
        let room = if parallel { 400 } else { 200 };
        let reply = reply_to(&engine, with_tools(ask, sampled(seed, room), ToolChoice::Required, parallel), None).await;
        assert_eq!(reply.reason, FinishReason::EndOfTurn, "seed {seed}: the grammar ends the turn after the call: {:?}", reply.text);
        let read = read_calls(&reply.text);
        assert!(
            !read.calls.is_empty() && read.content.is_empty() && read.malformed.is_empty(),
            "seed {seed}: {:?} read as {read:?}",
            reply.text
        );
        assert!(parallel || read.calls.len() == 1, "seed {seed}: one call unless parallel: {read:?}");
        assert!(read.calls.len() <= hearth_engine::tools::MAX_PARALLEL_CALLS, "seed {seed}: at most the cap: {read:?}");
        for call in &read.calls {
            check_arguments(&call.name, &call.arguments).unwrap_or_else(|why| panic!("seed {seed}: {call:?}: {why}"));
        }
        let notice = reply.stats.template_notice.as_deref().unwrap_or_default();
        assert!(notice.contains("knows no tools"), "seed {seed}: the generic format is said: {notice:?}");
    }
    let named = reply_to(&engine, with_tools(asks[0], sampled(3, 200), ToolChoice::Named("get_time".into()), false), None).await;
    let read = read_calls(&named.text);
    assert_eq!(read.calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect::<Vec<_>>(), [("get_time", "{}")], "{read:?}");
}

/// Calls in a template's own format, each on a tiny model with its family's special tokens and a
/// template in its shape, or the family's real one (gpt-oss's, Qwen3's, Mistral Nemo's and Command
/// R7B's — a turn's calls as a JSON list with ids, R7B's after its plan): gpt-oss's (the model names a function in a message's header and writes
/// its arguments), Llama 3.x's (the turn's whole text is `{"name": …, "parameters": …}`),
/// Mistral's (`[TOOL_CALLS]NAME[ARGS]{…}`), Functionary's (`<function=NAME>{…}</function>`) and DeepSeek's two (V3.1's and R1's, between their
/// markers). The template is given the tools; the grammar keeps the arguments valid for that function's schema
/// over a seeded set, read as Hearth's calls. The next round reads the result alone: the call, as
/// the template writes it back, is the cache's own tokens.
#[tokio::test]
async fn calls_in_a_templates_own_format_are_valid_and_a_round_reads_only_the_result() {
    let _one = common::one_at_a_time().await;
    let engine = common::spawn_engine();
    let models = [
        "tiny-harmony.gguf",
        "tiny-llama3.gguf",
        "tiny-mistral.gguf",
        "tiny-functionary.gguf",
        "tiny-deepseek.gguf",
        "tiny-deepseek-r1.gguf",
        "tiny-gpt-oss.gguf",
        "tiny-qwen3.gguf",
        "tiny-mistral-nemo.gguf",
        "tiny-command-r7b.gguf",
    ];
    for model in models {
        let path = common::model_path().with_file_name(model);
        engine.load(&path, hearth_engine::LoadParams { n_ctx: Some(2048), n_threads: Some(2), ..Default::default() }).await.unwrap();
        let asks = ["What is the weather in Paris tomorrow?", "What time is it?", "Umbrella in Lisbon?"];
        // DeepSeek V3.1 calls in its non-thinking mode (no reasoning budget); R1's template always
        // opens the reasoning, which a call that must be made closes first, and drops it from the
        // calling turn written back: that turn is read again.
        let rewritten = model == "tiny-deepseek-r1.gguf";
        // Command R7B's results' turn is a JSON list laid out on lines (~53 tokens).
        let result_turn = if model == "tiny-command-r7b.gguf" { 60 } else { 40 };
        for seed in 1..=6u32 {
            // Command R7B calls after an empty plan when asked to reason (odd seeds), else after
            // the empty plan its prompt writes.
            let budget = match model {
                "tiny-deepseek.gguf" => 0,
                "tiny-command-r7b.gguf" if seed % 2 == 0 => 0,
                _ => -1,
            };
            let choice = if seed % 3 == 0 { ToolChoice::Named("get_weather".into()) } else { ToolChoice::Required };
            let mut request = with_tools(asks[seed as usize % asks.len()], sampled(seed, 120), choice.clone(), false);
            request.conversation = Some(i64::from(seed));
            request.sampling.reasoning_budget = budget;
            let first = reply_to(&engine, request, None).await;
            assert_eq!(first.reason, FinishReason::EndOfTurn, "{model}, seed {seed}: the call ends the turn: {:?}", first.text);
            assert_eq!(first.stats.template_notice, None, "{model}, seed {seed}: the template takes the tools");
            let parts = split_reasoning(&first.text);
            assert!(parts.reasoning.is_none_or(|r| r.trim().is_empty()), "{model}, seed {seed}: {:?}", first.text);
            let read = read_calls(parts.answer);
            assert_eq!(
                (read.calls.len(), read.malformed.len(), read.content.as_str()),
                (1, 0, ""),
                "{model}, seed {seed}: {:?}",
                first.text
            );
            let call = &read.calls[0];
            check_arguments(&call.name, &call.arguments).unwrap_or_else(|why| panic!("{model}, seed {seed}: {call:?}: {why}"));
            if let ToolChoice::Named(name) = &choice {
                assert_eq!(&call.name, name, "{model}, seed {seed}");
            }

            // The next round: the call and its result in the history.
            let mut request = with_tools(asks[seed as usize % asks.len()], sampled(seed, 8), ToolChoice::Auto, false);
            request.conversation = Some(i64::from(seed));
            request.sampling.reasoning_budget = budget;
            request.messages.push(ChatMessage::new(Role::Assistant, first.text.clone()));
            request.messages.push(ChatMessage::new(Role::Tool, "Sunny, 24 degrees."));
            let second = reply_to(&engine, request, None).await;
            assert!(first.stats.question_tokens.is_some(), "{model}, seed {seed}: the question is counted");
            assert_eq!(second.stats.question_tokens, None, "{model}, seed {seed}: a round of results is no question");
            let read_again = second.stats.prompt_tokens - second.stats.cached_tokens;
            let (cached_at_least, at_most) = match rewritten {
                true => (first.stats.prompt_tokens - 8, result_turn + first.stats.completion_tokens),
                false => (first.stats.prompt_tokens + first.stats.completion_tokens - 1, result_turn),
            };
            assert!(
                second.stats.cached_tokens >= cached_at_least && read_again < at_most,
                "{model}, seed {seed}: only the result read again: {:?} after {:?} ({:?})",
                second.stats,
                first.stats,
                first.text
            );
        }
    }
}

#[tokio::test]
async fn an_offered_tool_binds_the_grammar_only_once_a_call_opens() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    // An earlier turn with a call, as an agent's history has: a model this small copies it
    // when asked alike, and answers in words otherwise.
    let earlier = [
        ChatMessage::new(Role::User, "What is the weather in Rome?"),
        ChatMessage::new(
            Role::Assistant,
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\", \"unit\": \"celsius\"}}\n</tool_call>",
        ),
        ChatMessage::new(Role::User, "Sunny, 24 degrees."),
        ChatMessage::new(Role::Assistant, "It is sunny in Rome, 24 degrees."),
    ];
    let (mut called, mut worded) = (0, 0);
    for seed in 1..=8u32 {
        let ask = if seed % 2 == 0 { "What is the weather in Paris?" } else { "Write one sentence about cats." };
        let mut request = with_tools(ask, sampled(seed, 120), ToolChoice::Auto, false);
        request.messages = [&earlier[..], &request.messages].concat();
        let reply = reply_to(&engine, request, None).await;
        let read = read_calls(&reply.text);
        if reply.text.contains("<tool_call>") {
            called += 1;
            assert_eq!((read.calls.len(), read.malformed.len()), (1, 0), "seed {seed}: an opened call is whole: {:?}", reply.text);
            check_arguments(&read.calls[0].name, &read.calls[0].arguments).unwrap_or_else(|why| panic!("seed {seed}: {why}"));
        } else {
            worded += 1;
            assert!(!read.content.is_empty(), "seed {seed}: words");
        }
    }
    assert!(called > 0 && worded > 0, "both kinds of reply seen: {called} calls, {worded} in words");

    // `none`: no tools in the prompt, no notice, no grammar.
    let none = reply_to(&engine, with_tools("What is the weather in Paris?", greedy(30), ToolChoice::None, false), None).await;
    assert_eq!(none.stats.template_notice, None);
    let plain = reply(&engine, &user("What is the weather in Paris?"), greedy(30), None).await;
    assert_eq!(none.text, plain.text, "tools not offered change nothing");

    for (request, expected) in [
        (
            with_tools(
                "hi",
                SamplingParams { constraint: Some(Constraint::Gbnf(r#"root ::= "x""#.into())), ..greedy(4) },
                ToolChoice::Auto,
                false,
            ),
            "give tools or a grammar",
        ),
        (with_tools("hi", greedy(4), ToolChoice::Named("get_news".into()), false), "\"get_news\", which is not among the tools"),
    ] {
        let error = common::request_error(&engine, request).await;
        assert!(error.contains(expected), "{error:?} should contain {expected:?}");
    }
    assert!(reply(&engine, &user("Say hi."), greedy(4), None).await.stats.completion_tokens > 0);
}
