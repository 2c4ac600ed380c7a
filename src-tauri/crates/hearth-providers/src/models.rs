//! The models a provider offers, from its models endpoint (`GET {base}/models`), with the
//! context window where the listing says (OpenRouter's `context_length`, vLLM's
//! `max_model_len`). llama.cpp's server lists the length a model was trained for
//! (`meta.n_ctx_train`), but serves the context it was started with: that one comes from its
//! `/props`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use hearth_core::{CancelFlag, ProviderConfig, ProviderError};

use crate::body::{BODY_CAP, LIST_CAP, bounded_text};
use crate::errors::Context;
use crate::stream::Timeouts;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RemoteModel {
    pub id: String,
    /// Tokens the model's context holds, where the provider says.
    pub context_length: Option<u32>,
}

#[derive(Deserialize)]
struct Listing {
    data: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    id: String,
    context_length: Option<u32>,
    max_model_len: Option<u32>,
    meta: Option<Meta>,
}

#[derive(Deserialize)]
struct Meta {
    n_ctx_train: Option<u32>,
}

#[derive(Deserialize)]
struct Props {
    default_generation_settings: Option<GenerationSettings>,
}

#[derive(Deserialize)]
struct GenerationSettings {
    n_ctx: Option<u32>,
}

/// The context llama.cpp's server runs with (per slot), from `{origin}/props`; `None` where it
/// does not say.
async fn served_context(http: &reqwest::Client, config: &ProviderConfig, key: Option<&str>, timeouts: Timeouts) -> Option<u32> {
    let base = config.base_url.trim().trim_end_matches('/');
    let url = format!("{}/props", base.strip_suffix("/v1").unwrap_or(base));
    let request = crate::authorized(http.get(&url), config, key);
    let response = tokio::time::timeout(timeouts.response, request.send()).await.ok()?.ok()?.error_for_status().ok()?;
    let body = bounded_text(response, BODY_CAP, timeouts.idle, &CancelFlag::new()).await?;
    let props: Props = serde_json::from_str(&body.text).ok()?;
    props.default_generation_settings?.n_ctx.filter(|n| *n > 0)
}

pub async fn list(
    http: &reqwest::Client,
    config: &ProviderConfig,
    key: Option<&str>,
    timeouts: Timeouts,
) -> Result<Vec<RemoteModel>, ProviderError> {
    let context = Context { provider: &config.name, model: "", key };
    let url = crate::endpoint(config, "models");
    let request = crate::authorized(http.get(&url), config, key).query(&[("limit", "1000")]);
    let response = match tokio::time::timeout(timeouts.response, request.send()).await {
        Err(_) => return Err(context.timeout(timeouts.response)),
        Ok(Err(e)) => return Err(context.for_transport(&e, &url, timeouts.connect)),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    let headers = response.headers().clone();
    let cap = if status.is_success() { LIST_CAP } else { BODY_CAP };
    let body = bounded_text(response, cap, timeouts.idle, &CancelFlag::new()).await.expect("never cancelled");
    if status.is_success() && body.full {
        return Err(context.malformed(format!("the model list is longer than {} MiB", LIST_CAP >> 20)));
    }
    let body = body.text;
    if !status.is_success() {
        return Err(match context.for_status(status, &headers, &body) {
            // A 404 here is the endpoint, not a model.
            ProviderError::ModelNotFound { provider, detail, .. } => ProviderError::BadRequest {
                provider,
                status: 404,
                detail: format!("no models endpoint at {url} ({detail}); check the base URL, or type the model names in"),
            },
            other => other,
        });
    }
    let listing: Listing =
        serde_json::from_str(&body).map_err(|e| context.malformed(format!("the model list is not as documented: {e}")))?;
    let llama_cpp = listing.data.iter().any(|e| e.meta.is_some());
    let served = if llama_cpp { served_context(http, config, key, timeouts).await } else { None };
    let mut models: Vec<RemoteModel> = listing
        .data
        .into_iter()
        .map(|e| RemoteModel {
            context_length: e.context_length.or(e.max_model_len).or(served).or(e.meta.and_then(|m| m.n_ctx_train)),
            id: e.id,
        })
        .collect();
    models.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(models)
}
