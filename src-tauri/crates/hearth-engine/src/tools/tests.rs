use super::*;

fn tool(name: &str, parameters: Value) -> ToolSpec {
    ToolSpec { name: name.into(), description: format!("{name} does things"), parameters }
}

fn offered(tools: Vec<ToolSpec>, choice: ToolChoice, parallel: bool) -> OfferedTools {
    OfferedTools { tools, choice, parallel }
}

#[test]
fn templates_that_know_tools_are_told_apart() {
    let qwen = r#"{%- if tools %}{{- '<|im_start|>system\n' }}{%- for tool in tools %}{{ tool | tojson }}{%- endfor %}{{- '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>' }}{%- endif %}"#;
    assert_eq!(ToolFormat::of_template(qwen), ToolFormat::Hermes);
    let chatml =
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n'}}{% endfor %}";
    assert_eq!(ToolFormat::of_template(chatml), ToolFormat::Generic);
    let harmony = include_str!("../../tests/data/harmony.jinja");
    assert_eq!(ToolFormat::of_template(harmony), ToolFormat::Harmony);
    let llama3 = include_str!("../../tests/data/llama3.jinja");
    assert_eq!(ToolFormat::of_template(llama3), ToolFormat::Llama3);
    let mistral = include_str!("../../tests/data/mistral.jinja");
    assert_eq!(ToolFormat::of_template(mistral), ToolFormat::Mistral);
    let functionary = include_str!("../../tests/data/functionary.jinja");
    assert_eq!(ToolFormat::of_template(functionary), ToolFormat::Functionary);
    // Read, not merely named: a comment or another name (`tool_calls`) is no reading.
    assert!(reads_tools("{% if tools %}x{% endif %}") && reads_tools("{{ tools|length }}"));
    assert!(!reads_tools("{# the tools #}{{ message.tool_calls }}{{ my_tools }}{{ toolset }}"));
    let deepseek = include_str!("../../tests/data/deepseek.jinja");
    assert_eq!(ToolFormat::of_template(deepseek), ToolFormat::DeepSeek);
    // Mistral Nemo's: the list after the marker (no `[ARGS]`), as its template writes calls back.
    let nemo = r#"{%- if tools is not none %}[AVAILABLE_TOOLS]{{ tools|tojson }}[/AVAILABLE_TOOLS]{% endif %}{{- "[TOOL_CALLS][" }}"#;
    assert_eq!(ToolFormat::of_template(nemo), ToolFormat::MistralNemo);
    // Command R7B's: the list between its action markers.
    let command_r = "{% if message.tool_calls %}<|START_ACTION|>[{% for tc in message.tool_calls %}{{ tc|tojson }}{% endfor %}]<|END_ACTION|>{% endif %}{% for tool in tools %}{% endfor %}";
    assert_eq!(ToolFormat::of_template(command_r), ToolFormat::CommandR);
    let deepseek_r1 = include_str!("../../tests/data/deepseek-r1.jinja");
    assert_eq!(ToolFormat::of_template(deepseek_r1), ToolFormat::DeepSeekR1);
    let formats =
        [ToolFormat::Hermes, ToolFormat::Harmony, ToolFormat::Llama3, ToolFormat::Mistral, ToolFormat::DeepSeek, ToolFormat::Generic];
    let apart: Vec<bool> = formats.iter().map(|f| f.reads_calls_apart()).collect();
    assert_eq!(apart, [false, true, true, true, true, false]);
}

/// Llama 3.x's call, Mistral's and DeepSeek's, as their templates write them back: the name,
/// then the arguments by that tool's schema; lazy from the first marker for `auto`; Mistral's
/// and DeepSeek's one after another when parallel (DeepSeek's between their markers), Llama
/// 3.x's one a turn.
#[test]
fn a_named_call_grammar_writes_calls_as_their_template_does() {
    let weather = tool("get_weather", json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}));
    let time = tool("get_time", json!({"properties": {"zone": {"type": "string"}}}));
    let alternatives = "(\"get_weather\" hearth-named-head hearth-t0-root | \"get_time\" hearth-named-head hearth-t1-root)";
    let cases = [
        (ToolFormat::Llama3, "{\"name\": \"", "", " hearth-named-call\n", " \"}\"", "\"\\\", \\\"parameters\\\": \""),
        (ToolFormat::Mistral, "[TOOL_CALLS]", "", " hearth-named-call{1,8}\n", "", "\"[ARGS]\""),
        (
            ToolFormat::DeepSeek,
            "<｜tool▁call▁begin｜>",
            "<｜tool▁calls▁begin｜>",
            " \"<｜tool▁calls▁begin｜>\" hearth-named-call{1,8} \"<｜tool▁calls▁end｜>\"\n",
            " \"<｜tool▁call▁end｜>\"",
            "\"<｜tool▁sep｜>\"",
        ),
    ];
    for (format, open, first, root, close, between) in cases {
        let auto =
            grammar(&offered(vec![weather.clone(), time.clone()], ToolChoice::Auto, true), format, CallsAfter::default()).unwrap().unwrap();
        assert_eq!(auto.trigger, Some(if first.is_empty() { open } else { first }), "{format:?}");
        let expected =
            format!("root ::={root}hearth-named-call ::= {} {alternatives}{close}\nhearth-named-head ::= {between}\n", gbnf_literal(open));
        assert!(auto.gbnf.starts_with(&expected), "{format:?}: {}\nexpected to start with\n{expected}", auto.gbnf);
        let named = grammar(&offered(vec![weather.clone()], ToolChoice::Named("get_weather".into()), false), format, CallsAfter::default())
            .unwrap()
            .unwrap();
        assert_eq!(named.trigger, None, "{format:?}: bound from the first token");
        let one = format!("root ::={}", root.replace("{1,8}", ""));
        assert!(named.gbnf.starts_with(&one), "{format:?}: one call: {}", named.gbnf);
    }
}

/// Mistral Nemo's calls: a JSON list after its marker, each call's id the next of the
/// conversation's, one call or up to eight; lazy from the marker for `auto`.
#[test]
fn a_list_grammar_numbers_each_call_from_the_conversations_calls() {
    let weather = tool("get_weather", json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}));
    let time = tool("get_time", json!({"properties": {"zone": {"type": "string"}}}));
    let auto = grammar(
        &offered(vec![weather.clone(), time], ToolChoice::Auto, true),
        ToolFormat::MistralNemo,
        CallsAfter { first_call: 3, ..CallsAfter::default() },
    )
    .unwrap()
    .unwrap();
    assert_eq!(auto.trigger, Some("[TOOL_CALLS]"));
    let alternatives = r#"("get_weather" hearth-list-head hearth-t0-root | "get_time" hearth-list-head hearth-t1-root)"#;
    assert!(auto.gbnf.starts_with(r#"root ::= "[TOOL_CALLS]" "[" hearth-list-call-0 (", " hearth-list-call-1 (", " "#), "{}", auto.gbnf);
    let first = format!(r#"hearth-list-call-0 ::= "{{\"name\": \"" {alternatives} ", \"id\": \"call00003\"}}""#);
    assert!(auto.gbnf.lines().any(|l| l == first), "{first}\nin\n{}", auto.gbnf);
    assert!(auto.gbnf.contains(r#"hearth-list-call-7 ::= "#) && auto.gbnf.contains("call00010"), "{}", auto.gbnf);
    assert!(auto.gbnf.lines().any(|l| l == r#"hearth-list-head ::= "\", \"arguments\": ""#), "{}", auto.gbnf);
    let one =
        grammar(&offered(vec![weather], ToolChoice::Required, false), ToolFormat::MistralNemo, CallsAfter::default()).unwrap().unwrap();
    assert_eq!(one.trigger, None);
    assert!(one.gbnf.starts_with("root ::= \"[TOOL_CALLS]\" \"[\" hearth-list-call-0 \"]\"\n"), "{}", one.gbnf);
}

/// Command R7B's calls: a call a line between its action markers, each call's number first;
/// bound from the first token, after the empty plan its template writes back when it was asked to
/// reason, and straight away when not (its prompt wrote the empty plan then).
#[test]
fn a_command_r_grammar_writes_calls_a_line_each_numbered_first() {
    let weather = tool("get_weather", json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}));
    let time = tool("get_time", json!({"properties": {"zone": {"type": "string"}}}));
    let both = offered(vec![weather.clone(), time], ToolChoice::Auto, true);
    let auto =
        grammar(&both, ToolFormat::CommandR, CallsAfter { thinking: true, first_call: 2, ..CallsAfter::default() }).unwrap().unwrap();
    assert_eq!(auto.trigger, Some("<|START_ACTION|>"));
    assert!(
        auto.gbnf.starts_with(r#"root ::= <|START_ACTION|> "[\n    " hearth-list-call-0 (",\n    " hearth-list-call-1 "#),
        "{}",
        auto.gbnf
    );
    assert!(auto.gbnf.lines().next().is_some_and(|l| l.ends_with(r#" "\n]" <|END_ACTION|>"#)), "{}", auto.gbnf);
    let first = r#"hearth-list-call-0 ::= "{\"tool_call_id\": \"2\", \"tool_name\": \"" ("get_weather" hearth-list-head hearth-t0-root | "get_time" hearth-list-head hearth-t1-root) "}""#;
    assert!(auto.gbnf.lines().any(|l| l == first), "{first}\nin\n{}", auto.gbnf);
    assert!(auto.gbnf.lines().any(|l| l == r#"hearth-list-head ::= "\", \"parameters\": ""#), "{}", auto.gbnf);
    let required = offered(vec![weather], ToolChoice::Required, false);
    // Each marker is its token (spelled out, it would be other tokens than the template's).
    for (thinking, opening) in [(true, "<|START_THINKING|> <|END_THINKING|> <|START_ACTION|>"), (false, "<|START_ACTION|>")] {
        let one = grammar(&required, ToolFormat::CommandR, CallsAfter { thinking, ..CallsAfter::default() }).unwrap().unwrap();
        assert_eq!(one.trigger, None);
        let root = format!("root ::= {opening} \"[\\n    \" hearth-list-call-0 \"\\n]\" <|END_ACTION|>\n");
        assert!(one.gbnf.starts_with(&root), "thinking {thinking}: {}\nexpected\n{root}", one.gbnf);
    }
}

/// After a prompt that opened `<think>` (R1's), a call that must be made closes the
/// reasoning first; a lazy grammar waits for its trigger and needs no closing.
#[test]
fn a_required_call_after_opened_reasoning_closes_it_first() {
    let weather = tool("get_weather", json!({"type": "object", "properties": {"city": {"type": "string"}}}));
    let required = grammar(
        &offered(vec![weather.clone()], ToolChoice::Required, false),
        ToolFormat::DeepSeekR1,
        CallsAfter { reasoning_opened: true, ..CallsAfter::default() },
    )
    .unwrap()
    .unwrap();
    assert_eq!(required.trigger, None);
    let closing = gbnf_literal(hearth_core::THINK_CLOSING);
    assert!(required.gbnf.starts_with(&format!("root ::= {closing} {CALLS_RULE}\n{CALLS_RULE} ::=")), "{}", required.gbnf);
    assert_eq!(required.gbnf.lines().filter(|l| l.starts_with("root ::=")).count(), 1, "one root: {}", required.gbnf);
    let auto = grammar(
        &offered(vec![weather], ToolChoice::Auto, false),
        ToolFormat::DeepSeekR1,
        CallsAfter { reasoning_opened: true, ..CallsAfter::default() },
    )
    .unwrap()
    .unwrap();
    assert!(auto.trigger.is_some() && !auto.gbnf.contains("think"), "{}", auto.gbnf);
}

/// gpt-oss's calls: each tool's name with its own arguments' rules (named apart, so two
/// tools' grammars live in one), lazy from the recipient for `auto`.
#[test]
fn a_harmony_grammar_names_each_function_with_its_own_arguments() {
    let weather = tool("get_weather", json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}));
    let time = tool("get_time", json!({"properties": {"zone": {"type": "string"}}}));
    let auto = grammar(&offered(vec![weather.clone(), time], ToolChoice::Auto, true), ToolFormat::Harmony, CallsAfter::default())
        .unwrap()
        .unwrap();
    assert_eq!(auto.trigger, Some(" to=functions."));
    assert!(auto.gbnf.starts_with(r#"root ::= "<|channel|>commentary"? " to=functions." ("get_weather" hearth-harmony-head hearth-t0-root | "get_time" hearth-harmony-head hearth-t1-root)"#), "{}", auto.gbnf);
    let defined: Vec<&str> = auto.gbnf.lines().filter_map(|l| l.split_once(" ::=").map(|(name, _)| name)).collect();
    let unique: std::collections::HashSet<_> = defined.iter().collect();
    assert_eq!(unique.len(), defined.len(), "each rule once: {}", auto.gbnf);
    assert!(defined.contains(&"hearth-t0-city-kv") || defined.iter().any(|d| d.starts_with("hearth-t0-")), "{}", auto.gbnf);
    let required =
        grammar(&offered(vec![weather], ToolChoice::Required, false), ToolFormat::Harmony, CallsAfter::default()).unwrap().unwrap();
    assert_eq!(required.trigger, None);
    assert!(
        required.gbnf.starts_with(
            "root ::= \" to=functions.\" (\"get_weather\" hearth-harmony-head hearth-t0-root)\n\
                 hearth-harmony-head ::= \"<|channel|>commentary\" \" json\" \"<|message|>\"\n"
        ),
        "as gpt-oss's template writes it back: {}",
        required.gbnf
    );
}

#[test]
fn rules_are_renamed_outside_literals_and_classes() {
    let gbnf = "root ::= \"{\" space item \"root\" [a-z\\]root]\nspace ::= \" \"?\nitem ::= root | space";
    assert_eq!(
        prefix_rules(gbnf, "p-"),
        "p-root ::= \"{\" p-space p-item \"root\" [a-z\\]root]\np-space ::= \" \"?\np-item ::= p-root | p-space"
    );
}

#[test]
fn the_generic_instructions_list_every_tool_and_the_block_format() {
    let text = tool_instructions(&[tool("get_weather", json!({"type": "object"})), tool("get_time", json!({}))], None);
    let listed = text.split("<tools>\n").nth(1).and_then(|rest| rest.split("\n</tools>").next()).unwrap();
    let listed: Vec<Value> = listed.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(listed.len(), 2, "{text}");
    assert_eq!(listed[0]["function"]["name"], "get_weather");
    assert_eq!(listed[0]["function"]["description"], "get_weather does things");
    assert_eq!(listed[1]["function"]["parameters"], json!({}));
    assert!(text.contains("<tool_call>\n{\"name\":\"<tool name>\",\"arguments\":"), "{text}");
    // A family's own format, where the template writes calls but lists no tools.
    let deepseek = tool_instructions(&[tool("get_time", json!({}))], ToolFormat::DeepSeek.call_syntax());
    let example = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜><tool name><｜tool▁sep｜><the arguments as a JSON object><｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    assert!(deepseek.contains(example), "{deepseek}");
}

#[test]
fn a_choice_makes_the_grammar_lazy_eager_narrow_or_absent() {
    let weather = tool("get_weather", json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}));
    let time = tool("get_time", json!({"properties": {"zone": {"type": "string"}}}));
    let both = || vec![weather.clone(), time.clone()];

    let auto = grammar(&offered(both(), ToolChoice::Auto, false), ToolFormat::Hermes, CallsAfter::default()).unwrap().unwrap();
    assert_eq!(auto.trigger, Some("<tool_call>"));
    assert!(
        auto.gbnf.starts_with(
            "root ::= hearth-tool-block\nhearth-tool-block ::= \"<tool_call>\" \"\\n\" hearth-tool-call \"\\n\" \"</tool_call>\"\n"
        ),
        "{}",
        auto.gbnf
    );
    assert!(auto.gbnf.contains("get_weather") && auto.gbnf.contains("get_time"), "{}", auto.gbnf);
    assert!(auto.gbnf.lines().any(|l| l == "space ::= \"\""), "no room between tokens: {}", auto.gbnf);
    assert!(!auto.gbnf.lines().any(|l| l.starts_with("root ::= {") || l.contains(" root ")), "one root: {}", auto.gbnf);

    let required = grammar(&offered(both(), ToolChoice::Required, true), ToolFormat::Hermes, CallsAfter::default()).unwrap().unwrap();
    assert_eq!(required.trigger, None);
    assert!(required.gbnf.starts_with("root ::= hearth-tool-block (\"\\n\" hearth-tool-block){0,7}\n"), "{}", required.gbnf);

    let named = grammar(&offered(both(), ToolChoice::Named("get_time".into()), false), ToolFormat::Generic, CallsAfter::default())
        .unwrap()
        .unwrap();
    assert!(named.gbnf.contains("get_time") && !named.gbnf.contains("get_weather"), "{}", named.gbnf);

    assert_eq!(grammar(&offered(both(), ToolChoice::None, false), ToolFormat::Hermes, CallsAfter::default()).unwrap(), None);
    assert_eq!(grammar(&offered(vec![], ToolChoice::Auto, false), ToolFormat::Harmony, CallsAfter::default()).unwrap(), None);
    let refused =
        grammar(&offered(both(), ToolChoice::Named("get_news".into()), false), ToolFormat::Harmony, CallsAfter::default()).unwrap_err();
    assert!(refused.to_string().contains("\"get_news\", which is not among the tools"), "{refused}");
}

#[test]
fn the_call_schema_names_the_tool_first() {
    let schema = call_schema(&[&tool("f", json!({"properties": {"b": {"type": "integer"}, "a": {"type": "string"}}}))]);
    assert!(schema.find("\"name\"").unwrap() < schema.find("\"arguments\"").unwrap(), "{schema}");
    assert!(schema.contains(r#""const":"f""#), "{schema}");
    let parsed: Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(parsed["properties"]["arguments"]["type"], "object");
}
