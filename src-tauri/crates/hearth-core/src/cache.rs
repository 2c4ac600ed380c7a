//! How much of the machine the chats' KV caches may take: RAM for the caches of chats other than
//! the one answering, and disk for the state files they spill to. The engine evicts the least
//! recently used first, from RAM to disk and from disk for good. How much RAM models left for
//! another may keep, so switching back skips reading their weights again. And how long an idle
//! model may stay in memory.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::sampling::whole;
use crate::{FieldError, FieldRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct CacheBudgets {
    /// Megabytes of RAM for chats' caches while another chat answers (0: straight to disk).
    pub ram_mb: u32,
    /// Megabytes of disk for their state files (0: none are kept after a switch or a restart).
    pub disk_mb: u32,
    /// Minutes without a reply after which the loaded model leaves memory (0: never); the next
    /// chat that answers loads its model again.
    pub unload_idle_minutes: u32,
    /// Megabytes of RAM for models kept loaded after another was loaded (0: a model leaves memory
    /// as soon as another is loaded); the least recently used goes first.
    pub models_ram_mb: u32,
}

impl Default for CacheBudgets {
    fn default() -> Self {
        CacheBudgets { ram_mb: 1024, disk_mb: 4096, unload_idle_minutes: 0, models_ram_mb: 4096 }
    }
}

/// Upper bounds that catch a typo (a budget in bytes typed as megabytes): 1 TiB of RAM, 16 TiB of disk.
const MAX_RAM_MB: u32 = 1 << 20;
const MAX_DISK_MB: u32 = 1 << 24;
const MAX_IDLE_MINUTES: u32 = 7 * 24 * 60;

const CACHE_RANGES: &[FieldRange] = &[
    whole("ramMb", 0.0, MAX_RAM_MB as f64, "between 0 and 1048576 MB"),
    whole("diskMb", 0.0, MAX_DISK_MB as f64, "between 0 and 16777216 MB"),
    whole("unloadIdleMinutes", 0.0, MAX_IDLE_MINUTES as f64, "between 0 (never) and 10080 minutes (a week)"),
    whole("modelsRamMb", 0.0, MAX_RAM_MB as f64, "between 0 and 1048576 MB"),
];

impl CacheBudgets {
    pub fn ranges() -> &'static [FieldRange] {
        CACHE_RANGES
    }

    pub fn ram_bytes(&self) -> u64 {
        u64::from(self.ram_mb) << 20
    }

    pub fn disk_bytes(&self) -> u64 {
        u64::from(self.disk_mb) << 20
    }

    pub fn models_ram_bytes(&self) -> u64 {
        u64::from(self.models_ram_mb) << 20
    }

    /// How long the model may stay idle before it is unloaded; `None`: it stays.
    pub fn unload_idle_after(&self) -> Option<std::time::Duration> {
        (self.unload_idle_minutes > 0).then(|| std::time::Duration::from_secs(u64::from(self.unload_idle_minutes) * 60))
    }

    pub fn validate(&self) -> Result<(), FieldError> {
        for range in CACHE_RANGES {
            let (value, label) = match range.key {
                "ramMb" => (self.ram_mb, "the memory for chat caches"),
                "diskMb" => (self.disk_mb, "the disk space for chat caches"),
                "unloadIdleMinutes" => (self.unload_idle_minutes, "the idle time before the model is unloaded"),
                "modelsRamMb" => (self.models_ram_mb, "the memory for other models"),
                _ => continue, // A range without a check here fails the_ranges_are_what_validate_enforces.
            };
            if !(range.min..=range.max).contains(&f64::from(value)) {
                return Err(FieldError::new(range.key, format!("{label} must be {}", range.text)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranges_are_what_validate_enforces() {
        for range in CacheBudgets::ranges() {
            let mut cases = vec![(range.min, true), (range.max, true), (range.max + 1.0, false)];
            if range.min > 0.0 {
                cases.push((range.min - 1.0, false));
            }
            for (value, ok) in cases {
                let mut json = serde_json::to_value(CacheBudgets::default()).unwrap();
                json[range.key] = serde_json::json!(value as u64);
                let budgets: CacheBudgets = serde_json::from_value(json).unwrap();
                assert_eq!(budgets.validate().is_ok(), ok, "{} = {value}: {:?}", range.key, budgets.validate());
                if !ok {
                    assert_eq!(budgets.validate().unwrap_err().field, range.key);
                }
            }
        }
    }

    #[test]
    fn megabytes_are_mebibytes_and_missing_fields_take_defaults() {
        let parsed: CacheBudgets = serde_json::from_str(r#"{"ramMb":2}"#).unwrap();
        assert_eq!(parsed, CacheBudgets { ram_mb: 2, ..CacheBudgets::default() });
        assert_eq!((parsed.ram_bytes(), parsed.disk_bytes()), (2 << 20, 4096 << 20));
    }
}
