//! TypeScript types for the window, generated from the Rust types above. The committed copy is
//! ui/src/ipc/bindings.ts; a test fails when it is stale (`UPDATE_BINDINGS=1` rewrites it).

use ts_rs::TS;

use hearth_core::{
    BackendProblem, BeamHypothesis, BiasTarget, CacheBudgets, Candidate, ChatSummary, ComputeDevice, Consensus, Constraint, DeviceKind,
    DeviceReport, ExportFormat, FieldRange, FieldSupport, FlashAttention, ImportReport, KvType, LoadParams, LogitBias, MbrUtility,
    MessageStatus, Mirostat, ModelInfo, ModelTarget, Offload, OverflowPolicy, Preset, PromptSource, ProviderConfig, ProviderKind,
    ReplyStats, Role, SamplerStage, SamplingParams, SearchHit, SettingsScope, SkippedChat, SnippetPart, Speculative, StoredMessage,
    Strategy, TokenAlternative, TokenProbs,
};
use hearth_gguf::ModelFacts;
use hearth_hub::{Download, DownloadState, FitEstimate, FitVerdict, HubRepo, ImportMode, LibraryModel, ModelSource, RepoQuant};
use hearth_providers::{KeyStorage, RemoteModel};

use super::{
    ChatEvent, ChatModelLoaded, CompareEvent, ConnectionReport, FailedReply, HubTokenStatus, IpcError, IpcErrorKind, LoadSettings,
    MessageSaved, ProviderView, ReplyStarted, SamplingSettings, TextDelta,
};

/// The full text of ui/src/ipc/bindings.ts.
pub fn typescript_bindings() -> String {
    let cfg = super::contract::ts_config();
    let decls = [
        Role::decl(&cfg),
        MessageStatus::decl(&cfg),
        PromptSource::decl(&cfg),
        MbrUtility::decl(&cfg),
        Candidate::decl(&cfg),
        Consensus::decl(&cfg),
        BeamHypothesis::decl(&cfg),
        ReplyStats::decl(&cfg),
        TokenAlternative::decl(&cfg),
        TokenProbs::decl(&cfg),
        ModelTarget::decl(&cfg),
        ChatSummary::decl(&cfg),
        StoredMessage::decl(&cfg),
        FlashAttention::decl(&cfg),
        KvType::decl(&cfg),
        LoadParams::decl(&cfg),
        DeviceKind::decl(&cfg),
        ComputeDevice::decl(&cfg),
        BackendProblem::decl(&cfg),
        DeviceReport::decl(&cfg),
        Offload::decl(&cfg),
        ModelInfo::decl(&cfg),
        SnippetPart::decl(&cfg),
        SearchHit::decl(&cfg),
        ExportFormat::decl(&cfg),
        SkippedChat::decl(&cfg),
        ImportReport::decl(&cfg),
        IpcErrorKind::decl(&cfg),
        IpcError::decl(&cfg),
        MessageSaved::decl(&cfg),
        ReplyStarted::decl(&cfg),
        TextDelta::decl(&cfg),
        FailedReply::decl(&cfg),
        ChatEvent::decl(&cfg),
        CompareEvent::decl(&cfg),
        Mirostat::decl(&cfg),
        SamplerStage::decl(&cfg),
        BiasTarget::decl(&cfg),
        LogitBias::decl(&cfg),
        Constraint::decl(&cfg),
        OverflowPolicy::decl(&cfg),
        Speculative::decl(&cfg),
        Strategy::decl(&cfg),
        SamplingParams::decl(&cfg),
        FieldRange::decl(&cfg),
        Preset::decl(&cfg),
        SettingsScope::decl(&cfg),
        SamplingSettings::decl(&cfg),
        LoadSettings::decl(&cfg),
        ChatModelLoaded::decl(&cfg),
        ProviderKind::decl(&cfg),
        ProviderConfig::decl(&cfg),
        KeyStorage::decl(&cfg),
        ProviderView::decl(&cfg),
        RemoteModel::decl(&cfg),
        ConnectionReport::decl(&cfg),
        FieldSupport::decl(&cfg),
        HubRepo::decl(&cfg),
        RepoQuant::decl(&cfg),
        ModelFacts::decl(&cfg),
        FitVerdict::decl(&cfg),
        FitEstimate::decl(&cfg),
        DownloadState::decl(&cfg),
        Download::decl(&cfg),
        ModelSource::decl(&cfg),
        LibraryModel::decl(&cfg),
        ImportMode::decl(&cfg),
        HubTokenStatus::decl(&cfg),
        CacheBudgets::decl(&cfg),
        hearth_app::ChatCacheUsage::decl(&cfg),
        hearth_app::ServerSettings::decl(&cfg),
        hearth_server::RequestRecord::decl(&cfg),
        hearth_app::ServerStatus::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from the Rust types and commands by `UPDATE_BINDINGS=1 cargo test -p hearth --test ipc_contract`.\n// Do not edit by hand.\n\nimport { Channel, invoke } from '@tauri-apps/api/core';\n\n",
    );
    for decl in decls {
        out.push_str("export ");
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    out.push_str(&super::typescript_commands(&super::contracts()));
    out
}
