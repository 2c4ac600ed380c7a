//! Tokenizers of open-weight models served remotely (vLLM, Groq, OpenRouter, llama.cpp's
//! server …): `tokenizer.json` fetched through hf-hub into the standard Hugging Face cache, loaded
//! once, kept. A repository that cannot be fetched is not asked again for a while; the count
//! falls back to the estimate meanwhile.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hf_hub::HFClient;
use tokenizers::Tokenizer;
use tokio::time::Instant;

use crate::budget::Counter;

/// Longest wait for a tokenizer before a reply goes ahead with the estimate.
const FETCH_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a repository that failed is left alone.
const RETRY_AFTER: Duration = Duration::from_secs(600);

/// Where tokenizers come from.
#[derive(Debug, Clone, Default)]
pub struct HubOptions {
    /// The hub's base URL; `None`: `HF_ENDPOINT` or huggingface.co.
    pub endpoint: Option<String>,
    /// `None`: the standard cache (`HF_HUB_CACHE`, `$HF_HOME/hub`, ~/.cache/huggingface/hub).
    pub cache_dir: Option<PathBuf>,
}

enum Slot {
    Ready(Arc<Tokenizer>),
    Failed(Instant),
}

pub struct Tokenizers {
    hub: Option<HFClient>,
    slots: Mutex<HashMap<String, Slot>>,
}

impl Tokenizers {
    pub fn new(options: &HubOptions) -> Self {
        let mut builder = HFClient::builder().retry_max_attempts(2);
        if let Some(endpoint) = &options.endpoint {
            builder = builder.endpoint(endpoint.clone());
        }
        if let Some(dir) = &options.cache_dir {
            builder = builder.cache_dir(dir.clone());
        }
        let hub = builder.build().map_err(|e| tracing::warn!(error = %e, "no Hugging Face client: remote token counts are estimates")).ok();
        Tokenizers { hub, slots: Mutex::new(HashMap::new()) }
    }

    /// The counter for `repo` ("owner/name"), or the estimate.
    pub async fn counter(&self, repo: Option<&str>) -> Counter {
        let Some(repo) = repo.filter(|r| looks_like_repo(r)) else { return Counter::Estimate };
        match self.slots.lock().expect("tokenizer slots poisoned").get(repo) {
            Some(Slot::Ready(tokenizer)) => return Counter::Tokenizer(tokenizer.clone()),
            Some(Slot::Failed(at)) if at.elapsed() < RETRY_AFTER => return Counter::Estimate,
            _ => {}
        }
        let slot = match tokio::time::timeout(FETCH_TIMEOUT, self.fetch(repo)).await {
            Ok(Ok(tokenizer)) => {
                tracing::info!(repo, "counting tokens with the model's tokenizer");
                Slot::Ready(Arc::new(tokenizer))
            }
            Ok(Err(e)) => {
                tracing::warn!(repo, error = %e, "no tokenizer: token counts are estimates");
                Slot::Failed(Instant::now())
            }
            Err(_) => {
                tracing::warn!(repo, "the tokenizer took too long to fetch: token counts are estimates");
                Slot::Failed(Instant::now())
            }
        };
        let counter = match &slot {
            Slot::Ready(tokenizer) => Counter::Tokenizer(tokenizer.clone()),
            Slot::Failed(_) => Counter::Estimate,
        };
        self.slots.lock().expect("tokenizer slots poisoned").insert(repo.to_owned(), slot);
        counter
    }

    async fn fetch(&self, repo: &str) -> Result<Tokenizer, Box<dyn std::error::Error + Send + Sync>> {
        let hub = self.hub.as_ref().ok_or("no Hugging Face client")?;
        let (owner, name) = hf_hub::split_id(repo);
        let path = hub.model(owner, name).download_file().filename("tokenizer.json").send().await?;
        tokio::task::spawn_blocking(move || Tokenizer::from_file(&path)).await?.map_err(|e| e.to_string().into())
    }
}

/// "owner/name" with characters the hub allows.
fn looks_like_repo(id: &str) -> bool {
    let ok = |part: &str| {
        !part.is_empty()
            && part.len() <= 96
            && part.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && !part.starts_with('.')
    };
    matches!(id.split_once('/'), Some((owner, name)) if ok(owner) && ok(name))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_repository_shaped_ids_are_fetched() {
        for (id, expected) in [
            ("HuggingFaceTB/SmolLM2-135M-Instruct", true),
            ("Qwen/Qwen2.5-7B-Instruct", true),
            ("gpt-4o", false),
            ("a/b/c", false),
            ("../etc", false),
            ("owner/..", false),
            ("meta-llama/llama-3.1-8b-instruct:free", false),
        ] {
            assert_eq!(super::looks_like_repo(id), expected, "{id}");
        }
    }
}
