//! Hearth's domain: chats, messages, sampling settings, the `ChatBackend` a reply comes from, the
//! `HistoryStore` it is saved to, and the `ChatService` that runs one turn between them.
//!
//! This crate knows nothing of Tauri, SQL or llama.cpp.

mod attachment;
mod backend;
mod cache;
mod chat;
mod consensus;
mod devices;
mod draft;
mod field;
mod last_lines;
mod load;
mod meaning;
mod overflow;
mod provider;
mod reasoning;
mod sampling;
mod search;
mod service;
mod settings;
mod title;
mod tool_stream;
mod tools;
mod transfer;

pub use attachment::{
    Attachment, AttachmentKind, AttachmentLimits, DocumentTexts, MAX_ATTACHMENTS, MAX_IMAGE_PIXELS, PASSAGE_CHARS, Passage,
    RETRIEVED_PASSAGES, document_blocks, document_budget, passage_ranges, with_documents, with_passages,
};
pub use backend::{
    BackendError, BeamHypothesis, CancelFlag, ChatBackend, FinishReason, GenEvent, MAX_TOP_LOGPROBS, ModelInfo, NO_CHAT_TEMPLATE,
    PromptSource, ReadAhead, ReplyRequest, ReplyStats, ReplyStream, Switch, TokenAlternative, TokenChoice, TokenLogprob, TokenProbs,
};
pub use cache::CacheBudgets;
pub use chat::{ChatId, ChatMessage, ChatSummary, ImageInput, MessageId, MessageStatus, Role, StoredMessage, read_tools_locally};
pub use consensus::{Candidate, Consensus, MbrUtility, chrf};
pub use devices::{BackendProblem, ComputeDevice, DeviceKind, DeviceReport, Offload};
pub use draft::{DRAFT_PACE, DraftPace};
pub use field::FieldError;
pub use last_lines::{KEPT_LINES, LastLines};
pub use load::{FlashAttention, KvType, LoadParams};
pub use meaning::{
    EmbedError, Embedded, Embedder, Meaning, MeaningError, PASSAGES_PER_EMBED, PassageMeaning, closeness, embed_passages, fuse_rankings,
};
pub use overflow::{OverflowPolicy, fit_context};
pub use provider::{
    FieldSupport, ModelTarget, ProviderConfig, ProviderError, ProviderKind, SAMPLING_FIELDS, local_sampling_support, model_name,
    sampling_support,
};
pub use reasoning::{
    ANTHROPIC_THINKING_MIN, REASONING_EFFORTS, ReasoningClock, ReasoningCounter, ReasoningFormat, ReasoningStream, ReasoningWriter,
    ReplyParts, ReplyPiece, THINK_CLOSE, THINK_CLOSING, THINK_OPEN, THINK_OPENED, TextReader, TextReading, anthropic_thinking_budget,
    drop_past_reasoning, harmony, reasoning_effort, reasoning_format, split_reasoning, with_reasoning,
};
pub use sampling::{
    BiasTarget, Constraint, FieldRange, LogitBias, Mirostat, Preset, SamplerStage, SamplingError, SamplingParams, Speculative, Strategy,
};
pub use search::{SearchHit, SnippetPart};
pub use service::{
    ChatService, ColumnEvent, FixedPace, HistoryStore, MAX_COMPARED, Turn, TurnError, TurnEvent, WINDOW_UPDATE_INTERVAL, WindowPace,
};
pub use settings::SettingsScope;
pub use title::{clean_title, generate_title};
pub use tool_stream::{CallEvent, CallStream};
pub use tools::{
    CALL_CLOSE, CALL_OPEN, COMMAND_R_CALLS, CallNumbering, CallReader, CallShape, CallSyntax, CallTurn, DEEPSEEK_CALLS, DEEPSEEK_R1_CALLS,
    FUNCTIONARY_CALLS, LLAMA3_CALLS, ListCallStream, ListSyntax, MISTRAL_CALLS, MISTRAL_NEMO_CALLS, NamedCallStream, OfferedTools,
    ReadCalls, ToolCall, ToolChoice, ToolError, ToolResult, ToolRun, ToolRunEnd, ToolSpec, WrittenCall, call_block, call_id, call_turns,
    check_tools, fit_result, read_calls, shown_text_len, tool_response, written_calls,
};
pub use transfer::{ExportFormat, ImportReport, SkippedChat};
