//! Renders a conversation into the prompt text the model was trained on.
//!
//! The GGUF's own Jinja template is rendered with minijinja (llama.cpp's built-in renderer only
//! recognises a fixed list of formats); llama.cpp's renderer is the fallback.

use minijinja::{Environment, ErrorKind, context};
use serde::Serialize;

use hearth_core::ChatMessage;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the model's chat template failed: {0}")]
pub struct TemplateError(pub String);

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

impl ChatTemplate {
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<Self, TemplateError> {
        let mut env = Environment::new();
        minijinja_contrib::add_to_environment(&mut env);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |msg: String| -> Result<String, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, msg))
        });
        env.add_template_owned("chat", source.to_owned())
            .map_err(|e| TemplateError(e.to_string()))?;
        Ok(ChatTemplate { env, bos_token: bos_token.into(), eos_token: eos_token.into() })
    }

    /// The prompt for `messages`, ending with the opening of the assistant's turn.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, TemplateError> {
        let messages: Vec<_> = messages
            .iter()
            .map(|m| TemplateMessage { role: m.role.as_str(), content: &m.content })
            .collect();
        let template = self.env.get_template("chat").map_err(|e| TemplateError(e.to_string()))?;
        template
            .render(context! {
                messages,
                add_generation_prompt => true,
                bos_token => self.bos_token,
                eos_token => self.eos_token,
            })
            .map_err(|e| TemplateError(e.to_string()))
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
        check(
            "{{ raise_exception('Conversation roles must alternate') }}",
            &[(Role::User, "u")],
            Err("Conversation roles must alternate"),
        );
        check("{% for %}", &[], Err("chat template failed"));
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
}
