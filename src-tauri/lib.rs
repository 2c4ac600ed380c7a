//! The Hearth desktop shell: wires the core crates into a Tauri app. It holds no logic of its
//! own beyond start-up; commands in `ipc/` are thin adapters.

pub mod ipc;
mod logging;
mod paths;
mod startup;
mod state;
mod titles;
mod transfer;

use tauri::{Manager, Runtime};

pub use paths::AppPaths;
pub use state::AppState;
pub use titles::title_chat;
pub use transfer::{export_to, import_from};

/// Runs the desktop app.
pub fn run() {
    let app = app_builder(tauri::Builder::default()).build(context());
    let app = match app {
        Ok(app) => app,
        Err(e) => fail(&format!("the window system could not start: {e}")),
    };
    if let Err(e) = init(app.handle()) {
        fail(&e.to_string());
    }
    app.run(|_, _| {});
}

fn fail(message: &str) -> ! {
    tracing::error!("{message}");
    eprintln!("Hearth could not start: {message}");
    std::process::exit(1);
}

/// The app's wiring, generic over the runtime so tests can use Tauri's mock runtime.
pub fn app_builder<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.plugin(tauri_plugin_dialog::init()).invoke_handler(ipc::handler())
}

/// Opens what the commands need (data dir, logs, history, engine) and starts loading the model.
/// Runs before the event loop, so a failure is reported in words instead of Tauri's setup panic.
pub fn init<R: Runtime>(app: &tauri::AppHandle<R>) -> Result<(), Box<dyn std::error::Error>> {
    let paths = AppPaths::resolve(app)?;
    logging::init(&paths.log_dir);
    tracing::info!(data_dir = %paths.data_dir.display(), "Hearth starting");
    let state = tauri::async_runtime::block_on(AppState::open(paths))?;
    startup::load_default_model(&state);
    app.manage(state);
    Ok(())
}

/// The app's configuration and capabilities, compiled in; generic so tests can use it too.
pub fn context<R: Runtime>() -> tauri::Context<R> {
    tauri::generate_context!()
}
