//! Errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}` with the status
//! OpenAI gives, so clients (the official `openai` library among them) raise what they would.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;

use hearth_core::BackendError;

#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    #[serde(skip)]
    pub status: u16,
    pub message: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub param: Option<String>,
    pub code: Option<&'static str>,
    /// Seconds to wait before asking again, sent as `Retry-After`.
    #[serde(skip)]
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// 400: the request itself is wrong; `param` names the field when one is at fault.
    pub fn invalid(param: Option<&str>, message: impl Into<String>) -> Self {
        ApiError {
            status: 400,
            message: message.into(),
            kind: "invalid_request_error",
            param: param.map(str::to_owned),
            code: None,
            retry_after: None,
        }
    }

    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    pub fn unauthorized() -> Self {
        ApiError {
            status: 401,
            message: "a valid API key is needed: send it as `Authorization: Bearer <key>` (Hearth's server settings show it)".into(),
            kind: "invalid_request_error",
            param: None,
            code: Some("invalid_api_key"),
            retry_after: None,
        }
    }

    /// 403: who asks (a web page, a name that is not this machine's) may not use the server.
    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError { status: 403, code: Some("forbidden"), ..ApiError::invalid(None, message) }
    }

    pub fn model_not_found(model: &str, loaded: Option<&str>) -> Self {
        let message = match loaded {
            Some(loaded) => format!("the model `{model}` does not exist here: the loaded model is `{loaded}` (GET /v1/models lists it)"),
            None => format!("the model `{model}` cannot be used: no model is loaded in Hearth"),
        };
        ApiError { status: 404, code: Some("model_not_found"), ..ApiError::invalid(Some("model"), message) }
    }

    /// A model of the library that a request asked for did not load.
    pub fn model_load_failed(model: &str, why: &str) -> Self {
        ApiError { code: Some("model_load_failed"), ..ApiError::server(format!("the model `{model}` could not be loaded: {why}")) }
    }

    pub fn not_found(path: &str) -> Self {
        ApiError { status: 404, ..ApiError::invalid(None, format!("there is no endpoint at {path}")) }
    }

    pub fn server(message: impl Into<String>) -> Self {
        ApiError { status: 500, kind: "server_error", ..ApiError::invalid(None, message) }
    }

    /// 429: every slot for a request is taken; the client may ask again in a second.
    pub fn too_many(slots: usize) -> Self {
        ApiError {
            status: 429,
            kind: "requests",
            code: Some("rate_limit_exceeded"),
            retry_after: Some(1),
            ..ApiError::invalid(None, format!("{slots} requests are being answered or waiting already: send this one again shortly"))
        }
    }

    /// 503: the server cannot answer now; a client may ask again after `retry_after` seconds.
    pub fn unavailable(message: impl Into<String>, retry_after: Option<u64>) -> Self {
        ApiError { status: 503, retry_after, ..ApiError::server(message) }
    }

    /// The `data:` payload of an error in the middle of a stream.
    pub fn body(&self) -> serde_json::Value {
        json!({ "error": self })
    }
}

impl From<BackendError> for ApiError {
    fn from(e: BackendError) -> Self {
        match e {
            BackendError::ContextOverflow { .. } => ApiError::invalid(Some("messages"), e.to_string()).with_code("context_length_exceeded"),
            BackendError::InvalidRequest(message) => ApiError::invalid(None, message),
            BackendError::DraftModel { .. } => ApiError::invalid(None, e.to_string()),
            BackendError::NoModel => ApiError::unavailable(e.to_string(), None),
            BackendError::EngineRestarting { retry_after_s, .. } => ApiError::unavailable(e.to_string(), Some(retry_after_s)),
            other => ApiError::server(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after = self.retry_after.map(|seconds| [(axum::http::header::RETRY_AFTER, seconds.to_string())]);
        (status, retry_after, Json(self.body())).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_errors_get_openai_statuses_and_a_wait_when_one_is_known() {
        let restarting = BackendError::EngineRestarting { cause: "the engine has died 3 times in a row".into(), retry_after_s: 4 };
        // (error, status, Retry-After)
        let cases = [
            (BackendError::NoModel, 503, None),
            (restarting, 503, Some("4")),
            (BackendError::ContextOverflow { tokens: 9, n_ctx: 8 }, 400, None),
            (BackendError::EngineCrashed { cause: "killed".into() }, 500, None),
        ];
        for (error, status, retry_after) in cases {
            let response = ApiError::from(error.clone()).into_response();
            assert_eq!(response.status().as_u16(), status, "{error:?}");
            let header = response.headers().get(axum::http::header::RETRY_AFTER).map(|v| v.to_str().unwrap());
            assert_eq!(header, retry_after, "{error:?}");
        }
    }
}
