//! Will a model run here: the estimate (`hearth_gguf::fit`, which the engine's automatic offload
//! uses too) against this machine's free memory.

pub use hearth_gguf::fit::*;

/// Memory available now (`free_vram`: none known; the caller adds the free memory of the GPUs
/// the engine reports).
pub fn available_memory() -> Memory {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    Memory { free_ram: system.available_memory(), free_vram: None }
}
