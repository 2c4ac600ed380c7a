// Prevents an extra console window on Windows in release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // The app's engine runs in a child process of this same binary (see hearth_engine::host).
    hearth_engine::host::serve_if_asked();
    hearth_app::run();
}
