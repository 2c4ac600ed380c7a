//! The MCP conformance suite's client under test (`@modelcontextprotocol/conformance client`,
//! run by tests/conformance.rs; not part of the app): Hearth's MCP client reaches the scenario's server at the URL
//! given last, lists its tools and calls each with arguments made from its schema, as a chat's
//! tool round would. Exits non-zero, with the error in words, when the server cannot be used.

use std::collections::BTreeMap;

use hearth_mcp::{CallOptions, McpHub, McpServerConfig, McpTransport, Timeouts};
use serde_json::{Map, Value, json};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let Some(url) = std::env::args().next_back() else {
        eprintln!("usage: mcp-conformance-client <server url>");
        return std::process::ExitCode::FAILURE;
    };
    let config = McpServerConfig {
        name: "conformance".into(),
        transport: McpTransport::Http { url, headers: BTreeMap::new() },
        enabled: true,
        disabled_tools: Vec::new(),
    };
    let hub = McpHub::new(vec![config], Timeouts::default());
    let code = match run(&hub).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    };
    hub.stop_all().await;
    code
}

async fn run(hub: &McpHub) -> Result<(), hearth_mcp::McpError> {
    for tool in hub.tools("conformance").await? {
        let arguments = example_of(&tool.input_schema);
        let outcome = hub.call("conformance", &tool.name, arguments, &CallOptions::default()).await?;
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
