//! Who may reach the server from a web browser. Any page the user opens can make the browser send
//! requests to 127.0.0.1: through DNS rebinding (a name the page controls resolving to 127.0.0.1
//! — the class of Ollama's CVE-2024-28224) and through "simple" cross-site requests, which need no
//! preflight (a `text/plain` or typeless body, `fetch(…, {mode: 'no-cors'})`). So, before any
//! handler runs:
//! - on loopback, only a `Host` that names loopback is served (a rebound name is refused);
//! - a request with an `Origin` is served only when that origin is this machine's (a page served
//!   from localhost) or one the user allowed (`ServerConfig::allowed_origins`, empty by default);
//!   the allowed ones get CORS headers and their preflights are answered;
//! - a body must be declared `application/json`, which no simple request can be.
//!
//! Programs that are not browsers send no `Origin` and a loopback `Host`: they pass untouched.

use axum::extract::{Request, State};
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_MAX_AGE, CONTENT_TYPE, HOST,
    ORIGIN, VARY,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::ServerState;
use crate::error::ApiError;

/// What the guard lets through, from the server's configuration.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    /// Listening on loopback only: `Host` must name loopback.
    pub loopback_only: bool,
    /// Origins a browser page may call from besides this machine's, as `scheme://host[:port]`
    /// (`*`: any — the user's explicit choice).
    pub allowed_origins: Vec<String>,
}

/// An origin as the user typed it, in the form browsers send (`scheme://host[:port]`, lower
/// case, no path), or `*`; a typed one that is not an origin is refused in words.
pub fn normalize_origin(typed: &str) -> Result<String, String> {
    let typed = typed.trim();
    if typed == "*" {
        return Ok(typed.into());
    }
    let refuse = || {
        format!(
            "{typed:?} is not a web origin: write it as https://example.org (a scheme and a host, with a port if any, no path), or * for any"
        )
    };
    let uri: axum::http::Uri = typed.parse().map_err(|_| refuse())?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else { return Err(refuse()) };
    let bare_path = matches!(uri.path(), "" | "/") && uri.query().is_none();
    if !matches!(scheme, "http" | "https") || !bare_path || authority.as_str().contains('@') {
        return Err(refuse());
    }
    Ok(format!("{scheme}://{authority}").to_ascii_lowercase())
}

impl Guard {
    /// Whether a page of `origin` may call the server.
    pub fn allows_origin(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        origin_is_loopback(&origin)
            || self.allowed_origins.iter().any(|allowed| allowed == "*" || allowed.trim_end_matches('/').eq_ignore_ascii_case(&origin))
    }

    /// Why `headers` of a `method` request may not be served, if they may not.
    pub fn refuses(&self, method: &Method, headers: &HeaderMap) -> Option<ApiError> {
        if self.loopback_only
            && let Some(host) = headers.get(HOST)
            && !host.to_str().is_ok_and(host_is_loopback)
        {
            let host = String::from_utf8_lossy(host.as_bytes()).chars().take(100).collect::<String>();
            return Some(ApiError::forbidden(format!(
                "this server answers only requests addressed to this machine (Host: localhost, 127.0.0.1 or [::1]), not `{host}`"
            )));
        }
        if let Some(origin) = headers.get(ORIGIN)
            && !origin.to_str().is_ok_and(|o| self.allows_origin(o))
        {
            let origin = String::from_utf8_lossy(origin.as_bytes()).chars().take(100).collect::<String>();
            return Some(ApiError::forbidden(format!(
                "web pages from `{origin}` may not use this server: allow the origin in Hearth's server settings (or --allow-origin) to let them"
            )));
        }
        if *method == Method::POST && !headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(is_json) {
            return Some(ApiError {
                status: 415,
                ..ApiError::invalid(None, "send the body as JSON with the header `Content-Type: application/json`")
            });
        }
        None
    }
}

/// The middleware: refuses what `Guard::refuses` names, answers allowed preflights, and adds
/// CORS headers to replies for an allowed origin.
pub async fn guard(State(state): State<ServerState>, request: Request, next: Next) -> Response {
    let guard = &state.guard;
    if let Some(refused) = guard.refuses(request.method(), request.headers()) {
        return refused.into_response();
    }
    let origin = request.headers().get(ORIGIN).cloned();
    if request.method() == Method::OPTIONS && origin.is_some() {
        let mut preflight = StatusCode::NO_CONTENT.into_response();
        let headers = preflight.headers_mut();
        headers.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, OPTIONS"));
        headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("authorization, content-type"));
        headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        allow(&mut preflight, origin);
        return preflight;
    }
    let mut response = next.run(request).await;
    allow(&mut response, origin);
    response
}

/// Lets the (allowed) page of `origin` read the response.
fn allow(response: &mut Response, origin: Option<HeaderValue>) {
    if let Some(origin) = origin {
        response.headers_mut().insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        response.headers_mut().append(VARY, HeaderValue::from_static("origin"));
    }
}

/// `application/json`, with parameters (`; charset=utf-8`) or not.
fn is_json(content_type: &str) -> bool {
    content_type.split(';').next().is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// A `Host` header (`name[:port]`, `[v6][:port]`) naming this machine: `localhost` (and names
/// under `.localhost`, which browsers keep on loopback themselves) or a loopback address.
pub fn host_is_loopback(host: &str) -> bool {
    let host = host.trim();
    let name = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((v6, port)) if port.is_empty() || port.strip_prefix(':').is_some_and(is_port) => v6,
            _ => return false,
        },
        None => match host.rsplit_once(':') {
            Some((name, port)) if is_port(port) => name,
            Some(_) => return false,
            None => host,
        },
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A port number's digits.
fn is_port(port: &str) -> bool {
    !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit())
}

/// An origin (`scheme://host[:port]`) served from this machine.
fn origin_is_loopback(origin: &str) -> bool {
    let Some((scheme, host)) = origin.split_once("://") else { return false };
    matches!(scheme, "http" | "https") && host_is_loopback(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_origins_are_kept_as_browsers_send_them() {
        // (typed, kept)
        let cases: &[(&str, Result<&str, ()>)] = &[
            ("https://chat.example.org", Ok("https://chat.example.org")),
            (" HTTPS://Chat.Example.org/ ", Ok("https://chat.example.org")),
            ("http://localhost:5173", Ok("http://localhost:5173")),
            ("*", Ok("*")),
            ("chat.example.org", Err(())),
            ("https://chat.example.org/app", Err(())),
            ("https://chat.example.org/?x=1", Err(())),
            ("ftp://chat.example.org", Err(())),
            ("https://user@chat.example.org", Err(())),
            ("", Err(())),
        ];
        for (typed, kept) in cases {
            assert_eq!(normalize_origin(typed).map_err(|_| ()), kept.map(str::to_owned), "{typed:?}");
        }
    }

    #[test]
    fn only_hosts_that_name_this_machine_are_loopback() {
        let cases = [
            ("127.0.0.1:8484", true),
            ("127.0.0.1", true),
            ("127.3.2.1:80", true),
            ("localhost:8484", true),
            ("LOCALHOST.", true),
            ("tauri.localhost", true),
            ("[::1]:8484", true),
            ("[::1]", true),
            ("attacker.example:8484", false),
            ("attacker.example", false),
            ("localhost.attacker.example", false),
            ("127.0.0.1.nip.io:8484", false),
            ("192.168.1.5:8484", false),
            ("[::2]:8484", false),
            ("[::1]x", false),
            ("[::1]8484", false),
            ("localhost:84a", false),
            ("", false),
        ];
        for (host, loopback) in cases {
            assert_eq!(host_is_loopback(host), loopback, "{host:?}");
        }
    }

    #[test]
    fn a_request_is_refused_for_its_host_origin_or_body_type() {
        let loopback = Guard { loopback_only: true, allowed_origins: vec!["https://chat.example.org".into()] };
        let network = Guard { loopback_only: false, allowed_origins: Vec::new() };
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, HeaderValue::from_static(value));
            }
            map
        };
        let json = ("content-type", "application/json");
        // (guard, method, headers, refused with)
        let cases: Vec<(&Guard, Method, HeaderMap, Option<u16>)> = vec![
            (&loopback, Method::POST, headers(&[("host", "127.0.0.1:8484"), json]), None),
            (&loopback, Method::POST, headers(&[("host", "localhost:8484"), ("content-type", "application/json; charset=utf-8")]), None),
            (&loopback, Method::GET, headers(&[("host", "127.0.0.1:8484")]), None),
            (&loopback, Method::POST, headers(&[("host", "rebound.example:8484"), json]), Some(403)),
            (&network, Method::POST, headers(&[("host", "192.168.1.5:8484"), json]), None),
            (&loopback, Method::POST, headers(&[("host", "127.0.0.1:8484"), ("origin", "https://evil.example"), json]), Some(403)),
            (&network, Method::GET, headers(&[("host", "192.168.1.5:8484"), ("origin", "https://evil.example")]), Some(403)),
            (&loopback, Method::OPTIONS, headers(&[("host", "127.0.0.1:8484"), ("origin", "https://evil.example")]), Some(403)),
            (&loopback, Method::POST, headers(&[("host", "127.0.0.1:8484"), ("origin", "null"), json]), Some(403)),
            (&loopback, Method::POST, headers(&[("host", "127.0.0.1:8484"), ("origin", "http://localhost:5173"), json]), None),
            (&loopback, Method::POST, headers(&[("host", "127.0.0.1:8484"), ("origin", "https://chat.example.org"), json]), None),
            (&loopback, Method::POST, headers(&[("host", "127.0.0.1:8484"), ("content-type", "text/plain")]), Some(415)),
            (&loopback, Method::POST, headers(&[("host", "127.0.0.1:8484")]), Some(415)),
            (
                &loopback,
                Method::POST,
                headers(&[("host", "127.0.0.1:8484"), ("content-type", "application/x-www-form-urlencoded")]),
                Some(415),
            ),
        ];
        for (guard, method, headers, refused) in cases {
            let got = guard.refuses(&method, &headers);
            assert_eq!(got.as_ref().map(|e| e.status), refused, "{method} {headers:?}: {got:?}");
            if let Some(e) = got {
                assert!(!e.message.is_empty());
            }
        }
    }

    #[test]
    fn any_origin_passes_only_when_the_user_allowed_any() {
        let any = Guard { loopback_only: true, allowed_origins: vec!["*".into()] };
        assert!(any.allows_origin("https://anything.example"));
        assert!(!Guard::default().allows_origin("https://anything.example"));
        assert!(Guard::default().allows_origin("http://127.0.0.1:3000/"));
        assert!(!Guard::default().allows_origin("file://"));
    }
}
