//! Remote chat providers behind hearth-core's [`ChatBackend`]: OpenAI's Chat Completions,
//! Anthropic's Messages API, and any OpenAI-compatible server at its own base URL. Replies stream
//! over server-sent events; every failure becomes a typed [`ProviderError`]; the conversation is
//! trimmed to the model's context before it is sent; keys come from the OS keychain.

mod anthropic;
mod body;
mod budget;
mod errors;
mod keys;
pub mod llama_fields;
mod models;
mod openai;
mod stream;
mod tokenizer;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::mpsc;

use hearth_core::{BackendError, ChatBackend, ModelTarget, ProviderConfig, ProviderError, ProviderKind, ReplyRequest, ReplyStream};

/// A chat that cannot be put in a provider's request as it is (a setting the API does not take,
/// nothing to answer); the words say what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Unsendable(pub String);

pub use budget::Counter;
pub use keys::{FixedKeys, KeyError, KeySource, KeyStorage, KeyStore, RESERVED_PROVIDER_IDS, Secret};
pub use models::RemoteModel;
/// A chat completion request as Hearth sends it to an OpenAI-style server (Hearth's own server reads it back: hearth-server's tests).
pub use openai::body as openai_request_body;
pub use stream::Timeouts;
pub use tokenizer::HubOptions;

/// The configured providers and one HTTP client for all of them.
#[derive(Clone)]
pub struct Providers {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    configs: RwLock<Vec<ProviderConfig>>,
    keys: Arc<dyn KeySource>,
    timeouts: Timeouts,
    tokenizers: tokenizer::Tokenizers,
    /// Context windows the models endpoints reported, by (provider id, model).
    contexts: Mutex<HashMap<(String, String), u32>>,
    /// Providers whose models endpoint was asked this session.
    listed: Mutex<HashSet<String>>,
}

impl Providers {
    pub fn new(keys: Arc<dyn KeySource>, timeouts: Timeouts, hub: &HubOptions) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .redirect(errors::same_host_redirects())
            .user_agent(concat!("Hearth/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the HTTP client builds with a static configuration");
        Providers {
            inner: Arc::new(Inner {
                http,
                configs: RwLock::new(Vec::new()),
                keys,
                timeouts,
                tokenizers: tokenizer::Tokenizers::new(hub),
                contexts: Mutex::new(HashMap::new()),
                listed: Mutex::new(HashSet::new()),
            }),
        }
    }

    pub fn set_configs(&self, configs: Vec<ProviderConfig>) {
        *self.inner.configs.write().expect("configs poisoned") = configs;
    }

    pub fn configs(&self) -> Vec<ProviderConfig> {
        self.inner.configs.read().expect("configs poisoned").clone()
    }

    pub fn config(&self, id: &str) -> Result<ProviderConfig, ProviderError> {
        self.configs().into_iter().find(|c| c.id == id).ok_or_else(|| ProviderError::UnknownProvider { id: id.to_owned() })
    }

    /// The models `provider` offers: those its models endpoint lists, then those the user typed.
    pub async fn list_models(&self, provider: &str) -> Result<Vec<RemoteModel>, ProviderError> {
        let config = self.config(provider)?;
        let key = self.key(&config)?;
        self.inner.listed.lock().expect("listed poisoned").insert(config.id.clone());
        let mut listed = models::list(&self.inner.http, &config, key.as_deref(), self.inner.timeouts).await?;
        {
            let mut contexts = self.inner.contexts.lock().expect("contexts poisoned");
            for model in &listed {
                if let Some(n) = model.context_length {
                    contexts.insert((config.id.clone(), model.id.clone()), n);
                }
            }
        }
        for typed in &config.models {
            if !listed.iter().any(|m| &m.id == typed) {
                listed.push(RemoteModel { id: typed.clone(), context_length: None });
            }
        }
        Ok(listed)
    }

    /// How `model`'s tokens are counted at `config`: the tokenizer of its repository, or the
    /// estimate.
    async fn counter(&self, config: &ProviderConfig, model: &str) -> Counter {
        self.inner.tokenizers.counter(config.tokenizer_repo.as_deref().or(Some(model))).await
    }

    /// [`Self::counter`] by provider id, for callers that want to see how a prompt is counted.
    pub async fn token_counter(&self, provider: &str, model: &str) -> Result<Counter, ProviderError> {
        Ok(self.counter(&self.config(provider)?, model).await)
    }

    /// `provider`'s key, or `NoKey` where its API requires one.
    /// Every request asks for it first: nothing is sent over plain HTTP to another machine
    /// unless the user said yes.
    fn key(&self, config: &ProviderConfig) -> Result<Option<String>, ProviderError> {
        if config.plain_http_unconfirmed() {
            return Err(ProviderError::PlainHttp { provider: config.name.clone(), url: config.base_url.clone() });
        }
        let key = self.inner.keys.key(&config.id).unwrap_or_else(|e| {
            tracing::warn!(provider = %config.id, error = %e, "could not read the API key");
            None
        });
        let key = key.filter(|k| !k.trim().is_empty());
        if key.is_none() && config.kind.needs_key() {
            return Err(ProviderError::NoKey { provider: config.name.clone() });
        }
        Ok(key)
    }

    /// The context window to budget for: the user's figure, else the models endpoint's, else
    /// the kind's default.
    fn context_length(&self, config: &ProviderConfig, model: &str) -> u32 {
        config.context_length.unwrap_or_else(|| {
            let contexts = self.inner.contexts.lock().expect("contexts poisoned");
            contexts.get(&(config.id.clone(), model.to_owned())).copied().unwrap_or(config.kind.default_context_length())
        })
    }

    /// Builds and streams one reply; runs as its own task.
    async fn reply(
        &self,
        request: ReplyRequest,
        config: ProviderConfig,
        model: String,
        key: Option<String>,
        tx: mpsc::UnboundedSender<hearth_core::GenEvent>,
    ) {
        use hearth_core::GenEvent;
        let listed = self.inner.listed.lock().expect("listed poisoned").contains(&config.id);
        if !listed && config.context_length.is_none() {
            // Learn the model's context window once; a provider without a models endpoint keeps the default.
            let _ = tokio::time::timeout(self.inner.timeouts.connect, self.list_models(&config.id)).await;
        }
        let counter = tokio::select! {
            _ = request.cancel.cancelled() => {
                let _ = tx.send(GenEvent::Finished { reason: hearth_core::FinishReason::Cancelled, stats: Default::default() });
                return;
            }
            counter = self.counter(&config, &model) => counter,
        };
        let context_length = self.context_length(&config, &model);
        // Earlier replies go without their reasoning (DeepSeek's API refuses it; the others drop
        // it); a reply being continued goes as it is. Anthropic's body sends back what it signed.
        let mut sent = request.messages.clone();
        let past = sent.len() - usize::from(request.continue_last && !sent.is_empty());
        if config.kind != ProviderKind::Anthropic {
            hearth_core::drop_past_reasoning(&mut sent[..past]);
        }
        let fitted = budget::fit(&sent, request.sampling.overflow, context_length, request.sampling.max_tokens, &counter);
        let (messages, dropped) = match fitted {
            Ok(fitted) => fitted,
            Err(error) => {
                let _ = tx.send(GenEvent::Failed(error));
                return;
            }
        };
        tracing::info!(
            provider = %config.id, model, context_length, counted_with = counter.describe(), dropped,
            "sending a remote reply request"
        );
        let body = match config.kind {
            ProviderKind::Anthropic => anthropic::body(&model, &messages, &request.sampling, request.continue_last, request.tools.as_ref()),
            _ => openai::body(&config, &model, &messages, &request.sampling, request.continue_last, context_length, request.tools.as_ref()),
        };
        let body = match body {
            Ok(body) => body,
            Err(Unsendable(words)) => {
                let _ = tx.send(GenEvent::Failed(BackendError::InvalidRequest(words)));
                return;
            }
        };
        let (url, parser): (String, Box<dyn stream::Parser>) = match config.kind {
            ProviderKind::Anthropic => (endpoint(&config, "messages"), Box::new(anthropic::EventParser::default())),
            _ => (endpoint(&config, "chat/completions"), Box::new(openai::ChunkParser::default())),
        };
        let mut post = authorized(self.inner.http.post(&url), &config, key.as_deref());
        if config.kind == ProviderKind::Anthropic
            && let Some(betas) = anthropic::betas(&body)
        {
            post = post.header("anthropic-beta", betas);
        }
        let outgoing = stream::Outgoing {
            request: post.json(&body),
            url,
            provider: config.name.clone(),
            model,
            key,
            dropped_messages: dropped as u32,
            prompt_estimate: counter.count(&messages) as u32,
        };
        stream::run(outgoing, parser, self.inner.timeouts, request.cancel, tx).await;
    }
}

impl ChatBackend for Providers {
    fn start_reply(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        let ModelTarget::Remote { provider, model } = request.target.clone() else {
            return Err(BackendError::InvalidRequest("this chat answers with the local model".into()));
        };
        let config = self.config(&provider)?;
        let key = self.key(&config)?;
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| BackendError::Engine("no async runtime to stream the reply on".into()))?;
        let (tx, events) = mpsc::unbounded_channel();
        let display = format!("{model} ({})", config.name);
        let this = self.clone();
        runtime.spawn(async move { this.reply(request, config, model, key, tx).await });
        Ok(ReplyStream { model: display, events })
    }
}

/// `path` under the provider's base URL.
fn endpoint(config: &ProviderConfig, path: &str) -> String {
    format!("{}/{path}", config.base_url.trim().trim_end_matches('/'))
}

/// The request with the provider's authentication headers.
fn authorized(request: reqwest::RequestBuilder, config: &ProviderConfig, key: Option<&str>) -> reqwest::RequestBuilder {
    match (config.kind, key) {
        (ProviderKind::Anthropic, key) => {
            request.header("x-api-key", key.unwrap_or_default()).header("anthropic-version", anthropic::API_VERSION)
        }
        (_, Some(key)) => request.bearer_auth(key),
        (_, None) => request,
    }
}
