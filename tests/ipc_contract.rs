//! The window's contract with the backend stays in one piece: generated TypeScript types are
//! current, and the capability grants exactly the commands that get permissions (build.rs reads
//! the same `COMMANDS`; tests/app.rs checks each is registered).

use std::path::Path;

use hearth_shell::ipc::{COMMANDS, contract_data, contracts, typescript_bindings};

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Generated files: the types and the command client, and the data the window must not derive
/// again. `UPDATE_BINDINGS=1` rewrites them.
#[test]
fn generated_files_are_current() {
    for (file, fresh) in [("ui/src/ipc/bindings.ts", typescript_bindings()), ("ui/src/ipc/contract.json", contract_data())] {
        let path = repo(file);
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(committed == fresh, "{file} is stale: run `UPDATE_BINDINGS=1 cargo test -p hearth --test ipc_contract` and commit it");
    }
}

/// The registered commands (whose contracts generate the client) are `COMMANDS`, which build.rs
/// gives permissions, in the same order.
#[test]
fn the_generated_client_has_exactly_the_registered_commands() {
    let generated: Vec<&str> = contracts().iter().map(|c| c.name).collect();
    assert_eq!(generated, COMMANDS);
    let bindings = typescript_bindings();
    for contract in contracts() {
        assert!(bindings.contains(&format!("invoke<{}>('{}'", contract.returns, contract.name)), "{}", contract.name);
    }
}

#[test]
fn the_capability_grants_exactly_the_commands() {
    let capability: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo("src-tauri/capabilities/main.json")).unwrap()).unwrap();
    let mut granted: Vec<String> = capability["permissions"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_owned()).collect();
    let mut expected: Vec<String> = COMMANDS.iter().map(|c| format!("allow-{}", c.replace('_', "-"))).collect();
    // Beyond the commands, only listening for events: the window hears files dropped on it.
    expected.extend(["core:event:allow-listen".to_owned(), "core:event:allow-unlisten".to_owned()]);
    granted.sort();
    expected.sort();
    assert_eq!(granted, expected, "capabilities/main.json must grant exactly the registered commands and event listening");
}

/// Every granted command is one the window uses: the capability is the window's real surface,
/// not a wish list. (The generated client has them all; the rest of ui/src must call each.)
#[test]
fn the_window_uses_every_granted_command() {
    fn sources(dir: &Path, out: &mut String) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|x| x == "ts" || x == "svelte") && !path.ends_with("ipc/bindings.ts") {
                out.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut ui = String::new();
    sources(&repo("ui/src"), &mut ui);
    let unused: Vec<String> = contracts()
        .iter()
        .map(|c| c.name.split('_').enumerate().map(|(i, w)| if i == 0 { w.to_owned() } else { w[..1].to_uppercase() + &w[1..] }).collect())
        .filter(|camel: &String| !ui.contains(&format!(".{camel}(")))
        .collect();
    assert!(unused.is_empty(), "granted but never called in ui/src: {unused:?}");
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
            let local = source.starts_with('\'') || ["data:", "ipc:", "http://ipc.localhost"].contains(&source);
            assert!(local, "{directive} allows {source}: only the app itself, its IPC and inline data");
            assert_ne!(source, "'unsafe-eval'", "{directive}");
            if directive != "style-src" {
                assert_ne!(source, "'unsafe-inline'", "{directive}: only styles may be inline (KaTeX sets them)");
            }
        }
    }
}
