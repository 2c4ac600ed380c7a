//! TypeScript types for the window, generated from the commands: the types their arguments,
//! Channels and results are made of (and the error every rejection carries), each declared once,
//! by name.
//! The committed copy is ui/src/ipc/bindings.ts; a test fails when it is stale
//! (`UPDATE_BINDINGS=1` rewrites it).

use ts_rs::TypeVisitor;

use super::IpcError;
use super::contract::Declarations;

/// The full text of ui/src/ipc/bindings.ts.
pub fn typescript_bindings() -> String {
    let commands = super::contracts();
    let mut types = Declarations::default();
    types.visit::<IpcError>();
    for command in &commands {
        (command.declare)(&mut types);
    }
    let mut out = String::from(
        "// Generated from the Rust types and commands by `UPDATE_BINDINGS=1 cargo test -p hearth --test ipc_contract`.\n// Do not edit by hand.\n\nimport { Channel, invoke } from '@tauri-apps/api/core';\n\n",
    );
    for decl in types.into_decls() {
        out.push_str("export ");
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    out.push_str(&super::typescript_commands(&commands));
    out
}
