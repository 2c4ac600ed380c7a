//! Signing in to an MCP server that asks for it (OAuth 2.1, as MCP's authorization spec has it),
//! on rmcp's OAuth client: the server's authorization server found from its challenge and its
//! metadata, Hearth made known to it (a client the user registered beforehand, Hearth's client
//! metadata document where the server takes one, else dynamic registration), the sign-in page
//! asked for with PKCE, and the code it redirects with exchanged for an access token. How the page
//! is shown and its redirect read is the caller's: the app opens the system's browser and listens
//! on loopback; the conformance client follows the page itself.

use std::future::Future;

use rmcp::transport::auth::{AuthError, AuthorizationRequest, OAuthState};

use crate::McpError;

/// The name Hearth registers under.
pub const CLIENT_NAME: &str = "Hearth";

/// Who Hearth is to a server's authorization server, where the user says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthClient {
    /// A client registered with the server beforehand (no registration then), and its secret.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// Where Hearth's client metadata document is, for a server that takes one as its client id.
    pub metadata_url: Option<String>,
}

/// Signs in to the MCP server at `url`, which asked with `challenge` (its `WWW-Authenticate`
/// header, which may name the scopes it wants and where its metadata is): `authorize` is given
/// the sign-in page's address and answers the address the page redirected to (`redirect_uri`,
/// with the code). Returns the access token to send as `Authorization: Bearer …`.
pub async fn sign_in<F, Fut>(
    url: &str,
    challenge: Option<&str>,
    client: &OAuthClient,
    redirect_uri: &str,
    authorize: F,
) -> Result<String, McpError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<String, McpError>>,
{
    let failed = |e: AuthError| McpError::SignInFailed(e.to_string());
    let mut state = OAuthState::new(url, None).await.map_err(failed)?;
    let mut request = AuthorizationRequest::new(redirect_uri).with_client_name(CLIENT_NAME);
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    if let Some(id) = &client.client_id {
        request = request.with_preregistered_client(id);
    }
    if let Some(secret) = &client.client_secret {
        request = request.with_client_secret(secret);
    }
    if let Some(metadata) = &client.metadata_url {
        request = request.with_client_metadata_url(metadata);
    }
    state.start_authorization(request).await.map_err(failed)?;
    let page = state.get_authorization_url().await.map_err(failed)?;
    let redirected = authorize(page).await?;
    state.handle_callback_url(&redirected).await.map_err(failed)?;
    let manager = state.into_authorization_manager().ok_or_else(|| McpError::SignInFailed("no token came back".into()))?;
    manager.get_access_token().await.map_err(failed)
}

/// The header an access token is sent in.
pub fn bearer(token: &str) -> (String, String) {
    ("Authorization".into(), format!("Bearer {token}"))
}
