//! What the app remembers about loading models, so a start never repeats a crash: the active
//! model, each model's last known good load settings, and crashes of the engine while loading.
//!
//! At start, settings that have never loaded are not used while known good ones exist, and a
//! model that crashed the engine twice within [`SAFE_MODE_WINDOW`] with the same settings is not
//! loaded at all (safe mode): the user is told which file and settings, and can change them.

use serde::{Deserialize, Serialize};

use hearth_core::{LoadParams, ModelInfo};
use hearth_store::{Store, StoreError};

/// Settings key holding the path of the selected model.
pub const ACTIVE_MODEL_KEY: &str = "active_model";
/// Two crashes while loading within this many seconds put the model in safe mode.
pub const SAFE_MODE_WINDOW_S: u64 = 10 * 60;
const SAFE_MODE_CRASHES: usize = 2;

fn good_key(path: &str) -> String {
    format!("load_ok:model:{path}")
}

fn crash_key(path: &str) -> String {
    format!("load_crash:model:{path}")
}

/// The crashes of the engine while loading one model with one set of settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashRecord {
    pub params: LoadParams,
    /// Unix seconds of each crash, oldest first.
    pub at: Vec<u64>,
    pub cause: String,
}

/// What start-up does with the chosen model.
#[derive(Debug, Clone, PartialEq)]
pub enum StartPlan {
    Load(LoadParams),
    /// Safe mode: do not load; say this.
    Skip(String),
}

/// The decision, from what is saved: `saved` (the user's settings), `good` (the last settings
/// that loaded), `crashes` (loads that crashed), at time `now`.
pub fn plan_start(name: &str, saved: LoadParams, good: Option<LoadParams>, crashes: Option<&CrashRecord>, now: u64) -> StartPlan {
    // Settings that never loaded wait for the user's own Reload; the known good ones start.
    let params = match good {
        Some(good) if good != saved => good,
        _ => saved,
    };
    if let Some(record) = crashes.filter(|r| r.params == params) {
        let recent = record.at.iter().filter(|&&t| now.saturating_sub(t) <= SAFE_MODE_WINDOW_S).count();
        if recent >= SAFE_MODE_CRASHES {
            return StartPlan::Skip(format!(
                "{name} was not loaded at start: it crashed the engine {recent} times while loading with these settings \
                 (context {}, GPU layers {}, KV cache {:?}) — {}. Change its load settings in the Model settings, or pick another model",
                params.n_ctx.map_or("auto".into(), |n| n.to_string()),
                params.n_gpu_layers.map_or("auto".into(), |n| n.to_string()),
                params.kv_cache_type,
                record.cause,
            ));
        }
    }
    StartPlan::Load(params)
}

/// What start-up should do with `path`.
pub async fn start_plan(store: &Store, path: &str, name: &str, saved: LoadParams) -> Result<StartPlan, StoreError> {
    let good = read_json::<LoadParams>(store, &good_key(path)).await?.filter(|p| p.validate().is_ok());
    let crashes = read_json::<CrashRecord>(store, &crash_key(path)).await?;
    Ok(plan_start(name, saved, good, crashes.as_ref(), now()))
}

/// The settings a load the user asks for uses: the saved ones, unless they put the model in
/// safe mode — then the defaults, with the sentence that says so, so the model loads and its
/// settings can be changed in the Model settings.
pub async fn user_load_params(
    store: &Store,
    path: &str,
    name: &str,
    saved: LoadParams,
) -> Result<(LoadParams, Option<String>), StoreError> {
    let crashes = read_json::<CrashRecord>(store, &crash_key(path)).await?;
    match plan_start(name, saved.clone(), None, crashes.as_ref(), now()) {
        StartPlan::Skip(_) if saved != LoadParams::default() => Ok((
            LoadParams::default(),
            Some(
                "loaded with default settings: the saved ones crashed the engine twice; change them in the Model settings and Reload"
                    .into(),
            ),
        )),
        _ => Ok((saved, None)),
    }
}

/// A load succeeded: it becomes the active model, its settings the known good ones, and its
/// crash record is forgotten.
pub async fn loaded_ok(store: &Store, info: &ModelInfo) -> Result<(), StoreError> {
    store.set_setting(ACTIVE_MODEL_KEY, &info.path).await?;
    store.set_setting(&good_key(&info.path), &serde_json::to_string(&info.load).expect("LoadParams serialize")).await?;
    store.delete_setting(&crash_key(&info.path)).await
}

/// The engine crashed while loading `path` with `params`.
pub async fn record_crash(store: &Store, path: &str, params: &LoadParams, cause: &str) -> Result<(), StoreError> {
    let mut record = read_json::<CrashRecord>(store, &crash_key(path)).await?.filter(|r| r.params == *params).unwrap_or(CrashRecord {
        params: params.clone(),
        at: Vec::new(),
        cause: String::new(),
    });
    record.at.push(now());
    record.at.retain(|&t| now().saturating_sub(t) <= SAFE_MODE_WINDOW_S);
    record.cause = cause.to_owned();
    store.set_setting(&crash_key(path), &serde_json::to_string(&record).expect("crash record serializes")).await
}

async fn read_json<T: for<'de> Deserialize<'de>>(store: &Store, key: &str) -> Result<Option<T>, StoreError> {
    Ok(store.setting(key).await?.and_then(|json| serde_json::from_str(&json).ok()))
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(n_ctx: u32) -> LoadParams {
        LoadParams { n_ctx: Some(n_ctx), ..LoadParams::default() }
    }

    fn crashes(n_ctx: u32, at: &[u64]) -> CrashRecord {
        CrashRecord { params: params(n_ctx), at: at.to_vec(), cause: "the model crashed: GGML_ASSERT(x) failed in ggml.c:1".into() }
    }

    #[test]
    fn start_uses_known_good_settings_and_skips_a_model_that_keeps_crashing() {
        let now = 100_000;
        let load = |n| StartPlan::Load(params(n));
        let cases: Vec<(LoadParams, Option<LoadParams>, Option<CrashRecord>, StartPlan)> = vec![
            // Nothing known: the saved settings.
            (params(2048), None, None, load(2048)),
            // Saved settings that never loaded wait; the known good ones start.
            (params(8192), Some(params(2048)), None, load(2048)),
            (params(2048), Some(params(2048)), None, load(2048)),
            // One crash is not a pattern.
            (params(2048), None, Some(crashes(2048, &[now - 5])), load(2048)),
            // Two recent crashes with these settings: safe mode.
            (params(2048), None, Some(crashes(2048, &[now - 300, now - 5])), StartPlan::Skip(String::new())),
            // Two crashes, but one long ago.
            (params(2048), None, Some(crashes(2048, &[now - SAFE_MODE_WINDOW_S - 1, now - 5])), load(2048)),
            // The crashes were with other settings: these may load.
            (params(2048), None, Some(crashes(4096, &[now - 300, now - 5])), load(2048)),
        ];
        for (saved, good, record, want) in cases {
            let got = plan_start("m", saved.clone(), good.clone(), record.as_ref(), now);
            match (&got, &want) {
                (StartPlan::Skip(why), StartPlan::Skip(_)) => {
                    assert!(
                        why.contains("crashed the engine 2 times") && why.contains("context 2048") && why.contains("GGML_ASSERT(x)"),
                        "{why}"
                    );
                }
                _ => assert_eq!(got, want, "{saved:?} {good:?} {record:?}"),
            }
        }
    }

    /// Through a real history file: two crashes put the saved settings in safe mode; a load the
    /// user asks for then uses the defaults and says so; once that loaded, start-up uses it.
    #[tokio::test]
    async fn a_model_in_safe_mode_loads_with_defaults_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("hearth.db")).await.unwrap();
        let (path, saved) = ("/models/m.gguf", params(65_536));
        assert_eq!(user_load_params(&store, path, "m", saved.clone()).await.unwrap(), (saved.clone(), None));
        for _ in 0..2 {
            record_crash(&store, path, &saved, "the engine was killed (SIGKILL)").await.unwrap();
        }
        assert!(matches!(start_plan(&store, path, "m", saved.clone()).await.unwrap(), StartPlan::Skip(_)));
        let (used, note) = user_load_params(&store, path, "m", saved.clone()).await.unwrap();
        assert_eq!(used, LoadParams::default());
        assert!(note.unwrap().contains("loaded with default settings"));

        let info = ModelInfo {
            name: "m".into(),
            path: path.into(),
            size_bytes: 1,
            load: LoadParams::default(),
            n_ctx: 4096,
            n_ctx_train: 8192,
            n_threads: 2,
            n_threads_batch: 2,
            kv_bytes: None,
            notice: None,
            from_memory: false,
            offload: hearth_core::Offload::cpu(30, "CPU"),
            projector: None,
            projectors: Vec::new(),
        };
        loaded_ok(&store, &info).await.unwrap();
        assert_eq!(store.setting(ACTIVE_MODEL_KEY).await.unwrap().as_deref(), Some(path));
        // The saved settings never loaded: start-up keeps to the ones that did.
        assert_eq!(start_plan(&store, path, "m", saved).await.unwrap(), StartPlan::Load(LoadParams::default()));
    }
}
