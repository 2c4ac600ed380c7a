//! Signing the user in at their organisation's identity provider (OpenID Connect's authorization
//! code flow with PKCE, as RFC 8252 has a native app do it) for the token an enterprise identity
//! is exchanged with ([`crate::enterprise`]): its sign-in page opened, its redirect caught (the
//! caller's `authorize`), the code exchanged for an ID token — and a refresh token when the
//! provider gives one, which is kept instead: it outlasts the ID token's hour.
//!
//! The ID token is not read for who the user is (the provider checks its own token when it is
//! exchanged): it is checked only to be the answer to this sign-in (its issuer, its audience,
//! this sign-in's nonce), so that a token slipped into the redirect is not kept.

use std::future::Future;
use std::time::Duration;

use base64::Engine as _;
use oauth2::{CsrfToken, PkceCodeChallenge};
use serde::Deserialize;

use crate::McpError;
use crate::enterprise::{EnterpriseIdentity, IdpMetadata, IdpTokenKind, idp_metadata, uses_basic};

/// What a token endpoint answers an authorization code with (OpenID Connect Core §3.1.3.3).
#[derive(Deserialize)]
struct TokenAnswer {
    id_token: Option<String>,
    refresh_token: Option<String>,
}

/// What this checks of an ID token's claims.
#[derive(Deserialize)]
struct Claims {
    iss: String,
    aud: Audience,
    nonce: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    fn includes(&self, client: &str) -> bool {
        match self {
            Audience::One(aud) => aud == client,
            Audience::Many(auds) => auds.iter().any(|a| a == client),
        }
    }
}

/// Signs the user in at `identity`'s identity provider (its token, if any, is ignored):
/// `authorize` is given the sign-in page and answers with the address the provider redirected
/// to (`redirect_uri` and its query). Answers `identity` with the token the provider issued.
pub async fn sign_in_at_idp<F, Fut>(identity: &EnterpriseIdentity, redirect_uri: &str, authorize: F) -> Result<EnterpriseIdentity, McpError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<String, McpError>>,
{
    identity.check_registrations()?;
    let idp = idp_metadata(&identity.idp_issuer).await?;
    let page = idp.authorization_endpoint.as_deref().ok_or_else(|| {
        McpError::SignInFailed("your identity provider names no sign-in page (no authorization_endpoint in its configuration)".into())
    })?;
    let client_id = identity.idp_client_id.trim();
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (state, nonce) = (CsrfToken::new_random(), CsrfToken::new_random());
    let mut at = url::Url::parse(page)
        .map_err(|_| McpError::SignInFailed(format!("your identity provider's sign-in page {page:?} is not a web address")))?;
    at.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", &scope(&idp))
        .append_pair("state", state.secret())
        .append_pair("nonce", nonce.secret())
        .append_pair("code_challenge", challenge.as_str())
        .append_pair("code_challenge_method", "S256");
    let redirect = authorize(at.into()).await?;
    let code = code_of(&redirect, state.secret())?;

    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier.secret().as_str()),
    ];
    let secret = identity.idp_client_secret.as_str();
    let basic = !secret.is_empty() && uses_basic(&idp.token_endpoint_auth_methods_supported);
    if !basic {
        form.push(("client_id", client_id));
        if !secret.is_empty() {
            form.push(("client_secret", secret));
        }
    }
    let unreachable = |e: reqwest::Error| McpError::SignInFailed(format!("your identity provider could not be reached: {e}"));
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(unreachable)?;
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&form).finish();
    let mut request = http.post(&idp.token_endpoint).header("Content-Type", "application/x-www-form-urlencoded").body(body);
    if basic {
        request = request.basic_auth(form_encoded(client_id), Some(form_encoded(secret)));
    }
    let answer = request.send().await.map_err(unreachable)?;
    let status = answer.status();
    if !status.is_success() {
        let body: serde_json::Value = answer.json().await.unwrap_or_default();
        let code = body["error"].as_str().unwrap_or("no reason given");
        return Err(McpError::SignInFailed(format!("your identity provider refused the sign-in (HTTP {}: {code})", status.as_u16())));
    }
    let answer: TokenAnswer =
        answer.json().await.map_err(|e| McpError::SignInFailed(format!("your identity provider answered what Hearth cannot use: {e}")))?;
    let id_token = answer.id_token.ok_or_else(|| {
        McpError::SignInFailed("your identity provider gave no ID token (is Hearth registered there for OpenID Connect?)".into())
    })?;
    check_id_token(&id_token, &idp.issuer, client_id, nonce.secret())?;
    let (idp_token, idp_token_kind) = match answer.refresh_token {
        Some(refresh) => (refresh, IdpTokenKind::RefreshToken),
        None => (id_token, IdpTokenKind::IdToken),
    };
    Ok(EnterpriseIdentity { idp_token, idp_token_kind, ..identity.clone() })
}

/// The scopes asked for: OpenID's, and `offline_access` (a refresh token) where the provider
/// says it has it.
fn scope(idp: &IdpMetadata) -> String {
    if idp.scopes_supported.iter().any(|s| s == "offline_access") { "openid offline_access".into() } else { "openid".into() }
}

/// The code of the provider's redirect, refused in words when it is an error or answers another
/// sign-in (its state not this one's).
fn code_of(redirect: &str, state: &str) -> Result<String, McpError> {
    let failed = |why: String| Err(McpError::SignInFailed(why));
    let Ok(url) = url::Url::parse(redirect) else { return failed("the identity provider sent back no address Hearth reads".into()) };
    let param = |key: &str| url.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned());
    if let Some(error) = param("error") {
        let words = if error == "access_denied" {
            "the sign-in was refused".to_owned()
        } else {
            format!("your identity provider answered {error}")
        };
        return failed(match param("error_description") {
            Some(description) => format!("{words}: {}", description.chars().take(200).collect::<String>()),
            None => words,
        });
    }
    if param("state").as_deref() != Some(state) {
        return failed("the identity provider's answer was not for this sign-in; sign in again".into());
    }
    param("code").map_or_else(|| failed("the identity provider sent back no code; sign in again".into()), Ok)
}

/// That the ID token answers this sign-in: issued by `issuer`, to `client`, with `nonce`.
fn check_id_token(token: &str, issuer: &str, client: &str, nonce: &str) -> Result<(), McpError> {
    let wrong = |why: &str| McpError::SignInFailed(format!("your identity provider's ID token {why}; sign in again"));
    let payload = token.split('.').nth(1).ok_or_else(|| wrong("is not a JWT"))?;
    let bytes =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).map_err(|_| wrong("is not a JWT"))?;
    let claims: Claims = serde_json::from_slice(&bytes).map_err(|_| wrong("lacks its issuer or audience"))?;
    if claims.iss.trim_end_matches('/') != issuer.trim_end_matches('/') {
        return Err(wrong("was issued by another provider"));
    }
    if !claims.aud.includes(client) {
        return Err(wrong("was issued to another client"));
    }
    if claims.nonce.as_deref() != Some(nonce) {
        return Err(wrong("was not issued for this sign-in"));
    }
    Ok(())
}

/// A client id or secret as HTTP Basic carries it (RFC 6749 §2.3.1: form-encoded first).
fn form_encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: serde_json::Value) -> String {
        let part = |v: &serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!("{}.{}.sig", part(&serde_json::json!({ "alg": "RS256" })), part(&claims))
    }

    #[test]
    fn only_an_id_token_issued_for_this_sign_in_is_kept() {
        let issuer = "https://idp.example";
        let good = serde_json::json!({ "iss": issuer, "aud": "hearth", "nonce": "n1", "sub": "ada" });
        assert!(check_id_token(&jwt(good.clone()), issuer, "hearth", "n1").is_ok());
        let many = serde_json::json!({ "iss": "https://idp.example/", "aud": ["other", "hearth"], "nonce": "n1" });
        assert!(check_id_token(&jwt(many), issuer, "hearth", "n1").is_ok());
        let cases = [
            ("not-a-jwt".to_owned(), "is not a JWT"),
            (jwt(serde_json::json!({ "aud": "hearth", "nonce": "n1" })), "lacks its issuer or audience"),
            (jwt(serde_json::json!({ "iss": "https://evil.example", "aud": "hearth", "nonce": "n1" })), "issued by another provider"),
            (jwt(serde_json::json!({ "iss": issuer, "aud": "mallory", "nonce": "n1" })), "issued to another client"),
            (jwt(serde_json::json!({ "iss": issuer, "aud": "hearth", "nonce": "n0" })), "not issued for this sign-in"),
            (jwt(serde_json::json!({ "iss": issuer, "aud": "hearth" })), "not issued for this sign-in"),
        ];
        for (token, words) in cases {
            let said = check_id_token(&token, issuer, "hearth", "n1").unwrap_err().to_string();
            assert!(said.contains(words), "{said}");
        }
    }

    #[test]
    fn a_redirect_gives_its_code_only_for_this_sign_in() {
        let at = "http://127.0.0.1:5000/callback";
        assert_eq!(code_of(&format!("{at}?code=abc&state=s1"), "s1").unwrap(), "abc");
        let cases = [
            (format!("{at}?code=abc&state=s0"), "not for this sign-in"),
            (format!("{at}?code=abc"), "not for this sign-in"),
            (format!("{at}?state=s1"), "sent back no code"),
            (format!("{at}?error=access_denied&state=s1"), "the sign-in was refused"),
            (
                format!("{at}?error=login_required&error_description=Session+ended"),
                "your identity provider answered login_required: Session ended",
            ),
        ];
        for (redirect, words) in cases {
            let said = code_of(&redirect, "s1").unwrap_err().to_string();
            assert!(said.contains(words), "{redirect}: {said}");
        }
    }
}
