// Generated from the Rust types by `UPDATE_BINDINGS=1 cargo test -p hearth --test ipc_contract`.
// Do not edit by hand.

export type Role = "system" | "user" | "assistant";

export type MessageStatus = "streaming" | "complete" | "stopped" | "interrupted" | "failed";

export type ReplyStats = { 
/**
 * Tokens in the rendered prompt.
 */
promptTokens: number, 
/**
 * Prompt tokens reused from the KV cache instead of being prefilled again.
 */
cachedTokens: number, completionTokens: number, 
/**
 * Time to first token, milliseconds.
 */
ttftMs: number, 
/**
 * Decode speed after the first token, tokens per second.
 */
decodeTps: number, 
/**
 * Earlier messages left out because the conversation outgrew the context window.
 */
droppedMessages: number, 
/**
 * The reply stopped at its max-tokens limit or the context's end, not where the model ended
 * it: "Continue" writes on.
 */
cutAtLimit: boolean, 
/**
 * Why the reply was cut off when the engine under it died ("the model crashed: …").
 */
interruptedBy?: string, };

export type ModelTarget = { "kind": "local" } | { "kind": "remote", provider: string, model: string, };

export type ChatSummary = { id: number, title: string, 
/**
 * Unix milliseconds of the last message (or creation).
 */
updatedAt: number, 
/**
 * Pinned chats are listed first.
 */
pinned: boolean, 
/**
 * Sent to the model before the conversation; empty for none.
 */
systemPrompt: string, 
/**
 * Where the chat's next reply comes from.
 */
model: ModelTarget, };

export type StoredMessage = { id: number, chatId: number, role: Role, content: string, status: MessageStatus, 
/**
 * Unix milliseconds.
 */
createdAt: number, 
/**
 * The model that wrote an assistant reply.
 */
model: string | null, stats: ReplyStats | null, 
/**
 * The message this one answers or follows; `None` for a chat's first message.
 */
parentId: number | null, 
/**
 * This message and its alternatives (edits, regenerations): the children of the same
 * parent, oldest first. More than one means the UI offers "2/3" arrows.
 */
siblings: Array<number>, };

export type FlashAttention = "auto" | "on" | "off";

export type KvType = "f16" | "q8_0" | "q4_0";

export type LoadParams = { 
/**
 * Context length in tokens; default min(trained length, 32768, what a quarter of free RAM holds).
 */
nCtx: number | null, 
/**
 * Default: the number of physical cores.
 */
nThreads: number | null, 
/**
 * Tokens per decode call during prefill.
 */
nBatch: number, 
/**
 * Tokens per compute step within a batch (≤ n_batch).
 */
nUbatch: number, 
/**
 * Layers to offload to a GPU: `None` lets llama.cpp offload all it can, `Some(0)` none.
 */
nGpuLayers: number | null, flashAttention: FlashAttention, kvCacheType: KvType, useMmap: boolean, useMlock: boolean, 
/**
 * A Jinja chat template to use instead of the model's own.
 */
chatTemplate: string | null, 
/**
 * Reuse the KV cache across turns (off only to measure what reuse saves).
 */
reuseKv: boolean, };

export type ModelInfo = { name: string, path: string, sizeBytes: number, 
/**
 * The settings as asked for (`None` fields = automatic).
 */
load: LoadParams, 
/**
 * The context length in force (the automatic choice resolved).
 */
nCtx: number, 
/**
 * The context length the model was trained for.
 */
nCtxTrain: number, 
/**
 * Threads writing the reply (one token at a time).
 */
nThreads: number, 
/**
 * Threads reading the prompt.
 */
nThreadsBatch: number, 
/**
 * What the user should know about this load, e.g. [`NO_CHAT_TEMPLATE`].
 */
notice?: string, };

export type SnippetPart = { text: string, hit: boolean, };

export type SearchHit = { chatId: number, chatTitle: string, messageId: number, role: Role, 
/**
 * A window of the message's text around the match.
 */
snippet: Array<SnippetPart>, createdAt: number, };

export type ExportFormat = "json" | "markdown";

export type SkippedChat = { 
/**
 * Its title, or "chat N" (its place in the file) when it has none.
 */
chat: string, reason: string, };

export type ImportReport = { imported: Array<ChatSummary>, skipped: Array<SkippedChat>, 
/**
 * Parts of imported chats that were left out, e.g. settings this version cannot use.
 */
notes: Array<string>, };

export type IpcErrorKind = "notFound" | "invalidInput" | "noModel" | "busy" | "engine" | "store" | "file" | "providerAuth" | "rateLimited" | "network" | "provider" | "keychain" | "hubAuth" | "diskFull" | "download";

export type IpcError = { kind: IpcErrorKind, message: string, 
/**
 * Seconds a provider asked to wait before retrying (rate limits).
 */
retryAfterS?: number, };

export type MessageSaved = { message: StoredMessage, };

export type ReplyStarted = { messageId: number, model: string, };

export type TextDelta = { text: string, };

export type FailedReply = { error: IpcError, 
/**
 * The partial reply as saved, if one had started.
 */
message: StoredMessage | null, };

export type ChatEvent = { "event": "userSaved", "data": MessageSaved } | { "event": "replyStarted", "data": ReplyStarted } | { "event": "delta", "data": TextDelta } | { "event": "finished", "data": MessageSaved } | { "event": "failed", "data": FailedReply };

export type Mirostat = "off" | "v1" | "v2";

export type SamplerStage = "penalties" | "dry" | "topNSigma" | "topK" | "typicalP" | "topP" | "minP" | "xtc" | "temperature";

export type BiasTarget = { "kind": "token", id: number, } | { "kind": "text", text: string, };

export type LogitBias = { target: BiasTarget, bias: number, };

export type Constraint = { "kind": "gbnf", "source": string } | { "kind": "jsonSchema", "source": string };

export type OverflowPolicy = "stopAtLimit" | "truncateMiddle" | "rollingWindow";

export type SamplingParams = { 
/**
 * 0 picks the most likely token every time (greedy).
 */
temperature: number, 
/**
 * Dynamic temperature: the temperature varies by ± this much with the entropy (0 = off).
 */
dynatempRange: number, dynatempExponent: number, 
/**
 * Keep only the k most likely tokens (0 = off).
 */
topK: number, 
/**
 * Keep the smallest set of tokens whose probability reaches p (1 = off).
 */
topP: number, 
/**
 * Drop tokens less likely than min_p × the top token's probability (0 = off).
 */
minP: number, 
/**
 * Locally typical sampling (1 = off).
 */
typicalP: number, 
/**
 * Keep tokens within n standard deviations of the top logit (0 = off).
 */
topNSigma: number, 
/**
 * XTC: with this probability, remove the most likely tokens above the threshold (0 = off).
 */
xtcProbability: number, xtcThreshold: number, 
/**
 * DRY repetition penalty (0 = off).
 */
dryMultiplier: number, dryBase: number, dryAllowedLength: number, 
/**
 * Tokens DRY looks back over (-1 = the whole context, 0 = off).
 */
dryLastN: number, drySequenceBreakers: Array<string>, mirostat: Mirostat, mirostatTau: number, mirostatEta: number, 
/**
 * Divide the logits of recently seen tokens (1 = off).
 */
repeatPenalty: number, 
/**
 * Tokens the penalties look back over (-1 = the whole context, 0 = off).
 */
repeatLastN: number, presencePenalty: number, frequencyPenalty: number, logitBias: Array<LogitBias>, 
/**
 * `None` draws a fresh seed per reply.
 */
seed: number | null, 
/**
 * Upper bound on generated tokens for one reply.
 */
maxTokens: number, 
/**
 * Never end the turn: end-of-turn tokens are banned, so the reply runs to `max_tokens`.
 */
ignoreEos: boolean, 
/**
 * The reply ends before any of these strings; they are never shown.
 */
stop: Array<string>, constraint: Constraint | null, 
/**
 * Order of the truncation stages; stages left out do not run.
 */
samplerOrder: Array<SamplerStage>, 
/**
 * What to do when the conversation no longer fits the context window.
 */
overflow: OverflowPolicy, };

export type FieldRange = { 
/**
 * The field's name in JSON.
 */
key: string, min: number, max: number, };

export type Preset = { name: string, params: SamplingParams, builtIn: boolean, };

export type SettingsScope = { "kind": "global" } | { "kind": "model", path: string, } | { "kind": "chat", id: number, };

export type SamplingSettings = { current: SamplingParams, 
/**
 * False when `current` comes from a broader scope (or the defaults).
 */
own: boolean, defaults: SamplingParams, ranges: Array<FieldRange>, 
/**
 * Built-in presets first, then the user's.
 */
presets: Array<Preset>, };

export type LoadSettings = { model: ModelInfo, saved: LoadParams, defaults: LoadParams, 
/**
 * True when `saved` differs from the settings the model is loaded with.
 */
needsReload: boolean, };

export type ProviderKind = "openAi" | "anthropic" | "openAiCompatible";

export type ProviderConfig = { 
/**
 * Stable id, chosen when the provider is added ("openai", "groq-1" …).
 */
id: string, 
/**
 * Shown to the user ("OpenAI", "My vLLM").
 */
name: string, kind: ProviderKind, baseUrl: string, 
/**
 * Models the user typed in, offered beside those the models endpoint lists.
 */
models: Array<string>, 
/**
 * The context window to budget for when the models endpoint does not say.
 */
contextLength: number | null, 
/**
 * Send llama.cpp's sampler fields (top-k, min-p, DRY, XTC, grammar …) to an
 * OpenAI-compatible server. Strict servers reject unknown fields: turn it off for those.
 */
extensions: boolean, 
/**
 * Hugging Face repository whose `tokenizer.json` counts this provider's tokens; by default
 * a model id shaped like a repository ("Qwen/Qwen2.5-7B-Instruct") is tried as one.
 */
tokenizerRepo: string | null, };

export type KeyStorage = { "kind": "keychain" } | { "kind": "file", path: string, reason: string, };

export type ProviderView = { config: ProviderConfig, 
/**
 * `None`: no key saved.
 */
key: KeyStorage | null, };

export type RemoteModel = { id: string, 
/**
 * Tokens the model's context holds, where the provider says.
 */
contextLength: number | null, };

export type ConnectionReport = { models: Array<RemoteModel>, 
/**
 * Round trip of the models request, milliseconds.
 */
latencyMs: number, };

export type FieldSupport = { 
/**
 * The setting's key in `SamplingParams` (camelCase).
 */
field: string, supported: boolean, 
/**
 * Why it is not (shown as a tooltip), or how it is sent; empty when there is nothing to say.
 */
note: string, };

export type HubRepo = { id: string, downloads: number, likes: number, updatedAt: string | null, gated: boolean, };

export type RepoQuant = { quant: string, files: Array<string>, sizeBytes: number, };

export type ModelFacts = { architecture: string | null, 
/**
 * Parameter count (elements of all tensors).
 */
parameters: number | null, 
/**
 * The quantization the file was made with ("Q4_K_M"), from `general.file_type`.
 */
quantization: string | null, 
/**
 * The context length the model was trained for.
 */
contextLength: number | null, layers: number | null, hasChatTemplate: boolean, };

export type FitVerdict = { "kind": "fits" } | { "kind": "gpuLayers", layers: number, totalLayers: number, } | { "kind": "tooLarge" };

export type FitEstimate = { facts: ModelFacts, contextLength: number, weightsBytes: number, kvCacheBytes: number, computeBytes: number, totalBytes: number, freeRamBytes: number, freeVramBytes: number | null, verdict: FitVerdict, };

export type DownloadState = "queued" | "running" | "paused" | "retrying" | "verifying" | "done" | "failed" | "cancelled";

export type Download = { id: string, repo: string, quant: string, files: Array<string>, state: DownloadState, doneBytes: number, totalBytes: number, bytesPerSecond: number, etaSeconds: number | null, attempt: number, maxAttempts: number, retryInS: number | null, error: string | null, 
/**
 * The model's path once done (a split model's first part).
 */
modelPath: string | null, };

export type ModelSource = "hubCache" | "modelsFolder" | "linked" | "copied";

export type LibraryModel = { path: string, name: string, source: ModelSource, repo: string | null, 
/**
 * All parts of a split model together.
 */
sizeBytes: number, facts: ModelFacts | null, 
/**
 * Why the file cannot be loaded, when its header is bad.
 */
error: string | null, loaded: boolean, };

export type ImportMode = "copy" | "link";

export type HubTokenStatus = { stored: boolean, storage: KeyStorage | null, };
