//! The window's contract with the backend stays in one piece: generated TypeScript types are
//! current, and the capability grants exactly the commands that get permissions (build.rs reads
//! the same `COMMANDS`; tests/app.rs checks each is registered).

use std::path::Path;

use hearth_shell::ipc::{COMMANDS, typescript_bindings};

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

/// Every granted command is one the window's typed client calls, and it calls no other: the
/// capability is the window's real surface, not a wish list.
#[test]
fn the_window_calls_exactly_the_granted_commands() {
    let client = std::fs::read_to_string(repo("ui/src/ipc/client.ts")).unwrap();
    let called: std::collections::BTreeSet<&str> = client
        // Every other piece between single quotes is a quoted string (an iterator skip, not a skipped test).
        .split('\'')
        .skip(1)
        .step_by(2)
        .filter(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') && word.contains('_'))
        .collect();
    let registered: std::collections::BTreeSet<&str> = COMMANDS.iter().copied().collect();
    let unused: Vec<_> = registered.difference(&called).collect();
    let unknown: Vec<_> = called.difference(&registered).collect();
    assert!(unused.is_empty(), "granted but never called by ui/src/ipc/client.ts: {unused:?}");
    assert!(unknown.is_empty(), "called by the client but not registered: {unknown:?}");
}

/// Model output is untrusted HTML: the CSP is the second wall behind the sanitizer. No inline or
/// evaluated script, nothing from a remote origin, no plugins, frames, forms or base changes.
#[test]
fn the_csp_is_strict() {
    let conf: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo("tauri.conf.json")).unwrap()).unwrap();
    let security = &conf["app"]["security"];
    assert!(security.get("dangerousDisableAssetCspModification").is_none());
    let csp = security["csp"].as_object().expect("a CSP as directives");
    let expected = [
        ("default-src", "'self'"),
        ("script-src", "'self'"),
        ("object-src", "'none'"),
        ("base-uri", "'none'"),
        ("form-action", "'none'"),
        ("frame-src", "'none'"),
    ];
    for (directive, sources) in expected {
        assert_eq!(csp.get(directive).and_then(|v| v.as_str()), Some(sources), "{directive}");
    }
    for (directive, sources) in csp {
        for source in sources.as_str().unwrap().split_whitespace() {
            let local = source.starts_with('\'')
                || ["data:", "ipc:", "http://ipc.localhost"].contains(&source);
            assert!(local, "{directive} allows {source}: only the app itself, its IPC and inline data");
            assert_ne!(source, "'unsafe-eval'", "{directive}");
            if directive != "style-src" {
                assert_ne!(source, "'unsafe-inline'", "{directive}: only styles may be inline (KaTeX sets them)");
            }
        }
    }
}
