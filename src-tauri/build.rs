/// Every command the window may call. Each gets an `allow-<name>` permission, and nothing is
/// allowed unless capabilities/ grants it. Keep in step with `ipc::COMMANDS` (a test checks).
const COMMANDS: &[&str] = &[
    "list_chats",
    "create_chat",
    "list_messages",
    "send_message",
    "stop_generation",
    "active_model",
];

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/capabilities");
    let manifest = tauri_build::AppManifest::new().commands(COMMANDS);
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("./src-tauri/capabilities/**/*")
        .app_manifest(manifest);
    tauri_build::try_build(attributes).expect("tauri-build failed");
}
