//! The IPC surface: the only place that knows the wire format the window speaks.

mod bindings;
pub mod chat;
pub mod contract;
mod error;
mod fixtures;
pub mod hub;
pub mod models;
mod providers;
mod server;
mod settings;
mod tools;
mod transfer;
mod updates;

pub use bindings::typescript_bindings;
pub use chat::{ChatEvent, CompareEvent, FailedReply, MessageSaved, ReplyStarted, TextDelta};
pub use contract::{CommandContract, typescript_commands};
pub use error::{IpcError, IpcErrorKind};
pub use fixtures::contract_data;
pub use hub::HubTokenStatus;
pub use models::{ChatModelLoaded, LoadSettings};
pub use providers::{ConnectionReport, ProviderView};
pub use settings::SamplingSettings;

include!("commands.rs");

/// Registers the commands and lists their contracts: one list for both. It must name the
/// commands of `COMMANDS` in the same order (a test checks).
macro_rules! register {
    ($($module:ident :: $command:ident),* $(,)?) => {
        /// Registers every command.
        pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$($module::$command),*]
        }

        /// Every command as the window calls it, read off its signature.
        pub fn contracts() -> Vec<contract::CommandContract> {
            vec![$($module::$command::contract()),*]
        }
    };
}

register! {
    chat::list_chats,
    chat::create_chat,
    chat::list_messages,
    chat::send_message,
    chat::attach_file,
    chat::attach_bytes,
    chat::get_attached_image,
    chat::get_embedding_model,
    chat::set_embedding_model,
    chat::pick_attachments,
    chat::get_attachment_limits,
    chat::set_attachment_limits,
    chat::stop_generation,
    chat::answer_tool_call,
    chat::rerun_tool_calls,
    chat::prefill_draft,
    chat::edit_message,
    chat::regenerate_reply,
    chat::continue_reply,
    chat::branch_reply,
    chat::token_probs,
    chat::compare_replies,
    chat::switch_branch,
    chat::delete_message,
    chat::rename_chat,
    chat::pin_chat,
    chat::set_system_prompt,
    chat::delete_chat,
    chat::search_messages,
    chat::watch_chats,
    transfer::export_chats,
    transfer::import_chats,
    models::active_model,
    models::compute_devices,
    models::get_load_settings,
    models::set_load_settings,
    models::reload_model,
    models::load_chat_model,
    models::use_local_model,
    models::watch_model,
    models::chat_cache_usage,
    models::set_chat_cache_budgets,
    models::clear_chat_caches,
    server::get_server,
    server::set_server,
    server::set_server_key,
    settings::get_sampling,
    settings::set_sampling,
    settings::clear_sampling,
    settings::save_preset,
    settings::delete_preset,
    providers::list_providers,
    providers::save_provider,
    providers::delete_provider,
    providers::set_api_key,
    providers::list_provider_models,
    providers::test_provider,
    providers::set_chat_model,
    providers::sampling_support_for,
    hub::hub_search,
    hub::hub_repo_files,
    hub::hub_fit,
    hub::starter_model,
    updates::update_status,
    updates::set_update_settings,
    updates::check_update,
    updates::install_update,
    hub::start_download,
    hub::list_downloads,
    hub::watch_downloads,
    hub::pause_download,
    hub::resume_download,
    hub::cancel_download,
    hub::list_library,
    hub::import_model,
    hub::import_model_dialog,
    hub::delete_model,
    hub::reveal_model,
    hub::load_model,
    hub::cancel_load,
    hub::unload_model,
    hub::hub_token_status,
    hub::set_hub_token,
    tools::list_tool_servers,
    tools::save_tool_servers,
    tools::add_tool_servers,
    tools::restart_tool_server,
    tools::sign_in_tool_server,
    tools::sign_in_tool_server_as_client,
    tools::sign_in_tool_server_at_idp,
    tools::watch_tool_questions,
    tools::answer_tool_question,
    tools::stop_tool_server,
    tools::watch_tool_servers,
}

/// Opens `target` (a folder, a web page) with the system's own program for it.
pub(crate) fn open_with_system(target: &std::ffi::OsStr) -> Result<(), String> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener).arg(target).spawn().map(drop).map_err(|e| e.to_string())
}
