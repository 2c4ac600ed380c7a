//! The compute devices an engine can run a model on, and where a model's layers went.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What kind of processor a device is (ggml's device types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum DeviceKind {
    Cpu,
    Gpu,
    /// A GPU that shares the system's RAM.
    IntegratedGpu,
    Accelerator,
    Other,
}

/// One device of a loaded compute backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ComputeDevice {
    /// ggml's name for it, e.g. `CUDA0`, `Vulkan0`, `CPU`.
    pub name: String,
    /// What the driver calls it, e.g. `NVIDIA H200`, `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub description: String,
    /// The backend it belongs to: `CUDA`, `Vulkan`, `CPU`, `RPC`.
    pub backend: String,
    pub kind: DeviceKind,
    #[ts(type = "number")]
    pub free_bytes: u64,
    #[ts(type = "number")]
    pub total_bytes: u64,
}

impl ComputeDevice {
    /// A device that holds layers of its own (the CPU and an integrated GPU use the RAM).
    pub fn is_discrete(&self) -> bool {
        matches!(self.kind, DeviceKind::Gpu | DeviceKind::Accelerator)
    }
}

/// A backend module that was found but cannot be used, and why in the loader's or driver's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BackendProblem {
    /// The module's file, e.g. `libggml-cuda.so`.
    pub module: String,
    pub reason: String,
}

/// The devices an engine found when it started, and the backends it could not use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeviceReport {
    /// Where the backend modules were loaded from.
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules_dir: Option<String>,
    /// GPUs first, in the order llama.cpp uses them; the CPU last.
    pub devices: Vec<ComputeDevice>,
    pub problems: Vec<BackendProblem>,
}

impl DeviceReport {
    /// Free memory of the discrete GPUs together, if there is one (the fit estimate's `vram`).
    pub fn gpu_free_bytes(&self) -> Option<u64> {
        let gpus: Vec<u64> = self.devices.iter().filter(|d| d.is_discrete()).map(|d| d.free_bytes).collect();
        (!gpus.is_empty()).then(|| gpus.iter().sum())
    }

    /// The device a model goes to by default: the first GPU, else the CPU.
    pub fn best(&self) -> Option<&ComputeDevice> {
        self.devices.iter().find(|d| d.kind != DeviceKind::Cpu).or_else(|| self.devices.first())
    }
}

/// Where a loaded model's layers are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Offload {
    /// The backend of the device holding the offloaded layers (`CPU` when none are).
    pub backend: String,
    /// That device's description (`NVIDIA H200`), or the CPU's.
    pub device: String,
    /// Repeating layers on that device (the output layer goes with them when all are).
    pub gpu_layers: u32,
    pub total_layers: u32,
    /// The line the model menu shows, e.g. "NVIDIA H200 (CUDA): all 30 layers".
    pub label: String,
    /// Why fewer layers than asked for went to the GPU, e.g. a load that ran out of device
    /// memory and was made again on the CPU.
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

impl Offload {
    pub fn cpu(total_layers: u32, device: &str) -> Offload {
        let label = if device.is_empty() || device == "CPU" { "On the CPU".to_owned() } else { format!("On the CPU ({device})") };
        Offload { backend: "CPU".into(), device: device.into(), gpu_layers: 0, total_layers, label, fallback: None }
    }

    pub fn gpu(backend: &str, device: &str, gpu_layers: u32, total_layers: u32) -> Offload {
        let layers = if gpu_layers >= total_layers {
            format!("all {total_layers} layers")
        } else {
            format!("{gpu_layers} of {total_layers} layers, the rest on the CPU")
        };
        Offload {
            backend: backend.into(),
            device: device.into(),
            gpu_layers,
            total_layers,
            label: format!("{device} ({backend}): {layers}"),
            fallback: None,
        }
    }

    /// Every layer is on a GPU: the CPU only feeds it.
    pub fn all_on_gpu(&self) -> bool {
        self.total_layers > 0 && self.gpu_layers >= self.total_layers
    }

    pub fn with_fallback(self, reason: String) -> Offload {
        Offload { fallback: Some(reason), ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_line_says_where_the_layers_are() {
        let cases = [
            (Offload::gpu("CUDA", "NVIDIA H200", 30, 30), "NVIDIA H200 (CUDA): all 30 layers"),
            (Offload::gpu("Vulkan", "AMD Radeon RX 7600", 20, 32), "AMD Radeon RX 7600 (Vulkan): 20 of 32 layers, the rest on the CPU"),
            (Offload::cpu(30, "AMD EPYC"), "On the CPU (AMD EPYC)"),
            (Offload::cpu(30, "CPU"), "On the CPU"),
        ];
        for (offload, label) in cases {
            assert_eq!(offload.label, label);
        }
    }
}
