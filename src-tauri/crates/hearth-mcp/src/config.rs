//! What an MCP server is to Hearth: a name, how to reach it, whether it is on, and which of its
//! tools are off. Read from a form or from the `mcpServers` JSON people already have from Claude
//! Desktop, Cursor, LM Studio or VS Code.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

/// One MCP server the user added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerConfig {
    /// How the user calls it, and how Hearth tells servers apart.
    pub name: String,
    pub transport: McpTransport,
    /// Off: never started, its tools never offered.
    pub enabled: bool,
    /// Tools the user switched off: not offered to the model.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
}

/// How Hearth reaches a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum McpTransport {
    /// A program Hearth starts, speaking JSON-RPC on its stdin and stdout.
    #[serde(rename_all = "camelCase")]
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        #[serde(default)]
        cwd: Option<String>,
    },
    /// A server already running, at a Streamable HTTP endpoint.
    #[serde(rename_all = "camelCase")]
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

/// A server's settings that cannot be used, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("this is not JSON: {0}")]
    NotJson(String),
    #[error("expected an object of servers, as in {{\"mcpServers\": {{\"name\": {{\"command\": …}}}}}}")]
    NoServers,
    #[error("server {0:?}: {1}")]
    Server(String, String),
    #[error("a server needs a name")]
    NoName,
    #[error("two servers are named {0:?}")]
    Duplicate(String),
}

impl McpServerConfig {
    /// Checks what starting it relies on.
    pub fn check(&self) -> Result<(), ConfigError> {
        let name = self.name.trim();
        if name.is_empty() {
            return Err(ConfigError::NoName);
        }
        let bad = |why: &str| Err(ConfigError::Server(self.name.clone(), why.into()));
        match &self.transport {
            McpTransport::Stdio { command, env, .. } => {
                if command.trim().is_empty() {
                    return bad("it needs a command to start");
                }
                if let Some(key) = env.keys().find(|k| k.is_empty() || k.contains('=') || k.contains('\0')) {
                    return bad(&format!("{key:?} is not an environment variable's name"));
                }
            }
            McpTransport::Http { url, headers } => {
                let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
                    return bad("its URL must start with http:// or https://");
                };
                if rest.is_empty() || rest.starts_with('/') {
                    return bad("its URL names no host");
                }
                if let Some(key) = headers.keys().find(|k| k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic() && b != b':')) {
                    return bad(&format!("{key:?} is not a header's name"));
                }
                if let Some(key) = headers.iter().find(|(_, v)| v.contains(['\r', '\n'])).map(|(k, _)| k) {
                    return bad(&format!("header {key:?} holds a line break"));
                }
            }
        }
        Ok(())
    }
}

/// Reads pasted server settings: `{"mcpServers": {...}}` (Claude Desktop, Cursor, LM Studio),
/// `{"servers": {...}}` (VS Code), or the bare object of servers. Each entry has a `command`
/// (with `args`, `env`, `cwd`) or a `url` (with `headers`); `"disabled": true` adds it switched off,
/// `"disabledTools": [...]` with those tools off.
pub fn parse_mcp_servers(text: &str) -> Result<Vec<McpServerConfig>, ConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::NotJson(e.to_string()))?;
    let Value::Object(mut root) = value else { return Err(ConfigError::NoServers) };
    let servers = match ["mcpServers", "servers"].iter().find_map(|key| root.remove(*key)) {
        Some(Value::Object(servers)) => servers,
        Some(_) => return Err(ConfigError::NoServers),
        None => root,
    };
    if servers.is_empty() {
        return Err(ConfigError::NoServers);
    }
    let mut configs: Vec<McpServerConfig> = Vec::new();
    for (name, entry) in servers {
        let config = read_entry(&name, entry)?;
        config.check()?;
        if configs.iter().any(|c| c.name == config.name) {
            return Err(ConfigError::Duplicate(config.name));
        }
        configs.push(config);
    }
    Ok(configs)
}

fn read_entry(name: &str, entry: Value) -> Result<McpServerConfig, ConfigError> {
    let bad = |why: String| ConfigError::Server(name.to_owned(), why);
    let Value::Object(entry) = entry else { return Err(bad("its settings are not an object".into())) };
    let kind = entry.get("type").and_then(Value::as_str);
    if kind == Some("sse") {
        return Err(bad(
            "it uses the old SSE transport, which Hearth does not speak; give the server's Streamable HTTP URL (often ending in /mcp)"
                .into(),
        ));
    }
    let text = |key: &str| -> Result<Option<String>, ConfigError> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad(format!("its {key:?} is not a string"))),
        }
    };
    let strings = |key: &str| -> Result<Vec<String>, ConfigError> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| bad(format!("its {key:?} holds something not a string"))))
                .collect(),
            Some(_) => Err(bad(format!("its {key:?} is not a list"))),
        }
    };
    let table = |key: &str| -> Result<BTreeMap<String, String>, ConfigError> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => string_table(map).ok_or_else(|| bad(format!("its {key:?} holds a value that is not a string"))),
            Some(_) => Err(bad(format!("its {key:?} is not an object"))),
        }
    };
    let transport = match (text("command")?, text("url")?) {
        (Some(command), None) => McpTransport::Stdio { command, args: strings("args")?, env: table("env")?, cwd: text("cwd")? },
        (None, Some(url)) => McpTransport::Http { url, headers: table("headers")? },
        (Some(_), Some(_)) => return Err(bad("it has both a command and a url; keep one".into())),
        (None, None) => return Err(bad("it has neither a command to start nor a url to reach".into())),
    };
    let disabled = entry.get("disabled").and_then(Value::as_bool).unwrap_or(false);
    // Hearth's own key: the tools switched off (what Settings → Tools saves).
    let disabled_tools = strings("disabledTools")?;
    Ok(McpServerConfig { name: name.to_owned(), transport, enabled: !disabled, disabled_tools })
}

fn string_table(map: &Map<String, Value>) -> Option<BTreeMap<String, String>> {
    map.iter().map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(name: &str, command: &str, args: &[&str]) -> McpServerConfig {
        McpServerConfig {
            name: name.into(),
            transport: McpTransport::Stdio {
                command: command.into(),
                args: args.iter().map(|a| (*a).to_owned()).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
            enabled: true,
            disabled_tools: Vec::new(),
        }
    }

    #[test]
    fn reads_the_formats_people_paste() {
        let claude =
            r#"{"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}"#;
        assert_eq!(
            parse_mcp_servers(claude).unwrap(),
            vec![stdio("filesystem", "npx", &["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])]
        );

        let vscode =
            r#"{"servers": {"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}}}}"#;
        let [remote] = &parse_mcp_servers(vscode).unwrap()[..] else { panic!() };
        assert_eq!(
            remote.transport,
            McpTransport::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer x".to_owned())].into()
            }
        );

        let bare =
            r#"{"everything": {"command": "mcp-server-everything", "env": {"A": "1"}, "disabled": true, "disabledTools": ["echo"]}}"#;
        let [everything] = &parse_mcp_servers(bare).unwrap()[..] else { panic!() };
        assert!(!everything.enabled);
        assert_eq!(everything.disabled_tools, ["echo"]);
        assert!(matches!(&everything.transport, McpTransport::Stdio { env, .. } if env["A"] == "1"));
    }

    #[test]
    fn refuses_what_cannot_start_in_words() {
        let cases: &[(&str, &str)] = &[
            ("{", "this is not JSON"),
            ("[]", "expected an object of servers"),
            (r#"{"mcpServers": {}}"#, "expected an object of servers"),
            (r#"{"mcpServers": {"a": {}}}"#, "server \"a\": it has neither a command to start nor a url to reach"),
            (r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#, "both a command and a url"),
            (r#"{"mcpServers": {"a": {"command": ""}}}"#, "it needs a command to start"),
            (r#"{"mcpServers": {"a": {"command": "x", "args": "-y"}}}"#, "its \"args\" is not a list"),
            (r#"{"mcpServers": {"a": {"command": "x", "args": [1]}}}"#, "its \"args\" holds something not a string"),
            (r#"{"mcpServers": {"a": {"command": "x", "env": {"A": 1}}}}"#, "its \"env\" holds a value that is not a string"),
            (r#"{"mcpServers": {"a": {"command": "x", "env": {"A=B": "1"}}}}"#, "is not an environment variable's name"),
            (r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#, "must start with http:// or https://"),
            (r#"{"mcpServers": {"a": {"url": "http:///mcp"}}}"#, "names no host"),
            (r#"{"mcpServers": {"a": {"url": "http://h", "headers": {"X": "a\r\nB: c"}}}}"#, "holds a line break"),
            (r#"{"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}"#, "old SSE transport"),
            (r#"{"mcpServers": {"": {"command": "x"}}}"#, "a server needs a name"),
        ];
        for (text, expected) in cases {
            let error = parse_mcp_servers(text).expect_err(text).to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
