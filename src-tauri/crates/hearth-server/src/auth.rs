//! The API key, when one is set: every request carries it as `Authorization: Bearer <key>`.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::ServerState;
use crate::error::ApiError;

pub async fn require_key(State(state): State<ServerState>, request: Request, next: Next) -> Response {
    if let Some(expected) = &state.api_key {
        let given = request.headers().get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
        if !given.is_some_and(|given| same_key(given.trim().as_bytes(), expected.as_bytes())) {
            return ApiError::unauthorized().into_response();
        }
    }
    next.run(request).await
}

/// Equality whose time depends only on the expected key's length, never on where a guess goes wrong.
fn same_key(given: &[u8], expected: &[u8]) -> bool {
    let mut diff = given.len() ^ expected.len();
    for (i, byte) in expected.iter().enumerate() {
        diff |= usize::from(given.get(i).copied().unwrap_or(0) ^ byte);
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::same_key;

    #[test]
    fn only_the_whole_key_matches() {
        for (given, ok) in [("sk-hearth", true), ("sk-hearti", false), ("sk-heart", false), ("sk-hearth!", false), ("", false)] {
            assert_eq!(same_key(given.as_bytes(), b"sk-hearth"), ok, "{given:?}");
        }
    }
}
