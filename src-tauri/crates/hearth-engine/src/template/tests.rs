use hearth_core::Role;

use super::*;

const CHATML: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are helpful.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'].strip() + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

fn check(template: &str, messages: &[(Role, &str)], expected: Result<&str, &str>) {
    let messages: Vec<_> = messages.iter().map(|(r, c)| ChatMessage::new(*r, *c)).collect();
    let got = ChatTemplate::new(template, "<s>", "</s>").and_then(|t| t.render(&messages));
    match expected {
        Ok(text) => assert_eq!(got.unwrap(), text),
        Err(fragment) => {
            let err = got.unwrap_err().to_string();
            assert!(err.contains(fragment), "{err:?} should contain {fragment:?}");
        }
    }
}

#[test]
fn renders_templates() {
    check(
        CHATML,
        &[(Role::User, " hi ")],
        Ok("<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"),
    );
    check(
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}",
        &[(Role::System, "s"), (Role::User, "u")],
        Ok("<s>[system]s</s>[user]u</s>"),
    );
    check("{{ raise_exception('Conversation roles must alternate') }}", &[(Role::User, "u")], Err("Conversation roles must alternate"));
    check("{% for %}", &[], Err("chat template failed"));
    // Hostile templates: words, not a hang, a flood or an empty prompt.
    let forever = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}";
    check(forever, &[(Role::User, "u")], Err("it ran too long"));
    let flood = format!("{{% for a in range(100000) %}}{{% for b in range(100000) %}}{}{{% endfor %}}{{% endfor %}}", "x".repeat(64));
    let flood = flood.as_str();
    check(flood, &[(Role::User, "u")], Err("it wrote more than 32 MB"));
    check("{# nothing #}  ", &[(Role::User, "u")], Err("it rendered an empty prompt"));
}

#[test]
fn next_prompt_extends_the_previous_one() {
    let t = ChatTemplate::new(CHATML, "", "").unwrap();
    let turn1 = [ChatMessage::new(Role::User, "hello")];
    let turn2 = [
        ChatMessage::new(Role::User, "hello"),
        ChatMessage::new(Role::Assistant, "Hi there"),
        ChatMessage::new(Role::User, "how are you?"),
    ];
    let p1 = t.render(&turn1).unwrap();
    let p2 = t.render(&turn2).unwrap();
    assert!(p2.starts_with(&format!("{p1}Hi there")), "{p2:?}");
}

#[test]
fn tools_reach_a_template_only_when_offered() {
    // As Qwen 2.5's template asks: `if tools`, and as others do: `tools is defined`.
    let t = ChatTemplate::new(
            "{% if tools is defined %}[{% for t in tools %}{{ t.function.name }};{% endfor %}]{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}",
            "",
            "",
        )
        .unwrap();
    let messages = [ChatMessage::new(Role::User, "hi")];
    assert_eq!(t.render(&messages).unwrap(), "hi");
    let tools = [serde_json::json!({"type": "function", "function": {"name": "get_weather"}})];
    assert_eq!(t.render_with_tools(&messages, Some(&tools)).unwrap(), "[get_weather;]hi");
}

/// gpt-oss's shape (tests/data/harmony.jinja): a past reply's reasoning goes apart from its
/// answer, as `thinking`, and the template drops it; the request's variables reach the
/// template, never over what the render sets itself.
#[test]
fn a_channels_template_reads_past_reasoning_apart_and_the_requests_variables() {
    let t = ChatTemplate::new(include_str!("../../tests/data/harmony.jinja"), "", "").unwrap();
    assert_eq!(t.reasoning(), ReasoningFormat::Channels);
    let turns = [
        ChatMessage::new(Role::User, "2+2?"),
        ChatMessage::new(Role::Assistant, "<think>Easy.</think>Four."),
        ChatMessage::new(Role::User, "3+3?"),
    ];
    let kwargs: serde_json::Map<_, _> =
        serde_json::from_str(r#"{"reasoning_effort":"high","open_analysis":true,"messages":[],"add_generation_prompt":false}"#).unwrap();
    let prompt = t.render_with(&turns, TemplateInputs { kwargs: &kwargs, ..TemplateInputs::default() }).unwrap();
    assert!(prompt.contains("Reasoning: high"), "{prompt}");
    assert!(prompt.contains("<|start|>assistant<|channel|>final<|message|>Four.<|end|>"), "{prompt}");
    assert!(!prompt.contains("Easy."), "past reasoning dropped: {prompt}");
    assert!(prompt.ends_with("<|start|>user<|message|>3+3?<|end|><|start|>assistant<|channel|>analysis<|message|>"), "{prompt}");
    assert!(t.render(&turns).unwrap().contains("Reasoning: medium"));
    // A calling reply: its calls apart, its result answering the function by name.
    let calling = [
        ChatMessage::new(Role::User, "Weather?"),
        ChatMessage::new(
            Role::Assistant,
            "<think>Need it.</think><tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"unit\":\"C\",\"city\":\"Oslo\"}}\n</tool_call>",
        ),
        ChatMessage::new(Role::Tool, "12 degrees"),
    ];
    let prompt = t.render(&calling).unwrap();
    let expected = "<|start|>user<|message|>Weather?<|end|><|start|>assistant<|channel|>analysis<|message|>Need it.<|end|>\
                        <|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"unit\":\"C\",\"city\":\"Oslo\"}<|call|>\
                        <|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>\"12 degrees\"<|end|><|start|>assistant";
    assert!(prompt.ends_with(expected), "{prompt}");
    // A template of another shape reads the reply as stored.
    let plain = ChatTemplate::new("{% for m in messages %}{{ m.content }}|{% endfor %}", "", "").unwrap();
    assert_eq!(plain.render(&turns).unwrap(), "2+2?|<think>Easy.</think>Four.|3+3?|");
}

/// `tojson` writes what Hugging Face's renderer does (Python's `json.dumps`): its separators
/// and indentation, text as it is (no HTML escapes), keys in their order; a past call's
/// arguments as the model wrote them.
#[test]
fn tojson_writes_json_as_python_does() {
    let cases = [
        ("{{ v | tojson }}", r#"{"b": [1, 2], "a": "it's <x> & é"}"#),
        ("{{ v | tojson(indent=2) }}", "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": \"it's <x> & é\"\n}"),
        ("{{ v | tojson(2) }}", "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": \"it's <x> & é\"\n}"),
        ("{{ v | tojson(ensure_ascii=False, sort_keys=False) }}", r#"{"b": [1, 2], "a": "it's <x> & é"}"#),
        ("{{ v.b | tojson }}{{ {} | tojson }}{{ [] | tojson }}{{ none | tojson }}", "[1, 2]{}[]null"),
    ];
    let v: Value = serde_json::from_str(r#"{"b": [1, 2], "a": "it's <x> & é"}"#).unwrap();
    for (source, expected) in cases {
        let mut env = Environment::new();
        env.add_filter("tojson", tojson);
        let rendered = env.render_str(source, minijinja::context! { v => v.clone() }).unwrap();
        assert_eq!(rendered, expected, "{source}");
    }
    let mut env = Environment::new();
    env.add_filter("tojson", tojson);
    let raw = RawJson::value(r#"{"z":"it's","a":1}"#);
    let rendered = env.render_str("{{ a | tojson }}|{{ a.z }}|{{ a | length }}", minijinja::context! { a => raw }).unwrap();
    assert_eq!(rendered, r#"{"z":"it's","a":1}|it's|2"#);
    // Within another value too (Mistral Nemo's template writes a call's whole function).
    let raw = RawJson::value(r#"{"z":"it's","a":1}"#);
    let rendered =
        env.render_str(r#"{{ {"name": "f", "arguments": a, "ids": [1, 2]} | tojson }}"#, minijinja::context! { a => raw }).unwrap();
    assert_eq!(rendered, r#"{"name": "f", "arguments": {"z":"it's","a":1}, "ids": [1, 2]}"#);
}

/// Llama 3.1's shape (tests/data/llama3.jinja), Mistral Small 3.2's (mistral.jinja),
/// Functionary v3.1's (functionary.jinja) and DeepSeek's (deepseek*.jinja): a past call is written back as its model wrote it, the
/// arguments as they were (`tojson` keeps their order; Functionary's and DeepSeek's join their text), and the
/// result in the template's own turn; replies in words stay text.
#[test]
fn a_template_that_reads_calls_apart_writes_them_back_as_its_model_wrote_them() {
    let llama3 = "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"get_weather\", \"parameters\": {\"unit\":\"C\",\"city\":\"Oslo\"}}<|eot_id|>\
                      <|start_header_id|>ipython<|end_header_id|>\n\n\"12 degrees\"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
    let mistral = "[INST]Weather?[/INST]Looking.[TOOL_CALLS]get_weather[ARGS]{\"unit\":\"C\",\"city\":\"Oslo\"}</s>[TOOL_RESULTS]12 degrees[/TOOL_RESULTS]";
    let cases = [
        (include_str!("../../tests/data/llama3.jinja"), ToolFormat::Llama3, "", llama3, "<|end_header_id|>\n\nHello!<|eot_id|>"),
        (
            include_str!("../../tests/data/mistral.jinja"),
            ToolFormat::Mistral,
            "Looking.",
            mistral,
            "[INST]Hi[/INST]Hello!</s>[INST]Bye[/INST]",
        ),
        (
            include_str!("../../tests/data/functionary.jinja"),
            ToolFormat::Functionary,
            "Looking.",
            "<|start_header_id|>assistant<|end_header_id|>\n\nLooking.<function=get_weather>{\"unit\":\"C\",\"city\":\"Oslo\"}</function>\
                 <|eom_id|><|start_header_id|>ipython<|end_header_id|>\n\n12 degrees<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>",
        ),
        (
            include_str!("../../tests/data/deepseek.jinja"),
            ToolFormat::DeepSeek,
            "Looking.",
            "<｜User｜>Weather?<｜Assistant｜></think>Looking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>\
                 {\"unit\":\"C\",\"city\":\"Oslo\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜></s><｜tool▁output▁begin｜>12 degrees<｜tool▁output▁end｜>",
            "<｜User｜>Hi<｜Assistant｜></think>Hello!</s><｜User｜>Bye<｜Assistant｜><think>",
        ),
        (
            include_str!("../../tests/data/deepseek-r1.jinja"),
            ToolFormat::DeepSeekR1,
            // A reply that reasoned, then called: its reasoning is not written back, its
            // content is none (no turn of words).
            "<think>\nLook it up.\n</think>\n\n",
            "<｜User｜>Weather?<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n\
                 {\"unit\":\"C\",\"city\":\"Oslo\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜></s>\
                 <｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>12 degrees<｜tool▁output▁end｜><｜tool▁outputs▁end｜>",
            "<｜User｜>Hi<｜Assistant｜>Hello!</s><｜User｜>Bye<｜Assistant｜><think>\n",
        ),
    ];
    for (source, format, words, expected, said_back) in cases {
        let t = ChatTemplate::new(source, "", "</s>").unwrap();
        assert_eq!(t.tool_format(), format);
        let calling = [
            ChatMessage::new(Role::User, "Weather?"),
            ChatMessage::new(
                Role::Assistant,
                format!("{words}{}", hearth_core::call_block("get_weather", r#"{"unit":"C","city":"Oslo"}"#)),
            ),
            ChatMessage::new(Role::Tool, "12 degrees"),
        ];
        let tools = [serde_json::json!({"type": "function", "function": {"name": "get_weather", "description": "", "parameters": {}}})];
        let prompt = t.render_with_tools(&calling, Some(&tools)).unwrap();
        assert!(prompt.ends_with(expected), "{format:?}: {prompt}");
        // The tools listed before the conversation, where the template lists them (DeepSeek's,
        // as shipped, do not: Hearth describes them in a system message).
        let deepseek = matches!(format, ToolFormat::DeepSeek | ToolFormat::DeepSeekR1);
        assert_eq!(t.lists_tools(), !deepseek, "{format:?}");
        if t.lists_tools() {
            assert!(prompt.find("get_weather") < prompt.find("Weather?"), "{format:?}: the tools listed: {prompt}");
        }
        let said = [ChatMessage::new(Role::User, "Hi"), ChatMessage::new(Role::Assistant, "Hello!"), ChatMessage::new(Role::User, "Bye")];
        let prompt = t.render(&said).unwrap();
        assert!(prompt.contains(said_back), "{format:?}: {prompt}");
    }
}

#[test]
fn strftime_now_writes_the_date_as_python_does() {
    let t = ChatTemplate::new("{{ strftime_now('%Y-%m-%d') }} {{ strftime_now('%d %b %Y') }}", "", "").unwrap();
    let today = chrono::Local::now();
    let expected = format!("{} {}", today.format("%Y-%m-%d"), today.format("%d %b %Y"));
    assert_eq!(t.render(&[ChatMessage::new(Role::User, "hi")]).unwrap(), expected);
    let bad = ChatTemplate::new("{{ strftime_now('%Q') }}", "", "").unwrap();
    assert!(bad.render(&[ChatMessage::new(Role::User, "hi")]).unwrap_err().0.contains("strftime_now"));
}

/// A template in Command R7B's shape: a line holding only a block tag leaves nothing behind (as
/// transformers and llama.cpp render templates); `{% break %}` ends a loop; a past reply's plan
/// is given apart (`reasoning_content`) and its answer alone, as the template writes them with
/// markers of its own.
#[test]
fn a_template_with_reasoning_markers_of_its_own_reads_past_reasoning_apart() {
    let source = "{%- for message in messages -%}
{%- if message.role == 'assistant' and message.tool_calls -%}
<|START_THINKING|>{{ message.reasoning_content }}<|END_THINKING|>[
    {% for tc in message.tool_calls %}
    {{ tc['function']['name'] }}
    {% endfor %}
]
{%- elif message.role == 'assistant' -%}
<R>{{ message.content }}</R>
{%- elif message.role == 'tool' -%}
{%- for m in messages[loop.index0:] -%}{%- if m.role != 'tool' -%}{%- break -%}{%- endif -%}({{ m.content }}){%- endfor -%}
{%- else -%}
<U>{{ message.content }}</U>
{%- endif -%}
{%- endfor -%}";
    let t = ChatTemplate::new(source, "", "").unwrap();
    assert_eq!(t.think_markers(), Some(crate::tools::COMMAND_R_THINKING));
    let messages = [
        ChatMessage::new(Role::User, "Weather?"),
        ChatMessage::new(Role::Assistant, format!("<think>Look it up.</think>{}", hearth_core::call_block("get_weather", "{}"))),
        ChatMessage::new(Role::Tool, "12 degrees"),
        ChatMessage::new(Role::Assistant, "<think>Mild.</think>Sunny."),
        ChatMessage::new(Role::User, "Bye"),
    ];
    let calls = crate::tools::ToolFormat::CommandR;
    let t = ChatTemplate { tools: calls, ..t };
    assert_eq!(
        t.render(&messages).unwrap(),
        "<U>Weather?</U><|START_THINKING|>Look it up.<|END_THINKING|>[\n    get_weather\n](12 degrees)<R>Sunny.</R><U>Bye</U>"
    );
}
