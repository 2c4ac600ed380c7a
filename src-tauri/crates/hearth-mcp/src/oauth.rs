//! Signing in to an MCP server that asks for it (OAuth 2.1, as MCP's authorization spec has it),
//! on rmcp's OAuth client: the server's authorization server found from its challenge and its
//! metadata, Hearth made known to it (a client the user registered beforehand, Hearth's client
//! metadata document where the server takes one, else dynamic registration), the sign-in page
//! asked for with PKCE, and the code it redirects with exchanged for an access token. How the page
//! is shown and its redirect read is the caller's: the app opens the system's browser and listens
//! on loopback; the conformance client follows the page itself. A machine client (OAuth's client
//! credentials: a client id with its secret or its private key) signs in with no page at all, as
//! does a user's enterprise identity (its identity provider's token exchanged: [`EnterpriseIdentity`]);
//! that token the user gives, or signs in at the identity provider's page for ([`sign_in_at_idp`]).
//!
//! The sign-in — the client Hearth registered as, the access token and the refresh token — is
//! kept by the caller's [`SignInKeeper`] (the app: the keychain). A server signed in to is reached
//! through rmcp's `AuthClient` ([`signed_in_client`]), which refreshes the token before it runs out
//! or when the server refuses it, and keeps the new one: the user signs in again only when the
//! authorization server refuses the refresh.

use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, ClientCredentialsConfig, CredentialStore, JwtSigningAlgorithm,
    OAuthState, StoredCredentials,
};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::McpError;
pub use crate::enterprise::{EnterpriseIdentity, IdpTokenKind};
pub use crate::idp_sign_in::sign_in_at_idp;

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
/// with the code). The sign-in is kept in `kept`; returns the access token.
pub async fn sign_in<F, Fut>(
    url: &str,
    challenge: Option<&str>,
    client: &OAuthClient,
    kept: impl CredentialStore + 'static,
    redirect_uri: &str,
    authorize: F,
) -> Result<String, McpError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<String, McpError>>,
{
    let failed = |e: AuthError| McpError::SignInFailed(e.to_string());
    let mut manager = AuthorizationManager::new(url).await.map_err(failed)?;
    manager.set_credential_store(kept);
    let mut state = OAuthState::Unauthorized(manager);
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

/// Hearth as a machine client of a server's authorization server (OAuth's client credentials
/// grant, MCP's SEP-1046): no user and no sign-in page, for a server run by the user's
/// organisation that registered Hearth beforehand.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum MachineCredentials {
    /// A client id and its secret, sent as the authorization server asks (in the request's body,
    /// or HTTP Basic where that is all it takes).
    Secret { client_id: String, client_secret: String },
    /// A client id and the private key (PEM, RSA or EC) that signs its assertion (RFC 7523),
    /// with the key's algorithm (`ES256`, `ES384`, `RS256`, `RS384` or `RS512`).
    PrivateKey { client_id: String, key_pem: String, algorithm: String },
    /// Not a machine but the user, signed in at their organisation's identity provider: its
    /// token exchanged for the server's access, no page opened (cross-app access, SEP-990).
    Enterprise(EnterpriseIdentity),
}

impl std::fmt::Debug for MachineCredentials {
    /// Never the secret nor the key: they end up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MachineCredentials::Secret { client_id, .. } => write!(f, "Secret {{ client_id: {client_id:?} }}"),
            MachineCredentials::PrivateKey { client_id, algorithm, .. } => {
                write!(f, "PrivateKey {{ client_id: {client_id:?}, algorithm: {algorithm:?} }}")
            }
            MachineCredentials::Enterprise(identity) => write!(f, "Enterprise({identity:?})"),
        }
    }
}

impl MachineCredentials {
    /// What is wrong with the credentials as given, in words, before any is sent.
    pub fn check(&self) -> Result<(), McpError> {
        let wrong = |why: &str| Err(McpError::SignInFailed(why.to_owned()));
        match self {
            MachineCredentials::Secret { client_id, .. }
            | MachineCredentials::PrivateKey { client_id, .. }
            | MachineCredentials::Enterprise(EnterpriseIdentity { client_id, .. })
                if client_id.trim().is_empty() =>
            {
                wrong("give the client id the server's organisation registered Hearth as")
            }
            MachineCredentials::Secret { client_secret, .. } if client_secret.is_empty() => wrong("give the client's secret"),
            MachineCredentials::PrivateKey { key_pem, .. } if !key_pem.trim_start().starts_with("-----BEGIN ") => {
                wrong("give the client's private key as PEM (-----BEGIN PRIVATE KEY----- …)")
            }
            MachineCredentials::PrivateKey { algorithm, .. } => signing_algorithm(algorithm).map(drop),
            MachineCredentials::Enterprise(identity) => identity.check(),
            MachineCredentials::Secret { .. } => Ok(()),
        }
    }

    /// The client-credentials grant (an enterprise identity has none: it is exchanged instead).
    fn grant(&self, resource: &str, scopes: Vec<String>) -> Result<ClientCredentialsConfig, McpError> {
        let resource = Some(resource.to_owned());
        Ok(match self {
            MachineCredentials::Secret { client_id, client_secret } => ClientCredentialsConfig::ClientSecret {
                client_id: client_id.clone(),
                client_secret: client_secret.clone(),
                scopes,
                resource,
            },
            MachineCredentials::PrivateKey { client_id, key_pem, algorithm } => ClientCredentialsConfig::PrivateKeyJwt {
                client_id: client_id.clone(),
                signing_key: key_pem.clone().into_bytes(),
                signing_algorithm: signing_algorithm(algorithm)?,
                token_endpoint_audience: None,
                scopes,
                resource,
            },
            MachineCredentials::Enterprise(_) => {
                return Err(McpError::SignInFailed("an enterprise identity is exchanged, not sent as a client's credentials".into()));
            }
        })
    }
}

fn signing_algorithm(name: &str) -> Result<JwtSigningAlgorithm, McpError> {
    Ok(match name {
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        other => {
            return Err(McpError::SignInFailed(format!(
                "the key's algorithm {other:?} is not one Hearth signs with: use ES256, ES384, RS256, RS384 or RS512"
            )));
        }
    })
}

/// Signs in to the MCP server at `url` as a machine client (`credentials`), asking for `scopes`
/// (none: what the authorization server gives): its authorization server found from the
/// server's metadata, the token asked for with the client's credentials. The token is kept in
/// `kept` as a user's sign-in is, and used alike; there is no refresh token, so when it runs out
/// the server asks again ([`McpError::SignIn`]) and this is called again. Returns the token.
///
/// rmcp's client-credentials exchange holds a value that is not `Sync` across an await, so its
/// future cannot move between threads; it runs on a blocking thread of the runtime instead, and
/// this future can (the hub's start is spawned).
pub async fn sign_in_as_client(
    url: &str,
    credentials: &MachineCredentials,
    scopes: Vec<String>,
    kept: impl CredentialStore + 'static,
) -> Result<String, McpError> {
    let (url, credentials) = (url.to_owned(), credentials.clone());
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(exchange_client_credentials(&url, &credentials, scopes, kept)))
        .await
        .unwrap_or_else(|e| Err(McpError::SignInFailed(format!("the sign-in stopped: {e}"))))
}

async fn exchange_client_credentials(
    url: &str,
    credentials: &MachineCredentials,
    scopes: Vec<String>,
    kept: impl CredentialStore + 'static,
) -> Result<String, McpError> {
    let failed = |e: AuthError| McpError::SignInFailed(e.to_string());
    let grant = match credentials {
        MachineCredentials::Enterprise(identity) => return crate::enterprise::sign_in(url, identity, scopes, kept).await,
        client => client.grant(url, scopes)?,
    };
    let mut manager = AuthorizationManager::new(url).await.map_err(failed)?;
    manager.set_credential_store(kept);
    let mut state = OAuthState::Unauthorized(manager);
    state.authenticate_client_credentials(grant).await.map_err(failed)?;
    let manager = state.into_authorization_manager().ok_or_else(|| McpError::SignInFailed("no token came back".into()))?;
    manager.get_access_token().await.map_err(failed)
}

/// Where each server's sign-in is kept between runs, as JSON (rmcp's `StoredCredentials`).
pub trait SignInKeeper: Send + Sync {
    fn load(&self, server: &str) -> Result<Option<String>, KeeperError>;
    /// `None` forgets it.
    fn save(&self, server: &str, sign_in: Option<&str>) -> Result<(), KeeperError>;
    /// The machine client the user gave for `server`, if any: a server that asks to sign in is
    /// then signed in to as that client, without the user, whenever its token runs out.
    fn machine_client(&self, _server: &str) -> Result<Option<MachineCredentials>, KeeperError> {
        Ok(None)
    }
}

/// Why a [`SignInKeeper`] could not read or write (the keychain's own error).
pub type KeeperError = Box<dyn std::error::Error + Send + Sync>;

/// Server `server`'s sign-in, as rmcp keeps credentials, read and written through a keeper: a
/// token refreshed mid-session is the one found at the next start. Read from the keeper once,
/// then from memory: rmcp asks for it at every request, and a keychain read is a round trip.
#[derive(Clone)]
pub struct KeptSignIn {
    server: String,
    keeper: Arc<dyn SignInKeeper>,
    /// What the keeper holds, once read (`None`: not read yet).
    read: Arc<Mutex<Option<Option<StoredCredentials>>>>,
}

impl KeptSignIn {
    pub fn new(server: impl Into<String>, keeper: Arc<dyn SignInKeeper>) -> Self {
        KeptSignIn { server: server.into(), keeper, read: Arc::default() }
    }

    /// Whether a token is kept for the server (one that may need refreshing).
    pub fn has_token(&self) -> bool {
        matches!(self.read(), Ok(Some(credentials)) if credentials.token_response.is_some())
    }

    fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let mut read = self.read.lock().expect("sign-in poisoned");
        if let Some(credentials) = &*read {
            return Ok(credentials.clone());
        }
        let kept_error = |e: String| AuthError::CredentialStoreError(format!("{}'s sign-in: {e}", self.server));
        let json = self.keeper.load(&self.server).map_err(|e| kept_error(e.to_string()))?;
        // One kept by another version that cannot be read is as none: the server asks again.
        let credentials = json.and_then(|json| serde_json::from_str(&json).ok());
        *read = Some(credentials.clone());
        Ok(credentials)
    }

    fn write(&self, credentials: Option<StoredCredentials>) -> Result<(), AuthError> {
        let json =
            credentials.as_ref().map(serde_json::to_string).transpose().map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        self.keeper.save(&self.server, json.as_deref()).map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        *self.read.lock().expect("sign-in poisoned") = Some(credentials);
        Ok(())
    }
}

#[async_trait::async_trait]
impl CredentialStore for KeptSignIn {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(Some(credentials))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.write(None)
    }
}

/// An HTTP client for the server at `url` that sends its kept token, refreshing it when it runs
/// out or is refused (and keeping the new one); with no usable sign-in, the server's challenge
/// comes back as [`McpError::SignIn`].
pub(crate) async fn signed_in_client(url: &str, kept: KeptSignIn) -> Result<AuthClient<reqwest::Client>, McpError> {
    let failed = |e: AuthError| McpError::SignInFailed(format!("the sign-in kept could not be used: {e}"));
    let mut manager = AuthorizationManager::new(url).await.map_err(failed)?;
    manager.set_credential_store(kept);
    manager.initialize_from_store().await.map_err(failed)?;
    Ok(AuthClient::new(reqwest::Client::default(), manager))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine client's secret and key never show in its debug form (logs), and a key whose
    /// algorithm Hearth cannot sign with is refused in words before any request.
    #[test]
    fn machine_credentials_keep_their_secrets_and_name_a_bad_algorithm() {
        let cases = [
            (MachineCredentials::Secret { client_id: "hearth".into(), client_secret: "s3cret-value".into() }, "s3cret-value", None),
            (
                MachineCredentials::PrivateKey {
                    client_id: "hearth".into(),
                    key_pem: "-----BEGIN KEY-----".into(),
                    algorithm: "ES256".into(),
                },
                "BEGIN KEY",
                None,
            ),
            (
                MachineCredentials::PrivateKey {
                    client_id: "hearth".into(),
                    key_pem: "-----BEGIN KEY-----".into(),
                    algorithm: "HS256".into(),
                },
                "BEGIN KEY",
                Some("the key's algorithm \"HS256\" is not one Hearth signs with: use ES256, ES384, RS256, RS384 or RS512"),
            ),
        ];
        for (credentials, secret, refused) in cases {
            let shown = format!("{credentials:?}");
            assert!(shown.contains("hearth") && !shown.contains(secret), "{shown}");
            let grant = credentials.grant("http://127.0.0.1:9/mcp", Vec::new());
            match refused {
                Some(why) => assert!(matches!(&grant, Err(McpError::SignInFailed(w)) if w == why), "{grant:?}"),
                None => assert!(grant.is_ok(), "{shown}"),
            }
        }
    }
}
