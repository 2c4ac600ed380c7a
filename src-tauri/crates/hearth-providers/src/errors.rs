//! Turning what a provider answers (status, headers, error body) and what the network does into
//! a typed [`ProviderError`] a user can act on.

use std::time::Duration;

use hearth_core::ProviderError;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// Longest excerpt of an error body shown.
const DETAIL_CHARS: usize = 300;

/// Who is being talked to, for the words of an error: the provider's name, the model, and the
/// key (scrubbed from anything a server echoes back).
pub struct Context<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    pub key: Option<&'a str>,
}

impl Context<'_> {
    /// A server's words made safe to show: one line, bounded, the key masked.
    pub fn detail(&self, text: &str) -> String {
        // One line; no closing period, as the message goes on after it.
        let mut text = text.split_whitespace().collect::<Vec<_>>().join(" ").trim_end_matches('.').to_owned();
        if let Some(key) = self.key.filter(|k| k.len() >= 4) {
            text = text.replace(key, "[key]");
        }
        match text.char_indices().nth(DETAIL_CHARS) {
            Some((end, _)) => format!("{}…", &text[..end]),
            None if text.is_empty() => "no details given".into(),
            None => text,
        }
    }

    /// The error for a non-success HTTP answer.
    pub fn for_status(&self, status: StatusCode, headers: &HeaderMap, body: &str) -> ProviderError {
        let provider = self.provider.to_owned();
        let detail = self.detail(&error_message(body).unwrap_or_else(|| body.to_owned()));
        match status.as_u16() {
            401 => ProviderError::Unauthorized { provider, detail },
            403 => ProviderError::Forbidden { provider, detail },
            404 => ProviderError::ModelNotFound { provider, model: self.model.to_owned(), detail },
            429 => ProviderError::RateLimited { provider, retry_after_s: retry_after(headers), detail },
            // Anthropic's "overloaded" is a 529; every 5xx is the provider's side.
            code @ 500..=599 => ProviderError::Server { provider, status: code, detail },
            code => ProviderError::BadRequest { provider, status: code, detail },
        }
    }

    /// The error for an `error` event inside a stream that began well.
    pub fn for_stream_error(&self, body: &str) -> ProviderError {
        let detail = self.detail(&error_message(body).unwrap_or_else(|| body.to_owned()));
        let kind = serde_json::from_str::<serde_json::Value>(body).ok().and_then(|v| {
            let error = v.get("error")?;
            error.get("type").or_else(|| error.get("code")).and_then(|t| t.as_str()).map(str::to_owned)
        });
        let provider = self.provider.to_owned();
        match kind.as_deref() {
            Some("rate_limit_error" | "rate_limit_exceeded") => ProviderError::RateLimited { provider, retry_after_s: None, detail },
            Some("overloaded_error" | "api_error" | "server_error") => ProviderError::Server { provider, status: 529, detail },
            _ => ProviderError::Malformed { provider, detail: format!("the stream ended with an error: {detail}") },
        }
    }

    /// The error for a request that failed in transport (no answer, or a broken one).
    pub fn for_transport(&self, error: &reqwest::Error, url: &str, timeout: Duration) -> ProviderError {
        let provider = self.provider.to_owned();
        if let Some(OtherHost(to)) = find_source::<OtherHost>(error) {
            return ProviderError::Redirected { provider, to: to.clone() };
        }
        if error.is_timeout() {
            return ProviderError::Timeout { provider, seconds: timeout.as_secs().max(1) };
        }
        if error.is_connect() || error.is_builder() || error.is_request() && !error.is_body() {
            return ProviderError::Unreachable { provider, url: url.to_owned(), detail: self.detail(&root_cause(error)) };
        }
        if error.is_body() || error.is_decode() {
            return ProviderError::StreamCut { provider };
        }
        ProviderError::Unreachable { provider, url: url.to_owned(), detail: self.detail(&root_cause(error)) }
    }

    pub fn malformed(&self, what: impl std::fmt::Display) -> ProviderError {
        ProviderError::Malformed { provider: self.provider.to_owned(), detail: self.detail(&what.to_string()) }
    }

    pub fn timeout(&self, after: Duration) -> ProviderError {
        ProviderError::Timeout { provider: self.provider.to_owned(), seconds: after.as_secs().max(1) }
    }

    pub fn stream_cut(&self) -> ProviderError {
        ProviderError::StreamCut { provider: self.provider.to_owned() }
    }
}

/// The message inside an OpenAI (`{"error":{"message":…}}`), Anthropic
/// (`{"type":"error","error":{"message":…}}`) or plain (`{"message":…}`, `{"error":"…"}`) body.
fn error_message(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let error = value.get("error").unwrap_or(&value);
    error
        .get("message")
        .and_then(|m| m.as_str())
        .or_else(|| error.as_str())
        .or_else(|| value.get("detail").and_then(|d| d.as_str()))
        .map(str::to_owned)
}

/// `Retry-After` in seconds (the delta form; an HTTP date counts as unknown).
fn retry_after(headers: &HeaderMap) -> Option<u64> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    value.parse::<u64>().ok().or_else(|| value.parse::<f64>().ok().filter(|s| *s >= 0.0).map(|s| s.ceil() as u64))
}

/// The innermost cause's words ("Connection refused (os error 111)"), which say more than the top.
/// A redirect to another host than the request's: refused, since the request carries the key.
#[derive(Debug, thiserror::Error)]
#[error("a redirect to another host ({0})")]
pub struct OtherHost(pub String);

/// The redirect policy of every provider request: within the same scheme, host and port only
/// (reqwest drops `Authorization` on a cross-host redirect, but not `x-api-key` or `api-key`).
pub fn same_host_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let to = attempt.url();
        let same = attempt.previous().first().is_some_and(|from| {
            (from.scheme(), from.host_str(), from.port_or_known_default()) == (to.scheme(), to.host_str(), to.port_or_known_default())
        });
        match (same, attempt.previous().len()) {
            (_, 10..) => attempt.error("more than 10 redirects"),
            (true, _) => attempt.follow(),
            (false, _) => {
                let to = to.authority().to_owned();
                attempt.error(OtherHost(to))
            }
        }
    })
}

fn find_source<E: std::error::Error + 'static>(error: &reqwest::Error) -> Option<&E> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(found) = e.downcast_ref::<E>() {
            return Some(found);
        }
        source = e.source();
    }
    None
}

fn root_cause(error: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = error;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> Context<'static> {
        Context { provider: "OpenAI", model: "gpt-x", key: Some("sk-secret-123") }
    }

    #[test]
    fn statuses_become_typed_errors_with_the_servers_words() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "7".parse().unwrap());
        let openai =
            r#"{"error":{"message":"Incorrect API key provided: sk-secret-123","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        let anthropic = r#"{"type":"error","error":{"type":"not_found_error","message":"model: gpt-x"}}"#;
        let cases: &[(u16, &str, &str)] = &[
            (401, openai, "OpenAI refused the API key (401): Incorrect API key provided: [key]. Check the key in Settings → Providers"),
            (
                403,
                r#"{"error":"forbidden"}"#,
                "OpenAI does not allow this key to do that (403): forbidden. Check the key's permissions or your plan",
            ),
            (404, anthropic, "OpenAI has no model \"gpt-x\" (404): model: gpt-x. Pick another model"),
            (
                429,
                r#"{"error":{"message":"Rate limit reached"}}"#,
                "OpenAI is rate limiting requests (429); it asks to wait 7 s before retrying: Rate limit reached",
            ),
            (
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                "OpenAI failed on its side (529): Overloaded. Try again in a moment",
            ),
            (400, "not json at all", "OpenAI refused the request (400): not json at all"),
            (500, "", "OpenAI failed on its side (500): no details given. Try again in a moment"),
        ];
        for (status, body, expected) in cases {
            let error = context().for_status(StatusCode::from_u16(*status).unwrap(), &headers, body);
            assert_eq!(error.to_string(), *expected, "{status}");
        }
    }

    #[test]
    fn details_are_one_bounded_line_without_the_key() {
        let long = format!("line one\n\nsk-secret-123 {}", "x".repeat(1000));
        let detail = context().detail(&long);
        assert!(detail.starts_with("line one [key] x"));
        assert_eq!(detail.chars().count(), DETAIL_CHARS + 1);
        assert!(!detail.contains("sk-secret"));
    }

    #[test]
    fn retry_after_reads_seconds_and_ignores_dates() {
        for (value, expected) in [("12", Some(12)), ("1.5", Some(2)), ("Wed, 21 Oct 2015 07:28:00 GMT", None), ("-3", None)] {
            let mut headers = HeaderMap::new();
            headers.insert("retry-after", value.parse().unwrap());
            assert_eq!(retry_after(&headers), expected, "{value}");
        }
    }
}
