// The commands the window may call, by name. One list for two readers: build.rs (`include!`),
// which gives each an `allow-<name>` permission, and `ipc::handler`'s registration (a test checks
// the two and capabilities/main.json agree).
pub const COMMANDS: &[&str] = &[
    "list_chats",
    "create_chat",
    "list_messages",
    "send_message",
    "stop_generation",
    "active_model",
    "get_load_settings",
    "set_load_settings",
    "reload_model",
    "get_sampling",
    "set_sampling",
    "clear_sampling",
    "save_preset",
    "delete_preset",
];
