//! Enterprise-managed sign-in (MCP's SEP-990, "cross-app access"): the user's identity at their
//! organisation's identity provider — an ID token, or a refresh token, it issued to Hearth — is
//! exchanged there (RFC 8693) for an identity assertion grant (an ID-JAG) addressed to the MCP
//! server's authorization server, which exchanges that (RFC 7523's JWT bearer grant) for the
//! server's access token. No page opens; the organisation's policy at its identity provider
//! decides. rmcp makes both exchanges and checks the grant's bindings; this module finds the two
//! servers (the identity provider's OpenID configuration, the MCP server's authorization server
//! metadata), picks how each client proves itself, keeps the token as a user's sign-in is kept,
//! and says failures in words.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oauth2::basic::BasicTokenType;
use oauth2::{ClientSecret, RefreshToken, Scope, TokenResponse};
use rmcp::transport::auth::enterprise::{EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, CredentialStore, OAuthTokenResponse, StoredCredentials, VendorExtraTokenFields,
    default_oauth_http_client,
};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::McpError;

/// The user's identity at their organisation's identity provider, and Hearth's registrations at
/// it and at the MCP server's authorization server (both made beforehand by the organisation).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EnterpriseIdentity {
    /// The identity provider's issuer address (its OpenID configuration is found there).
    pub idp_issuer: String,
    /// The client Hearth is registered as at the identity provider, and its secret (`""`: a
    /// public client).
    pub idp_client_id: String,
    pub idp_client_secret: String,
    /// What the identity provider issued the user.
    pub idp_token: String,
    pub idp_token_kind: IdpTokenKind,
    /// The client Hearth is registered as at the MCP server's authorization server, and its
    /// secret (`""`: a public client).
    pub client_id: String,
    pub client_secret: String,
}

/// Which token of the identity provider's is given: an ID token lasts about an hour (the user
/// gives a new one when it has run out); a refresh token lasts as long as the organisation says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum IdpTokenKind {
    IdToken,
    RefreshToken,
}

impl std::fmt::Debug for EnterpriseIdentity {
    /// Never the secrets nor the token: they end up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseIdentity")
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_client_id", &self.idp_client_id)
            .field("idp_token_kind", &self.idp_token_kind)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl EnterpriseIdentity {
    /// What is wrong as given, in words, before anything is sent.
    pub(crate) fn check(&self) -> Result<(), McpError> {
        self.check_registrations()?;
        let wrong = |why: &str| Err(McpError::SignInFailed(why.to_owned()));
        if self.idp_token.trim().is_empty() {
            return wrong(match self.idp_token_kind {
                IdpTokenKind::IdToken => "give the ID token your identity provider issued",
                IdpTokenKind::RefreshToken => "give the refresh token your identity provider issued",
            });
        }
        Ok(())
    }

    /// … all but the token (before the user signs in at the identity provider for one).
    pub(crate) fn check_registrations(&self) -> Result<(), McpError> {
        let wrong = |why: &str| Err(McpError::SignInFailed(why.to_owned()));
        if let Err(why) = address(&self.idp_issuer) {
            return wrong(&format!("give your identity provider's address: {why}"));
        }
        if self.idp_client_id.trim().is_empty() {
            return wrong("give the client id your organisation registered Hearth as at its identity provider");
        }
        Ok(())
    }
}

/// An identity provider's address: https, or http to this computer.
fn address(issuer: &str) -> Result<url::Url, &'static str> {
    let url = url::Url::parse(issuer.trim()).map_err(|_| "it is not a web address")?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err("it must be https (plain http only on this computer)"),
    }
}

/// What an identity provider's OpenID configuration says that Hearth needs.
#[derive(Deserialize)]
pub(crate) struct IdpMetadata {
    pub issuer: String,
    pub token_endpoint: String,
    /// Its sign-in page (`crate::idp_sign_in`).
    pub authorization_endpoint: Option<String>,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Vec<String>,
    #[serde(default)]
    pub scopes_supported: Vec<String>,
}

/// Signs in to the MCP server at `url` with the user's enterprise identity, asking for `scopes`
/// (none: what the identity provider grants). The token is kept in `kept` as a user's sign-in;
/// there is no refresh token (the grant is not refreshed: a new one is asked for, as at start).
pub(crate) async fn sign_in(
    url: &str,
    identity: &EnterpriseIdentity,
    scopes: Vec<String>,
    kept: impl CredentialStore + 'static,
) -> Result<String, McpError> {
    identity.check()?;
    let failed = |e: AuthError| McpError::SignInFailed(e.to_string());
    let resource_as = AuthorizationManager::new(url).await.map_err(failed)?.resolve_metadata().await.map_err(failed)?.metadata;
    let issuer = resource_as.issuer.clone().ok_or_else(|| {
        McpError::SignInFailed("the server's authorization server does not name itself (no issuer in its metadata)".into())
    })?;
    let methods: Vec<String> = resource_as
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(|m| serde_json::from_value(m.clone()).ok())
        .unwrap_or_default();
    let idp = idp_metadata(&identity.idp_issuer).await?;

    let idp_server = EmaAuthorizationServer::new(&idp.issuer, &idp.token_endpoint, identity.idp_client_id.trim())
        .with_client_authentication(authentication(&identity.idp_client_secret, &idp.token_endpoint_auth_methods_supported));
    let server = EmaAuthorizationServer::new(&issuer, &resource_as.token_endpoint, identity.client_id.trim())
        .with_client_authentication(authentication(&identity.client_secret, &methods));
    let token = identity.idp_token.trim();
    let refresh = RefreshToken::new(token.to_owned());
    let request = match identity.idp_token_kind {
        IdpTokenKind::IdToken => EmaExchangeRequest::new_with_id_token(idp_server, server, url, token),
        IdpTokenKind::RefreshToken => EmaExchangeRequest::new(idp_server, server, url, &refresh),
    };
    let http = default_oauth_http_client().map_err(failed)?;
    let granted = request.with_scopes(scopes).exchange(&http, &http).await.map_err(in_words)?;

    let mut response = OAuthTokenResponse::new(granted.access_token.clone(), BasicTokenType::Bearer, VendorExtraTokenFields::default());
    response.set_expires_in(granted.expires_in.as_ref());
    let scopes: Vec<String> = granted.scopes.iter().cloned().collect();
    if !scopes.is_empty() {
        response.set_scopes(Some(scopes.iter().cloned().map(Scope::new).collect()));
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs();
    let access = response.access_token().secret().clone();
    let credentials =
        StoredCredentials::new(identity.client_id.trim().to_owned(), Some(response), scopes, Some(now)).with_issuer(Some(issuer));
    kept.save(credentials).await.map_err(failed)?;
    Ok(access)
}

/// The identity provider's OpenID configuration, found at its issuer; one that names another
/// issuer is refused (its grants would be refused anyway, less clearly).
pub(crate) async fn idp_metadata(issuer: &str) -> Result<IdpMetadata, McpError> {
    let unreachable =
        |e: reqwest::Error| McpError::SignInFailed(format!("your identity provider could not be asked where it takes tokens: {e}"));
    let base = address(issuer).map_err(|why| McpError::SignInFailed(format!("your identity provider's address: {why}")))?;
    let at = format!("{}/.well-known/openid-configuration", base.as_str().trim_end_matches('/'));
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(unreachable)?;
    let metadata: IdpMetadata =
        http.get(&at).send().await.and_then(|r| r.error_for_status()).map_err(unreachable)?.json().await.map_err(unreachable)?;
    if metadata.issuer.trim_end_matches('/') != issuer.trim().trim_end_matches('/') {
        return Err(McpError::SignInFailed(format!(
            "the identity provider at {issuer} names itself {:?}: check its address",
            metadata.issuer
        )));
    }
    Ok(metadata)
}

/// How a client proves itself at a token endpoint: with no secret, as a public client; else as
/// the server advertises, HTTP Basic unless it takes only the secret in the request's body.
fn authentication(secret: &str, methods: &[String]) -> EmaClientAuthentication {
    if secret.is_empty() {
        return EmaClientAuthentication::None;
    }
    let secret = ClientSecret::new(secret.to_owned());
    if uses_basic(methods) { EmaClientAuthentication::ClientSecretBasic(secret) } else { EmaClientAuthentication::ClientSecretPost(secret) }
}

/// Whether a client with a secret sends it as HTTP Basic (the default) to a token endpoint that
/// advertises `methods`: unless it takes only the secret in the request's body.
pub(crate) fn uses_basic(methods: &[String]) -> bool {
    let takes = |method: &str| methods.iter().any(|m| m == method);
    methods.is_empty() || takes("client_secret_basic") || !takes("client_secret_post")
}

/// rmcp's sanitized failures, said as what the user can do.
fn in_words(error: EmaError) -> McpError {
    let at = |stage: EmaExchangeStage| match stage {
        EmaExchangeStage::IdentityProvider => "your identity provider",
        _ => "the server's authorization server",
    };
    McpError::SignInFailed(match error {
        EmaError::InvalidGrant(EmaExchangeStage::IdentityProvider) => {
            "your identity provider refused the token given (it may have run out): give a new one".into()
        }
        EmaError::InvalidGrant(stage) => format!("{} refused the grant your identity provider gave", at(stage)),
        EmaError::InsufficientUserAuthentication(stage) => {
            format!("{} asks you to sign in to your identity provider again, then give its new token", at(stage))
        }
        EmaError::RequestFailed(stage) => format!("{} could not be reached", at(stage)),
        EmaError::OAuthRejected { stage, status, code } => format!("{} refused (HTTP {status}: {code})", at(stage)),
        EmaError::InvalidResponse { stage, message } => format!("{} answered what Hearth cannot use ({message})", at(stage)),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> EnterpriseIdentity {
        EnterpriseIdentity {
            idp_issuer: "https://idp.example".into(),
            idp_client_id: "hearth-at-idp".into(),
            idp_client_secret: "idp-secret-1".into(),
            idp_token: "eyJ.id-token.sig".into(),
            idp_token_kind: IdpTokenKind::IdToken,
            client_id: "hearth".into(),
            client_secret: "as-secret-2".into(),
        }
    }

    /// Mistakes said before anything is sent; the secrets and the token never in the debug form.
    #[test]
    fn an_enterprise_identity_is_checked_and_keeps_its_secrets() {
        let shown = format!("{:?}", identity());
        assert!(shown.contains("hearth-at-idp") && shown.contains("idp.example"), "{shown}");
        for secret in ["idp-secret-1", "as-secret-2", "id-token"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(identity().check().is_ok());
        type Spoil = fn(&mut EnterpriseIdentity);
        let cases: [(Spoil, &str); 5] = [
            (|i| i.idp_issuer = "idp.example".into(), "your identity provider's address: it is not a web address"),
            (|i| i.idp_issuer = "http://idp.example".into(), "it must be https"),
            (|i| i.idp_client_id = " ".into(), "registered Hearth as at its identity provider"),
            (|i| i.idp_token = "".into(), "give the ID token"),
            (
                |i| {
                    i.idp_token = " ".into();
                    i.idp_token_kind = IdpTokenKind::RefreshToken;
                },
                "give the refresh token",
            ),
        ];
        for (spoil, words) in cases {
            let mut wrong = identity();
            spoil(&mut wrong);
            let said = wrong.check().unwrap_err().to_string();
            assert!(said.contains(words), "{said}");
        }
    }

    /// Each client proves itself as its server takes it.
    #[test]
    fn a_client_proves_itself_as_its_server_takes_it() {
        let methods = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases = [
            ("", methods(&["client_secret_basic"]), "None"),
            ("s", methods(&[]), "ClientSecretBasic { .. }"),
            ("s", methods(&["client_secret_post", "client_secret_basic"]), "ClientSecretBasic { .. }"),
            ("s", methods(&["client_secret_post"]), "ClientSecretPost { .. }"),
        ];
        for (secret, offered, chosen) in cases {
            assert_eq!(format!("{:?}", authentication(secret, &offered)), chosen, "{offered:?}");
        }
    }
}
