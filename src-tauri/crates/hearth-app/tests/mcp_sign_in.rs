//! Signing in to an MCP server that asks (OAuth), on real parts: the server is
//! tests/mcp/oauth.mjs (its own authorization server, over real HTTP on 127.0.0.1), Hearth's
//! redirect listener is a real loopback socket, and the "browser" loads the sign-in page and
//! follows its redirect as a browser does. The sign-in lands in the key store, and the server then
//! lists its tools; its token is refreshed when it ends, across a restart too, and the user is asked
//! again only when the refresh is refused. A machine client (client credentials) signs in without
//! the user, and again whenever its token ends; so does a user's enterprise identity (the test
//! server's identity provider exchanges it for a grant, the server's authorization server the
//! grant for a token), the token it exchanges given, or got by signing in at the identity
//! provider's page.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_app::agent::ToolBox;
use hearth_app::mcp_sign_in::SignInError;
use hearth_app::{Settings, ToolServers};
use hearth_mcp::oauth::{EnterpriseIdentity, IdpTokenKind, MachineCredentials};
use hearth_mcp::{McpError, McpServerConfig, McpServerState, McpTransport};
use hearth_providers::{KeyStore, Secret};

fn http(name: &str, url: &str) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        transport: McpTransport::Http { url: url.into(), headers: Default::default() },
        enabled: true,
        disabled_tools: Vec::new(),
    }
}

/// tests/mcp/oauth.mjs on a free port, once it listens.
async fn oauth_server() -> (tokio::process::Child, String) {
    let servers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/mcp");
    assert!(servers.join("node_modules").is_dir(), "the MCP test servers are missing: run scripts/setup.sh test");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = tokio::process::Command::new("node")
        .arg("oauth.mjs")
        .current_dir(&servers)
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs tests/mcp/oauth.mjs");
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "tests/mcp/oauth.mjs did not listen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test]
async fn a_server_that_asks_to_sign_in_is_signed_in_to_through_the_browser() {
    let (_server, url) = oauth_server().await;
    let dir = tempfile::tempdir().unwrap();
    let store = hearth_store::Store::open(&dir.path().join("hearth.db")).await.unwrap();
    let keys = Arc::new(KeyStore::new(dir.path().join("keys.json")));
    let tools = ToolServers::open(Settings::new(store.clone()), keys.clone()).await.unwrap();
    let program = McpServerConfig {
        name: "local".into(),
        transport: McpTransport::Stdio { command: "node".into(), args: vec!["x.mjs".into()], env: Default::default(), cwd: None },
        enabled: true,
        disabled_tools: Vec::new(),
    };
    tools.save(vec![http("tracker", &url), program]).await.unwrap();

    // Asked for its tools, it asks to sign in; Settings shows that.
    let asked = tools.hub().tools("tracker").await.unwrap_err();
    assert!(matches!(&asked, McpError::SignIn { challenge } if challenge.contains("resource_metadata=")), "{asked:?}");
    assert_eq!(tools.statuses()[0].state, McpServerState::SignIn);
    // A chat's turn offers neither; it names both, with why, before its reply.
    let toolbox = ToolBox::gather(tools.hub()).await;
    assert!(toolbox.is_empty());
    let unavailable: Vec<_> = toolbox.unavailable.iter().map(|u| (u.server.as_str(), u.why.as_str())).collect();
    assert_eq!(unavailable[0], ("tracker", "it asks to sign in"));
    assert!(unavailable[1].0 == "local" && unavailable[1].1.starts_with("it failed: "), "{unavailable:?}");

    // Hostile and mistaken asks are refused in words, nothing opened.
    let refused = |name: &'static str| {
        let tools = tools.clone();
        async move { tools.sign_in(name, |page| panic!("nothing is opened for {name}: {page}")).await.unwrap_err() }
    };
    assert!(matches!(refused("nobody").await, SignInError::Unknown(_)));
    let program = refused("local").await;
    assert_eq!(program.to_string(), "\"local\" is started as a program, which does not sign in: give it its token in its environment");

    // The browser loads the sign-in page; the server approves at once and redirects to Hearth's
    // loopback listener, which shows its page.
    let (open, seen) = browser();
    let statuses = tools.sign_in("tracker", open).await.expect("signed in");
    let (landed, page) = seen.await.unwrap();
    assert!(landed.starts_with("http://127.0.0.1:") && landed.contains("/callback?code="), "{landed}");
    assert!(page.contains("Hearth has your sign-in to tracker. You can close this tab."), "{page}");
    match &statuses[0].state {
        McpServerState::Ready { tools } => assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["whoami"]),
        other => panic!("the server starts with its token: {other:?}"),
    }
    let outcome = tools.hub().call("tracker", "whoami", serde_json::json!({}), &Default::default()).await.unwrap();
    assert_eq!(outcome.text, "a signed-in user");

    // The sign-in is a secret: in the key store with its refresh token, not among the server's
    // headers, not in the history file.
    let kept = kept_tokens(&keys);
    assert!(kept.1.starts_with("refresh-"), "{kept:?}");
    assert_eq!(keys.secret(Secret::McpServer("tracker")).unwrap(), None, "no token among its headers");
    let saved = String::from_utf8_lossy(&std::fs::read(dir.path().join("hearth.db")).unwrap()).into_owned();
    assert!(!saved.contains(&kept.0) && !saved.contains(&kept.1), "no token in the history file");

    // Its access token ends (the server refuses it from now on): the next call refreshes it
    // unseen, and the new tokens are kept (the refresh token is used once).
    admin(&url, "/test/expire").await;
    let outcome = tools.hub().call("tracker", "whoami", serde_json::json!({}), &Default::default()).await.unwrap();
    assert_eq!(outcome.text, "a signed-in user");
    assert_eq!(
        grants(&url).await,
        serde_json::json!({ "authorization_code": 1, "refresh_token": 1, "client_credentials": 0, "jwt_bearer": 0, "idp_sign_in": 0 })
    );
    let refreshed = kept_tokens(&keys);
    assert!(refreshed.0 != kept.0 && refreshed.1 != kept.1, "{refreshed:?}");

    // Hearth started again: the server is reached with the kept sign-in; nobody signs in.
    let again = ToolServers::open(Settings::new(store.clone()), keys.clone()).await.unwrap();
    let listed = again.hub().tools("tracker").await.unwrap();
    assert_eq!(listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["whoami"]);

    // The authorization server refuses the refresh too: only then is the user asked again.
    admin(&url, "/test/revoke").await;
    again.hub().restart("tracker").await.unwrap_err();
    assert_eq!(again.statuses()[0].state, McpServerState::SignIn);
    assert_eq!(
        grants(&url).await,
        serde_json::json!({ "authorization_code": 1, "refresh_token": 1, "client_credentials": 0, "jwt_bearer": 0, "idp_sign_in": 0 })
    );
}

#[tokio::test]
async fn a_machine_client_signs_in_without_the_user_and_again_when_its_token_ends() {
    let (_server, url) = oauth_server().await;
    // Its own name: the tests share the system keychain, where sign-ins are kept by server name.
    let Hearth { dir, store, keys, tools } = hearth_with("vault", &url).await;
    let secret = |secret: &str| MachineCredentials::Secret { client_id: "hearth-machine".into(), client_secret: secret.into() };
    let key = |pem: &str, algorithm: &str| MachineCredentials::PrivateKey {
        client_id: "hearth-machine".into(),
        key_pem: pem.into(),
        algorithm: algorithm.into(),
    };

    // Mistakes are said before anything is sent or kept.
    let mistakes = [
        (MachineCredentials::Secret { client_id: " ".into(), client_secret: "s".into() }, "give the client id"),
        (secret(""), "give the client's secret"),
        (key("not a key", "ES256"), "as PEM"),
        (key("-----BEGIN PRIVATE KEY-----\n", "HS256"), "\"HS256\" is not one Hearth signs with"),
    ];
    for (credentials, words) in mistakes {
        let refused = tools.sign_in_as_client("vault", credentials).await.unwrap_err().to_string();
        assert!(refused.contains(words), "{refused}");
    }
    assert_eq!(keys.secret(Secret::McpClient("vault")).unwrap(), None);

    // A secret the authorization server refuses: the server fails to start, in words.
    let statuses = tools.sign_in_as_client("vault", secret("wrong")).await.unwrap();
    assert!(matches!(&statuses[0].state, McpServerState::Failed { message, .. } if message.contains("signing in failed")), "{statuses:?}");

    // The right one: ready with its tools, no page opened; the secret in the key store only.
    let statuses = tools.sign_in_as_client("vault", secret("machine-secret-7")).await.unwrap();
    assert!(matches!(&statuses[0].state, McpServerState::Ready { tools } if tools[0].name == "whoami"), "{statuses:?}");
    let outcome = tools.hub().call("vault", "whoami", serde_json::json!({}), &Default::default()).await.unwrap();
    assert_eq!(outcome.text, "a signed-in user");
    assert_eq!(
        grants(&url).await,
        serde_json::json!({ "authorization_code": 0, "refresh_token": 0, "client_credentials": 1, "jwt_bearer": 0, "idp_sign_in": 0 })
    );
    assert!(keys.secret(Secret::McpClient("vault")).unwrap().is_some_and(|kept| kept.contains("machine-secret-7")));
    let saved = String::from_utf8_lossy(&std::fs::read(dir.path().join("hearth.db")).unwrap()).into_owned();
    assert!(!saved.contains("machine-secret-7"), "no secret in the history file");

    // Its token ends mid-session: the next call signs in again unseen (there is no refresh
    // token) and runs.
    admin(&url, "/test/expire").await;
    let outcome = tools.hub().call("vault", "whoami", serde_json::json!({}), &Default::default()).await.unwrap();
    assert_eq!(outcome.text, "a signed-in user");
    assert_eq!(grants(&url).await["client_credentials"], 2);

    // Hearth started again after the token ended: the server starts signed in, nobody asked.
    admin(&url, "/test/expire").await;
    let again = ToolServers::open(Settings::new(store.clone()), keys.clone()).await.unwrap();
    let listed = again.hub().tools("vault").await.unwrap();
    assert_eq!(listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["whoami"]);
    assert_eq!(grants(&url).await["client_credentials"], 3);

    // Removed, the server's machine client leaves the key store with it.
    again.save(Vec::new()).await.unwrap();
    assert_eq!(keys.secret(Secret::McpClient("vault")).unwrap(), None);
}

#[tokio::test]
async fn an_enterprise_identity_is_exchanged_at_its_identity_provider_for_the_servers_access() {
    let (_server, url) = oauth_server().await;
    let Hearth { dir, store, keys, tools } = hearth_with("ledger", &url).await;
    let at = |idp: &str, token: &str, kind: IdpTokenKind| {
        MachineCredentials::Enterprise(EnterpriseIdentity {
            idp_issuer: idp.into(),
            idp_client_id: "hearth-at-idp".into(),
            idp_client_secret: String::new(),
            idp_token: token.into(),
            idp_token_kind: kind,
            client_id: "hearth-enterprise".into(),
            client_secret: "enterprise-secret-3".into(),
        })
    };
    let idp = url.replace("/mcp", "/idp");
    let identity = |token: &str, kind: IdpTokenKind| at(&idp, token, kind);
    let state = |statuses: &[hearth_mcp::McpServerStatus]| statuses[0].state.clone();

    // A mistake is said before anything is sent.
    let refused = tools.sign_in_as_client("ledger", identity(" ", IdpTokenKind::IdToken)).await.unwrap_err().to_string();
    assert!(refused.contains("give the ID token your identity provider issued"), "{refused}");
    // A token the identity provider does not know, a look-alike provider that names another, and
    // one that cannot be reached: each fails the server's start in words.
    let impostor = url.replace("/mcp", "/impostor");
    let failures = [
        (
            identity("mallory.id-token", IdpTokenKind::IdToken),
            "your identity provider refused the token given (it may have run out)".to_owned(),
        ),
        (at(&impostor, "ada.id-token.1", IdpTokenKind::IdToken), format!("the identity provider at {impostor} names itself \"{idp}\"")),
        (at("http://127.0.0.1:9/idp", "ada.id-token.1", IdpTokenKind::IdToken), "your identity provider could not be asked".to_owned()),
    ];
    for (identity, words) in failures {
        let statuses = tools.sign_in_as_client("ledger", identity).await.unwrap();
        assert!(matches!(state(&statuses), McpServerState::Failed { message, .. } if message.contains(&words)), "{statuses:?}");
    }
    assert_eq!(grants(&url).await["jwt_bearer"], 0);

    // Ada's ID token: a grant from her identity provider, exchanged for the server's access;
    // ready, no page opened; the token in the key store only.
    let statuses = tools.sign_in_as_client("ledger", identity("ada.id-token.1", IdpTokenKind::IdToken)).await.unwrap();
    assert!(matches!(state(&statuses), McpServerState::Ready { tools } if tools[0].name == "whoami"), "{statuses:?}");
    let outcome = tools.hub().call("ledger", "whoami", serde_json::json!({}), &Default::default()).await.unwrap();
    assert_eq!(outcome.text, "a signed-in user");
    assert_eq!(grants(&url).await["jwt_bearer"], 1);
    assert!(keys.secret(Secret::McpClient("ledger")).unwrap().is_some_and(|kept| kept.contains("ada.id-token.1")));
    let saved = String::from_utf8_lossy(&std::fs::read(dir.path().join("hearth.db")).unwrap()).into_owned();
    assert!(!saved.contains("ada.id-token.1") && !saved.contains("enterprise-secret-3"), "no secret in the history file");

    // Its token ends mid-session: exchanged again unseen, and the call runs.
    admin(&url, "/test/expire").await;
    let outcome = tools.hub().call("ledger", "whoami", serde_json::json!({}), &Default::default()).await.unwrap();
    assert_eq!(outcome.text, "a signed-in user");
    assert_eq!(grants(&url).await["jwt_bearer"], 2);

    // Hearth started again, given the identity provider's refresh token instead: signed in.
    let again = ToolServers::open(Settings::new(store.clone()), keys.clone()).await.unwrap();
    let statuses = again.sign_in_as_client("ledger", identity("ada-idp-refresh", IdpTokenKind::RefreshToken)).await.unwrap();
    assert!(matches!(state(&statuses), McpServerState::Ready { .. }), "{statuses:?}");
    assert_eq!(grants(&url).await["jwt_bearer"], 3);

    // The identity provider no longer takes it: the next start says so, and what to do.
    admin(&url, "/test/revoke").await;
    again.hub().restart("ledger").await.unwrap_err();
    assert!(
        matches!(&again.statuses()[0].state, McpServerState::Failed { message, .. } if message.contains("give a new one")),
        "{:?}",
        again.statuses()
    );
    again.save(Vec::new()).await.unwrap();
    assert_eq!(keys.secret(Secret::McpClient("ledger")).unwrap(), None);
}

#[tokio::test]
async fn an_enterprise_user_signs_in_at_the_identity_providers_page_for_the_servers_access() {
    let (_server, url) = oauth_server().await;
    let Hearth { dir, keys, tools, .. } = hearth_with("desk", &url).await;
    let identity = |idp_client: &str| EnterpriseIdentity {
        idp_issuer: url.replace("/mcp", "/idp"),
        idp_client_id: idp_client.into(),
        idp_client_secret: String::new(),
        idp_token: String::new(),
        idp_token_kind: IdpTokenKind::IdToken,
        client_id: "hearth-enterprise".into(),
        client_secret: "enterprise-secret-3".into(),
    };

    // A mistake is said before any page opens; a user the identity provider refuses is told why,
    // and the server is left as it was (nothing kept, no grant).
    let refused = tools.sign_in_at_idp("desk", identity(" "), |page| panic!("nothing is opened: {page}")).await.unwrap_err();
    assert!(refused.to_string().contains("give the client id your organisation registered Hearth as"), "{refused}");
    let (open, _) = browser();
    let refused = tools.sign_in_at_idp("desk", identity("hearth-unassigned"), open).await.unwrap_err().to_string();
    assert!(refused.contains("the sign-in was refused: User is not assigned to the client application."), "{refused}");
    assert_eq!(keys.secret(Secret::McpClient("desk")).unwrap(), None);
    assert_eq!(grants(&url).await["idp_sign_in"], 0);

    // Ada signs in on her identity provider's page: it redirects to Hearth's loopback listener
    // with a code, exchanged (PKCE) for her ID token and a refresh token (offline access), and
    // the refresh token for the server's access. Ready, the refresh token in the key store only.
    let (open, seen) = browser();
    let statuses = tools.sign_in_at_idp("desk", identity("hearth-at-idp"), open).await.expect("signed in");
    let (landed, page) = seen.await.unwrap();
    assert!(
        landed.contains("/callback?") && landed.contains("code=") && page.contains("Hearth has your sign-in to desk"),
        "{landed} {page}"
    );
    assert!(matches!(&statuses[0].state, McpServerState::Ready { tools } if tools[0].name == "whoami"), "{statuses:?}");
    let outcome = tools.hub().call("desk", "whoami", serde_json::json!({}), &Default::default()).await.unwrap();
    assert_eq!(outcome.text, "a signed-in user");
    let counted = grants(&url).await;
    assert_eq!((counted["idp_sign_in"].as_u64(), counted["jwt_bearer"].as_u64()), (Some(1), Some(1)), "{counted}");
    let kept = keys.secret(Secret::McpClient("desk")).unwrap().expect("the identity is kept");
    let kept: serde_json::Value = serde_json::from_str(&kept).unwrap();
    let token = kept.pointer("/idpToken").and_then(|t| t.as_str()).unwrap_or_else(|| panic!("a token kept: {kept}")).to_owned();
    assert!(token.starts_with("ada-idp-refresh-") && kept.pointer("/idpTokenKind") == Some(&"refreshToken".into()), "{kept}");
    let saved = String::from_utf8_lossy(&std::fs::read(dir.path().join("hearth.db")).unwrap()).into_owned();
    assert!(!saved.contains(&token), "no token in the history file");

    // Its access ends mid-session: the refresh token is exchanged again, with no page.
    admin(&url, "/test/expire").await;
    let outcome = tools.hub().call("desk", "whoami", serde_json::json!({}), &Default::default()).await.unwrap();
    assert_eq!(outcome.text, "a signed-in user");
    assert_eq!(grants(&url).await["jwt_bearer"], 2);
}

/// Where a browser landed, and the page it found there.
type Landed = (String, String);

/// A "browser" for a sign-in page: it loads the page and follows its redirects, and tells where
/// it landed and the page it found there.
fn browser() -> (impl FnOnce(&str) -> Result<(), String>, tokio::sync::oneshot::Receiver<Landed>) {
    let (shown, seen) = tokio::sync::oneshot::channel();
    let open = move |page: &str| {
        let page = page.to_owned();
        tokio::spawn(async move {
            let answer = reqwest::get(&page).await.expect("the browser loads the page");
            let _ = shown.send((answer.url().to_string(), answer.text().await.unwrap_or_default()));
        });
        Ok(())
    };
    (open, seen)
}

/// Hearth's tool servers on a history file and key store of their own.
struct Hearth {
    dir: tempfile::TempDir,
    store: hearth_store::Store,
    keys: Arc<KeyStore>,
    tools: ToolServers,
}

/// … with one server, `name`, reached over HTTP at `url`.
async fn hearth_with(name: &str, url: &str) -> Hearth {
    let dir = tempfile::tempdir().unwrap();
    let store = hearth_store::Store::open(&dir.path().join("hearth.db")).await.unwrap();
    let keys = Arc::new(KeyStore::new(dir.path().join("keys.json")));
    let tools = ToolServers::open(Settings::new(store.clone()), keys.clone()).await.unwrap();
    tools.save(vec![http(name, url)]).await.unwrap();
    Hearth { dir, store, keys, tools }
}

/// The access and refresh tokens of tracker's kept sign-in.
fn kept_tokens(keys: &KeyStore) -> (String, String) {
    let kept = keys.secret(Secret::McpSignIn("tracker")).unwrap().expect("the sign-in is kept");
    let kept: serde_json::Value = serde_json::from_str(&kept).unwrap();
    let token = |key: &str| kept["token_response"][key].as_str().unwrap_or_else(|| panic!("no {key} in {kept}")).to_owned();
    (token("access_token"), token("refresh_token"))
}

/// Asks the test server's own endpoint `path` (tests/mcp/oauth.mjs) to end tokens.
async fn admin(url: &str, path: &str) {
    let at = url.replace("/mcp", path);
    reqwest::Client::new().post(&at).send().await.unwrap().error_for_status().unwrap();
}

/// The tokens the test server gave, by grant.
async fn grants(url: &str) -> serde_json::Value {
    reqwest::get(url.replace("/mcp", "/test/grants")).await.unwrap().json().await.unwrap()
}
