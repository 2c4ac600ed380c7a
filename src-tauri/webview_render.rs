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

/// What WebKitGTK and Mesa read at start, for `choice`; a value the user set is left alone.
pub fn environment(choice: Compositing) -> &'static [(&'static str, &'static str)] {
    match choice {
        Compositing::Gpu => &[],
        Compositing::Off => &[
            // The page painted on the CPU (see the module's doc).
            ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
            // The DMA-BUF renderer serves composited pages only; set up anyway, it held ~4 MB
            // of the app and web processes at rest (`make bench-app`, idle_pss_mb).
            ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
            // WebKit still opens an EGL display, which nothing draws with here: Mesa's softpipe
            // opens it without starting llvmpipe's LLVM code generator (~1.5 MB at rest).
            ("GALLIUM_DRIVER", "softpipe"),
        ],
    }
}

/// Sets up the environment WebKitGTK reads when it starts, for `choice`. Must run first thing in
/// `main`, before any thread exists. (WebKit's hardware acceleration policy set on the web view
/// once it exists is not the same: measured, the web process then spins a whole core at rest.)
pub fn prepare_environment(choice: Compositing) {
    #[cfg(target_os = "linux")]
    for (name, value) in environment(choice) {
        if std::env::var_os(name).is_none() {
            // SAFETY: called at the top of `main` (see the doc), while the process has one
            // thread, so nothing can read the environment concurrently.
            unsafe { std::env::set_var(name, value) };
        }
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
    fn only_a_page_painted_on_the_cpu_changes_the_environment() {
        assert!(environment(Compositing::Gpu).is_empty(), "a GPU keeps WebKit's and Mesa's defaults");
        let off: Vec<&str> = environment(Compositing::Off).iter().map(|(name, _)| *name).collect();
        assert_eq!(off, ["WEBKIT_DISABLE_COMPOSITING_MODE", "WEBKIT_DISABLE_DMABUF_RENDERER", "GALLIUM_DRIVER"]);
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
