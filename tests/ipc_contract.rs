//! The window's contract with the backend stays in one piece: generated TypeScript types are
//! current, and the capability grants exactly the commands that get permissions (build.rs reads
//! the same `COMMANDS`; tests/app.rs checks each is registered).

use std::path::Path;

use hearth_app::ipc::{COMMANDS, typescript_bindings};

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn bindings_are_current() {
    let path = repo("ui/src/ipc/bindings.ts");
    let fresh = typescript_bindings();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/ipc/bindings.ts is stale: run `UPDATE_BINDINGS=1 cargo test -p hearth --test ipc_contract` and commit it"
    );
}

#[test]
fn the_capability_grants_exactly_the_commands() {
    let capability: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo("src-tauri/capabilities/main.json")).unwrap()).unwrap();
    let mut granted: Vec<String> = capability["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    let mut expected: Vec<String> = COMMANDS.iter().map(|c| format!("allow-{}", c.replace('_', "-"))).collect();
    // Beyond the commands, only listening for events: the window hears files dropped on it.
    expected.extend(["core:event:allow-listen".to_owned(), "core:event:allow-unlisten".to_owned()]);
    granted.sort();
    expected.sort();
    assert_eq!(granted, expected, "capabilities/main.json must grant exactly the registered commands and event listening");
}
