//! Renders a conversation into the prompt text the model was trained on.
//!
//! The GGUF's own Jinja template is rendered with minijinja (llama.cpp's built-in renderer only
//! recognises a fixed list of formats); llama.cpp's renderer is the fallback.

use std::io::Write;

use minijinja::{Environment, ErrorKind};
use serde::Serialize;

use hearth_core::ChatMessage;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the model's chat template failed: {0}")]
pub struct TemplateError(pub String);

/// Instructions a render may take: real templates need a few hundred per message, so this
/// allows chats of tens of thousands of messages and stops a template that loops forever in well
/// under a second.
const FUEL: u64 = 50_000_000;
/// The longest prompt a template may write (far beyond any context window's worth of text).
const MAX_PROMPT_BYTES: usize = 32 << 20;

/// A compiled chat template plus the special tokens it may refer to.
pub struct ChatTemplate {
    env: Environment<'static>,
    bos_token: String,
    eos_token: String,
}

#[derive(Serialize)]
struct TemplateMessage<'a> {
    role: &'a str,
    content: &'a str,
}

/// What a template reads. `tools` only when offered: templates ask `tools is defined` as often
/// as `if tools`.
#[derive(Serialize)]
struct TemplateContext<'a> {
    messages: Vec<TemplateMessage<'a>>,
    add_generation_prompt: bool,
    bos_token: &'a str,
    eos_token: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a [serde_json::Value]>,
    /// Qwen3's switch (its template writes an empty reasoning block when it is false); templates
    /// that know none ignore it.
    enable_thinking: bool,
}

impl ChatTemplate {
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<Self, TemplateError> {
        let mut env = Environment::new();
        env.set_fuel(Some(FUEL));
        minijinja_contrib::add_to_environment(&mut env);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |msg: String| -> Result<String, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, msg))
        });
        env.add_template_owned("chat", source.to_owned()).map_err(|e| TemplateError(e.to_string()))?;
        Ok(ChatTemplate { env, bos_token: bos_token.into(), eos_token: eos_token.into() })
    }

    /// The prompt for `messages`, ending with the opening of the assistant's turn.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, TemplateError> {
        self.render_with_tools(messages, None)
    }

    /// The same with `tools` offered, in the list shape OpenAI sends (`tools::template_tools`).
    pub fn render_with_tools(&self, messages: &[ChatMessage], tools: Option<&[serde_json::Value]>) -> Result<String, TemplateError> {
        self.render_with(messages, tools, true)
    }

    /// The same with the model asked to reason or not (`enable_thinking`), where its template
    /// takes that.
    pub fn render_with(
        &self,
        messages: &[ChatMessage],
        tools: Option<&[serde_json::Value]>,
        thinking: bool,
    ) -> Result<String, TemplateError> {
        let messages: Vec<_> = messages.iter().map(|m| TemplateMessage { role: m.role.as_str(), content: &m.content }).collect();
        let template = self.env.get_template("chat").map_err(|e| TemplateError(e.to_string()))?;
        let mut out = CappedWriter(Vec::new());
        let context = TemplateContext {
            messages,
            add_generation_prompt: true,
            bos_token: &self.bos_token,
            eos_token: &self.eos_token,
            tools,
            enable_thinking: thinking,
        };
        let rendered = template.render_captured_to(context, &mut out);
        match rendered {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::OutOfFuel => {
                return Err(TemplateError("it ran too long (it may loop forever); choose another template in the Model settings".into()));
            }
            Err(e) if out.0.len() >= MAX_PROMPT_BYTES => {
                tracing::debug!(error = %e, "template output capped");
                return Err(TemplateError(format!(
                    "it wrote more than {} MB; choose another template in the Model settings",
                    MAX_PROMPT_BYTES >> 20
                )));
            }
            // The template author's own words (`raise_exception`), without minijinja's frame.
            Err(e) if e.kind() == ErrorKind::InvalidOperation && e.detail().is_some() => {
                return Err(TemplateError(e.detail().unwrap_or_default().to_owned()));
            }
            Err(e) => return Err(TemplateError(e.to_string())),
        }
        let prompt = String::from_utf8(out.0).map_err(|_| TemplateError("it wrote text that is not UTF-8".into()))?;
        if prompt.trim().is_empty() {
            return Err(TemplateError("it rendered an empty prompt; choose another template in the Model settings".into()));
        }
        Ok(prompt)
    }
}

/// Collects a template's output, refusing to grow past [`MAX_PROMPT_BYTES`].
struct CappedWriter(Vec<u8>);

impl Write for CappedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_PROMPT_BYTES {
            self.0.extend_from_slice(&buf[..MAX_PROMPT_BYTES - self.0.len()]);
            return Err(std::io::Error::other("the prompt is too long"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
}
