//! The prompt a conversation becomes: the chat template (the user's, else the model's own)
//! rendered with minijinja; llama.cpp's renderer only where that template cannot be used — and
//! then said with the reply, never in silence. A template that refuses a system prompt (its
//! author's `raise_exception`) gets the system prompt folded into the first user message, as LM
//! Studio does, and that is said too.

use std::borrow::Cow;

use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;

use hearth_core::{BackendError, ChatMessage, OfferedTools, ReasoningFormat, ReplyRequest, Role, ToolChoice, harmony};

use crate::template::{ChatTemplate, NO_KWARGS, TemplateInputs};
use crate::tools::{GENERIC_NOTICE, ToolFormat, template_tools, tool_instructions};

pub(super) enum Renderer {
    /// The template, and llama.cpp's renderer as the fallback.
    Jinja(Box<ChatTemplate>, LlamaChatTemplate),
    /// llama.cpp's renderer; `why` it is used in place of the template, when that is news.
    Builtin { template: LlamaChatTemplate, why: Option<String> },
}

/// A rendered prompt, and what the user should know about how it was written.
pub(super) struct Rendered {
    pub text: String,
    pub notice: Option<String>,
}

/// What a request asks of its prompt besides the messages.
#[derive(Clone, Copy)]
pub(super) struct PromptAsk<'a> {
    pub tools: Option<&'a OfferedTools>,
    /// The reasoning budget (`SamplingParams::reasoning_budget`): 0 asks the model not to reason.
    pub budget: i32,
    pub kwargs: &'a serde_json::Map<String, serde_json::Value>,
}

impl<'a> PromptAsk<'a> {
    pub fn of(request: &'a ReplyRequest) -> PromptAsk<'a> {
        PromptAsk { tools: request.tools.as_ref(), budget: request.sampling.reasoning_budget, kwargs: &request.template_kwargs }
    }

    /// No tools, no budget, nothing more for the template.
    pub fn plain() -> PromptAsk<'static> {
        PromptAsk { tools: None, budget: -1, kwargs: &NO_KWARGS }
    }

    pub fn thinking(&self) -> bool {
        self.budget != 0
    }
}

const FALLBACK_FORMAT: &str = "the prompt was written in llama.cpp's built-in format for this model instead, which may not be the one it was trained on; choose another template in the Model settings";

impl Renderer {
    /// The user's template if given, else the model's own; llama.cpp's renderer of the model's
    /// template (or ChatML) as the fallback.
    pub fn for_model(model: &LlamaModel, custom: Option<&str>) -> Renderer {
        let chatml = || LlamaChatTemplate::new("chatml").expect("static name has no NUL");
        let builtin = model.chat_template(None).ok();
        let source = match (custom, &builtin) {
            (Some(custom), _) => custom.to_owned(),
            (None, Some(own)) => own.to_string().unwrap_or_default(),
            (None, None) => {
                // Said where the model is shown ("no chat template: ChatML").
                tracing::info!("model has no chat template; using ChatML");
                return Renderer::Builtin { template: chatml(), why: None };
            }
        };
        let builtin = builtin.unwrap_or_else(chatml);
        let vocab = model.vocab();
        let bos = special_text(model, vocab.bos());
        let eos = special_text(model, vocab.eos());
        match ChatTemplate::new(&source, &bos, &eos) {
            Ok(jinja) => Renderer::Jinja(Box::new(jinja), builtin),
            Err(e) => {
                tracing::warn!(error = %e, "chat template does not compile; using llama.cpp's renderer");
                Renderer::Builtin { template: builtin, why: Some(format!("The chat template could not be read ({e}); {FALLBACK_FORMAT}")) }
            }
        }
    }

    /// How the model is told of tools and writes its calls.
    pub fn tool_format(&self) -> ToolFormat {
        match self {
            Renderer::Jinja(jinja, _) => jinja.tool_format(),
            Renderer::Builtin { .. } => ToolFormat::Generic,
        }
    }

    /// The reasoning markers of the template's own, where they are not `<think>`'s.
    pub fn think_markers(&self) -> Option<(&'static str, &'static str)> {
        match self {
            Renderer::Jinja(jinja, _) => jinja.think_markers(),
            Renderer::Builtin { .. } => None,
        }
    }

    /// How the model reasons, by the template the prompt is written with.
    pub fn reasoning(&self) -> ReasoningFormat {
        match self {
            Renderer::Jinja(jinja, ..) => jinja.reasoning(),
            Renderer::Builtin { .. } => ReasoningFormat::None,
        }
    }

    /// The prompt for `messages`, with the tools `ask`ed for offered as the template knows them
    /// (else in the generic format, said in the notice), and the model asked to reason or not
    /// where its template takes that (`enable_thinking`, gpt-oss's `reasoning_effort`).
    pub fn render(&self, model: &LlamaModel, messages: &[ChatMessage], ask: PromptAsk<'_>) -> Result<Rendered, BackendError> {
        let kwargs = self.kwargs(ask);
        let inputs = TemplateInputs { tools: None, thinking: ask.thinking(), kwargs: &kwargs };
        let Some(tools) = ask.tools.filter(|t| t.choice != ToolChoice::None && !t.tools.is_empty()) else {
            return self.render_plain(model, messages, inputs);
        };
        if let Renderer::Jinja(jinja, _) = self {
            if jinja.lists_tools() {
                let text = jinja
                    .render_with(messages, TemplateInputs { tools: Some(&template_tools(&tools.tools)), ..inputs })
                    .map_err(|e| BackendError::Engine(e.to_string()))?;
                return Ok(Rendered { text, notice: None });
            }
            // It writes calls its own way but lists no tools (DeepSeek's as shipped): they are
            // described to the model in that way, which it was trained on.
            if let Some(syntax) = jinja.tool_format().call_syntax() {
                return self.render_plain(model, &with_system(messages, &tool_instructions(&tools.tools, Some(syntax))), inputs);
            }
        }
        let mut rendered = self.render_plain(model, &with_system(messages, &tool_instructions(&tools.tools, None)), inputs)?;
        rendered.notice = Some(match rendered.notice {
            Some(notice) => format!("{GENERIC_NOTICE}. {notice}"),
            None => GENERIC_NOTICE.to_owned(),
        });
        Ok(rendered)
    }

    /// The template's variables from `ask`: gpt-oss's reasoning effort follows the budget unless
    /// it is asked for by name.
    fn kwargs<'a>(&self, ask: PromptAsk<'a>) -> Cow<'a, serde_json::Map<String, serde_json::Value>> {
        let mut kwargs = Cow::Borrowed(ask.kwargs);
        if self.reasoning() == ReasoningFormat::Channels
            && !kwargs.contains_key("reasoning_effort")
            && let Some(effort) = harmony::harmony_effort(ask.budget)
        {
            kwargs.to_mut().insert("reasoning_effort".into(), effort.into());
        }
        kwargs
    }

    fn render_plain(&self, model: &LlamaModel, messages: &[ChatMessage], inputs: TemplateInputs<'_>) -> Result<Rendered, BackendError> {
        let rendered = match self {
            Renderer::Jinja(jinja, builtin) => match jinja.render_with(messages, inputs) {
                Ok(text) => Rendered { text, notice: None },
                Err(error) => {
                    if let Some(folded) = fold_system(messages)
                        && let Ok(text) = jinja.render_with(&folded, inputs)
                    {
                        let notice = format!(
                            "The model's chat template refuses a system prompt ({}); it was put at the start of the first message instead",
                            error.0
                        );
                        Rendered { text, notice: Some(notice) }
                    } else {
                        tracing::warn!(%error, "Jinja chat template failed; using llama.cpp's");
                        // Ours says more than llama.cpp's "unsupported template".
                        let text = builtin_render(model, builtin, messages).map_err(|_| BackendError::Engine(error.to_string()))?;
                        Rendered { text, notice: Some(format!("The model's chat template failed ({}); {FALLBACK_FORMAT}", error.0)) }
                    }
                }
            },
            Renderer::Builtin { template, why } => {
                let text = builtin_render(model, template, messages)
                    .map_err(|e| BackendError::Engine(format!("the chat template failed: {e}")))?;
                Rendered { text, notice: why.clone() }
            }
        };
        if rendered.text.trim().is_empty() {
            return Err(BackendError::Engine(
                "the chat template rendered an empty prompt; choose another template in the Model settings".into(),
            ));
        }
        Ok(rendered)
    }
}

/// The conversation with `instructions` first in its system message (one made if need be).
fn with_system(messages: &[ChatMessage], instructions: &str) -> Vec<ChatMessage> {
    let mut out = messages.to_vec();
    match out.first_mut() {
        Some(first) if first.role == Role::System => first.content = format!("{instructions}\n\n{}", first.content),
        _ => out.insert(0, ChatMessage::new(Role::System, instructions)),
    }
    out
}

/// The conversation with its system messages put at the start of the first user message; `None`
/// when it has no system message or no user message to carry it.
fn fold_system(messages: &[ChatMessage]) -> Option<Vec<ChatMessage>> {
    let system: Vec<&str> = messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
    if system.is_empty() || !messages.iter().any(|m| m.role == Role::User) {
        return None;
    }
    let mut folded: Vec<ChatMessage> = messages.iter().filter(|m| m.role != Role::System).cloned().collect();
    let first = folded.iter_mut().find(|m| m.role == Role::User).expect("checked: a user message");
    first.content = format!("{}\n\n{}", system.join("\n\n"), first.content);
    Some(folded)
}

fn builtin_render(model: &LlamaModel, template: &LlamaChatTemplate, messages: &[ChatMessage]) -> Result<String, String> {
    let chat = messages
        .iter()
        .map(|m| LlamaChatMessage::new(m.role.as_str().into(), m.content.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("a message cannot be sent to the model: {e}"))?;
    model.apply_chat_template(template, &chat, true).map_err(|e| e.to_string())
}

pub(super) fn special_text(model: &LlamaModel, token: LlamaToken) -> String {
    if token.0 < 0 {
        return String::new();
    }
    String::from_utf8_lossy(&model.vocab().token_to_piece(token, true, None)).into_owned()
}

/// The prompt fitted to the context: rendered, tokenized, and earlier messages left out as the
/// overflow policy allows.
mod fit {
    use std::borrow::Cow;

    use hearth_core::{THINK_OPENED, harmony};

    use super::super::*;
    use super::{PromptAsk, past_opened_reasoning};
    use crate::vision::{self, PromptImages};

    impl<'m> Session<'m> {
        /// The prompt's tokens, after leaving out earlier messages as the overflow policy allows so
        /// that a reply has room (up to `max_tokens`, at most a quarter of the context).
        pub(in crate::session) fn fit_prompt(&self, request: &ReplyRequest, n_ctx: usize) -> Result<Fitted, BackendError> {
            let reserve = (request.sampling.max_tokens as usize).min(n_ctx / 4);
            let overflow = |tokens: usize| BackendError::ContextOverflow { tokens, n_ctx: n_ctx as u32 };
            if let Some(raw) = &request.raw_prompt {
                // Plain text has no turns to leave out: it fits, or it is refused.
                let tokens = self.tokenize(raw);
                return match tokens.len() {
                    0 => Err(BackendError::InvalidRequest("the prompt is empty".into())),
                    n if n + reserve <= n_ctx || (request.sampling.overflow == OverflowPolicy::StopAtLimit && n < n_ctx) => {
                        Ok(Fitted { tokens, facts: PromptFacts::default(), images: PromptImages::default() })
                    }
                    n => Err(overflow(n)),
                };
            }
            let ask = PromptAsk::of(request);
            let Rendered { text, notice } = self.prompt(&request.messages, request.continue_last, ask)?;
            let (tokens, images) = self.tokenize_messages(&text, &request.messages)?;
            let facts = |dropped| PromptFacts { dropped, notice: notice.clone(), question_tokens: None, document_tokens: None };
            if tokens.len() + reserve <= n_ctx {
                return Ok(Fitted { tokens, facts: facts(0), images });
            }
            if request.sampling.overflow == OverflowPolicy::StopAtLimit {
                // The prompt fits; the reply stops when the context is full.
                return if tokens.len() < n_ctx { Ok(Fitted { tokens, facts: facts(0), images }) } else { Err(overflow(tokens.len())) };
            }
            let mut fitted = None;
            let kept = fit_context(&request.messages, request.sampling.overflow, |messages| {
                let Ok(prompt) = self.prompt(messages, request.continue_last, ask) else { return false };
                let Ok((candidate, images)) = self.tokenize_messages(&prompt.text, messages) else { return false };
                let fits = candidate.len() + reserve <= n_ctx;
                if fits {
                    fitted = Some((candidate, images));
                }
                fits
            });
            match (kept, fitted) {
                (Some((_, dropped)), Some((tokens, images))) => Ok(Fitted { tokens, facts: facts(dropped), images }),
                _ => Err(overflow(tokens.len())),
            }
        }

        /// Tokens of `question` (the user's message the prompt ends with) as the model reads it: its
        /// text with the documents or passages written into it, and its images (`images`, the
        /// prompt's).
        pub(in crate::session) fn question_tokens(&self, question: &ChatMessage, images: &PromptImages) -> Option<u32> {
            let text = self.model.vocab().tokenize(question.content.as_bytes(), false, false).len();
            let pictures: usize = question
                .images
                .iter()
                .filter_map(|image| images.0.get(&vision::image_token(&image.hash)))
                .map(|chunk| chunk.n_tokens())
                .sum();
            u32::try_from(text + pictures).ok()
        }

        /// Tokens of each document `question` carries whole (its block as the model reads it);
        /// none when it carries none.
        pub(in crate::session) fn document_tokens(&self, question: &ChatMessage) -> Option<Vec<u32>> {
            let blocks = hearth_core::document_blocks(&question.content);
            let vocab = self.model.vocab();
            let counts = blocks.iter().map(|block| u32::try_from(vocab.tokenize(block.as_bytes(), false, false).len()).unwrap_or(u32::MAX));
            (!blocks.is_empty()).then(|| counts.collect())
        }

        /// The prompt for `messages`; when continuing, the unfinished reply is written after the
        /// assistant's turn opens (in gpt-oss's channels for a model that writes them), so the
        /// model carries on from its last word.
        pub(in crate::session) fn prompt(
            &self,
            messages: &[ChatMessage],
            continue_last: bool,
            ask: PromptAsk<'_>,
        ) -> Result<Rendered, BackendError> {
            match messages.split_last() {
                Some((last, before)) if continue_last && last.role == Role::Assistant => {
                    let mut rendered = self.render(before, ask)?;
                    let (written, opening) = match self.renderer.reasoning() {
                        ReasoningFormat::Channels => (Cow::Owned(harmony::to_harmony(&last.content)), harmony::ANALYSIS_OPENING),
                        _ => (Cow::Borrowed(last.content.as_str()), THINK_OPENED),
                    };
                    rendered.text.push_str(past_opened_reasoning(&rendered.text, &written, opening));
                    Ok(rendered)
                }
                _ => self.render(messages, ask),
            }
        }

        pub(in crate::session) fn render(&self, messages: &[ChatMessage], ask: PromptAsk<'_>) -> Result<Rendered, BackendError> {
            if vision::has_images(messages) {
                // Each image is a marker in the text, where the projector's tokens go.
                return self.renderer.render(self.model, &vision::marked(messages), ask);
            }
            self.renderer.render(self.model, messages, ask)
        }

        /// The rendered prompt `text` of `messages` as tokens, their images (each a marker in
        /// `text`) read through the model's projector: refused in words when it has none.
        pub(in crate::session) fn tokenize_messages(
            &self,
            text: &str,
            messages: &[ChatMessage],
        ) -> Result<(Vec<LlamaToken>, PromptImages), BackendError> {
            let images = vision::images_of(messages);
            if images.is_empty() {
                return Ok((self.tokenize(text), PromptImages::default()));
            }
            let Some(projector) = &self.projector else {
                return Err(BackendError::InvalidRequest(
                    "this model cannot read images: load a vision model, with its projector (mmproj-….gguf) beside it or chosen in its load settings"
                        .into(),
                ));
            };
            let at_once = (self.context.n_ubatch() as usize).min(self.n_batch);
            projector.tokenize(text, self.adds_bos(text), &images, at_once)
        }

        pub(in crate::session) fn tokenize(&self, prompt: &str) -> Vec<LlamaToken> {
            self.model.vocab().tokenize(prompt.as_bytes(), self.adds_bos(prompt), true)
        }

        /// Whether `prompt` is read after a BOS token it does not write itself: templates usually
        /// write it, and another would shift the model.
        fn adds_bos(&self, prompt: &str) -> bool {
            let vocab = self.model.vocab();
            let bos = special_text(self.model, vocab.bos());
            vocab.should_add_bos() && (bos.is_empty() || !prompt.starts_with(&bos))
        }
    }
}

/// A continued reply's text (`written`, in the model's format) less the opening of its
/// reasoning where the prompt wrote it already: a template that opens the block (DeepSeek-R1's)
/// wrote it, and the reply's text opens with it too.
fn past_opened_reasoning<'a>(prompt: &str, written: &'a str, opening: &str) -> &'a str {
    let opened = prompt.trim_end().ends_with(opening.trim_end());
    written.strip_prefix(opening).filter(|_| opened).unwrap_or(written)
}

/// Whether the prompt ends inside a reasoning block: its template opened `<think>` after the
/// assistant's turn (DeepSeek-R1's and some Qwen3 templates do, to make the model reason), or
/// gpt-oss's analysis channel.
pub(super) fn opens_reasoning(model: &LlamaModel, prompt: &[LlamaToken], reasoning: ReasoningFormat) -> bool {
    let vocab = model.vocab();
    let tail: Vec<u8> = prompt[prompt.len().saturating_sub(8)..].iter().flat_map(|&t| crate::vision::piece(&vocab, t)).collect();
    let tail = String::from_utf8_lossy(&tail);
    match reasoning {
        ReasoningFormat::Channels => tail.ends_with(harmony::ANALYSIS_OPENING),
        _ => tail.trim_end().ends_with(hearth_core::THINK_OPEN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply continued after a prompt that opened its reasoning is written on from its own
    /// text: the opening is the prompt's, not written twice.
    #[test]
    fn a_continued_reply_is_written_after_the_reasoning_its_prompt_opened() {
        use hearth_core::THINK_OPENED;
        let cases = [
            ("<|User|>2+2?<|Assistant|><think>\n", "<think>\nHmm.", THINK_OPENED, "Hmm."),
            ("<|User|>2+2?<|Assistant|><think>", "<think>\n\nHmm.", THINK_OPENED, "\nHmm."),
            ("<|im_start|>assistant\n", "<think>\nHmm.", THINK_OPENED, "<think>\nHmm."),
            ("<|im_start|>assistant\n", "Plain.", THINK_OPENED, "Plain."),
            ("<|start|>assistant<|channel|>analysis<|message|>", "<|channel|>analysis<|message|>Sum", harmony::ANALYSIS_OPENING, "Sum"),
            ("<|start|>assistant", "<|channel|>analysis<|message|>Sum", harmony::ANALYSIS_OPENING, "<|channel|>analysis<|message|>Sum"),
        ];
        for (prompt, written, opening, expected) in cases {
            assert_eq!(past_opened_reasoning(prompt, written, opening), expected, "{prompt:?} + {written:?}");
        }
    }

    #[test]
    fn system_messages_go_to_the_start_of_the_first_user_message() {
        let m = |role, text: &str| ChatMessage::new(role, text);
        let folded = fold_system(&[m(Role::System, "Be brief."), m(Role::User, "Hi"), m(Role::Assistant, "Hello"), m(Role::User, "Bye")]);
        let folded: Vec<(Role, String)> = folded.unwrap().into_iter().map(|m| (m.role, m.content)).collect();
        assert_eq!(folded, [(Role::User, "Be brief.\n\nHi".into()), (Role::Assistant, "Hello".into()), (Role::User, "Bye".into())]);
        assert!(fold_system(&[m(Role::User, "Hi")]).is_none(), "nothing to fold");
        assert!(fold_system(&[m(Role::System, "Be brief.")]).is_none(), "nowhere to fold it");
    }
}
