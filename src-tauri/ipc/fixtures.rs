//! The data the window must not derive again: defaults, ranges, presets, the sampler stages'
//! order, what "never" means for a logit bias, the pace of updates to the window, the providers
//! on first start and each provider kind's facts, which sampling settings reach each kind of
//! provider, the error kinds and every command's shape. Generated into
//! ui/src/ipc/contract.json (a test fails when it is stale); the window imports it, and the
//! browser tests' mock backend answers from it instead of copies.

use std::collections::BTreeMap;

use serde::Serialize;

use hearth_core::{
    AttachmentLimits, CacheBudgets, DRAFT_PACE, DraftPace, FieldRange, FieldSupport, FlashAttention, KvType, LoadParams, LogitBias, Preset,
    ProviderConfig, ProviderKind, SamplerStage, SamplingParams, sampling_support,
};

use crate::ipc::contract::{CommandContract, WireArg, camel_case};
use crate::ipc::{IpcErrorKind, contracts};

/// Stands for the provider's name in `samplingSupport`'s notes.
const PROVIDER_NAME: &str = "{provider}";

/// Typed, so numbers keep their own precision (an f32 0.8 is written 0.8).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContractData {
    sampling_defaults: SamplingParams,
    sampling_ranges: &'static [FieldRange],
    presets: Vec<Preset>,
    sampler_stage_order: [SamplerStage; 9],
    logit_bias_never: f32,
    logit_bias_max: f32,
    load_defaults: LoadParams,
    load_ranges: &'static [FieldRange],
    /// The values a load setting chosen from a list takes, in the order offered.
    load_choices: LoadChoices,
    /// The longest context "auto" picks (the model's trained length and free memory may give less).
    auto_context_max: u32,
    /// The context a fit estimate assumes when a model's header gives none.
    fit_context_fallback: u32,
    cache_budget_defaults: CacheBudgets,
    cache_budget_ranges: &'static [FieldRange],
    attachment_limit_defaults: AttachmentLimits,
    attachment_limit_ranges: &'static [FieldRange],
    server_defaults: hearth_app::ServerSettings,
    server_ranges: &'static [FieldRange],
    default_providers: Vec<ProviderConfig>,
    provider_kinds: BTreeMap<&'static str, KindFacts>,
    provider_name_placeholder: &'static str,
    provider_id_max_length: usize,
    /// Which sampling settings reach a model: the local engine, and each provider kind (an
    /// OpenAI-compatible server with and without llama.cpp's extensions).
    sampling_support: BTreeMap<&'static str, Vec<FieldSupport>>,
    error_kinds: [IpcErrorKind; 16],
    /// How often deltas reach the window (hearth_app::window_pace); it paints what arrives.
    window_pace: hearth_app::window_pace::PaceFigures,
    /// When the composer sends the draft to be read ahead.
    draft_pace: DraftPace,
    /// How a reply being written marks a tool call (`hearth_core::CALL_OPEN`/`CALL_CLOSE`): the
    /// window shows the text before it, and the call as a call.
    tool_call_marks: [&'static str; 2],
    /// How a reply marks its reasoning (`hearth_core::THINK_OPEN`/`THINK_CLOSE`): the window shows
    /// a leading block apart, as `hearth_core::split_reasoning` reads it.
    reasoning_marks: [&'static str; 2],
    commands: Vec<WireCommand>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoadChoices {
    flash_attention: [FlashAttention; 3],
    kv_cache_type: [KvType; 3],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KindFacts {
    default_base_url: &'static str,
    /// The context window assumed when neither the models endpoint nor the user says.
    default_context_length: u32,
    needs_key: bool,
    /// Whether the provider's "llama.cpp extensions" switch applies.
    takes_extensions: bool,
}

#[derive(Serialize)]
struct WireCommand {
    name: &'static str,
    args: Vec<WireArgument>,
    returns: String,
}

#[derive(Serialize)]
struct WireArgument {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    r#type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<String>,
}

const KINDS: [(&str, ProviderKind); 3] =
    [("openAi", ProviderKind::OpenAi), ("anthropic", ProviderKind::Anthropic), ("openAiCompatible", ProviderKind::OpenAiCompatible)];

fn sampling_support_table() -> BTreeMap<&'static str, Vec<FieldSupport>> {
    let remote = |kind, extensions| {
        let config = ProviderConfig { extensions, ..ProviderConfig::new("p", PROVIDER_NAME, kind) };
        sampling_support(Some(&config))
    };
    BTreeMap::from([
        ("local", sampling_support(None)),
        ("openAi", remote(ProviderKind::OpenAi, false)),
        ("anthropic", remote(ProviderKind::Anthropic, false)),
        ("openAiCompatible", remote(ProviderKind::OpenAiCompatible, false)),
        ("openAiCompatibleExtensions", remote(ProviderKind::OpenAiCompatible, true)),
    ])
}

fn wire(command: &CommandContract) -> WireCommand {
    let args = command
        .args
        .iter()
        .map(|(name, arg)| {
            let name = camel_case(name);
            match arg {
                WireArg::Value(ty) => WireArgument { name, r#type: Some(ty.clone()), channel: None },
                WireArg::Channel(ty) => WireArgument { name, r#type: None, channel: Some(ty.clone()) },
            }
        })
        .collect();
    WireCommand { name: command.name, args, returns: command.returns.clone() }
}

/// The full text of ui/src/ipc/contract.json.
pub fn contract_data() -> String {
    let data = ContractData {
        sampling_defaults: SamplingParams::default(),
        sampling_ranges: SamplingParams::ranges(),
        presets: SamplingParams::presets(),
        sampler_stage_order: SamplerStage::DEFAULT_ORDER,
        logit_bias_never: LogitBias::BAN,
        logit_bias_max: LogitBias::MAX,
        load_defaults: LoadParams::default(),
        load_ranges: LoadParams::ranges(),
        load_choices: LoadChoices { flash_attention: FlashAttention::ALL, kv_cache_type: KvType::ALL },
        auto_context_max: LoadParams::AUTO_N_CTX_MAX,
        fit_context_fallback: hearth_gguf::ASSUMED_CONTEXT_LENGTH,
        cache_budget_defaults: CacheBudgets::default(),
        cache_budget_ranges: CacheBudgets::ranges(),
        attachment_limit_defaults: AttachmentLimits::default(),
        attachment_limit_ranges: AttachmentLimits::ranges(),
        server_defaults: hearth_app::ServerSettings::default(),
        server_ranges: hearth_app::ServerSettings::ranges(),
        default_providers: hearth_app::default_providers(),
        provider_kinds: KINDS
            .iter()
            .map(|&(name, kind)| {
                let facts = KindFacts {
                    default_base_url: kind.default_base_url(),
                    default_context_length: kind.default_context_length(),
                    needs_key: kind.needs_key(),
                    takes_extensions: kind.takes_extensions(),
                };
                (name, facts)
            })
            .collect(),
        provider_name_placeholder: PROVIDER_NAME,
        provider_id_max_length: ProviderConfig::ID_MAX_LEN,
        sampling_support: sampling_support_table(),
        error_kinds: IpcErrorKind::ALL,
        window_pace: hearth_app::window_pace::FIGURES,
        draft_pace: DRAFT_PACE,
        tool_call_marks: [hearth_core::CALL_OPEN, hearth_core::CALL_CLOSE],
        reasoning_marks: [hearth_core::THINK_OPEN, hearth_core::THINK_CLOSE],
        commands: contracts().iter().map(wire).collect(),
    };
    let mut text = serde_json::to_string_pretty(&data).expect("the contract data serializes");
    text.push('\n');
    text
}
