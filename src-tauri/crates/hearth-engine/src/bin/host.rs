//! The engine process alone (the app and `hearth-cli` host it themselves with the same code).

fn main() {
    std::process::exit(hearth_engine::host::serve_stdio());
}
