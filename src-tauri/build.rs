// Each command gets an `allow-<name>` permission; nothing is allowed unless capabilities/ grants it.
include!("ipc/commands.rs");

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/capabilities");
    println!("cargo:rerun-if-changed=src-tauri/ipc/commands.rs");
    let manifest = tauri_build::AppManifest::new().commands(COMMANDS);
    let attributes = tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*").app_manifest(manifest);
    tauri_build::try_build(attributes).expect("tauri-build failed");
}
