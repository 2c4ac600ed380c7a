//! How the window's web view draws. WebKitGTK composites the page with OpenGL; on a machine with
//! no GPU (no DRM render node) that OpenGL is Mesa's software rasterizer, running on the very
//! cores the model decodes on: measured by `make bench-app` on 2 cores, it cost the web process
//! 18 ms of CPU per streamed token and halved the reply speed in the window. Without a GPU the
//! page is painted directly (no compositing), which costs ~1.5 ms per token. With a GPU, WebKit's
//! default stays. `HEARTH_WEBVIEW_GPU=0|1` overrides the choice.

use std::path::Path;

/// The environment variable that overrides the choice.
pub const OVERRIDE_ENV: &str = "HEARTH_WEBVIEW_GPU";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compositing {
    /// WebKit's default: accelerated compositing on the GPU.
    Gpu,
    /// No compositing: the page is painted on the CPU, without a software OpenGL in between.
    Off,
}

/// The choice for a machine with (or without) a GPU render node, and the override if set.
pub fn choose(override_value: Option<&str>, has_render_node: bool) -> Compositing {
    match override_value.map(str::trim) {
        Some("1" | "on" | "true") => Compositing::Gpu,
        Some("0" | "off" | "false") => Compositing::Off,
        _ if has_render_node => Compositing::Gpu,
        _ => Compositing::Off,
    }
}

/// Whether `dri` (normally /dev/dri) holds a render node (`renderD128`, …).
pub fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).map(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD"))).unwrap_or(false)
}

/// The choice for this machine.
pub fn for_this_machine() -> Compositing {
    choose(std::env::var(OVERRIDE_ENV).ok().as_deref(), has_render_node(Path::new("/dev/dri")))
}

/// WebKitGTK's own switch; a value the user set is left alone.
const WEBKIT_ENV: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Sets up the environment WebKitGTK reads when it starts, for `choice`. Must run first thing in
/// `main`, before any thread exists. (WebKit's hardware acceleration policy set on the web view
/// once it exists is not the same: measured, the web process then spins a whole core at rest.)
pub fn prepare_environment(choice: Compositing) {
    #[cfg(target_os = "linux")]
    if choice == Compositing::Off && std::env::var_os(WEBKIT_ENV).is_none() {
        // SAFETY: called at the top of `main` (see the doc), while the process has one thread,
        // so nothing can read the environment concurrently.
        unsafe { std::env::set_var(WEBKIT_ENV, "1") };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = choice;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_composites_and_software_opengl_is_avoided() {
        let cases = [
            (None, true, Compositing::Gpu),
            (None, false, Compositing::Off),
            (Some("0"), true, Compositing::Off),
            (Some("off"), true, Compositing::Off),
            (Some("1"), false, Compositing::Gpu),
            (Some(" on "), false, Compositing::Gpu),
            (Some("maybe"), false, Compositing::Off),
            (Some(""), true, Compositing::Gpu),
        ];
        for (value, node, expected) in cases {
            assert_eq!(choose(value, node), expected, "{value:?}, render node {node}");
        }
    }

    #[test]
    fn render_nodes_are_found_by_name() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_render_node(dir.path()));
        std::fs::write(dir.path().join("card0"), "").unwrap();
        assert!(!has_render_node(dir.path()), "a card node alone is not a render node");
        std::fs::write(dir.path().join("renderD128"), "").unwrap();
        assert!(has_render_node(dir.path()));
        assert!(!has_render_node(&dir.path().join("missing")));
    }
}
