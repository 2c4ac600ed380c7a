//! What the server reads from a request, and what it refuses by name.

use hearth_core::{Mirostat, SamplerStage};

use super::*;

fn parse(body: &str) -> Result<ChatRequest, ApiError> {
    ChatRequest::parse(body.as_bytes())
}

const HELLO: &str = r#""model":"m","messages":[{"role":"user","content":"hi"}]"#;

fn sampling(fields: &str) -> Result<SamplingParams, ApiError> {
    parse(&format!("{{{HELLO}{fields}}}"))?.sampling(&SamplingParams::default())
}

/// What each refused request is refused for: the field OpenAI's clients show, with a reason.
#[test]
fn a_bad_request_is_refused_with_the_field_at_fault() {
    let cases: &[(&str, Option<&str>)] = &[
        ("{", None),
        ("[1]", None),
        (r#"{"messages":[]}"#, None),
        (&format!("{{{HELLO},\"temperature\":\"hot\"}}"), Some("temperature")),
        (&format!("{{{HELLO},\"frobnicate\":1}}"), Some("frobnicate")),
        (&format!("{{{HELLO},\"top_p\":2}}"), Some("top_p")),
        (&format!("{{{HELLO},\"dry_penalty_last_n\":-5}}"), Some("dry_penalty_last_n")),
        (&format!("{{{HELLO},\"n\":3}}"), Some("n")),
        (&format!("{{{HELLO},\"top_logprobs\":2}}"), Some("top_logprobs")),
        (&format!("{{{HELLO},\"logprobs\":true,\"top_logprobs\":21}}"), Some("top_logprobs")),
        (&format!("{{{HELLO},\"seed\":-7}}"), Some("seed")),
        (&format!("{{{HELLO},\"mirostat\":3}}"), Some("mirostat")),
        (&format!("{{{HELLO},\"samplers\":[\"top_k\",\"magic\"]}}"), Some("samplers")),
        (&format!("{{{HELLO},\"logit_bias\":{{\"abc\":1}}}}"), Some("logit_bias")),
        (&format!("{{{HELLO},\"max_tokens\":0}}"), Some("max_tokens")),
        (&format!("{{{HELLO},\"grammar\":\"root ::= x\",\"json_schema\":{{}}}}"), Some("grammar")),
        (r#"{"model":"m","messages":[{"role":"function","content":"x"}]}"#, Some("messages[0].role")),
        (r#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]}"#, Some("messages[0].content[0]")),
        (r#"{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio"}]}]}"#, Some("messages[0].content[0]")),
        (
            r#"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]}]}"#,
            Some("messages[0].content[1].image_url.url"),
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":"data:image/png,raw"}]}]}"#,
            Some("messages[0].content[0].image_url.url"),
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:text/plain;base64,aGk="}}]}]}"#,
            Some("messages[0].content[0].image_url.url"),
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,%%%"}}]}]}"#,
            Some("messages[0].content[0].image_url.url"),
        ),
        (
            r#"{"model":"m","messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,aGk="}}]}]}"#,
            Some("messages[0].content[0]"),
        ),
        (r#"{"model":"m","messages":[{"role":"user","content":"x","tool_calls":[]}]}"#, Some("messages[0].tool_calls")),
        (r#"{"model":"m","messages":[]}"#, Some("messages")),
        // Tools: each refused by the field at fault.
        (&format!("{{{HELLO},\"tools\":[{{\"type\":\"retrieval\",\"function\":{{\"name\":\"f\"}}}}]}}"), Some("tools[0].type")),
        (&format!("{{{HELLO},\"tools\":[{{\"type\":\"function\",\"function\":{{\"name\":\"f g\"}}}}]}}"), Some("tools")),
        (&format!("{{{HELLO},\"tools\":[{{\"type\":\"function\",\"function\":{{\"name\":\"f\",\"parameters\":[]}}}}]}}"), Some("tools")),
        (
            &format!("{{{HELLO},\"tools\":[{{\"type\":\"function\",\"function\":{{\"name\":\"f\",\"code\":1}}}}]}}"),
            Some("tools[0].function.code"),
        ),
        (&format!("{{{HELLO},\"tool_choice\":\"required\"}}"), Some("tool_choice")),
        (
            &format!(
                "{{{HELLO},\"tools\":[{{\"type\":\"function\",\"function\":{{\"name\":\"f\"}}}}],\"tool_choice\":{{\"type\":\"function\",\"function\":{{\"name\":\"g\"}}}}}}"
            ),
            Some("tool_choice"),
        ),
        (&format!("{{{HELLO},\"tool_choice\":\"sometimes\"}}"), Some("tool_choice")),
        (
            r#"{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{oops"}}]}]}"#,
            Some("messages[0].tool_calls[0].function.arguments"),
        ),
        // Reasoning and the template's variables.
        (&format!("{{{HELLO},\"reasoning_effort\":\"extreme\"}}"), Some("reasoning_effort")),
        (&format!("{{{HELLO},\"chat_template_kwargs\":{{\"enable_thinking\":\"no\"}}}}"), Some("chat_template_kwargs.enable_thinking")),
        (&format!("{{{HELLO},\"chat_template_kwargs\":{{\"messages\":[]}}}}"), Some("chat_template_kwargs.messages")),
    ];
    // Past a cap: refused by name, whatever the field holds.
    let long = "x".repeat(70 << 10);
    let bias: Vec<String> = (0..1025).map(|id| format!("\"{id}\":1")).collect();
    let breakers: Vec<String> = (0..65).map(|i| format!("\"{i}\"")).collect();
    let capped = [
        (format!(r#"{{"model":"{}","messages":[{{"role":"user","content":"hi"}}]}}"#, &long[..257]), "model"),
        (format!("{{{HELLO},\"user\":\"{}\"}}", &long[..257]), "user"),
        (format!("{{{HELLO},\"stop\":[\"a\",\"{}\"]}}", &long[..1025]), "stop"),
        (format!("{{{HELLO},\"logit_bias\":{{{}}}}}", bias.join(",")), "logit_bias"),
        (format!("{{{HELLO},\"dry_sequence_breakers\":[{}]}}", breakers.join(",")), "dry_sequence_breakers"),
        (format!("{{{HELLO},\"grammar\":\"{long}\"}}"), "grammar"),
        (format!("{{{HELLO},\"json_schema\":{{\"description\":\"{long}\"}}}}"), "json_schema"),
        (
            format!(
                r#"{{"model":"m","response_format":{{"type":"json_schema","json_schema":{{"schema":{{"title":"{long}"}}}}}},"messages":[]}}"#
            ),
            "json_schema",
        ),
        (format!(r#"{{"model":"m","messages":[{{"role":"user","content":"hi","name":"{}"}}]}}"#, &long[..257]), "messages[0].name"),
        (format!("{{{HELLO},\"chat_template_kwargs\":{{\"notes\":\"{long}\"}}}}"), "chat_template_kwargs"),
    ];
    let capped: Vec<(&str, Option<&str>)> = capped.iter().map(|(body, param)| (body.as_str(), Some(*param))).collect();
    let cases = [cases, &capped[..]].concat();
    let cases = &cases[..];
    for (body, param) in cases {
        let got = parse(body).and_then(|r| {
            r.messages()
                .and_then(|_| r.logprobs())
                .and_then(|_| r.tools())
                .and_then(|_| r.template_kwargs())
                .and_then(|_| r.sampling(&SamplingParams::default()))
        });
        let error = got.expect_err(body);
        assert_eq!((error.status, error.param.as_deref()), (400, *param), "{body}: {error:?}");
        assert!(!error.message.is_empty());
    }
}

/// `chat_template_kwargs` and `reasoning_effort` reach the template as llama.cpp's server passes
/// them; turning reasoning off is the budget's.
#[test]
fn template_variables_and_reasoning_effort_reach_the_template() {
    for (fields, kwargs, budget) in [
        ("", json!({}), -1),
        (r#","chat_template_kwargs":{"add_vision_id":true,"enable_thinking":false}"#, json!({"add_vision_id": true}), 0),
        (r#","reasoning_effort":"high""#, json!({"reasoning_effort": "high"}), -1),
        (r#","reasoning_effort":"none","chat_template_kwargs":{"reasoning_effort":"low"}"#, json!({}), 0),
        (r#","reasoning_effort":"medium","chat_template_kwargs":{"reasoning_effort":"low"}"#, json!({"reasoning_effort": "medium"}), -1),
    ] {
        let request = parse(&format!("{{{HELLO}{fields}}}")).unwrap();
        assert_eq!(Value::Object(request.template_kwargs().unwrap()), kwargs, "{fields}");
        assert_eq!(request.sampling(&SamplingParams::default()).unwrap().reasoning_budget, budget, "{fields}");
    }
}

#[test]
fn openai_and_llama_cpp_fields_reach_the_sampling_settings() {
    let s = sampling(
        r#","temperature":0.2,"top_p":0.5,"max_completion_tokens":7,"seed":42,"stop":"END","top_k":5,"min_p":0.1,
           "mirostat":2,"repeat_penalty":1.1,"dry_penalty_last_n":-1,"samplers":["top_k","temperature"],
           "logit_bias":{"15":-100,"16":2.5},"response_format":{"type":"json_object"},"user":"me","cache_prompt":true"#,
    )
    .unwrap();
    assert_eq!((s.temperature, s.top_p, s.max_tokens, s.seed, s.top_k, s.min_p), (0.2, 0.5, 7, Some(42), 5, 0.1));
    assert_eq!((s.mirostat, s.repeat_penalty, s.dry_last_n), (Mirostat::V2, 1.1, -1));
    assert_eq!(s.stop, ["END"]);
    assert_eq!(s.sampler_order, [SamplerStage::TopK, SamplerStage::Temperature]);
    assert_eq!(s.logit_bias[0], LogitBias { target: BiasTarget::Token { id: 15 }, bias: -100.0 });
    assert_eq!(s.constraint, Some(Constraint::JsonSchema(r#"{"type":"object"}"#.into())));
    // llama.cpp's pair list, with `false` for "never".
    let s = sampling(r#","logit_bias":[[" the",false],[7,1.5]],"seed":-1,"n_predict":9"#).unwrap();
    assert_eq!(s.logit_bias[0], LogitBias { target: BiasTarget::Text { text: " the".into() }, bias: LogitBias::BAN });
    assert_eq!((s.seed, s.max_tokens), (None, 9));
    // What is not set stays as the base has it.
    assert_eq!(sampling("").unwrap(), SamplingParams::default());
}

/// What Hearth sends an OpenAI-compatible server that takes llama.cpp's fields, Hearth's own
/// server reads back as the same settings: one description of the wire, both ways.
#[test]
fn what_hearth_sends_its_own_server_reads_back_the_same() {
    let config = hearth_core::ProviderConfig {
        extensions: true,
        ..hearth_core::ProviderConfig::new("self", "Hearth", hearth_core::ProviderKind::OpenAiCompatible)
    };
    let sent = SamplingParams {
        max_tokens: 99,
        temperature: 0.3,
        top_p: 0.8,
        presence_penalty: 0.5,
        frequency_penalty: 0.25,
        seed: Some(7),
        stop: vec!["END".into()],
        logit_bias: vec![LogitBias { target: BiasTarget::Token { id: 42 }, bias: -5.0 }],
        constraint: Some(Constraint::Gbnf("root ::= \"yes\" | \"no\"".into())),
        top_k: 17,
        min_p: 0.07,
        typical_p: 0.9,
        top_n_sigma: 1.25,
        xtc_probability: 0.4,
        xtc_threshold: 0.2,
        dynatemp_range: 0.3,
        dynatemp_exponent: 1.5,
        dry_multiplier: 0.8,
        dry_base: 1.6,
        dry_allowed_length: 3,
        dry_last_n: 256,
        dry_sequence_breakers: vec!["\n".into()],
        mirostat: Mirostat::V1,
        mirostat_tau: 4.5,
        mirostat_eta: 0.2,
        repeat_penalty: 1.15,
        repeat_last_n: 128,
        ignore_eos: true,
        sampler_order: vec![SamplerStage::MinP, SamplerStage::Temperature],
        ..SamplingParams::default()
    };
    let body =
        hearth_providers::openai_request_body(&config, "m", &[ChatMessage::new(Role::User, "hi")], &sent, false, 4096, None).unwrap();
    let read = ChatRequest::from_value(body).unwrap().sampling(&SamplingParams::default()).unwrap();
    assert_eq!(read, sent);
}

/// Calls and results in the history read as the model writes and reads them; tools and a choice
/// among them reach the engine as offered.
#[test]
fn tools_calls_and_results_are_read_as_the_model_knows_them() {
    let request = parse(
        r#"{"model":"m","messages":[{"role":"user","content":"Weather in Paris?"},
            {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},
            {"role":"tool","tool_call_id":"call_1","content":"{\"sky\":\"cloudy\"}"}],
         "tools":[{"type":"function","function":{"name":"get_weather","description":"Forecast","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true}},
                  {"type":"function","function":{"name":"get_time"}}],
         "tool_choice":{"type":"function","function":{"name":"get_time"}},"parallel_tool_calls":false}"#,
    )
    .unwrap();
    assert_eq!(
        request.messages().unwrap(),
        [
            ChatMessage::new(Role::User, "Weather in Paris?"),
            ChatMessage::new(Role::Assistant, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\": \"Paris\"}}\n</tool_call>"),
            ChatMessage::new(Role::Tool, "{\"sky\":\"cloudy\"}"),
        ]
    );
    let offered = request.tools().unwrap().unwrap();
    assert_eq!(offered.choice, hearth_core::ToolChoice::Named("get_time".into()));
    assert!(!offered.parallel);
    assert_eq!(offered.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["get_weather", "get_time"]);
    assert_eq!(offered.tools[1].parameters, serde_json::json!({"type": "object", "properties": {}}), "no parameters: none taken");

    for (fields, choice) in [
        ("", None),
        (r#","tools":[]"#, None),
        (r#","tools":[],"tool_choice":"none""#, None),
        (r#","tools":[{"type":"function","function":{"name":"f"}}]"#, Some(hearth_core::ToolChoice::Auto)),
        (r#","tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required""#, Some(hearth_core::ToolChoice::Required)),
        (r#","tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none""#, Some(hearth_core::ToolChoice::None)),
    ] {
        let offered = parse(&format!("{{{HELLO}{fields}}}")).unwrap().tools().unwrap();
        assert_eq!(offered.as_ref().map(|o| o.choice.clone()), choice, "{fields}");
        assert!(offered.is_none_or(|o| o.parallel), "parallel calls unless refused");
    }
}

#[test]
fn messages_take_text_in_either_form_and_known_roles() {
    let request = parse(
        r#"{"model":"m","messages":[{"role":"developer","content":"Be brief."},
            {"role":"user","name":"ann","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]},
            {"role":"assistant","content":null}]}"#,
    )
    .unwrap();
    assert_eq!(
        request.messages().unwrap(),
        [ChatMessage::new(Role::System, "Be brief."), ChatMessage::new(Role::User, "Hi there"), ChatMessage::new(Role::Assistant, "")]
    );
}

#[test]
fn a_completion_takes_one_prompt_its_own_fields_and_a_chats_sampling_fields() {
    let parsed = CompletionRequest::parse(br#"{"model":"m","prompt":["Once upon"],"logprobs":2,"temperature":0.1,"echo":false}"#).unwrap();
    assert_eq!((parsed.prompt.as_str(), parsed.logprobs), ("Once upon", Some(2)));
    let sampling = parsed.chat.sampling(&SamplingParams::default()).unwrap();
    assert_eq!((sampling.temperature, sampling.max_tokens), (0.1, DEFAULT_COMPLETION_TOKENS));
    let cases: &[(&str, Option<&str>)] = &[
        (r#"{"model":"m"}"#, Some("prompt")),
        (r#"{"model":"m","prompt":["a","b"]}"#, Some("prompt")),
        (r#"{"model":"m","prompt":7}"#, Some("prompt")),
        (r#"{"model":"m","prompt":"a","echo":true}"#, Some("echo")),
        (r#"{"model":"m","prompt":"a","suffix":"z"}"#, Some("suffix")),
        (r#"{"model":"m","prompt":"a","logprobs":6}"#, Some("logprobs")),
        (r#"{"model":"m","prompt":"a","messages":[]}"#, Some("messages")),
        (r#"{"model":"m","prompt":"a","top_p":3}"#, None),
        (r#"{"model":"m","prompt":"a","frobnicate":1}"#, Some("frobnicate")),
    ];
    for (body, param) in cases {
        let error = CompletionRequest::parse(body.as_bytes())
            .and_then(|r| r.chat.sampling(&SamplingParams::default()).map(|_| ()))
            .expect_err(body);
        if param.is_some() {
            assert_eq!(error.param.as_deref(), *param, "{body}: {error:?}");
        }
        assert_eq!(error.status, 400, "{body}");
    }
}

#[test]
fn hearth_field_names_are_spelled_as_on_the_wire() {
    for (field, wire) in
        [("topP", "top_p"), ("maxTokens", "max_tokens"), ("dryLastN", "dry_penalty_last_n"), ("temperature", "temperature")]
    {
        assert_eq!(wire_name(field), wire);
    }
}

/// An `image_url` part with a data URL is the image itself, shown with the user's message; the
/// same bytes are the same image (its hash) whichever way the URL is written.
#[test]
fn a_data_url_image_goes_with_the_user_message() {
    let body = r#"{"model":"m","messages":[{"role":"user","content":[
        {"type":"image_url","image_url":{"url":"data:image/png;base64,aGVsbG8=","detail":"low"}},
        {"type":"text","text":"What is this?"},
        {"type":"image_url","image_url":"data:image/jpeg;base64,aGVsbG8="}]}]}"#;
    let messages = parse(body).unwrap().messages().unwrap();
    assert_eq!(messages[0].content, "What is this?");
    assert_eq!(messages[0].images.len(), 2);
    assert_eq!(messages[0].images[0].bytes, b"hello");
    assert_eq!(messages[0].images[0], messages[0].images[1]);
    assert_eq!(messages[0].images[0].hash, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
}
