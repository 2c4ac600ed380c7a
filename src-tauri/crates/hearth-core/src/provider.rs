//! Remote providers as the domain sees them: which API a provider speaks, where a chat's replies
//! come from, what can go wrong over the network, and which sampling settings each API takes.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::FieldError;
use crate::reasoning::{ANTHROPIC_THINKING_MIN, REASONING_EFFORTS, ReasoningFormat};

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ProviderKind {
    /// OpenAI's Chat Completions API.
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// Any server speaking Chat Completions at its own base URL (llama.cpp's server, vLLM,
    /// Ollama, LM Studio, Groq, OpenRouter, Mistral …).
    OpenAiCompatible,
}

impl ProviderKind {
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com/v1",
            ProviderKind::OpenAiCompatible => "http://127.0.0.1:8080/v1",
        }
    }

    /// Context window assumed when neither the models endpoint nor the user says.
    pub fn default_context_length(self) -> u32 {
        match self {
            ProviderKind::OpenAi => 128_000,
            ProviderKind::Anthropic => 200_000,
            ProviderKind::OpenAiCompatible => 8_192,
        }
    }

    /// Whether it may be a llama.cpp server that takes llama.cpp's own sampler fields (the
    /// provider's `extensions` switch).
    pub fn takes_extensions(self) -> bool {
        self == ProviderKind::OpenAiCompatible
    }

    /// Whether its API refuses requests without a key (a local OpenAI-compatible server often
    /// takes none).
    pub fn needs_key(self) -> bool {
        self != ProviderKind::OpenAiCompatible
    }

    /// The conventional environment variable holding this kind's key (CLI fallback).
    pub fn key_env_var(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::OpenAiCompatible => "HEARTH_API_KEY",
        }
    }

    pub fn parse(s: &str) -> Option<ProviderKind> {
        match s {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            "openai-compatible" => Some(ProviderKind::OpenAiCompatible),
            _ => None,
        }
    }
}

/// A configured provider. Its API key is not here: keys live in the OS keychain, by `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    /// Stable id, chosen when the provider is added ("openai", "groq-1" …).
    pub id: String,
    /// Shown to the user ("OpenAI", "My vLLM").
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    /// Models the user typed in, offered beside those the models endpoint lists.
    #[serde(default)]
    pub models: Vec<String>,
    /// The context window to budget for when the models endpoint does not say.
    #[serde(default)]
    pub context_length: Option<u32>,
    /// Send llama.cpp's sampler fields (top-k, min-p, DRY, XTC, grammar …) to an
    /// OpenAI-compatible server. Strict servers reject unknown fields: turn it off for those.
    #[serde(default)]
    pub extensions: bool,
    /// Hugging Face repository whose `tokenizer.json` counts this provider's tokens; by default
    /// a model id shaped like a repository ("Qwen/Qwen2.5-7B-Instruct") is tried as one.
    #[serde(default)]
    pub tokenizer_repo: Option<String>,
    /// The user confirmed a plain `http://` base URL on another machine: the key and the chats
    /// travel unencrypted. (Not needed for this machine's own servers.)
    #[serde(default)]
    pub allow_plain_http: bool,
}

impl ProviderConfig {
    /// A provider at its kind's usual URL, with nothing else set.
    pub fn new(id: impl Into<String>, name: impl Into<String>, kind: ProviderKind) -> Self {
        ProviderConfig {
            id: id.into(),
            name: name.into(),
            kind,
            base_url: kind.default_base_url().into(),
            models: Vec::new(),
            context_length: None,
            extensions: false,
            tokenizer_repo: None,
            allow_plain_http: false,
        }
    }

    /// Where requests go: scheme, host and port of the base URL (`None` if it is not a URL).
    fn destination(&self) -> Option<(String, url::Host, u16)> {
        let url = url::Url::parse(self.base_url.trim()).ok()?;
        Some((url.scheme().to_owned(), url.host()?.to_owned(), url.port_or_known_default()?))
    }

    /// Whether `other` sends requests to the same place: a key given for one base URL is not
    /// sent to another host.
    pub fn same_destination(&self, other: &ProviderConfig) -> bool {
        self.destination().is_some_and(|here| Some(here) == other.destination())
    }

    /// Whether requests go over plain HTTP to another machine, and the user has not confirmed it.
    pub fn plain_http_unconfirmed(&self) -> bool {
        let off_machine = match self.destination() {
            Some((scheme, host, _)) if scheme == "http" => match host {
                url::Host::Domain(name) => !name.eq_ignore_ascii_case("localhost"),
                url::Host::Ipv4(ip) => !ip.is_loopback(),
                url::Host::Ipv6(ip) => !ip.is_loopback(),
            },
            _ => false,
        };
        off_machine && !self.allow_plain_http
    }

    /// The longest provider id, in ASCII characters.
    pub const ID_MAX_LEN: usize = 64;

    pub fn validate(&self) -> Result<(), FieldError> {
        let id_ok = !self.id.is_empty()
            && self.id.len() <= Self::ID_MAX_LEN
            && self.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !id_ok {
            return Err(FieldError::new("id", "a provider id is 1–64 letters, digits, '-' or '_'"));
        }
        if self.name.trim().is_empty() {
            return Err(FieldError::new("name", "give the provider a name"));
        }
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
            return Err(FieldError::new("baseUrl", format!("the base URL {url:?} must start with http:// or https://")));
        }
        if self.destination().is_none() {
            return Err(FieldError::new("baseUrl", format!("the base URL {url:?} is not a URL with a host")));
        }
        if self.plain_http_unconfirmed() {
            return Err(FieldError::new(
                "allowPlainHttp",
                "http:// to another machine sends your key and chats unencrypted: use https://, or turn on plain HTTP for this provider",
            ));
        }
        if self.context_length == Some(0) {
            return Err(FieldError::new("contextLength", "a context length must be above 0"));
        }
        Ok(())
    }
}

/// What a model file is called wherever Hearth names it (the engine, the library, a chat, the
/// server's model ids): its file name without the extension, which names the quantization too,
/// unlike the GGUF's `general.name`.
pub fn model_name(path: &str) -> String {
    std::path::Path::new(path).file_stem().map_or(path.to_owned(), |s| s.to_string_lossy().into_owned())
}

/// Where a chat's replies come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ModelTarget {
    /// The local engine, with the chat's model file: loaded before the chat's replies when
    /// another is loaded. `None` (a chat that has not answered locally yet): the loaded model.
    Local {
        #[serde(default)]
        model: Option<String>,
    },
    /// `model` at the provider with id `provider`.
    Remote { provider: String, model: String },
}

impl Default for ModelTarget {
    fn default() -> Self {
        ModelTarget::LOADED
    }
}

impl ModelTarget {
    /// The local engine with whichever model is loaded.
    pub const LOADED: ModelTarget = ModelTarget::Local { model: None };

    /// What the local model file this target names is called ([`model_name`]), if it names one.
    pub fn local_model_name(&self) -> Option<String> {
        self.local_model().map(model_name)
    }

    /// The local model file this target names, if it names one.
    pub fn local_model(&self) -> Option<&str> {
        match self {
            ModelTarget::Local { model } => model.as_deref(),
            ModelTarget::Remote { .. } => None,
        }
    }
}

/// What went wrong talking to a provider. Messages say what happened and what to do, and never
/// hold the API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum ProviderError {
    #[error("no provider {id:?} is configured; pick another model for this chat")]
    UnknownProvider { id: String },
    #[error("{provider} needs an API key: add it in Settings → Providers")]
    NoKey { provider: String },
    #[error("{provider} refused the API key (401): {detail}. Check the key in Settings → Providers")]
    Unauthorized { provider: String, detail: String },
    #[error("{provider} does not allow this key to do that (403): {detail}. Check the key's permissions or your plan")]
    Forbidden { provider: String, detail: String },
    #[error("{provider} has no model {model:?} (404): {detail}. Pick another model")]
    ModelNotFound { provider: String, model: String, detail: String },
    #[error("{provider} is rate limiting requests (429){}: {detail}", retry_hint(*retry_after_s))]
    RateLimited { provider: String, retry_after_s: Option<u64>, detail: String },
    #[error("{provider} refused the request ({status}): {detail}")]
    BadRequest { provider: String, status: u16, detail: String },
    #[error("{provider} failed on its side ({status}): {detail}. Try again in a moment")]
    Server { provider: String, status: u16, detail: String },
    #[error("{provider} did not answer within {seconds} s. Try again, or check the server")]
    Timeout { provider: String, seconds: u64 },
    #[error("could not reach {provider} at {url}: {detail}. Check the network connection and the base URL")]
    Unreachable { provider: String, url: String, detail: String },
    #[error("the connection to {provider} broke off in the middle of the reply; the text so far is kept. Retry to get a whole reply")]
    StreamCut { provider: String },
    #[error("{provider} sent something Hearth could not read: {detail}")]
    Malformed { provider: String, detail: String },
    #[error(
        "{provider}'s base URL {url} is plain http:// to another machine: your key and chats would travel unencrypted. Use https://, or turn on plain HTTP for it in Settings → Providers"
    )]
    PlainHttp { provider: String, url: String },
    #[error(
        "{provider} redirected the request to another host ({to}); Hearth does not send your key there. If you trust it, make it the base URL"
    )]
    Redirected { provider: String, to: String },
}

fn retry_hint(retry_after_s: Option<u64>) -> String {
    match retry_after_s {
        Some(s) => format!("; it asks to wait {s} s before retrying"),
        None => "; wait a little before retrying".into(),
    }
}

impl ProviderError {
    /// Seconds the provider asked to wait before the next request, if it said.
    pub fn retry_after_s(&self) -> Option<u64> {
        match self {
            ProviderError::RateLimited { retry_after_s, .. } => *retry_after_s,
            _ => None,
        }
    }
}

/// Whether a sampling setting reaches the model behind a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FieldSupport {
    /// The setting's key in `SamplingParams` (camelCase).
    pub field: String,
    pub supported: bool,
    /// Why it is not (shown as a tooltip), or how it is sent; empty when there is nothing to say.
    pub note: String,
}

/// Sampling settings every Chat Completions server takes.
const OPENAI_FIELDS: &[&str] =
    &["temperature", "topP", "presencePenalty", "frequencyPenalty", "seed", "maxTokens", "stop", "logitBias", "constraint", "overflow"];
/// What llama.cpp's server takes on top.
const LLAMA_CPP_FIELDS: &[&str] = &[
    "dynatempRange",
    "dynatempExponent",
    "topK",
    "minP",
    "typicalP",
    "topNSigma",
    "xtcProbability",
    "xtcThreshold",
    "dryMultiplier",
    "dryBase",
    "dryAllowedLength",
    "dryLastN",
    "drySequenceBreakers",
    "mirostat",
    "mirostatTau",
    "mirostatEta",
    "repeatPenalty",
    "repeatLastN",
    "ignoreEos",
    "samplerOrder",
    "topProbs",
    "reasoningBudget",
];
/// What Hearth does around any provider's replies (nothing of it is sent).
const HEARTH_FIELDS: &[&str] = &["maxToolRounds"];
const ANTHROPIC_FIELDS: &[&str] = &["temperature", "topP", "topK", "maxTokens", "stop", "overflow"];

/// Every sampling setting, in the order of `SamplingParams`.
pub const SAMPLING_FIELDS: &[&str] = &[
    "temperature",
    "dynatempRange",
    "dynatempExponent",
    "topK",
    "topP",
    "minP",
    "typicalP",
    "topNSigma",
    "xtcProbability",
    "xtcThreshold",
    "dryMultiplier",
    "dryBase",
    "dryAllowedLength",
    "dryLastN",
    "drySequenceBreakers",
    "mirostat",
    "mirostatTau",
    "mirostatEta",
    "repeatPenalty",
    "repeatLastN",
    "presencePenalty",
    "frequencyPenalty",
    "logitBias",
    "seed",
    "maxTokens",
    "ignoreEos",
    "stop",
    "constraint",
    "samplerOrder",
    "overflow",
    "topProbs",
    // Done by Hearth around every provider's replies.
    "maxToolRounds",
    // Each API has its own control, not yet sent.
    "reasoningBudget",
    // From here on: decoding Hearth's own engine does, which no provider's API takes.
    "speculative",
    "draftMax",
    "draftModel",
    "strategy",
    "mbrCandidates",
    "mbrUtility",
    "beamWidth",
    "lengthPenalty",
    "earlyStopping",
    "nBest",
];

/// Whether only Hearth's own engine does what `field` sets (see [`SAMPLING_FIELDS`]).
fn local_only(field: &str) -> bool {
    SAMPLING_FIELDS.iter().skip_while(|f| **f != "speculative").any(|f| *f == field)
}

/// Which sampling settings reach a local model whose template reasons as `reasoning`: all of
/// them, but a reasoning budget only where the model reasons in a way Hearth bounds.
pub fn local_sampling_support(reasoning: ReasoningFormat) -> Vec<FieldSupport> {
    let mut support = sampling_support(None);
    if let Some(budget) = support.iter_mut().find(|s| s.field == "reasoningBudget") {
        (budget.supported, budget.note) = match reasoning {
            ReasoningFormat::ThinkTags { switchable: true } => (true, "off also switches thinking off in the model's template".into()),
            ReasoningFormat::ThinkTags { switchable: false } => (true, "off closes the reasoning as soon as the model opens it".into()),
            ReasoningFormat::Channels => (
                true,
                "gpt-oss always reasons: off closes its reasoning as soon as it opens; a budget also sets its reasoning effort".into(),
            ),
            ReasoningFormat::None => (false, "this model's chat template has no reasoning: there is nothing to bound".into()),
        };
    }
    support
}

/// Which settings a provider takes. The local engine takes all of them.
pub fn sampling_support(provider: Option<&ProviderConfig>) -> Vec<FieldSupport> {
    let Some(config) = provider else {
        return SAMPLING_FIELDS.iter().map(|f| FieldSupport { field: (*f).into(), supported: true, note: String::new() }).collect();
    };
    let name = &config.name;
    SAMPLING_FIELDS
        .iter()
        .map(|&field| {
            let (supported, note) = match config.kind {
                _ if HEARTH_FIELDS.contains(&field) => (true, String::new()),
                ProviderKind::OpenAi if field == "reasoningBudget" => (true, effort_note()),
                ProviderKind::Anthropic if field == "reasoningBudget" => (true, thinking_note()),
                _ if local_only(field) => {
                    (false, format!("done by Hearth's local engine; {name}'s replies are written without it (it is not sent)"))
                }
                ProviderKind::Anthropic => match field {
                    f if ANTHROPIC_FIELDS.contains(&f) => (true, anthropic_note(f)),
                    _ => (false, format!("{name} (Anthropic's Messages API) has no such setting; it is not sent")),
                },
                ProviderKind::OpenAi => match field {
                    f if OPENAI_FIELDS.contains(&f) => (true, openai_note(f)),
                    _ => (false, format!("{name} (OpenAI's Chat Completions API) has no such setting; it is not sent")),
                },
                ProviderKind::OpenAiCompatible => match field {
                    f if OPENAI_FIELDS.contains(&f) => (true, openai_note(f)),
                    f if LLAMA_CPP_FIELDS.contains(&f) && config.extensions => {
                        (true, "sent as a llama.cpp server field; servers that do not know it ignore or refuse it".into())
                    }
                    _ => (false, format!("{name} is not set to receive llama.cpp sampler fields (Settings → Providers); it is not sent")),
                },
            };
            FieldSupport { field: field.into(), supported, note }
        })
        .collect()
}

fn openai_note(field: &str) -> String {
    match field {
        "logitBias" => "token-id biases only; biases by text need the model's tokenizer and are refused".into(),
        "constraint" => "JSON schemas are sent as a structured-output response format; GBNF grammars only with llama.cpp fields on".into(),
        "stop" => "OpenAI takes at most 4 stop strings".into(),
        _ => String::new(),
    }
}

/// How a reasoning budget reaches OpenAI (`reasoning::reasoning_effort`).
fn effort_note() -> String {
    let bounds: Vec<String> = REASONING_EFFORTS
        .iter()
        .map(|(bound, effort)| if *bound == 0 { format!("0 → {effort}") } else { format!("up to {bound} → {effort}") })
        .collect();
    format!("sent as reasoning_effort: {}, more → high; no limit sends none; models that do not reason refuse it", bounds.join(", "))
}

/// How a reasoning budget reaches Anthropic (`reasoning::anthropic_thinking_budget`).
fn thinking_note() -> String {
    format!(
        "a budget turns extended thinking on (at least {ANTHROPIC_THINKING_MIN} tokens; max tokens grows by it; temperature, \
         top-k and a forced tool are not sent with it); no limit or off leaves it off"
    )
}

fn anthropic_note(field: &str) -> String {
    match field {
        "temperature" => "Anthropic takes 0–1".into(),
        "overflow" => "applied by Hearth before sending".into(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(kind: ProviderKind, extensions: bool) -> ProviderConfig {
        ProviderConfig { extensions, ..ProviderConfig::new("p", "P", kind) }
    }

    #[test]
    fn plain_http_off_this_machine_needs_a_yes_and_keys_stay_with_their_host() {
        let at = |url: &str| ProviderConfig { base_url: url.into(), ..ProviderConfig::new("p", "P", ProviderKind::OpenAiCompatible) };
        // (base URL, needs the user's yes)
        for (url, unconfirmed) in [
            ("http://127.0.0.1:8080/v1", false),
            ("http://localhost:11434/v1", false),
            ("http://[::1]:8080/v1", false),
            ("https://api.groq.com/openai/v1", false),
            ("http://192.168.1.20:8000/v1", true),
            ("http://llm.example.org/v1", true),
            ("http://127.0.0.1.example.org/v1", true),
        ] {
            assert_eq!(at(url).plain_http_unconfirmed(), unconfirmed, "{url}");
            assert_eq!(at(url).validate().is_err(), unconfirmed, "{url}");
            assert!(ProviderConfig { allow_plain_http: true, ..at(url) }.validate().is_ok(), "{url}");
        }
        assert_eq!(at("http://").validate().unwrap_err().field, "baseUrl");
        // (from, to, the key goes along)
        for (from, to, same) in [
            ("https://api.openai.com/v1", "https://api.openai.com/v2/", true),
            ("https://api.openai.com/v1", "https://api.openai.com:443/v1", true),
            ("https://api.openai.com/v1", "https://evil.example/v1", false),
            ("https://api.openai.com/v1", "http://api.openai.com/v1", false),
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1", false),
        ] {
            assert_eq!(at(from).same_destination(&at(to)), same, "{from} → {to}");
        }
    }

    #[test]
    fn every_setting_is_either_sent_or_said_to_be_unsupported() {
        for (kind, extensions, sent) in [
            (ProviderKind::OpenAi, false, OPENAI_FIELDS.len() + HEARTH_FIELDS.len() + 1),
            (ProviderKind::OpenAiCompatible, false, OPENAI_FIELDS.len() + HEARTH_FIELDS.len()),
            (ProviderKind::OpenAiCompatible, true, OPENAI_FIELDS.len() + LLAMA_CPP_FIELDS.len() + HEARTH_FIELDS.len()),
            (ProviderKind::Anthropic, false, ANTHROPIC_FIELDS.len() + HEARTH_FIELDS.len() + 1),
        ] {
            let support = sampling_support(Some(&config(kind, extensions)));
            assert_eq!(support.len(), SAMPLING_FIELDS.len());
            assert_eq!(support.iter().filter(|s| s.supported).count(), sent, "{kind:?} {extensions}");
            assert!(support.iter().all(|s| s.supported || s.note.contains("not sent")), "{kind:?}");
        }
        assert!(sampling_support(None).iter().all(|s| s.supported));
    }

    #[test]
    fn a_local_model_takes_a_reasoning_budget_only_where_it_reasons() {
        for (reasoning, supported) in [
            (ReasoningFormat::ThinkTags { switchable: true }, true),
            (ReasoningFormat::ThinkTags { switchable: false }, true),
            (ReasoningFormat::Channels, true),
            (ReasoningFormat::None, false),
        ] {
            let support = local_sampling_support(reasoning);
            let (budget, others): (Vec<_>, Vec<_>) = support.iter().partition(|s| s.field == "reasoningBudget");
            assert_eq!(budget[0].supported, supported, "{reasoning:?}");
            assert!(!budget[0].note.is_empty(), "{reasoning:?}: said why");
            assert!(others.iter().all(|s| s.supported), "{reasoning:?}");
        }
    }

    #[test]
    fn the_field_list_matches_sampling_params() {
        let json = serde_json::to_value(crate::SamplingParams::default()).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected: Vec<&str> = SAMPLING_FIELDS.to_vec();
        let mut got = keys.clone();
        expected.sort();
        got.sort();
        assert_eq!(got, expected);
        for field in OPENAI_FIELDS.iter().chain(LLAMA_CPP_FIELDS).chain(ANTHROPIC_FIELDS).chain(HEARTH_FIELDS) {
            assert!(SAMPLING_FIELDS.contains(field) && !local_only(field), "{field}");
        }
        assert!(["speculative", "strategy", "nBest"].iter().all(|f| local_only(f)));
    }

    #[test]
    fn configs_are_validated() {
        let good = config(ProviderKind::OpenAiCompatible, true);
        assert_eq!(good.validate(), Ok(()));
        let keys = serde_json::to_value(&good).unwrap();
        for (change, words, field) in [
            (Box::new(|c: &mut ProviderConfig| c.id = "a b".into()) as Box<dyn Fn(&mut ProviderConfig)>, "provider id", "id"),
            (Box::new(|c: &mut ProviderConfig| c.name = " ".into()), "name", "name"),
            (Box::new(|c: &mut ProviderConfig| c.base_url = "ftp://x.example".into()), "http://", "baseUrl"),
            (Box::new(|c: &mut ProviderConfig| c.context_length = Some(0)), "above 0", "contextLength"),
        ] {
            let mut bad = good.clone();
            change(&mut bad);
            let err = bad.validate().unwrap_err();
            assert!(err.message.contains(words), "{words}");
            assert_eq!(err.field, field);
            assert!(keys.get(field).is_some(), "{field} is one of the config's fields");
        }
    }

    #[test]
    fn rate_limit_messages_say_how_long_to_wait() {
        let e = ProviderError::RateLimited { provider: "OpenAI".into(), retry_after_s: Some(20), detail: "slow down".into() };
        assert_eq!(e.to_string(), "OpenAI is rate limiting requests (429); it asks to wait 20 s before retrying: slow down");
        assert_eq!(e.retry_after_s(), Some(20));
    }
}
