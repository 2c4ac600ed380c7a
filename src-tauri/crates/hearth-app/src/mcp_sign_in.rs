//! Signing the user in to an MCP server that asks (OAuth, `hearth_mcp::oauth`): its sign-in page
//! opened in the system's browser, the redirect it ends with caught on loopback — a listener on
//! 127.0.0.1 for this one sign-in, as RFC 8252 has native apps do — and the sign-in (its access
//! and refresh tokens) kept in the keychain before the server is started again with it; its token
//! is refreshed from then on without the user.

use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::response::Html;
use axum::routing::get;
use hearth_mcp::oauth::{EnterpriseIdentity, KeptSignIn, MachineCredentials, OAuthClient, sign_in, sign_in_at_idp};
use hearth_mcp::{McpError, McpServerConfig, McpServerStatus, McpTransport};
use tokio::sync::mpsc;

use crate::SettingsError;
use crate::tool_servers::ToolServers;

/// The header a token is sent in.
const AUTHORIZATION: &str = "Authorization";

/// How long the user has to sign in in the browser.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// Why signing in to a server did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("no MCP server is named {0:?}")]
    Unknown(String),
    #[error("{0:?} is started as a program, which does not sign in: give it its token in its environment")]
    NotHttp(String),
    #[error("the sign-in page is not a web address Hearth opens: {0}")]
    Page(String),
    #[error("the browser could not be opened: {0}")]
    Browser(String),
    #[error("no sign-in came back within {} minutes; sign in again", SIGN_IN_WAIT.as_secs() / 60)]
    TimedOut,
    /// A machine client's credentials as given cannot be right (checked before any is sent).
    #[error("{0}")]
    Credentials(McpError),
    #[error(transparent)]
    Mcp(#[from] McpError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

impl ToolServers {
    /// Signs the user in to server `name` (over HTTP), which asked to: `open` shows its sign-in
    /// page (the system's browser); the sign-in is kept (in the keychain) and the server starts
    /// again with its token (a failure shows in its state).
    pub async fn sign_in(&self, name: &str, open: impl FnOnce(&str) -> Result<(), String>) -> Result<Vec<McpServerStatus>, SignInError> {
        let statuses = self.statuses();
        let config =
            statuses.iter().find(|s| s.config.name == name).map(|s| s.config.clone()).ok_or_else(|| SignInError::Unknown(name.into()))?;
        let McpTransport::Http { url, .. } = &config.transport else { return Err(SignInError::NotHttp(name.into())) };
        let challenge = self.hub().sign_in_challenge(name);
        let (redirect_uri, redirected, listener) = catch_redirect(name).await?;
        let authorize = |page: String| show_page(page, open, redirected);
        let kept = KeptSignIn::new(name, self.sign_ins());
        let signed_in = sign_in(url, challenge.as_deref(), &OAuthClient::default(), kept, &redirect_uri, authorize).await;
        listener.abort();
        signed_in?;
        tracing::info!(server = name, "signed in to an MCP server");
        // The user's own sign-in stands in place of a machine client's.
        self.forget_machine_client(name)?;
        // A token given by hand, or kept as a header by an earlier version, would stand beside
        // the sign-in's own: the sign-in replaces it.
        let stale = |config: &McpServerConfig| matches!(&config.transport, McpTransport::Http { headers, .. } if headers.keys().any(|h| h.eq_ignore_ascii_case(AUTHORIZATION)));
        if let Some(status) = statuses.iter().find(|s| s.config.name == name && stale(&s.config)) {
            let mut config = status.config.clone();
            if let McpTransport::Http { headers, .. } = &mut config.transport {
                headers.retain(|h, _| !h.eq_ignore_ascii_case(AUTHORIZATION));
            }
            let configs = statuses.into_iter().map(|s| if s.config.name == name { config.clone() } else { s.config }).collect();
            self.save(configs).await?;
        }
        Ok(self.restart(name).await.map_err(SettingsError::from)?)
    }

    /// Signs in to server `name` (over HTTP) as a machine client its organisation registered
    /// Hearth as (OAuth client credentials: no page, no user): the credentials, checked, are kept
    /// in the keychain in place of a user's sign-in, and the server starts again, signing in with
    /// them — and again, unseen, whenever its token runs out. A failure shows in its state.
    pub async fn sign_in_as_client(&self, name: &str, credentials: MachineCredentials) -> Result<Vec<McpServerStatus>, SignInError> {
        let config = self.statuses().into_iter().find(|s| s.config.name == name).ok_or_else(|| SignInError::Unknown(name.into()))?.config;
        if !matches!(config.transport, McpTransport::Http { .. }) {
            return Err(SignInError::NotHttp(name.into()));
        }
        credentials.check().map_err(SignInError::Credentials)?;
        self.keep_machine_client(name, &credentials)?;
        tracing::info!(server = name, client = ?credentials, "an MCP server's machine client kept");
        Ok(self.restart(name).await.map_err(SettingsError::from)?)
    }

    /// Signs in to server `name` (over HTTP) with the user's enterprise identity, the token for it
    /// got by signing in at the identity provider's page (`open`: the system's browser; `identity`'s
    /// own token is not used): then as [`Self::sign_in_as_client`] with that token. A sign-in that
    /// fails at the identity provider is this call's error; the server is left as it was.
    pub async fn sign_in_at_idp(
        &self,
        name: &str,
        identity: EnterpriseIdentity,
        open: impl FnOnce(&str) -> Result<(), String>,
    ) -> Result<Vec<McpServerStatus>, SignInError> {
        let config = self.statuses().into_iter().find(|s| s.config.name == name).ok_or_else(|| SignInError::Unknown(name.into()))?.config;
        if !matches!(config.transport, McpTransport::Http { .. }) {
            return Err(SignInError::NotHttp(name.into()));
        }
        let (redirect_uri, redirected, listener) = catch_redirect(name).await?;
        let signed_in = sign_in_at_idp(&identity, &redirect_uri, |page| show_page(page, open, redirected)).await;
        listener.abort();
        let identity = signed_in?;
        tracing::info!(server = name, idp = identity.idp_issuer, "signed in at an identity provider");
        self.sign_in_as_client(name, MachineCredentials::Enterprise(identity)).await
    }
}

/// Opens the sign-in `page` (`open`: the system's browser) and answers the redirect it ends with
/// (`redirected`), or why there is none.
async fn show_page(
    page: String,
    open: impl FnOnce(&str) -> Result<(), String>,
    mut redirected: mpsc::Receiver<String>,
) -> Result<String, McpError> {
    check_page(&page).map_err(|e| McpError::SignInFailed(e.to_string()))?;
    open(&page).map_err(|e| McpError::SignInFailed(SignInError::Browser(e).to_string()))?;
    match tokio::time::timeout(SIGN_IN_WAIT, redirected.recv()).await {
        Ok(Some(redirect)) => match refusal(&redirect) {
            Some(why) => Err(McpError::SignInFailed(why)),
            None => Ok(redirect),
        },
        _ => Err(McpError::SignInFailed(SignInError::TimedOut.to_string())),
    }
}

/// A listener on loopback for the sign-in's redirect: its address (`/callback` on a port of its
/// own), what it caught (the whole redirect address), and its task.
async fn catch_redirect(name: &str) -> Result<(String, mpsc::Receiver<String>, tokio::task::JoinHandle<()>), SignInError> {
    let socket = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| McpError::SignInFailed(e.to_string()))?;
    let port = socket.local_addr().map_err(|e| McpError::SignInFailed(e.to_string()))?.port();
    let base = format!("http://127.0.0.1:{port}/callback");
    let (caught, redirected) = mpsc::channel(1);
    let page = Html(format!(
        "<!doctype html><meta charset=utf-8><title>Hearth</title><p style=\"font: 16px system-ui; margin: 3em\">Hearth has your sign-in to {}. You can close this tab.</p>",
        escape(name)
    ));
    let app = axum::Router::new()
        .route(
            "/callback",
            get(move |State((caught, base)): State<(mpsc::Sender<String>, String)>, RawQuery(query): RawQuery| {
                let page = page.clone();
                async move {
                    let _ = caught.try_send(format!("{base}?{}", query.unwrap_or_default()));
                    page
                }
            }),
        )
        .with_state((caught, base.clone()));
    let listener = tokio::spawn(async move {
        let _ = axum::serve(socket, app).await;
    });
    Ok((base, redirected, listener))
}

/// Why the sign-in page sent the user back without a code (RFC 6749's `error`, with its
/// description when it gave one), if it did.
fn refusal(redirect: &str) -> Option<String> {
    let query = url::Url::parse(redirect).ok()?;
    let param = |key: &str| query.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned());
    let error = param("error")?;
    let words = if error == "access_denied" { "the sign-in was refused".to_owned() } else { format!("the server answered {error}") };
    Some(match param("error_description") {
        Some(description) => format!("{words}: {}", description.chars().take(200).collect::<String>()),
        None => words,
    })
}

/// Only a web page is opened: an authorization server's metadata names the page, and a crafted
/// one must not open a file or another program's link. The rule is a server's link's
/// (`hearth_mcp::link`): https, plain http only to this computer, no user before the host.
fn check_page(page: &str) -> Result<(), SignInError> {
    match hearth_mcp::link::link_of(page) {
        Ok(_) => Ok(()),
        Err(why) => Err(SignInError::Page(format!("{} ({why})", page.chars().take(120).collect::<String>()))),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_sign_in_says_so() {
        let at = "http://127.0.0.1:5000/callback";
        assert_eq!(refusal(&format!("{at}?code=abc&state=x")), None);
        assert_eq!(refusal(&format!("{at}?error=access_denied&state=x")).as_deref(), Some("the sign-in was refused"));
        assert_eq!(
            refusal(&format!("{at}?error=invalid_scope&error_description=Unknown+scope+tools")).as_deref(),
            Some("the server answered invalid_scope: Unknown scope tools")
        );
    }

    #[test]
    fn only_web_pages_are_opened() {
        let cases = [
            ("https://auth.example.com/authorize?x=1", true),
            ("http://127.0.0.1:8123/authorize", true),
            ("http://localhost/authorize", true),
            ("http://localhost.evil.com/authorize", false),
            ("http://auth.example.com/authorize", false),
            ("file:///etc/passwd", false),
            ("javascript:alert(1)", false),
            ("vscode://open", false),
            ("https://auth.example.com@evil.example/authorize", false),
        ];
        for (page, opened) in cases {
            assert_eq!(check_page(page).is_ok(), opened, "{page}");
        }
    }
}
