//! The data the window must not derive again: defaults, ranges, presets, the sampler stages'
//! order, what "never" means for a logit bias, the pace of updates to the window, the providers on first start and which sampling
//! settings reach each kind of provider, the error kinds and every command's shape. Generated
//! into ui/src/ipc/contract.json (a test fails when it is stale); the window imports it, and the
//! browser tests' mock backend answers from it instead of copies.

use serde_json::{Value, json};

use hearth_core::{
    LoadParams, LogitBias, ProviderConfig, ProviderKind, SamplerStage, SamplingParams, WINDOW_UPDATE_INTERVAL, sampling_support,
};

use crate::ipc::{IpcErrorKind, contract::WireArg, contracts};

/// Stands for the provider's name in `samplingSupport`'s notes.
const PROVIDER_NAME: &str = "{provider}";

/// Which sampling settings reach a model, per backend: the local engine, and each provider kind
/// (an OpenAI-compatible server with and without llama.cpp's extensions).
fn sampling_support_table() -> Value {
    let remote = |kind, extensions| {
        let mut config = ProviderConfig::new("p", PROVIDER_NAME, kind);
        config.extensions = extensions;
        sampling_support(Some(&config))
    };
    json!({
        "local": sampling_support(None),
        "openAi": remote(ProviderKind::OpenAi, false),
        "anthropic": remote(ProviderKind::Anthropic, false),
        "openAiCompatible": remote(ProviderKind::OpenAiCompatible, false),
        "openAiCompatibleExtensions": remote(ProviderKind::OpenAiCompatible, true),
    })
}

fn commands() -> Value {
    let commands: Vec<Value> = contracts()
        .iter()
        .map(|c| {
            let args: Vec<Value> = c
                .args
                .iter()
                .map(|(name, arg)| match arg {
                    WireArg::Value(ty) => json!({ "name": crate::ipc::contract::camel_case(name), "type": ty }),
                    WireArg::Channel(ty) => json!({ "name": crate::ipc::contract::camel_case(name), "channel": ty }),
                })
                .collect();
            json!({ "name": c.name, "args": args, "returns": c.returns })
        })
        .collect();
    Value::Array(commands)
}

/// The full text of ui/src/ipc/contract.json.
pub fn contract_data() -> String {
    let data = json!({
        "samplingDefaults": SamplingParams::default(),
        "samplingRanges": SamplingParams::ranges(),
        "presets": SamplingParams::presets(),
        "samplerStageOrder": SamplerStage::DEFAULT_ORDER,
        "logitBiasNever": LogitBias::BAN,
        "loadDefaults": LoadParams::default(),
        "defaultProviders": hearth_app::default_providers(),
        "providerDefaultBaseUrls": {
            "openAi": ProviderKind::OpenAi.default_base_url(),
            "anthropic": ProviderKind::Anthropic.default_base_url(),
            "openAiCompatible": ProviderKind::OpenAiCompatible.default_base_url(),
        },
        "providerNamePlaceholder": PROVIDER_NAME,
        "samplingSupport": sampling_support_table(),
        "errorKinds": IpcErrorKind::ALL,
        // Deltas reach the window at most this often; the window paints no more often either.
        "windowUpdateIntervalMs": WINDOW_UPDATE_INTERVAL.as_millis() as u64,
        "commands": commands(),
    });
    let mut text = serde_json::to_string_pretty(&data).expect("the contract data serializes");
    text.push('\n');
    text
}
