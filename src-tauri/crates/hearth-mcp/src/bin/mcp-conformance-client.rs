//! The MCP conformance suite's client under test (`@modelcontextprotocol/conformance client`,
//! run by tests/conformance.rs; not part of the app): Hearth's MCP client reaches the scenario's server at the URL
//! given last, lists its tools and calls each with arguments made from its schema, as a chat's
//! tool round would. A server that asks to sign in is signed in to (`hearth_mcp::oauth`, as the
//! app does, the sign-in page followed here instead of shown in a browser; kept in memory, so its
//! token is refreshed as the app's is) and used with its token; a server that asks again (more
//! scopes) is signed in to again, three times at most; in the scenarios of machine-to-machine
//! grants, as a machine client (`hearth_mcp::oauth::sign_in_as_client`), and so with an
//! enterprise identity in cross-app access's. A server's
//! question mid-call is answered as a user who sends its form as it came. Exits
//! non-zero, with the error in words, when the server cannot be used.

use std::sync::{Arc, Mutex};

use hearth_mcp::oauth::{
    EnterpriseIdentity, IdpTokenKind, KeeperError, KeptSignIn, MachineCredentials, OAuthClient, SignInKeeper, sign_in, sign_in_as_client,
};
use hearth_mcp::questions::Answer;
use hearth_mcp::{CallOptions, McpError, McpHub, McpServerConfig, McpTransport, Timeouts};
use serde_json::{Map, Value, json};

/// Where the sign-in page redirects: never reached here (the redirect is read, not followed).
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// Hearth's client metadata document, as the suite names the client's.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Sign-ins tried before giving up (a server that always asks again).
const MOST_SIGN_INS: usize = 3;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let Some(url) = std::env::args().next_back() else {
        eprintln!("usage: mcp-conformance-client <server url>");
        return std::process::ExitCode::FAILURE;
    };
    let hub = McpHub::new(vec![config(&url)], Timeouts::default());
    let kept: Arc<dyn SignInKeeper> = Arc::new(InMemory::default());
    hub.set_sign_in_keeper(kept.clone());
    // A server's question is answered as a user who sends its form as it came: its defaults.
    hub.set_asker(Arc::new(|_question| Box::pin(async { Answer::Accept { content: Map::new() } })));
    let mut result = run(&hub).await;
    for _ in 0..MOST_SIGN_INS {
        let Err(McpError::SignIn { challenge }) = &result else { break };
        let signed_in = KeptSignIn::new(SERVER, kept.clone());
        let signed = match machine() {
            Some(credentials) => sign_in_as_client(&url, &credentials, Vec::new(), signed_in).await,
            None => sign_in(&url, Some(challenge.as_str()), &client(), signed_in, REDIRECT_URI, follow).await,
        };
        if let Err(error) = signed {
            result = Err(error);
            break;
        }
        let _ = hub.restart(SERVER).await;
        result = run(&hub).await;
    }
    hub.stop_all().await;
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The server's name in the hub.
const SERVER: &str = "conformance";

/// The sign-in kept for this run only.
#[derive(Default)]
struct InMemory(Mutex<Option<String>>);

impl SignInKeeper for InMemory {
    fn load(&self, _server: &str) -> Result<Option<String>, KeeperError> {
        Ok(self.0.lock().expect("sign-in poisoned").clone())
    }

    fn save(&self, _server: &str, sign_in: Option<&str>) -> Result<(), KeeperError> {
        *self.0.lock().expect("sign-in poisoned") = sign_in.map(String::from);
        Ok(())
    }
}

fn config(url: &str) -> McpServerConfig {
    McpServerConfig {
        name: SERVER.into(),
        transport: McpTransport::Http { url: url.into(), headers: Default::default() },
        enabled: true,
        disabled_tools: Vec::new(),
    }
}

/// What the scenario gives its client (`MCP_CONFORMANCE_CONTEXT`): a client id, a secret, a key.
fn context(key: &str) -> Option<String> {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT").ok().and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default();
    context.get(key).and_then(Value::as_str).map(String::from)
}

/// Hearth as the suite's scenarios know their client: a pre-registered one where the scenario
/// gives it, and its metadata document's address.
fn client() -> OAuthClient {
    OAuthClient { client_id: context("client_id"), client_secret: context("client_secret"), metadata_url: Some(CLIENT_METADATA_URL.into()) }
}

/// A machine client's credentials, in the scenarios of machine-to-machine grants (named
/// `auth/client-credentials-*`: set up as a user would set up such a server): the client id
/// with its private key where the scenario gives one, else with its secret. Where the scenario
/// gives an identity provider's ID token (cross-app access), the user's enterprise identity.
fn machine() -> Option<MachineCredentials> {
    if let Some(idp_token) = context("idp_id_token") {
        return Some(MachineCredentials::Enterprise(EnterpriseIdentity {
            idp_issuer: context("idp_issuer")?,
            idp_client_id: context("idp_client_id")?,
            idp_client_secret: context("idp_client_secret").unwrap_or_default(),
            idp_token,
            idp_token_kind: IdpTokenKind::IdToken,
            client_id: context("client_id")?,
            client_secret: context("client_secret").unwrap_or_default(),
        }));
    }
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    if !scenario.starts_with("auth/client-credentials") {
        return None;
    }
    let client_id = context("client_id")?;
    match context("private_key_pem") {
        Some(key_pem) => {
            let algorithm = context("signing_algorithm").unwrap_or_else(|| "ES256".into());
            Some(MachineCredentials::PrivateKey { client_id, key_pem, algorithm })
        }
        None => Some(MachineCredentials::Secret { client_id, client_secret: context("client_secret")? }),
    }
}

/// The sign-in page, followed as a browser would up to its redirect, which is read (the
/// suite's authorization server approves at once).
async fn follow(page: String) -> Result<String, McpError> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| McpError::SignInFailed(e.to_string()))?;
    let answer = http.get(&page).send().await.map_err(|e| McpError::SignInFailed(e.to_string()))?;
    answer
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|location| location.to_str().ok())
        .map(String::from)
        .ok_or_else(|| McpError::SignInFailed(format!("the sign-in page answered {} without a redirect", answer.status())))
}

async fn run(hub: &McpHub) -> Result<(), McpError> {
    for tool in hub.tools(SERVER).await? {
        let arguments = example_of(&tool.input_schema);
        let outcome = hub.call(SERVER, &tool.name, arguments, &CallOptions::default()).await?;
        println!("{}: {}{}", tool.name, if outcome.is_error { "error: " } else { "" }, outcome.text);
    }
    Ok(())
}
/// Arguments that fit a schema: each property given a value of its type.
fn example_of(schema: &Value) -> Value {
    let mut arguments = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let value = match property.get("type").and_then(Value::as_str) {
                Some("number" | "integer") => json!(2),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("hearth"),
            };
            arguments.insert(name.clone(), value);
        }
    }
    Value::Object(arguments)
}
