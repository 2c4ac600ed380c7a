//! Where a model's layers go: the user's count, or by default as many as fit the GPUs' free
//! memory at the chosen context (the model manager's own fit estimate, `hearth_gguf::fit`). One
//! local GPU is used: the first found (CUDA before Vulkan, which may show the same card again);
//! beside it the devices of the RPC servers the load settings name (llama.cpp splits the layers
//! over the devices by their free memory).

use hearth_core::{ComputeDevice, DeviceKind, DeviceReport, LoadParams, Offload};
use hearth_gguf::ValidatedGguf;

use crate::rpc::BACKEND as RPC_BACKEND;

/// llama.cpp's count for "every repeating layer and the output layer".
const ALL_LAYERS: u32 = u32::MAX;

/// What a load asks llama.cpp for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The GPUs the layers go to, the local one first (none: the CPU alone).
    pub gpus: Vec<ComputeDevice>,
    /// `n_gpu_layers` as llama.cpp takes it ([`ALL_LAYERS`] for all).
    pub n_gpu_layers: u32,
    pub total_layers: u32,
    /// The CPU's description, for a model that runs there.
    cpu: String,
    /// Why a GPU that was found takes none of the model.
    note: Option<String>,
}

impl Plan {
    /// Where the layers are once loaded with this plan.
    pub fn offload(&self) -> Offload {
        if self.gpus.is_empty() || self.n_gpu_layers == 0 {
            let cpu = Offload::cpu(self.total_layers, &self.cpu);
            return match &self.note {
                Some(note) => cpu.with_fallback(note.clone()),
                None => cpu,
            };
        }
        let mut backends: Vec<&str> = self.gpus.iter().map(|g| g.backend.as_str()).collect();
        backends.dedup();
        Offload::gpu(&backends.join(" + "), &self.devices(), self.n_gpu_layers.min(self.total_layers), self.total_layers)
    }

    /// The same load on the CPU alone.
    pub fn on_cpu(&self) -> Plan {
        Plan { gpus: Vec::new(), n_gpu_layers: 0, note: None, ..self.clone() }
    }

    /// The GPUs' descriptions ("NVIDIA H200 + 10.0.0.7:50052").
    pub fn devices(&self) -> String {
        self.gpus.iter().map(|g| g.description.as_str()).collect::<Vec<_>>().join(" + ")
    }
}

pub(crate) fn plan(params: &LoadParams, file: &ValidatedGguf, devices: &DeviceReport) -> Plan {
    let shape = file.shape();
    let total_layers = shape.as_ref().map_or(0, |s| s.layers);
    let cpu = devices.devices.iter().find(|d| d.kind == DeviceKind::Cpu).map_or_else(|| "CPU".to_owned(), |d| d.description.clone());
    let is_rpc = |d: &&ComputeDevice| d.backend == RPC_BACKEND;
    let gpus_here = devices.devices.iter().filter(|d| d.kind != DeviceKind::Cpu && !is_rpc(d));
    // The device the settings pin, else the first found.
    let (local, missing) = match &params.device {
        Some(name) => match gpus_here.clone().find(|d| &d.name == name) {
            Some(pinned) => (Some(pinned), None),
            None => (None, Some(name.as_str())),
        },
        None => (gpus_here.clone().next(), None),
    };
    // The servers' devices the settings name (others added before stay unused).
    let remote = devices.devices.iter().filter(is_rpc).filter(|d| params.rpc_servers.contains(&d.description));
    let gpus: Vec<ComputeDevice> = local.into_iter().chain(remote).cloned().collect();
    let free: u64 = gpus.iter().map(|g| g.free_bytes).sum();
    let n_gpu_layers = match (gpus.is_empty(), params.n_gpu_layers, &shape) {
        (true, _, _) | (_, Some(0), _) => 0,
        (false, Some(n), _) => n,
        // A header without its shape: llama.cpp's own default, every layer.
        (false, None, None) => ALL_LAYERS,
        (false, None, Some(shape)) => {
            let context = params.n_ctx.unwrap_or(shape.context_length.min(LoadParams::AUTO_N_CTX_MAX));
            let fit = hearth_gguf::fit::gpu_layers(shape, file.file_size, context, params.kv_cache_type, free);
            if fit >= shape.layers { ALL_LAYERS } else { fit }
        }
    };
    let mut plan = Plan { gpus, n_gpu_layers, total_layers, cpu, note: None };
    if let Some(name) = missing {
        let found: Vec<&str> = gpus_here.map(|d| d.name.as_str()).collect();
        let found = if found.is_empty() { "no GPU".to_owned() } else { found.join(", ") };
        plan.note = Some(format!(
            "{name}, the device the model's load settings pin, is not here ({found} found): it runs on {}",
            if plan.gpus.is_empty() { "the CPU" } else { "the other devices" }
        ));
    }
    if plan.note.is_none() && !plan.gpus.is_empty() && params.n_gpu_layers.is_none() && n_gpu_layers == 0 {
        plan.note = Some(format!(
            "{} has {} MiB free, too little for a layer of this model beside its working memory: it runs on the CPU",
            plan.devices(),
            free >> 20
        ));
    }
    if n_gpu_layers == 0 {
        plan.gpus.clear();
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{BackendProblem, KvType};

    const GIB: u64 = 1 << 30;

    fn device(name: &str, kind: DeviceKind, free: u64) -> ComputeDevice {
        ComputeDevice {
            name: name.into(),
            description: format!("{name} card"),
            backend: name.trim_end_matches(char::is_numeric).into(),
            kind,
            free_bytes: free,
            total_bytes: free,
        }
    }

    /// SmolLM2-135M's header (30 layers), as the engine's tests load it.
    fn smollm2() -> ValidatedGguf {
        let path = std::env::var("HEARTH_TEST_MODEL").ok();
        match path {
            Some(path) => hearth_gguf::validate(std::path::Path::new(&path)).expect("the test model's header"),
            None => panic!("HEARTH_TEST_MODEL names the test model (scripts/test.sh sets it)"),
        }
    }

    /// (case, devices found, layers asked for, backend used, `n_gpu_layers` asked of llama.cpp)
    type Case = (&'static str, Vec<ComputeDevice>, Option<u32>, Option<&'static str>, u32);

    #[test]
    fn layers_go_to_the_first_gpu_as_far_as_they_fit() {
        let model = smollm2();
        let cpu = device("CPU", DeviceKind::Cpu, 8 * GIB);
        let cases: Vec<Case> = vec![
            ("no GPU: the CPU", vec![cpu.clone()], None, None, 0),
            ("a GPU with room: every layer", vec![device("CUDA0", DeviceKind::Gpu, 80 * GIB), cpu.clone()], None, Some("CUDA"), ALL_LAYERS),
            (
                "CUDA before Vulkan's view of the same card",
                vec![device("CUDA0", DeviceKind::Gpu, 80 * GIB), device("Vulkan0", DeviceKind::Gpu, 80 * GIB), cpu.clone()],
                None,
                Some("CUDA"),
                ALL_LAYERS,
            ),
            ("the user's count", vec![device("Vulkan0", DeviceKind::Gpu, 80 * GIB), cpu.clone()], Some(7), Some("Vulkan"), 7),
            ("the user pinned the CPU", vec![device("Vulkan0", DeviceKind::Gpu, 80 * GIB), cpu.clone()], Some(0), None, 0),
            ("a GPU too small for anything", vec![device("Vulkan0", DeviceKind::Gpu, 64 << 20), cpu.clone()], None, None, 0),
        ];
        for (case, devices, asked, backend, layers) in cases {
            let params = LoadParams { n_gpu_layers: asked, n_ctx: Some(2048), ..LoadParams::default() };
            let plan = plan(&params, &model, &DeviceReport { modules_dir: None, devices, problems: Vec::<BackendProblem>::new() });
            assert_eq!(plan.n_gpu_layers, layers, "{case}");
            assert_eq!(plan.gpus.first().map(|g| g.backend.as_str()), backend, "{case}");
            assert_eq!(plan.offload().gpu_layers, layers.min(30), "{case}");
            assert_eq!(plan.on_cpu().offload().backend, "CPU", "{case}");
            // A GPU that takes nothing by itself says why; the user's choice needs no word.
            let said = plan.offload().fallback.unwrap_or_default();
            assert_eq!(said.contains("too little"), case == "a GPU too small for anything", "{case}: {said}");
        }
    }

    #[test]
    fn a_pinned_device_takes_the_layers_and_a_missing_one_is_said() {
        let model = smollm2();
        let cpu = device("CPU", DeviceKind::Cpu, 8 * GIB);
        let found = vec![device("CUDA0", DeviceKind::Gpu, 80 * GIB), device("CUDA1", DeviceKind::Gpu, 24 * GIB), cpu];
        let report = DeviceReport { modules_dir: None, devices: found, problems: Vec::new() };
        let pinned =
            |name: &str| plan(&LoadParams { device: Some(name.into()), n_ctx: Some(2048), ..LoadParams::default() }, &model, &report);

        let second = pinned("CUDA1");
        assert_eq!(second.gpus.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(), ["CUDA1"]);
        assert_eq!((second.n_gpu_layers, second.offload().fallback), (ALL_LAYERS, None));

        let gone = pinned("CUDA7");
        assert!(gone.gpus.is_empty());
        let offload = gone.offload();
        assert_eq!(offload.backend, "CPU");
        let said = offload.fallback.unwrap_or_default();
        assert!(said.contains("CUDA7") && said.contains("CUDA0, CUDA1 found") && said.ends_with("runs on the CPU"), "{said}");
        // Not the CPU pretending to be a GPU.
        assert!(pinned("CPU").gpus.is_empty());
    }

    #[test]
    fn a_gpu_that_holds_part_of_the_model_gets_that_part() {
        let model = smollm2();
        let shape = model.shape().unwrap();
        let context = 2048;
        let whole = hearth_gguf::fit::gpu_layers(&shape, model.file_size, context, KvType::F16, 80 * GIB);
        assert_eq!(whole, 30);
        // Room for the compute buffer and about half the weights and cache.
        let per_layer = (model.file_size + hearth_gguf::fit::kv_cache_bytes(&shape, context, KvType::F16)) / 31;
        let half = hearth_gguf::fit::compute_bytes(&shape) + 15 * per_layer + per_layer / 2;
        let part = hearth_gguf::fit::gpu_layers(&shape, model.file_size, context, KvType::F16, half);
        assert!((14..=15).contains(&part), "{part} layers");
    }
}
