//! Models kept in memory after another was loaded, so that switching back to one (a chat of
//! its own, the model menu) creates a context for it instead of reading its weights again.
//!
//! They stay under the user's budget (`CacheBudgets::models_ram_mb`), the least recently used
//! going first, and only while the machine has room besides: a model is kept only if the memory
//! free now holds it again beside the one being loaded and `RESERVE` more. Only the
//! weights are kept: a model's context (its KV cache, the largest part at long contexts) is
//! freed, and its chats' caches go to RAM or disk as any other chat's do.

use std::path::PathBuf;

use hearth_core::{LoadParams, Offload};

/// Memory left free for everything else when deciding to keep a model.
pub(crate) const RESERVE: u64 = 1 << 30;

/// What a kept model is found by: its file's content (a file replaced under the same name is
/// another model, `kv_memory::model_key`) and the settings that shape its weights in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelId {
    pub path: PathBuf,
    pub content: String,
    use_mmap: bool,
    use_mlock: bool,
    n_gpu_layers: Option<u32>,
    device: Option<String>,
    rpc_servers: Vec<String>,
}

impl ModelId {
    pub fn new(path: PathBuf, content: String, params: &LoadParams) -> Self {
        ModelId {
            path,
            content,
            use_mmap: params.use_mmap,
            use_mlock: params.use_mlock,
            n_gpu_layers: params.n_gpu_layers,
            device: params.device.clone(),
            rpc_servers: params.rpc_servers.clone(),
        }
    }
}

/// A model in memory: its identity, its weights (`M`: llama.cpp's model; a name in tests) and
/// the bytes they take.
pub(crate) struct Weights<M> {
    pub id: ModelId,
    pub model: M,
    pub bytes: u64,
    /// Where its layers are.
    pub offload: Offload,
}

/// The kept models, the least recently used first.
pub(crate) struct KeptModels<M> {
    models: Vec<Weights<M>>,
    budget: u64,
}

impl<M> KeptModels<M> {
    pub fn new(budget: u64) -> Self {
        KeptModels { models: Vec::new(), budget }
    }

    /// A new budget, in force at once.
    pub fn set_budget(&mut self, budget: u64) {
        self.budget = budget;
        self.fit(0);
    }

    pub fn holds(&self, id: &ModelId) -> bool {
        self.models.iter().any(|m| &m.id == id)
    }

    /// Takes `id`'s weights out, if kept.
    pub fn take(&mut self, id: &ModelId) -> Option<Weights<M>> {
        let at = self.models.iter().position(|m| &m.id == id)?;
        Some(self.models.remove(at))
    }

    /// Keeps `weights`, just left for a model that needs `next_bytes` more memory, if the budget
    /// and `available` (free memory now, when known) allow; else they are dropped here. Older
    /// models go first to make room.
    pub fn keep(&mut self, weights: Weights<M>, next_bytes: u64, available: Option<u64>) -> bool {
        let room = available.map_or(u64::MAX, |free| free.saturating_sub(next_bytes + RESERVE));
        if weights.bytes > self.budget.min(room) {
            tracing::info!(model = %weights.id.path.display(), "model left memory (over the budget for other models, or the free memory)");
            return false;
        }
        self.fit(weights.bytes);
        tracing::info!(model = %weights.id.path.display(), bytes = weights.bytes, "model kept in memory");
        self.models.push(weights);
        true
    }

    /// Drops the kept models of the file at `path` (it is being deleted).
    pub fn release(&mut self, path: &std::path::Path) {
        self.models.retain(|m| m.id.path != path);
    }

    /// Drops every kept model (an unload, the engine quitting).
    pub fn clear(&mut self) {
        self.models.clear();
    }

    /// Bytes the kept models take.
    pub fn bytes(&self) -> u64 {
        self.models.iter().map(|m| m.bytes).sum()
    }

    /// Drops the least recently used until `extra` more bytes fit the budget.
    fn fit(&mut self, extra: u64) {
        while !self.models.is_empty() && self.bytes() + extra > self.budget {
            let gone = self.models.remove(0);
            tracing::info!(model = %gone.id.path.display(), "model left memory (least recently used)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    fn weights(name: &'static str, mb: u64) -> Weights<&'static str> {
        let id = ModelId::new(PathBuf::from(name), format!("{name}-content"), &LoadParams::default());
        Weights { id, model: name, bytes: mb * MB, offload: Offload::cpu(30, "CPU") }
    }

    fn names(kept: &KeptModels<&'static str>) -> Vec<&'static str> {
        kept.models.iter().map(|m| m.model).collect()
    }

    /// Budget MB, models kept before [name, MB], the model left [name, MB], free memory MB, the
    /// next model's MB → kept after.
    type Case = (u64, &'static [(&'static str, u64)], (&'static str, u64), Option<u64>, u64, &'static [&'static str]);

    #[test]
    fn models_are_kept_under_the_budget_and_the_free_memory_least_recently_used_first_out() {
        let cases: &[Case] = &[
            (4096, &[], ("a", 100), None, 100, &["a"]),
            (4096, &[], ("a", 100), Some(8192), 4000, &["a"]),
            // The free memory must hold the next model, this one and the reserve.
            (4096, &[], ("a", 100), Some(1124 + 4000 - 1), 4000, &[]),
            (0, &[], ("a", 100), None, 100, &[]),
            (4096, &[], ("big", 5000), None, 100, &[]),
            // The oldest goes to make room; the new one is the most recent.
            (250, &[("a", 100), ("b", 100)], ("c", 100), None, 100, &["b", "c"]),
            (300, &[("a", 100), ("b", 100)], ("c", 100), None, 100, &["a", "b", "c"]),
            (250, &[("a", 100), ("b", 100)], ("c", 200), None, 100, &["c"]),
        ];
        for (budget, before, left, free, next, after) in cases {
            let mut kept = KeptModels::new(budget * MB);
            for &(name, mb) in *before {
                assert!(kept.keep(weights(name, mb), 0, None));
            }
            let _ = kept.keep(weights(left.0, left.1), next * MB, free.map(|f| f * MB));
            assert_eq!(names(&kept), *after, "budget {budget}, {before:?} + {left:?}, free {free:?}, next {next}");
        }
    }

    #[test]
    fn a_kept_model_is_found_by_content_and_weight_settings_and_a_lower_budget_drops_the_oldest() {
        let mut kept = KeptModels::new(1024 * MB);
        kept.keep(weights("a", 300), 0, None);
        kept.keep(weights("b", 300), 0, None);
        let a = weights("a", 300).id;
        let replaced = ModelId { content: "other".into(), ..a.clone() };
        let on_gpu = ModelId::new(a.path.clone(), a.content.clone(), &LoadParams { n_gpu_layers: Some(10), ..LoadParams::default() });
        assert!(kept.holds(&a) && !kept.holds(&replaced) && !kept.holds(&on_gpu));
        kept.set_budget(400 * MB);
        assert_eq!(names(&kept), ["b"]);
        kept.keep(weights("c", 100), 0, None);
        kept.release(std::path::Path::new("b"));
        assert_eq!(names(&kept), ["c"], "b's file deleted");
        assert!(kept.take(&weights("c", 1).id).is_some());
        assert_eq!((names(&kept).len(), kept.bytes()), (0, 0));
    }
}
