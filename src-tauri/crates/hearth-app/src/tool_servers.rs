//! Settings → Tools: the user's MCP servers, saved in the history database — all but their
//! environment and headers, which often hold tokens, and their sign-ins, which live in the
//! keychain — and supervised by hearth-mcp's hub (started when first needed, stopped at quit).

use std::collections::BTreeMap;
use std::sync::Arc;

use hearth_core::FieldError;
use hearth_mcp::oauth::{KeeperError, MachineCredentials, SignInKeeper};
use hearth_mcp::{McpHub, McpServerConfig, McpServerStatus, McpTransport, Timeouts, parse_mcp_servers};
use hearth_providers::{KeyStore, Secret};
use serde::{Deserialize, Serialize};

use crate::{Settings, SettingsError};

/// A server's secret parts, as kept in the keychain.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Secrets {
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// The user's MCP servers and their supervisor.
#[derive(Clone)]
pub struct ToolServers {
    hub: McpHub,
    settings: Settings,
    keys: Arc<KeyStore>,
}

impl ToolServers {
    /// The servers as saved, none started.
    pub async fn open(settings: Settings, keys: Arc<KeyStore>) -> Result<Self, SettingsError> {
        let mut configs = settings.mcp_servers().await?;
        for config in &mut configs {
            let secrets = match keys.secret(Secret::McpServer(&config.name)) {
                Ok(json) => json.and_then(|json| serde_json::from_str::<Secrets>(&json).ok()).unwrap_or_default(),
                Err(e) => {
                    tracing::warn!(server = config.name, error = %e, "an MCP server's environment could not be read from the keychain");
                    Secrets::default()
                }
            };
            put_secrets(config, secrets);
        }
        let hub = McpHub::new(configs, Timeouts::default());
        let servers = ToolServers { hub, settings, keys };
        servers.hub.set_sign_in_keeper(servers.sign_ins());
        Ok(servers)
    }

    /// Where the servers' sign-ins are kept.
    pub(crate) fn sign_ins(&self) -> Arc<dyn SignInKeeper> {
        Arc::new(KeychainSignIns(self.keys.clone()))
    }

    pub fn hub(&self) -> &McpHub {
        &self.hub
    }

    pub fn statuses(&self) -> Vec<McpServerStatus> {
        self.hub.statuses()
    }

    /// Checks, saves and puts in force the user's list: servers changed or gone are stopped.
    pub async fn save(&self, configs: Vec<McpServerConfig>) -> Result<Vec<McpServerStatus>, SettingsError> {
        for (i, config) in configs.iter().enumerate() {
            config.check().map_err(|e| FieldError::new("mcpServers", e.to_string()))?;
            if configs[..i].iter().any(|c| c.name == config.name) {
                return Err(FieldError::new("mcpServers", format!("two servers are named {:?}", config.name)).into());
            }
        }
        let mut saved = Vec::with_capacity(configs.len());
        for config in &configs {
            let (public, secrets) = take_secrets(config.clone());
            if secrets == Secrets::default() {
                self.keys.delete(Secret::McpServer(&config.name))?;
            } else {
                self.keys.set(Secret::McpServer(&config.name), &serde_json::to_string(&secrets).expect("secrets serialize"))?;
            }
            saved.push(public);
        }
        for gone in self.hub.statuses().iter().filter(|s| !configs.iter().any(|c| c.name == s.config.name)) {
            self.keys.delete(Secret::McpServer(&gone.config.name))?;
            self.keys.delete(Secret::McpSignIn(&gone.config.name))?;
            self.keys.delete(Secret::McpClient(&gone.config.name))?;
        }
        self.settings.set_mcp_servers(&saved).await?;
        self.hub.set_configs(configs).await;
        Ok(self.statuses())
    }

    /// Adds the servers of pasted `mcpServers` JSON (one of the same name is replaced).
    pub async fn add_pasted(&self, text: &str) -> Result<Vec<McpServerStatus>, SettingsError> {
        let pasted = parse_mcp_servers(text).map_err(|e| FieldError::new("mcpServers", e.to_string()))?;
        let mut configs: Vec<McpServerConfig> =
            self.statuses().into_iter().map(|s| s.config).filter(|c| !pasted.iter().any(|p| p.name == c.name)).collect();
        configs.extend(pasted);
        self.save(configs).await
    }

    /// Keeps `credentials` in the keychain as the machine client server `name` is signed in to
    /// as, in place of the user's own sign-in.
    pub(crate) fn keep_machine_client(&self, name: &str, credentials: &MachineCredentials) -> Result<(), SettingsError> {
        let json = serde_json::to_string(credentials).expect("credentials serialize");
        self.keys.set(Secret::McpClient(name), &json)?;
        self.keys.delete(Secret::McpSignIn(name))?;
        Ok(())
    }

    /// Forgets the machine client server `name` was signed in to as (the user signed in).
    pub(crate) fn forget_machine_client(&self, name: &str) -> Result<(), SettingsError> {
        Ok(self.keys.delete(Secret::McpClient(name))?)
    }

    /// Stops the server if it runs and starts it again; a failure shows in its state.
    pub async fn restart(&self, name: &str) -> Result<Vec<McpServerStatus>, FieldError> {
        if let Err(hearth_mcp::McpError::UnknownServer(_)) = self.hub.restart(name).await {
            return Err(FieldError::new("name", format!("no MCP server is named {name:?}")));
        }
        Ok(self.statuses())
    }

    /// Stops the server; it starts again when next needed.
    pub async fn stop(&self, name: &str) -> Result<Vec<McpServerStatus>, FieldError> {
        self.hub.stop(name).await.map_err(|e| FieldError::new("name", e.to_string()))?;
        Ok(self.statuses())
    }
}

/// The servers' sign-ins, in the keychain beside their environment and headers.
struct KeychainSignIns(Arc<KeyStore>);

impl SignInKeeper for KeychainSignIns {
    fn load(&self, server: &str) -> Result<Option<String>, KeeperError> {
        Ok(self.0.secret(Secret::McpSignIn(server))?)
    }

    fn save(&self, server: &str, sign_in: Option<&str>) -> Result<(), KeeperError> {
        match sign_in {
            Some(json) => self.0.set(Secret::McpSignIn(server), json).map(drop)?,
            None => self.0.delete(Secret::McpSignIn(server))?,
        }
        Ok(())
    }

    fn machine_client(&self, server: &str) -> Result<Option<MachineCredentials>, KeeperError> {
        let Some(json) = self.0.secret(Secret::McpClient(server))? else { return Ok(None) };
        Ok(Some(serde_json::from_str(&json)?))
    }
}

/// The config without its secret values (their names kept, so the form shows what is set), and
/// the values.
fn take_secrets(mut config: McpServerConfig) -> (McpServerConfig, Secrets) {
    let mut secrets = Secrets::default();
    match &mut config.transport {
        McpTransport::Stdio { env, .. } => {
            secrets.env = env.clone();
            env.values_mut().for_each(String::clear);
        }
        McpTransport::Http { headers, .. } => {
            secrets.headers = headers.clone();
            headers.values_mut().for_each(String::clear);
        }
    }
    (config, secrets)
}

fn put_secrets(config: &mut McpServerConfig, secrets: Secrets) {
    let (kept, values) = match &mut config.transport {
        McpTransport::Stdio { env, .. } => (env, secrets.env),
        McpTransport::Http { headers, .. } => (headers, secrets.headers),
    };
    for (name, value) in values {
        if let Some(slot) = kept.get_mut(&name) {
            *slot = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_leave_the_saved_config_and_come_back() {
        let config =
            parse_mcp_servers(r#"{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_secret"}}}}"#).unwrap().remove(0);
        let (public, secrets) = take_secrets(config.clone());
        assert!(!serde_json::to_string(&public).unwrap().contains("ghp_secret"));
        assert!(matches!(&public.transport, McpTransport::Stdio { env, .. } if env["GITHUB_TOKEN"].is_empty()));
        let mut restored = public;
        put_secrets(&mut restored, secrets);
        assert_eq!(restored, config);
    }
}
