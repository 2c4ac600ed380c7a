//! The compute devices of this machine. llama.cpp's backends are modules (`libggml-cpu.so`,
//! `libggml-cuda.so`, `libggml-vulkan.so`, …) loaded when the engine starts, so one build runs on
//! the CPU everywhere and on a GPU wherever a GPU backend's module sits beside the CPU's and its
//! driver answers. A module that cannot be used is reported with the loader's words (a missing
//! CUDA runtime, a driver too old) and the engine goes on without it.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hearth_core::{BackendProblem, ComputeDevice, DeviceKind, DeviceReport};
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::{LogOptions, send_logs_to_tracing};

/// Where to load backend modules from, before the places a build or an install puts them.
pub const BACKENDS_DIR_ENV: &str = "HEARTH_BACKENDS_DIR";
/// Where a package puts llama.cpp's libraries and backend modules, from its binaries' folder
/// (scripts/package.sh; the binaries' rpath names it too, .cargo/config.toml).
pub const PACKAGE_LIB_DIR: &str = "../lib/hearth";
/// Set to `cpu` to leave every GPU backend unloaded (the same binary, CPU only).
pub const DEVICE_ENV: &str = "HEARTH_DEVICE";
/// Caps the free memory Hearth counts on each GPU, in MiB (a card shared with other programs).
pub const GPU_MEMORY_LIMIT_ENV: &str = "HEARTH_GPU_MEMORY_LIMIT_MB";

/// The backends this process loaded, once: every later call sees the same.
fn loaded() -> &'static Loaded {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    LOADED.get_or_init(load_backends)
}

struct Loaded {
    dir: Option<PathBuf>,
    problems: Vec<BackendProblem>,
}

/// llama.cpp's backend is process-wide and can be initialised once; every engine shares it. The
/// backend modules are loaded first (llama.cpp would otherwise load them from its own
/// compiled-in places, silently).
pub(crate) fn llama_backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            send_logs_to_tracing(LogOptions::default());
            loaded();
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The devices found and the backends that could not be used.
pub fn report() -> DeviceReport {
    // llama.cpp's backend first: its log goes to ours from then on, and it loads the modules.
    if let Err(e) = llama_backend() {
        tracing::error!(error = %e, "llama.cpp's backend did not start");
    }
    let loaded = loaded();
    let mut problems = loaded.problems.clone();
    // A module that loaded but found no device: its driver did not answer. (RPC's devices are
    // the servers added to it, none until then.)
    for (backend, count) in backends_and_device_counts() {
        if count == 0 && backend != "CPU" && backend != "RPC" {
            problems.push(BackendProblem {
                module: format!("libggml-{}.so", backend.to_lowercase()),
                reason: format!("{backend} found no device: no GPU, or its driver is missing or too old for this build"),
            });
        }
    }
    let limit = std::env::var(GPU_MEMORY_LIMIT_ENV).ok().and_then(|mb| mb.trim().parse::<u64>().ok()).map(|mb| mb << 20);
    let mut devices = Vec::new();
    for device in ggml_devices() {
        // An RPC device's memory is asked of its server, and ggml aborts when that does not
        // answer: a server gone since it was added is said, not asked.
        if device.backend == crate::rpc::BACKEND
            && let Err(reason) = crate::rpc::reach(&device.description)
        {
            problems.push(BackendProblem { module: "libggml-rpc.so".into(), reason });
            continue;
        }
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: a device ggml listed; it writes the two numbers.
        unsafe { llama_cpp_sys_2::ggml_backend_dev_memory(device.handle, &mut free, &mut total) };
        devices.push(ComputeDevice {
            free_bytes: match (device.kind, limit) {
                (DeviceKind::Cpu, _) | (_, None) => free as u64,
                (_, Some(limit)) => (free as u64).min(limit),
            },
            total_bytes: total as u64,
            name: device.name,
            description: device.description,
            backend: device.backend,
            kind: device.kind,
        });
    }
    DeviceReport { modules_dir: loaded.dir.as_ref().map(|d| d.display().to_string()), devices, problems }
}

/// A device ggml lists, without its memory (which an RPC device asks its server for).
struct GgmlDevice {
    /// Its place in ggml's list: what a model's device list names.
    index: usize,
    handle: llama_cpp_sys_2::ggml_backend_dev_t,
    name: String,
    description: String,
    backend: String,
    kind: DeviceKind,
}

fn ggml_devices() -> Vec<GgmlDevice> {
    let text = |ptr: *const std::os::raw::c_char| {
        // SAFETY: a C string ggml keeps with the device or backend (null: none).
        if ptr.is_null() { String::new() } else { unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned() }
    };
    // SAFETY: ggml's device list, read in order; each handle lives as long as the process.
    (0..unsafe { llama_cpp_sys_2::ggml_backend_dev_count() })
        .map(|index| unsafe {
            let handle = llama_cpp_sys_2::ggml_backend_dev_get(index);
            GgmlDevice {
                index,
                handle,
                name: text(llama_cpp_sys_2::ggml_backend_dev_name(handle)),
                description: text(llama_cpp_sys_2::ggml_backend_dev_description(handle)),
                backend: text(llama_cpp_sys_2::ggml_backend_reg_name(llama_cpp_sys_2::ggml_backend_dev_backend_reg(handle))),
                kind: match llama_cpp_sys_2::ggml_backend_dev_type(handle) {
                    llama_cpp_sys_2::GGML_BACKEND_DEVICE_TYPE_CPU => DeviceKind::Cpu,
                    llama_cpp_sys_2::GGML_BACKEND_DEVICE_TYPE_GPU => DeviceKind::Gpu,
                    llama_cpp_sys_2::GGML_BACKEND_DEVICE_TYPE_IGPU => DeviceKind::IntegratedGpu,
                    llama_cpp_sys_2::GGML_BACKEND_DEVICE_TYPE_ACCEL => DeviceKind::Accelerator,
                    _ => DeviceKind::Other,
                },
            }
        })
        .collect()
}

/// Where the device ggml calls `name` is in its list (what a model's device list takes).
pub(crate) fn device_index(name: &str) -> Option<usize> {
    ggml_devices().into_iter().find(|d| d.name == name).map(|d| d.index)
}

fn backends_and_device_counts() -> Vec<(String, usize)> {
    let count = unsafe { llama_cpp_sys_2::ggml_backend_reg_count() };
    (0..count)
        .map(|i| {
            let reg = unsafe { llama_cpp_sys_2::ggml_backend_reg_get(i) };
            let name = unsafe { CStr::from_ptr(llama_cpp_sys_2::ggml_backend_reg_name(reg)) }.to_string_lossy().into_owned();
            (name, unsafe { llama_cpp_sys_2::ggml_backend_reg_dev_count(reg) })
        })
        .collect()
}

/// The places backend modules may be, in order: the user's, beside the binary, where a package
/// installs them (/usr/lib/hearth beside /usr/bin), and where this build put its own (development).
fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os(BACKENDS_DIR_ENV) {
        dirs.push(PathBuf::from(dir));
    }
    if let Some(exe_dir) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) {
        dirs.push(exe_dir.join("ggml-backends"));
        dirs.push(exe_dir.join(PACKAGE_LIB_DIR).join("ggml-backends"));
        dirs.push(exe_dir);
    }
    if let Some(dir) = option_env!("GGML_BACKEND_DIR") {
        dirs.push(PathBuf::from(dir));
    }
    dirs
}

/// Backend modules in `dir`: GPU backends first (llama.cpp offloads to the first device), the
/// CPU's last; ggml's own libraries are not modules.
fn modules_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut modules: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.starts_with("libggml-") && name.ends_with(".so") && !name.starts_with("libggml-base")
        })
        .collect();
    modules.sort_by_key(|p| (is_cpu_module(p), p.clone()));
    modules
}

fn is_cpu_module(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libggml-cpu"))
}

fn load_backends() -> Loaded {
    let candidates = candidate_dirs();
    let Some(dir) = candidates.iter().find(|d| modules_in(d).iter().any(|m| is_cpu_module(m))).cloned() else {
        let places = candidates.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ");
        tracing::error!(%places, "no CPU backend module found");
        return Loaded {
            dir: None,
            problems: vec![BackendProblem {
                module: "libggml-cpu.so".into(),
                reason: format!("not found in {places}: reinstall Hearth, or set {BACKENDS_DIR_ENV} to the folder that holds it"),
            }],
        };
    };
    let cpu_only = std::env::var(DEVICE_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("cpu"));
    let mut problems = Vec::new();
    for module in modules_in(&dir) {
        let name = module.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if cpu_only && !is_cpu_module(&module) {
            tracing::info!(%name, "GPU backend left unloaded ({DEVICE_ENV}=cpu)");
            continue;
        }
        match load_module(&module) {
            Ok(()) => tracing::info!(%name, "backend loaded"),
            Err(reason) => {
                tracing::warn!(%name, %reason, "backend not usable");
                problems.push(BackendProblem { module: name, reason });
            }
        }
    }
    Loaded { dir: Some(dir), problems }
}

/// Registers one module with ggml. The module is opened first on its own, to keep the dynamic
/// loader's reason when it cannot be (ggml's release build drops it).
fn load_module(path: &Path) -> Result<(), String> {
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| "its path holds a NUL byte".to_owned())?;
    // SAFETY: a valid C string; the handle is closed at once (ggml opens it again, and keeps it).
    let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns a thread-local C string or null.
        let reason = unsafe { libc::dlerror() };
        let reason = if reason.is_null() {
            "the dynamic loader refused it".to_owned()
        } else {
            unsafe { CStr::from_ptr(reason) }.to_string_lossy().into_owned()
        };
        return Err(format!("cannot be loaded: {reason}"));
    }
    unsafe { libc::dlclose(handle) };
    crate::llama_log::clear();
    // SAFETY: a valid C string; ggml returns null when the module's init fails.
    let reg = unsafe { llama_cpp_sys_2::ggml_backend_load(c_path.as_ptr()) };
    if reg.is_null() {
        let said = crate::llama_log::last_error().map_or_else(String::new, |e| format!(": {e}"));
        return Err(format!("its backend did not start (a build for another ggml, or its driver failed){said}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_modules_come_before_the_cpus_and_ggmls_own_libraries_are_not_modules() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["libggml-cpu.so", "libggml-base.so", "libggml-vulkan.so", "libggml-cuda.so", "libggml.so", "libllama.so", "notes.txt"]
        {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let names: Vec<String> = modules_in(dir.path()).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["libggml-cuda.so", "libggml-vulkan.so", "libggml-cpu.so"]);
    }

    #[test]
    fn a_module_the_loader_refuses_is_reported_in_its_words() {
        let dir = tempfile::tempdir().unwrap();
        let broken = dir.path().join("libggml-cuda.so");
        std::fs::write(&broken, b"not an ELF file").unwrap();
        let reason = load_module(&broken).unwrap_err();
        assert!(reason.starts_with("cannot be loaded: "), "{reason}");
        assert!(reason.contains("libggml-cuda.so"), "{reason}");
    }
}
