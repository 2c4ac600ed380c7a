//! The model a new user is offered on the welcome screen: the largest of a short ladder of chat
//! models that this machine runs at a readable pace. The window reads the repository's files and
//! the fit estimate from the hub itself (so an offline machine finds out there), and downloads it
//! like any other quantization.

use serde::Serialize;
use ts_rs::TS;

use crate::fit::Memory;

/// One rung of the ladder: an instruct model with an ungated GGUF repository on Hugging Face.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rung {
    pub repo: &'static str,
    /// Its name in the window.
    pub name: &'static str,
    /// The quantization offered (the hub's grouping of its files names it so).
    pub quant: &'static str,
    /// About what the quantization weighs, to rule out what cannot fit before asking the hub.
    pub approx_bytes: u64,
    /// The CPU cores that write its replies at a readable pace (≥ ~8 tokens/s) without a GPU.
    pub cpu_cores: usize,
}

const GB: u64 = 1_000_000_000;

/// Smallest first. Qwen2.5 Instruct: Apache-2.0, official GGUF repositories, a chat template
/// llama.cpp knows.
pub const LADDER: [Rung; 4] = [
    Rung { repo: "Qwen/Qwen2.5-0.5B-Instruct-GGUF", name: "Qwen2.5 0.5B Instruct", quant: "Q4_K_M", approx_bytes: GB / 2, cpu_cores: 1 },
    Rung {
        repo: "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        name: "Qwen2.5 1.5B Instruct",
        quant: "Q4_K_M",
        approx_bytes: 1_120_000_000,
        cpu_cores: 2,
    },
    Rung { repo: "Qwen/Qwen2.5-3B-Instruct-GGUF", name: "Qwen2.5 3B Instruct", quant: "Q4_K_M", approx_bytes: 2_100_000_000, cpu_cores: 6 },
    Rung {
        repo: "Qwen/Qwen2.5-7B-Instruct-GGUF",
        name: "Qwen2.5 7B Instruct",
        quant: "Q4_K_M",
        approx_bytes: 4_700_000_000,
        cpu_cores: 12,
    },
];

/// Room a model needs beyond its weights: the KV cache at a few thousand tokens, compute buffers.
const HEADROOM: f64 = 1.4;

/// What the welcome screen offers, and why this one.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StarterModel {
    pub repo: String,
    pub name: String,
    pub quant: String,
    /// Why it suits this machine, in a sentence.
    pub reason: String,
}

/// This machine, as far as the choice goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    pub cpu_cores: usize,
    pub memory: Memory,
}

impl Machine {
    /// The cores this process may use and the memory free now; `free_vram` from the engine's devices.
    pub fn here(free_vram: Option<u64>) -> Machine {
        let cpu_cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Machine { cpu_cores, memory: Memory { free_vram, ..crate::fit::available_memory() } }
    }
}

/// The largest rung that fits the GPU's free memory, or without one the CPU's cores and the free
/// RAM; the smallest when none does.
pub fn starter(machine: &Machine) -> StarterModel {
    let fits = |rung: &Rung, bytes: u64| rung.approx_bytes as f64 * HEADROOM <= bytes as f64;
    let gpu = machine.memory.free_vram.filter(|&vram| fits(&LADDER[0], vram));
    let (rung, reason) = match gpu {
        Some(vram) => {
            let rung = LADDER.iter().rev().find(|r| fits(r, vram)).unwrap_or(&LADDER[0]);
            (rung, format!("It fits in your GPU's {} free, so replies come quickly.", gigabytes(vram)))
        }
        None => {
            let ram = machine.memory.free_ram;
            let rung = LADDER.iter().rev().find(|r| r.cpu_cores <= machine.cpu_cores && fits(r, ram)).unwrap_or(&LADDER[0]);
            let cores = match machine.cpu_cores {
                1 => "1 CPU core".to_owned(),
                n => format!("{n} CPU cores"),
            };
            (rung, format!("With {cores}, no GPU and {} of memory free, a model this size replies at a readable pace.", gigabytes(ram)))
        }
    };
    StarterModel { repo: rung.repo.into(), name: rung.name.into(), quant: rung.quant.into(), reason }
}

fn gigabytes(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / GB as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(cpu_cores: usize, ram_gb: f64, vram_gb: Option<f64>) -> Machine {
        let bytes = |gb: f64| (gb * GB as f64) as u64;
        Machine { cpu_cores, memory: Memory { free_ram: bytes(ram_gb), free_vram: vram_gb.map(bytes) } }
    }

    #[test]
    fn the_largest_rung_the_machine_runs_well() {
        let cases = [
            // (cores, free RAM, free VRAM) → repository
            ((2, 20.0, None), "Qwen/Qwen2.5-1.5B-Instruct-GGUF"),
            ((1, 20.0, None), "Qwen/Qwen2.5-0.5B-Instruct-GGUF"),
            ((8, 20.0, None), "Qwen/Qwen2.5-3B-Instruct-GGUF"),
            ((16, 20.0, None), "Qwen/Qwen2.5-7B-Instruct-GGUF"),
            // Too little RAM for what the cores would run.
            ((16, 2.0, None), "Qwen/Qwen2.5-1.5B-Instruct-GGUF"),
            ((16, 0.3, None), "Qwen/Qwen2.5-0.5B-Instruct-GGUF"),
            // A GPU decides by its memory, whatever the cores.
            ((2, 20.0, Some(24.0)), "Qwen/Qwen2.5-7B-Instruct-GGUF"),
            ((2, 20.0, Some(4.0)), "Qwen/Qwen2.5-3B-Instruct-GGUF"),
            // A GPU too small for the smallest rung: the CPU's choice.
            ((8, 20.0, Some(0.5)), "Qwen/Qwen2.5-3B-Instruct-GGUF"),
        ];
        for ((cores, ram, vram), repo) in cases {
            let got = starter(&machine(cores, ram, vram));
            assert_eq!(got.repo, repo, "{cores} cores, {ram} GB RAM, {vram:?} GB VRAM: {got:?}");
            assert_eq!(got.quant, "Q4_K_M");
        }
    }

    #[test]
    fn each_rung_names_the_quantization_its_repository_files_group_under() {
        // The official repositories' naming: one file, or parts for the larger quantizations.
        for rung in LADDER {
            let stem = rung.repo.rsplit('/').next().unwrap().trim_end_matches("-GGUF").to_ascii_lowercase();
            for files in [
                vec![format!("{stem}-q4_k_m.gguf")],
                vec![format!("{stem}-q4_k_m-00001-of-00002.gguf"), format!("{stem}-q4_k_m-00002-of-00002.gguf")],
            ] {
                let listed: Vec<crate::RepoFile> =
                    files.iter().map(|path| crate::RepoFile { path: path.clone(), size: rung.approx_bytes / 2, sha256: None }).collect();
                let quants = crate::group_quants(&listed);
                assert_eq!(quants.len(), 1, "{files:?}");
                assert_eq!(quants[0].quant, rung.quant, "{files:?}");
            }
        }
    }

    #[test]
    fn the_reason_names_what_decided() {
        assert_eq!(
            starter(&machine(2, 20.0, None)).reason,
            "With 2 CPU cores, no GPU and 20.0 GB of memory free, a model this size replies at a readable pace."
        );
        assert_eq!(starter(&machine(2, 20.0, Some(24.0))).reason, "It fits in your GPU's 24.0 GB free, so replies come quickly.");
    }
}
