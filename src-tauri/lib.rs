//! The Hearth desktop shell: wires `hearth-app` into a Tauri window — plugins, state, command
//! registration, Channels. The app's rules live in `hearth-app`; commands in `ipc/` are thin
//! adapters.

pub mod ipc;
mod logging;
mod paths;
mod state;
mod transfer;
pub mod updates;
mod watchers;
pub mod webview_render;

use hearth_app::opened_files::command_line_files;
use tauri::{Manager, Runtime};
use tauri_plugin_dialog::{DialogExt, MessageDialogKind};

pub use state::AppState;
pub use transfer::{export_to, import_from};

/// Runs the desktop app.
pub fn run() {
    let app = app_builder(tauri::Builder::default()).build(context());
    let app = match app {
        Ok(app) => app,
        Err(e) => fail(&format!("the window system could not start: {e}")),
    };
    if let Err(e) = init(app.handle()) {
        return fail_in_window(app, &e.to_string());
    }
    app.run(|app, event| {
        if let tauri::RunEvent::Exit = event {
            shutdown(app);
        }
    });
}

/// Stops generation and ends the engine thread before the process exits.
pub fn shutdown<R: Runtime>(app: &tauri::AppHandle<R>) {
    if let Some(state) = app.try_state::<AppState>() {
        state.chat.stop_all();
        state.engine.shutdown();
        // MCP servers end with Hearth, each process group whole. Not through the runtime: the app
        // may exit from one of its threads (an update's restart), where blocking on it panics.
        state.tools.hub().kill_all_now();
    }
}

/// Says why Hearth cannot start in a dialog (a desktop user never sees stderr), then quits.
fn fail_in_window(app: tauri::App, message: &str) {
    tracing::error!("{message}");
    eprintln!("Hearth could not start: {message}");
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.hide();
    }
    let handle = app.handle().clone();
    let mut sentence = message.to_owned();
    if let Some(first) = sentence.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    app.dialog().message(sentence).title("Hearth could not start").kind(MessageDialogKind::Error).show(move |_| handle.exit(1));
    app.run(|_, _| {});
}

fn fail(message: &str) -> ! {
    tracing::error!("{message}");
    eprintln!("Hearth could not start: {message}");
    std::process::exit(1);
}

/// The app's wiring, generic over the runtime so tests can use Tauri's mock runtime.
pub fn app_builder<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    // First: a second Hearth on the same data dir hands over to the running one and exits.
    builder
        .plugin(single_instance())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_updater::Builder::new().build())
        .invoke_handler(ipc::handler())
}

/// One Hearth per data dir: a second launch brings the running window to the front instead.
/// (The history's lock file refuses a second opener too; this is the friendly path.)
fn single_instance<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    let plugin = tauri_plugin_single_instance::Builder::new().callback(|app: &tauri::AppHandle<R>, args, cwd| {
        if let Some(window) = app.get_webview_window("main") {
            let _ = window.unminimize();
            let _ = window.show();
            let _ = window.set_focus();
        }
        // A .gguf opened while Hearth runs (the file manager starts a second Hearth, which hands
        // its command line over here): imported and loaded, the window told.
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            let Some(state) = app.try_state::<AppState>() else { return };
            if let Some(model) = state.open_files_now(command_line_files(args), std::path::Path::new(&cwd)).await {
                state.model_watchers.notify(&Some(model));
            }
        });
    });
    match std::env::var_os(paths::DATA_DIR_ENV) {
        // Another data dir is another Hearth (tests, portable installs): its own bus name.
        Some(dir) => plugin.dbus_id(instance_id(&dir)).build(),
        None => plugin.build(),
    }
}

/// A D-Bus name element for a data dir: the app's identifier plus a hash of the path.
fn instance_id(data_dir: &std::ffi::OsStr) -> String {
    use std::hash::{Hash, Hasher};
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    data_dir.hash(&mut hash);
    format!("dev.hearth.desktop.d{:016x}", hash.finish())
}

/// Opens what the commands need (data dir, logs, history, engine) and starts loading the model.
/// Runs before the event loop, so a failure is reported in words instead of Tauri's setup panic.
pub fn init<R: Runtime>(app: &tauri::AppHandle<R>) -> Result<(), Box<dyn std::error::Error>> {
    let paths = paths::resolve(app)?;
    logging::init(&paths.log_dir);
    tracing::info!(data_dir = %paths.data_dir.display(), compositing = ?webview_render::for_this_machine(), "Hearth starting");
    let state = tauri::async_runtime::block_on(AppState::open(paths))?;
    // The server, if the user left it on (a port in use is shown in Settings → Server, not fatal).
    tauri::async_runtime::block_on(state.start_server())?;
    // A .gguf the desktop opened Hearth with is imported, and loaded at start.
    tauri::async_runtime::block_on(state.open_files(command_line_files(std::env::args_os())));
    let (models, models_dir) = (state.models.clone(), state.paths.models_dir.clone());
    tauri::async_runtime::spawn(async move { models.load_at_start(&models_dir).await });
    // Downloads under way when Hearth last quit go on.
    let downloads = state.downloads.clone();
    tauri::async_runtime::spawn(async move { downloads.restore() });
    app.manage(state);
    // The model leaves memory when idle for the time the user set (Settings → Model).
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            tokio::time::sleep(hearth_app::IDLE_CHECK).await;
            handle.state::<AppState>().unload_idle_model().await;
        }
    });
    Ok(())
}

/// The app's configuration and capabilities, compiled in; generic so tests can use it too.
pub fn context<R: Runtime>() -> tauri::Context<R> {
    tauri::generate_context!()
}
