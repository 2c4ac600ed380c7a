// Prevents an extra console window on Windows in release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // The app's engine runs in a child process of this same binary (see hearth_engine::host).
    hearth_engine::host::serve_if_asked();
    // Before anything starts a thread: how WebKit draws is read from the environment.
    let compositing = hearth_shell::webview_render::for_this_machine();
    hearth_shell::webview_render::prepare_environment(compositing);
    hearth_shell::run();
}
