// Generated from the Rust types and commands by `UPDATE_BINDINGS=1 cargo test -p hearth --test ipc_contract`.
// Do not edit by hand.

import { Channel, invoke } from '@tauri-apps/api/core';

export type Answer = { "action": "accept", content: Record<string, string | number | boolean | string[]>, } | { "action": "decline" } | { "action": "cancel" };

export type AttachProgress = { 
/**
 * The share of its text indexed, 0 to 1.
 */
indexed: number, };

export type Attachment = { hash: string, name: string, kind: AttachmentKind, 
/**
 * The file's size in bytes.
 */
bytes: number, 
/**
 * How many characters of text the model reads from it.
 */
chars: number, };

export type AttachmentKind = "document" | "image";

export type AttachmentLimits = { 
/**
 * The largest file read, in megabytes.
 */
maxFileMb: number, 
/**
 * The largest image, in megapixels: at most what the engine reads ([`MAX_IMAGE_PIXELS`]).
 */
maxImageMegapixels: number, };

export type AvailableUpdate = { version: string, currentVersion: string, 
/**
 * The release notes, as plain text.
 */
notes: string | null, 
/**
 * When it was published (RFC 3339), if the manifest says.
 */
date: string | null, };

export type BackendProblem = { 
/**
 * The module's file, e.g. `libggml-cuda.so`.
 */
module: string, reason: string, };

export type BeamHypothesis = { text: string, 
/**
 * Sum of its tokens' log-probabilities (the model's own, before any constraint).
 */
logprob: number, 
/**
 * What it was ranked by: `logprob` ÷ tokens^length penalty.
 */
score: number, tokens: number, };

export type BiasTarget = { "kind": "token", id: number, } | { "kind": "text", text: string, };

export type CacheBudgets = { 
/**
 * Megabytes of RAM for chats' caches while another chat answers (0: straight to disk).
 */
ramMb: number, 
/**
 * Megabytes of disk for their state files (0: none are kept after a switch or a restart).
 */
diskMb: number, 
/**
 * Minutes without a reply after which the loaded model leaves memory (0: never); the next
 * chat that answers loads its model again.
 */
unloadIdleMinutes: number, 
/**
 * Megabytes of RAM for models kept loaded after another was loaded (0: a model leaves memory
 * as soon as another is loaded); the least recently used goes first.
 */
modelsRamMb: number, };

export type CallProgress = { progress: number, total: number | null, message: string | null, };

export type Candidate = { text: string, 
/**
 * Mean utility against every other candidate (its expected utility).
 */
score: number, };

export type ChatCacheUsage = { 
/**
 * Bytes of state files on disk.
 */
bytes: number, 
/**
 * State files: one per chat and model.
 */
chats: number, 
/**
 * Bytes of other chats' caches the engine keeps in RAM (the answering chat's is in the model's context).
 */
ramBytes: number, budgets: CacheBudgets, 
/**
 * The loaded model's weights (its file, mapped into memory; 0 when none is loaded).
 */
modelBytes: number, 
/**
 * The loaded model's context: its KV cache, allocated in full at load (0 when none).
 */
contextBytes: number, 
/**
 * Weights of models kept in memory after another was loaded, so switching back is quick.
 */
keptModelBytes: number, };

export type ChatEvent = { "event": "modelLoading", "data": ModelLoading } | { "event": "userSaved", "data": MessageSaved } | { "event": "replyStarted", "data": ReplyStarted } | { "event": "delta", "data": TextDelta } | { "event": "searching", "data": SearchProgress } | { "event": "finished", "data": MessageSaved } | { "event": "failed", "data": FailedReply } | { "event": "roundFinished", "data": MessageSaved } | { "event": "toolApproval", "data": PendingCall } | { "event": "toolRunning", "data": ToolCallRef } | { "event": "toolProgress", "data": ToolProgress } | { "event": "roundLimit", "data": MessageSaved } | { "event": "toolsUnavailable", "data": ToolsUnavailable };

export type ChatModelLoaded = { chat: ChatSummary, loaded: ModelInfo | null, };

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
model: ModelTarget, 
/**
 * What the local model file the chat names is called (`hearth_core::model_name`): null for
 * a remote chat or one that names none (it talks to the loaded model).
 */
modelName: string | null, };

export type ChoiceOption = { value: string, label: string, };

export type CompareEvent = { column: number, event: ChatEvent, };

export type ComputeDevice = { 
/**
 * ggml's name for it, e.g. `CUDA0`, `Vulkan0`, `CPU`.
 */
name: string, 
/**
 * What the driver calls it, e.g. `NVIDIA H200`, `llvmpipe (LLVM 15.0.6, 256 bits)`.
 */
description: string, 
/**
 * The backend it belongs to: `CUDA`, `Vulkan`, `CPU`, `RPC`.
 */
backend: string, kind: DeviceKind, freeBytes: number, totalBytes: number, };

export type ConnectionReport = { models: Array<RemoteModel>, 
/**
 * Round trip of the models request, milliseconds.
 */
latencyMs: number, };

export type Consensus = { utility: MbrUtility, 
/**
 * Index of the chosen candidate.
 */
chosen: number, candidates: Array<Candidate>, };

export type Constraint = { "kind": "gbnf", "source": string } | { "kind": "jsonSchema", "source": string };

export type Decision = { "decision": "allow", arguments: string, } | { "decision": "alwaysAllow", arguments: string, } | { "decision": "deny" };

export type DeviceKind = "cpu" | "gpu" | "integratedGpu" | "accelerator" | "other";

export type DeviceReport = { 
/**
 * Where the backend modules were loaded from.
 */
modulesDir?: string, 
/**
 * GPUs first, in the order llama.cpp uses them; the CPU last.
 */
devices: Array<ComputeDevice>, problems: Array<BackendProblem>, };

export type Download = { id: string, repo: string, quant: string, files: Array<string>, state: DownloadState, doneBytes: number, totalBytes: number, bytesPerSecond: number, etaSeconds: number | null, attempt: number, maxAttempts: number, retryInS: number | null, error: string | null, 
/**
 * The model's path once done (a split model's first part).
 */
modelPath: string | null, };

export type DownloadState = "queued" | "running" | "paused" | "retrying" | "verifying" | "done" | "failed" | "cancelled";

export type EnterpriseIdentity = { 
/**
 * The identity provider's issuer address (its OpenID configuration is found there).
 */
idpIssuer: string, 
/**
 * The client Hearth is registered as at the identity provider, and its secret (`""`: a
 * public client).
 */
idpClientId: string, idpClientSecret: string, 
/**
 * What the identity provider issued the user.
 */
idpToken: string, idpTokenKind: IdpTokenKind, 
/**
 * The client Hearth is registered as at the MCP server's authorization server, and its
 * secret (`""`: a public client).
 */
clientId: string, clientSecret: string, };

export type ExportFormat = "json" | "markdown";

export type FailedReply = { error: IpcError, 
/**
 * The partial reply as saved, if one had started.
 */
message: StoredMessage | null, };

export type FieldKind = { "kind": "text", format: string | null, minLength: number | null, maxLength: number | null, } | { "kind": "number", integer: boolean, minimum: number | null, maximum: number | null, } | { "kind": "boolean" } | { "kind": "choice", options: Array<ChoiceOption>, } | { "kind": "choices", options: Array<ChoiceOption>, minItems: number | null, maxItems: number | null, };

export type FieldRange = { 
/**
 * The field's name in JSON.
 */
key: string, min: number, max: number, 
/**
 * The range in words, as refusals say it ("between 0 and 1").
 */
text: string, 
/**
 * Whole numbers only.
 */
integer: boolean, };

export type FieldSupport = { 
/**
 * The setting's key in `SamplingParams` (camelCase).
 */
field: string, supported: boolean, 
/**
 * Why it is not (shown as a tooltip), or how it is sent; empty when there is nothing to say.
 */
note: string, };

export type FitEstimate = { facts: ModelFacts, contextLength: number, weightsBytes: number, kvCacheBytes: number, computeBytes: number, totalBytes: number, freeRamBytes: number, freeVramBytes: number | null, verdict: FitVerdict, };

export type FitVerdict = { "kind": "fits" } | { "kind": "gpuLayers", layers: number, totalLayers: number, } | { "kind": "tooLarge" };

export type FlashAttention = "auto" | "on" | "off";

export type HubRepo = { id: string, downloads: number, likes: number, updatedAt: string | null, gated: boolean, };

export type HubTokenStatus = { stored: boolean, storage: KeyStorage | null, };

export type IdpTokenKind = "idToken" | "refreshToken";

export type ImportMode = "copy" | "link";

export type ImportReport = { imported: Array<ChatSummary>, skipped: Array<SkippedChat>, 
/**
 * Parts of imported chats that were left out, e.g. settings this version cannot use.
 */
notes: Array<string>, };

export type IpcError = { kind: IpcErrorKind, message: string, 
/**
 * Seconds a provider asked to wait before retrying (rate limits).
 */
retryAfterS?: number, 
/**
 * The field (or comma-separated fields) the error concerns, by the name the window's types
 * use (`topP`, `nCtx`, `baseUrl`, `name`), mostly with `invalidInput`; a turn whose chat's
 * model could not be readied says `model`.
 */
field?: string, };

export type IpcErrorKind = "notFound" | "invalidInput" | "noModel" | "busy" | "engine" | "store" | "file" | "providerAuth" | "rateLimited" | "network" | "provider" | "keychain" | "hubAuth" | "diskFull" | "download" | "update";

export type KeyStorage = { "kind": "keychain" } | { "kind": "file", path: string, reason: string, };

export type KvType = "f16" | "q8_0" | "q4_0";

export type LibraryModel = { path: string, name: string, source: ModelSource, repo: string | null, 
/**
 * All parts of a split model together.
 */
sizeBytes: number, facts: ModelFacts | null, 
/**
 * Why the file cannot be loaded, when its header is bad.
 */
error: string | null, loaded: boolean, };

export type LoadParams = { 
/**
 * Context length in tokens; default min(trained length, [`LoadParams::AUTO_N_CTX_MAX`], what
 * a quarter of free RAM holds).
 */
nCtx: number | null, 
/**
 * Default: the number of physical cores to read prompts; replies are written on one fewer, or on
 * every core when the engine measures it faster with that core free (`hearth-engine/src/threads.rs`).
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
nGpuLayers: number | null, 
/**
 * The GPU the layers go to, by the engine's name for it (`CUDA1`, `Vulkan0`): `None`, the
 * first one found.
 */
device: string | null, flashAttention: FlashAttention, kvCacheType: KvType, useMmap: boolean, useMlock: boolean, 
/**
 * A Jinja chat template to use instead of the model's own.
 */
chatTemplate: string | null, 
/**
 * Reuse the KV cache across turns (off only to measure what reuse saves).
 */
reuseKv: boolean, 
/**
 * Other machines' devices, through llama.cpp's `rpc-server` on each ("host:port"): the
 * layers are split over them and the local GPU by their free memory.
 */
rpcServers: Array<string>, 
/**
 * The multimodal projector (`mmproj-*.gguf`) that lets the model read images, chosen by
 * hand (the Model settings offer those beside the model: `ModelInfo::projectors`); `None`:
 * the one beside the model file, if any.
 */
projector: string | null, 
/**
 * The fewest tokens an image becomes (a small image is enlarged to it); `None`: the
 * projector's own. Only projectors that keep an image's shape (Qwen-VL, Pixtral, Gemma 4…)
 * take it; those that resize every image to one square ignore it.
 */
imageMinTokens: number | null, 
/**
 * The most tokens an image becomes (a large one is scaled down to it): fewer read faster and
 * take less context, more see finer detail; `None`: the projector's own.
 */
imageMaxTokens: number | null, };

export type LoadSettings = { model: ModelInfo, saved: LoadParams, defaults: LoadParams, 
/**
 * True when `saved` differs from the settings the model is loaded with.
 */
needsReload: boolean, };

export type LogitBias = { target: BiasTarget, bias: number, };

export type MachineCredentials = { "kind": "secret", clientId: string, clientSecret: string, } | { "kind": "privateKey", clientId: string, keyPem: string, algorithm: string, } | { "kind": "enterprise" } & EnterpriseIdentity;

export type MbrUtility = "chrF" | "exactMatch";

export type McpServerConfig = { 
/**
 * How the user calls it, and how Hearth tells servers apart.
 */
name: string, transport: McpTransport, 
/**
 * Off: never started, its tools never offered.
 */
enabled: boolean, 
/**
 * Tools the user switched off: not offered to the model.
 */
disabledTools: Array<string>, };

export type McpServerState = { "state": "off" } | { "state": "idle" } | { "state": "starting" } | { "state": "ready", tools: Array<McpTool>, } | { "state": "signIn" } | { "state": "failed", message: string, stderr: Array<string>, };

export type McpServerStatus = { config: McpServerConfig, state: McpServerState, };

export type McpTool = { name: string, title: string | null, description: string, 
/**
 * The JSON schema of its arguments.
 */
inputSchema: Record<string, unknown>, 
/**
 * The server says it changes nothing (`readOnlyHint`): a hint, never a permission.
 */
readOnly: boolean, };

export type McpTransport = { "kind": "stdio", command: string, args: Array<string>, env: { [key in string]: string }, cwd: string | null, } | { "kind": "http", url: string, headers: { [key in string]: string }, };

export type MessageSaved = { message: StoredMessage, };

export type MessageStatus = "streaming" | "complete" | "stopped" | "interrupted" | "failed";

export type Mirostat = "off" | "v1" | "v2";

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
contextLength: number | null, layers: number | null, hasChatTemplate: boolean, 
/**
 * How the model reasons, as its chat template says.
 */
reasoning: ReasoningFormat, 
/**
 * An embedding model (its tokens pooled into one vector, for retrieval), not one to chat with.
 */
embedding: boolean, };

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
 * Memory its KV cache takes: every cell of the context, allocated at load (known once loaded).
 */
kvBytes?: number, 
/**
 * What the user should know about this load, e.g. [`NO_CHAT_TEMPLATE`].
 */
notice?: string, 
/**
 * Its weights were still in memory (kept after another model was loaded): no file was read.
 */
fromMemory: boolean, 
/**
 * Where its layers are: the device, and how many of them are on a GPU.
 */
offload: Offload, 
/**
 * The projector it reads images through (its file's path); `None`: text only.
 */
projector?: string, 
/**
 * The projectors beside the model file (`mmproj-*.gguf` in its folder), which its load
 * settings offer.
 */
projectors: Array<string>, };

export type ModelLoading = { 
/**
 * The file being loaded.
 */
path: string, 
/**
 * What it is called (its file's name without the extension).
 */
name: string, 
/**
 * 0..=1.
 */
fraction: number, };

export type ModelSource = "hubCache" | "modelsFolder" | "linked" | "copied";

export type ModelTarget = { "kind": "local", model: string | null, } | { "kind": "remote", provider: string, model: string, };

export type Offload = { 
/**
 * The backend of the device holding the offloaded layers (`CPU` when none are).
 */
backend: string, 
/**
 * That device's description (`NVIDIA H200`), or the CPU's.
 */
device: string, 
/**
 * Repeating layers on that device (the output layer goes with them when all are).
 */
gpuLayers: number, totalLayers: number, 
/**
 * The line the model menu shows, e.g. "NVIDIA H200 (CUDA): all 30 layers".
 */
label: string, 
/**
 * Why fewer layers than asked for went to the GPU, e.g. a load that ran out of device
 * memory and was made again on the CPU.
 */
fallback?: string, };

export type OverflowPolicy = "stopAtLimit" | "truncateMiddle" | "rollingWindow";

export type Passage = { 
/**
 * The document's hash ([`Attachment::hash`]).
 */
hash: string, 
/**
 * The document's name as attached.
 */
name: string, 
/**
 * Its place among the document's passages (0 = the first).
 */
ordinal: number, text: string, };

export type PendingCall = { 
/**
 * The reply that wrote the call, and the call's place among its calls.
 */
reply: number, index: number, server: string, tool: string, 
/**
 * The tool's description, as its server gives it.
 */
description: string, 
/**
 * The arguments the model wrote (JSON), which the user may edit before allowing.
 */
arguments: string, 
/**
 * The server says the tool changes nothing: a hint, never a permission.
 */
readOnly: boolean, };

export type PendingQuestion = { 
/**
 * What `answer_tool_question` names it by.
 */
id: number, 
/**
 * The server asking, by its name in Settings → Tools.
 */
server: string, message: string, fields: Array<QuestionField>, 
/**
 * A question by link: the page to open (no fields then). Accepted, the app opens it in the
 * system's browser; the answers given there go to the server, not through Hearth.
 */
link: QuestionLink | null, };

export type Preset = { name: string, params: SamplingParams, builtIn: boolean, };

export type PromptSource = "new" | "live" | "ram" | "disk" | "typed";

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
tokenizerRepo: string | null, 
/**
 * The user confirmed a plain `http://` base URL on another machine: the key and the chats
 * travel unencrypted. (Not needed for this machine's own servers.)
 */
allowPlainHttp: boolean, };

export type ProviderKind = "openAi" | "anthropic" | "openAiCompatible";

export type ProviderView = { config: ProviderConfig, 
/**
 * `None`: no key saved.
 */
key: KeyStorage | null, };

export type QuestionField = { 
/**
 * Its key in the answer.
 */
name: string, title: string | null, description: string | null, required: boolean, kind: FieldKind, 
/**
 * The server's default, of the field's kind.
 */
default: string | number | boolean | string[] | null, };

export type QuestionLink = { 
/**
 * The whole address as it will be opened (parsed and written again: its host in ASCII,
 * lowercase), shown as text, never as a link.
 */
url: string, 
/**
 * Where it leads, shown apart from the rest of the address.
 */
host: string, 
/**
 * Why the address deserves a second look, in words; none when nothing stands out.
 */
warning: string | null, };

export type ReasoningFormat = { "kind": "none" } | { "kind": "thinkTags", switchable: boolean, } | { "kind": "channels" };

export type RemoteModel = { id: string, 
/**
 * Tokens the model's context holds, where the provider says.
 */
contextLength: number | null, };

export type ReplyStarted = { messageId: number, model: string, 
/**
 * The text the reply starts from (a continued reply's, a branch's opening; empty for a new
 * reply): the deltas go on from it.
 */
text: string, };

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
 * Where the reused part of the prompt came from.
 */
promptSource: PromptSource, 
/**
 * Tokens guessed ahead by speculative decoding, and how many of them the sampler kept.
 */
draftedTokens: number, acceptedTokens: number, 
/**
 * A consensus reply's candidates and their scores (boxed: most replies have none).
 */
consensus?: Consensus, 
/**
 * A beam search's best finished replies, best first (the first is the reply).
 */
beams?: Array<BeamHypothesis>, 
/**
 * Why the reply was cut off when the engine under it died ("the model crashed: …").
 */
interruptedBy?: string, 
/**
 * How the prompt was written when the chat template could not be used as it is (a system
 * prompt it refuses, folded into the first message; llama.cpp's format in its place).
 */
templateNotice?: string, 
/**
 * The turn's rounds of tool calls ran out at this reply (the chat's cap, given here): the
 * calls it wrote did not run.
 */
toolRoundLimit?: number, 
/**
 * Tokens of the question this reply answers as the model read it: its text with the documents
 * (whole) or passages written into it, and its images. Counted by a local model; none for a
 * round of tool results.
 */
questionTokens?: number, 
/**
 * Of `question_tokens`, each document's, read whole, in the order the question carries them
 * (none when it has none, or was given passages of them).
 */
documentTokens?: Array<number>, 
/**
 * How long the reply reasoned: from its first text to the end of its leading reasoning block
 * (`hearth_core::split_reasoning`), in milliseconds.
 */
reasoningMs?: number, 
/**
 * Of `completion_tokens`, those the model reasoned with, where they were counted.
 */
reasoningTokens?: number, };

export type RepoQuant = { quant: string, files: Array<string>, 
/**
 * The image projector (`mmproj-….gguf`) downloaded beside it, when the repository holds one:
 * a vision model reads images through it ([`projector_for`]).
 */
projector: string | null, 
/**
 * What the download fetches: the model's files and its projector.
 */
sizeBytes: number, };

export type RequestRecord = { 
/**
 * When it came, in Unix milliseconds.
 */
atMs: number, 
/**
 * The caller's address and port.
 */
client: string, model: string, promptTokens: number, completionTokens: number, 
/**
 * From the request to its last byte.
 */
ms: number, 
/**
 * The HTTP status; 499 when the client went away before the reply ended.
 */
status: number, };

export type Role = "system" | "user" | "assistant" | "tool";

export type SamplerStage = "penalties" | "dry" | "topNSigma" | "topK" | "typicalP" | "topP" | "minP" | "xtc" | "temperature";

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
overflow: OverflowPolicy, 
/**
 * The token inspector: how many likeliest tokens are kept with each token of a reply (0
 * keeps none). Local replies keep the distribution the sampler drew from; a llama.cpp
 * server's, the model's probabilities it reports.
 */
topProbs: number, 
/**
 * Rounds of tool calls one turn may take (a reply that calls tools, its calls run, the next
 * reply reads their results) before Hearth stops and says so under the last reply.
 */
maxToolRounds: number, 
/**
 * Reasoning models: -1 lets the model reason as long as it does; 0 asks it not to (a template
 * that takes `enable_thinking` is given false; a reasoning block it opens anyway is closed at
 * once); N closes its reasoning block after N tokens, and it answers.
 */
reasoningBudget: number, 
/**
 * Speculative decoding: tokens guessed ahead are checked in one batch. The sampler still
 * decides every token, so the reply is the one it would be without; only faster when the
 * guesses hold (text the reply copies from the conversation: edits, code, quotes).
 */
speculative: Speculative, 
/**
 * The most tokens guessed ahead per step.
 */
draftMax: number, 
/**
 * Speculative decoding with a draft model: the GGUF file of a small model with the same
 * vocabulary that guesses ahead (the model chatting checks every guess).
 */
draftModel: string | null, 
/**
 * How the reply is made from the model's choices.
 */
strategy: Strategy, 
/**
 * Consensus: how many candidate replies are sampled (side by side, in one batch per step).
 */
mbrCandidates: number, 
/**
 * Consensus: how the candidates are compared.
 */
mbrUtility: MbrUtility, 
/**
 * Beam search: how many partial replies are followed at each step.
 */
beamWidth: number, 
/**
 * Beam search: finished replies are ranked by log-probability ÷ length^this (0 favours
 * short replies, higher values longer ones).
 */
lengthPenalty: number, 
/**
 * Beam search: stop as soon as `beam_width` replies are finished, rather than while a
 * longer one could still rank higher.
 */
earlyStopping: boolean, 
/**
 * Beam search: how many of the best finished replies are kept with the reply (at most
 * the beam width: a search finishes no more).
 */
nBest: number, };

export type SamplingSettings = { current: SamplingParams, 
/**
 * The scope `current` comes from: this one (its own settings), a broader one, or `null` for
 * the defaults.
 */
source: SettingsScope | null, 
/**
 * True when `current` is the scope's own.
 */
own: boolean, defaults: SamplingParams, ranges: Array<FieldRange>, 
/**
 * Built-in presets first, then the user's.
 */
presets: Array<Preset>, };

export type SearchHit = { chatId: number, chatTitle: string, messageId: number, role: Role, 
/**
 * A window of the message's text around the match.
 */
snippet: Array<SnippetPart>, createdAt: number, };

export type SearchProgress = { 
/**
 * Tokens each beam or candidate has written so far.
 */
tokens: number, };

export type ServerSettings = { enabled: boolean, port: number, 
/**
 * Listen on every network interface (an API key is then required), not only on this machine.
 */
network: boolean, 
/**
 * Save each request answered in full as a chat, to read what a tool asked.
 */
saveRequests: boolean, 
/**
 * Web origins (`https://example.org`, or `*`) whose pages may call the server from a
 * browser; empty: none may (pages served from this machine always can).
 */
allowedOrigins: Array<string>, };

export type ServerStatus = { settings: ServerSettings, 
/**
 * Where programs on this machine reach it while it runs.
 */
url: string | null, 
/**
 * Why it is not running although it is switched on.
 */
problem: string | null, 
/**
 * Whether an API key is saved (the key itself never leaves the keychain).
 */
keySet: boolean, 
/**
 * The requests answered lately, newest first.
 */
requests: Array<RequestRecord>, };

export type SettingsScope = { "kind": "global" } | { "kind": "model", path: string, } | { "kind": "chat", id: number, };

export type SkippedChat = { 
/**
 * Its title, or "chat N" (its place in the file) when it has none.
 */
chat: string, reason: string, };

export type SnippetPart = { text: string, hit: boolean, };

export type Speculative = "off" | "promptLookup" | "draftModel";

export type StarterModel = { repo: string, name: string, quant: string, 
/**
 * Why it suits this machine, in a sentence.
 */
reason: string, };

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
siblings: Array<number>, 
/**
 * A tool message's call: which tool ran, how, and how it went (its `content` is what the
 * model read).
 */
tool: ToolRun | null, 
/**
 * The calls an assistant reply wrote, read from its text (`read_calls`), in order.
 */
toolCalls: Array<WrittenCall>, 
/**
 * The files a user message carries, in the order attached (the model reads their text
 * before the message's own).
 */
attachments: Array<Attachment>, 
/**
 * The passages of its documents a user message was given in their place (they did not fit
 * the model's context whole): what the reply to it read, its sources.
 */
passages: Array<Passage>, };

export type Strategy = "sampling" | "consensus" | "beam";

export type TextDelta = { text: string, };

export type TokenAlternative = { id: number, text: string, p: number, };

export type TokenProbs = { id: number, 
/**
 * Its text (a piece of a multi-byte character shows as U+FFFD).
 */
text: string, 
/**
 * Its probability in that distribution.
 */
p: number, 
/**
 * The distribution's entropy in bits: 0 when only one token could come.
 */
entropy: number, 
/**
 * Its likeliest tokens, most likely first.
 */
top: Array<TokenAlternative>, };

export type ToolCallRef = { reply: number, index: number, };

export type ToolProgress = { reply: number, index: number, progress: CallProgress, };

export type ToolRun = { 
/**
 * The tool's name as the model called it.
 */
name: string, 
/**
 * The MCP server that has it.
 */
server: string | null, 
/**
 * The arguments it ran with (the model's, or as the user edited them), JSON.
 */
arguments: string, end: ToolRunEnd, 
/**
 * The tool said its answer is an error.
 */
isError: boolean, elapsedMs: number, 
/**
 * The length of the whole result, in characters.
 */
chars: number, 
/**
 * The result was cut to fit the model's budget (the message holds what it read, the cut said).
 */
cut: boolean, };

export type ToolRunEnd = "ran" | "denied" | "stopped" | "failed";

export type ToolsUnavailable = { servers: Array<UnavailableServer>, };

export type UnavailableServer = { server: string, why: string, };

export type UpdateProgress = { "stage": "downloading", downloaded: number, total: number | null, 
/**
 * 1 for the first try; more after a download was cut off (see `DOWNLOAD_TRIES`).
 */
attempt: number, } | { "stage": "installing" };

export type UpdateSettings = { 
/**
 * Ask the endpoint for a newer version when Hearth starts.
 */
checkAtStart: boolean, 
/**
 * The update manifest's address (`""`: none).
 */
endpoint: string, };

export type UpdateStatus = { settings: UpdateSettings, 
/**
 * This build has a release key: it can update itself.
 */
enabled: boolean, currentVersion: string, };

export type WrittenCall = { name: string, 
/**
 * The arguments as JSON text: as the model wrote them when they were an object in the call
 * (so they come back to it unchanged), else compact.
 */
arguments: string, };

/** The backend's commands, as the window calls them. Rejections carry an `IpcError`. */
export const commands = {
  listChats: (): Promise<Array<ChatSummary>> => invoke<Array<ChatSummary>>('list_chats'),
  createChat: (): Promise<ChatSummary> => invoke<ChatSummary>('create_chat'),
  listMessages: (chatId: number): Promise<Array<StoredMessage>> => invoke<Array<StoredMessage>>('list_messages', { chatId }),
  /**
   * Sends a user message and streams the reply over `on_event`. Resolves once the reply has
   * finished or failed; rejects only if nothing could be started (e.g. an empty message).
   */
  sendMessage: (chatId: number, content: string, attachments: Array<Attachment>, onEvent: (message: ChatEvent) => void): Promise<null> => invoke<null>('send_message', { chatId, content, attachments, onEvent: new Channel<ChatEvent>(onEvent) }),
  /**
   * Reads the file at `path` for the message being written and stores its content; what
   * `send_message` is given to carry it. A long document tells over `on_progress` how much of
   * it is indexed. Refused in words: not text, too large, encrypted, ….
   */
  attachFile: (path: string, onProgress: (message: AttachProgress) => void): Promise<Attachment> => invoke<Attachment>('attach_file', { path, onProgress: new Channel<AttachProgress>(onProgress) }),
  /**
   * Reads a pasted file — its `name` and its bytes in base64 (`data`) — for the message being
   * written and stores its content, as `attach_file` does for a file on disk.
   */
  attachBytes: (name: string, data: string, onProgress: (message: AttachProgress) => void): Promise<Attachment> => invoke<Attachment>('attach_bytes', { name, data, onProgress: new Channel<AttachProgress>(onProgress) }),
  /**
   * The bytes, in base64, of the image attached under `hash`, for the window to draw a sent
   * message's thumbnail; `null` for an image too large to draw one from (its chip keeps the
   * icon). A document's hash, or one nothing is stored under, is refused in words.
   */
  getAttachedImage: (hash: string): Promise<string | null> => invoke<string | null>('get_attached_image', { hash }),
  /**
   * The embedding model that ranks retrieved passages by meaning too (Settings →
   * Attachments); none: by their words alone.
   */
  getEmbeddingModel: (): Promise<string | null> => invoke<string | null>('get_embedding_model'),
  /**
   * Chooses the embedding model at `path` (`null`: none) once the engine has embedded a word
   * with it; a file that is no embedding model, or that llama.cpp refuses, is refused in words.
   */
  setEmbeddingModel: (path: string | null): Promise<string | null> => invoke<string | null>('set_embedding_model', { path }),
  /**
   * Asks for files to attach in the system's open dialog; their paths, none when cancelled.
   */
  pickAttachments: (): Promise<Array<string>> => invoke<Array<string>>('pick_attachments'),
  /**
   * The limits on attached files (Settings → Attachments).
   */
  getAttachmentLimits: (): Promise<AttachmentLimits> => invoke<AttachmentLimits>('get_attachment_limits'),
  /**
   * Saves the limits on attached files; the next file attached is read within them. Out of
   * range values are refused with the field and its range.
   */
  setAttachmentLimits: (limits: AttachmentLimits): Promise<AttachmentLimits> => invoke<AttachmentLimits>('set_attachment_limits', { limits }),
  /**
   * Stops the reply being written in the chat, or the tool running (or waiting to be allowed).
   */
  stopGeneration: (chatId: number): Promise<null> => invoke<null>('stop_generation', { chatId }),
  /**
   * The user's word on the tool call the chat waits for (`toolApproval`). Fails when none waits.
   */
  answerToolCall: (chatId: number, decision: Decision): Promise<null> => invoke<null>('answer_tool_call', { chatId, decision }),
  /**
   * Runs the tool calls of reply `message_id` again: each waits for the user's word
   * (`toolApproval`, its arguments to edit), and the results are a new version after the reply,
   * which the model then answers; streamed like a send.
   */
  rerunToolCalls: (chatId: number, messageId: number, onEvent: (message: ChatEvent) => void): Promise<null> => invoke<null>('rerun_tool_calls', { chatId, messageId, onEvent: new Channel<ChatEvent>(onEvent) }),
  /**
   * Reads ahead the message being typed in `chat_id`, with the files `attachments` it will
   * carry: the model prefills what will not change of it in idle time, so a reply after
   * Enter starts sooner (`still_typing`: sent while keys still come, so its last word is
   * left for later). A reply or a load takes over at once; a remote chat ignores it. Answers
   * once the read-ahead ended (the window need not wait for it).
   */
  prefillDraft: (chatId: number, draft: string, attachments: Array<Attachment>, stillTyping: boolean): Promise<null> => invoke<null>('prefill_draft', { chatId, draft, attachments, stillTyping }),
  /**
   * Saves a new version of user message `message_id` beside it and streams a reply to it.
   */
  editMessage: (chatId: number, messageId: number, content: string, onEvent: (message: ChatEvent) => void): Promise<null> => invoke<null>('edit_message', { chatId, messageId, content, onEvent: new Channel<ChatEvent>(onEvent) }),
  /**
   * Streams another reply beside `message_id`, to the same user message.
   */
  regenerateReply: (chatId: number, messageId: number, onEvent: (message: ChatEvent) => void): Promise<null> => invoke<null>('regenerate_reply', { chatId, messageId, onEvent: new Channel<ChatEvent>(onEvent) }),
  /**
   * Writes on from where the unfinished reply `message_id` ended.
   */
  continueReply: (chatId: number, messageId: number, onEvent: (message: ChatEvent) => void): Promise<null> => invoke<null>('continue_reply', { chatId, messageId, onEvent: new Channel<ChatEvent>(onEvent) }),
  /**
   * A new version of reply `message_id` that keeps its first `at` tokens, takes `token` (one
   * of the alternatives kept at position `at`) and writes on; streamed like a send.
   */
  branchReply: (chatId: number, messageId: number, at: number, token: number, onEvent: (message: ChatEvent) => void): Promise<null> => invoke<null>('branch_reply', { chatId, messageId, at, token, onEvent: new Channel<ChatEvent>(onEvent) }),
  /**
   * Reply `message_id`'s tokens, each with the distribution it was drawn from (empty when
   * none were kept: a remote reply, one written before, or with the inspector off).
   */
  tokenProbs: (messageId: number): Promise<Array<TokenProbs>> => invoke<Array<TokenProbs>>('token_probs', { messageId }),
  /**
   * Answers the user message of reply `message_id` once per settings in `variants` (2 to 4),
   * side by side: each answer a new version beside it, streamed over `on_event` tagged with
   * its column. Resolves when all have ended; `switch_branch` keeps the one the user picks.
   */
  compareReplies: (chatId: number, messageId: number, variants: Array<SamplingParams>, onEvent: (message: CompareEvent) => void): Promise<null> => invoke<null>('compare_replies', { chatId, messageId, variants, onEvent: new Channel<CompareEvent>(onEvent) }),
  /**
   * Shows the branch through `message_id` (one of a message's versions); returns the new path.
   */
  switchBranch: (chatId: number, messageId: number): Promise<Array<StoredMessage>> => invoke<Array<StoredMessage>>('switch_branch', { chatId, messageId }),
  /**
   * Deletes a message and everything after it in its branch; returns the path now shown.
   */
  deleteMessage: (chatId: number, messageId: number): Promise<Array<StoredMessage>> => invoke<Array<StoredMessage>>('delete_message', { chatId, messageId }),
  renameChat: (chatId: number, title: string): Promise<ChatSummary> => invoke<ChatSummary>('rename_chat', { chatId, title }),
  pinChat: (chatId: number, pinned: boolean): Promise<ChatSummary> => invoke<ChatSummary>('pin_chat', { chatId, pinned }),
  setSystemPrompt: (chatId: number, prompt: string): Promise<ChatSummary> => invoke<ChatSummary>('set_system_prompt', { chatId, prompt }),
  deleteChat: (chatId: number): Promise<null> => invoke<null>('delete_chat', { chatId }),
  /**
   * Messages matching `query` in every chat, best first. Any text is a valid query.
   */
  searchMessages: (query: string): Promise<Array<SearchHit>> => invoke<Array<SearchHit>>('search_messages', { query }),
  /**
   * Registers the window for chats changed in the background (e.g. titled by the model).
   */
  watchChats: (onUpdate: (message: ChatSummary) => void): Promise<null> => invoke<null>('watch_chats', { onUpdate: new Channel<ChatSummary>(onUpdate) }),
  /**
   * Exports chats `chat_ids` (all when absent) to a file the user picks. Returns the path
   * written, or nothing when the user cancelled.
   */
  exportChats: (chatIds: Array<number> | null, format: ExportFormat): Promise<string | null> => invoke<string | null>('export_chats', { chatIds, format }),
  /**
   * Imports the chats of an export file the user picks; nothing when the user cancelled.
   */
  importChats: (): Promise<ImportReport | null> => invoke<ImportReport | null>('import_chats'),
  /**
   * The loaded model, once the start-up load has settled; `None` if there is none, an error
   * saying why if the start-up load failed or was skipped (safe mode).
   */
  activeModel: (): Promise<ModelInfo | null> => invoke<ModelInfo | null>('active_model'),
  /**
   * The compute devices the engine found (GPUs first, the CPU last), and each backend it could
   * not use with the reason: asked of the engine process, where a failing driver costs only it.
   */
  computeDevices: (): Promise<DeviceReport> => invoke<DeviceReport>('compute_devices'),
  getLoadSettings: (): Promise<LoadSettings> => invoke<LoadSettings>('get_load_settings'),
  /**
   * Saves the loaded model's load settings; they apply at its next load (`reload_model`).
   */
  setLoadSettings: (params: LoadParams): Promise<LoadSettings> => invoke<LoadSettings>('set_load_settings', { params }),
  /**
   * Reloads the loaded model with its saved load settings. When llama.cpp cannot load it that way
   * (too long a context for the memory, say), the model is loaded again as it was, so the user
   * keeps a working model, and the error says what happened.
   */
  reloadModel: (): Promise<LoadSettings> => invoke<LoadSettings>('reload_model'),
  /**
   * Loads the model chat `chat_id` talks to when another one (or none) is loaded, reporting
   * which and llama.cpp's progress (0 to 1, the first at 0 as it begins); `None` when nothing
   * needed loading. Called as a chat opens, and before a comparison.
   */
  loadChatModel: (chatId: number, onProgress: (message: ModelLoading) => void): Promise<ModelInfo | null> => invoke<ModelInfo | null>('load_chat_model', { chatId, onProgress: new Channel<ModelLoading>(onProgress) }),
  /**
   * Makes the local model file `path` the one chat `chat_id` talks to, and loads it (progress
   * 0 to 1) unless it is loaded.
   */
  useLocalModel: (chatId: number, path: string, onProgress: (message: number) => void): Promise<ChatModelLoaded> => invoke<ChatModelLoaded>('use_local_model', { chatId, path, onProgress: new Channel<number>(onProgress) }),
  /**
   * Registers the window for changes of the loaded model it did not ask for: `None` when the
   * model was unloaded after the idle time set.
   */
  watchModel: (onUpdate: (message: ModelInfo | null) => void): Promise<null> => invoke<null>('watch_model', { onUpdate: new Channel<ModelInfo | null>(onUpdate) }),
  /**
   * What chats' KV caches take in RAM and on disk, and their budgets.
   */
  chatCacheUsage: (): Promise<ChatCacheUsage> => invoke<ChatCacheUsage>('chat_cache_usage'),
  /**
   * Saves the budgets for chats' caches and puts them in force at once.
   */
  setChatCacheBudgets: (budgets: CacheBudgets): Promise<ChatCacheUsage> => invoke<ChatCacheUsage>('set_chat_cache_budgets', { budgets }),
  /**
   * Drops every chat's KV cache (RAM and disk); each chat's next reply reads its prompt again.
   */
  clearChatCaches: (): Promise<ChatCacheUsage> => invoke<ChatCacheUsage>('clear_chat_caches'),
  /**
   * The server's settings, where it listens (or why it does not), and the requests it answered.
   */
  getServer: (): Promise<ServerStatus> => invoke<ServerStatus>('get_server'),
  /**
   * Saves the server's settings and starts, stops or moves it at once.
   */
  setServer: (settings: ServerSettings): Promise<ServerStatus> => invoke<ServerStatus>('set_server', { settings }),
  /**
   * Saves the server's API key in the keychain (`None` removes it); it is never sent back.
   */
  setServerKey: (key: string | null): Promise<ServerStatus> => invoke<ServerStatus>('set_server_key', { key }),
  /**
   * Settings at `scope` (default: global).
   */
  getSampling: (scope: SettingsScope | null): Promise<SamplingSettings> => invoke<SamplingSettings>('get_sampling', { scope }),
  /**
   * Saves sampling settings at `scope` (default: global); the next reply uses them. Out-of-range
   * values are refused with the field and its range.
   */
  setSampling: (params: SamplingParams, scope: SettingsScope | null): Promise<SamplingParams> => invoke<SamplingParams>('set_sampling', { params, scope }),
  /**
   * Makes `scope` inherit again from the broader scopes.
   */
  clearSampling: (scope: SettingsScope): Promise<null> => invoke<null>('clear_sampling', { scope }),
  savePreset: (name: string, params: SamplingParams): Promise<null> => invoke<null>('save_preset', { name, params }),
  deletePreset: (name: string): Promise<null> => invoke<null>('delete_preset', { name }),
  listProviders: (): Promise<Array<ProviderView>> => invoke<Array<ProviderView>>('list_providers'),
  /**
   * Adds `config`, or replaces the provider with its id; a key saved for another host is
   * forgotten (`App::save_provider`).
   */
  saveProvider: (config: ProviderConfig): Promise<ProviderView> => invoke<ProviderView>('save_provider', { config }),
  /**
   * Removes a provider and its key. Chats that used it say so at their next message.
   */
  deleteProvider: (provider: string): Promise<null> => invoke<null>('delete_provider', { provider }),
  /**
   * Saves `key` for `provider` in the keychain (an empty key forgets it); says where it went.
   */
  setApiKey: (provider: string, key: string): Promise<KeyStorage | null> => invoke<KeyStorage | null>('set_api_key', { provider, key }),
  listProviderModels: (provider: string): Promise<Array<RemoteModel>> => invoke<Array<RemoteModel>>('list_provider_models', { provider }),
  /**
   * Asks the provider for its models with the saved URL and key.
   */
  testProvider: (provider: string): Promise<ConnectionReport> => invoke<ConnectionReport>('test_provider', { provider }),
  /**
   * Where the chat's next reply comes from. Earlier replies keep the model that wrote them.
   */
  setChatModel: (chatId: number, target: ModelTarget): Promise<ChatSummary> => invoke<ChatSummary>('set_chat_model', { chatId, target }),
  /**
   * Which sampling settings reach the model behind `target`.
   */
  samplingSupportFor: (target: ModelTarget): Promise<Array<FieldSupport>> => invoke<Array<FieldSupport>>('sampling_support_for', { target }),
  hubSearch: (query: string): Promise<Array<HubRepo>> => invoke<Array<HubRepo>>('hub_search', { query }),
  hubRepoFiles: (repo: string): Promise<Array<RepoQuant>> => invoke<Array<RepoQuant>>('hub_repo_files', { repo }),
  /**
   * Will `file` (a quantization's first part) run here at `context_length` tokens (its own when
   * null)? Read from its header over range requests, before any download.
   */
  hubFit: (repo: string, file: string, contextLength: number | null): Promise<FitEstimate> => invoke<FitEstimate>('hub_fit', { repo, file, contextLength }),
  /**
   * The model the welcome screen offers a new user: the largest this machine runs well
   * (`hearth_hub::starter`). Its files and fit come from the hub, as any other's.
   */
  starterModel: (): Promise<StarterModel> => invoke<StarterModel>('starter_model'),
  /**
   * Settings → Updates: the settings, whether this build updates itself, its version.
   */
  updateStatus: (): Promise<UpdateStatus> => invoke<UpdateStatus>('update_status'),
  /**
   * Saves Settings → Updates (an endpoint must be https, or http on this machine).
   */
  setUpdateSettings: (settings: UpdateSettings): Promise<UpdateStatus> => invoke<UpdateStatus>('set_update_settings', { settings }),
  /**
   * Asks the endpoint for a newer version; null when this one is the newest.
   */
  checkUpdate: (): Promise<AvailableUpdate | null> => invoke<AvailableUpdate | null>('check_update'),
  /**
   * Downloads the update found, checks its signature, installs it and restarts Hearth; the
   * running version is untouched when any step fails.
   */
  installUpdate: (onProgress: (message: UpdateProgress) => void): Promise<null> => invoke<null>('install_update', { onProgress: new Channel<UpdateProgress>(onProgress) }),
  startDownload: (repo: string, quant: string, files: Array<string>): Promise<Download> => invoke<Download>('start_download', { repo, quant, files }),
  listDownloads: (): Promise<Array<Download>> => invoke<Array<Download>>('list_downloads'),
  /**
   * Sends every change of every download to `on_update`.
   */
  watchDownloads: (onUpdate: (message: Download) => void): Promise<null> => invoke<null>('watch_downloads', { onUpdate: new Channel<Download>(onUpdate) }),
  pauseDownload: (id: string): Promise<Download> => invoke<Download>('pause_download', { id }),
  resumeDownload: (id: string): Promise<Download> => invoke<Download>('resume_download', { id }),
  cancelDownload: (id: string): Promise<null> => invoke<null>('cancel_download', { id }),
  listLibrary: (): Promise<Array<LibraryModel>> => invoke<Array<LibraryModel>>('list_library'),
  importModel: (path: string, mode: ImportMode): Promise<LibraryModel> => invoke<LibraryModel>('import_model', { path, mode }),
  /**
   * Asks for a GGUF file in the system's open dialog, then imports it; null when cancelled.
   */
  importModelDialog: (mode: ImportMode): Promise<LibraryModel | null> => invoke<LibraryModel | null>('import_model_dialog', { mode }),
  deleteModel: (path: string): Promise<null> => invoke<null>('delete_model', { path }),
  /**
   * Shows the model's folder in the system's file manager.
   */
  revealModel: (path: string): Promise<null> => invoke<null>('reveal_model', { path }),
  /**
   * Loads `path` with its saved load settings, reporting llama.cpp's progress (0 to 1). When
   * llama.cpp cannot load it, the previous model is loaded again and the error says so.
   */
  loadModel: (path: string, onProgress: (message: number) => void): Promise<ModelInfo> => invoke<ModelInfo>('load_model', { path, onProgress: new Channel<number>(onProgress) }),
  /**
   * Gives up the load under way, if any; `load_model` then answers that it was cancelled (and
   * the model loaded before it is loaded again).
   */
  cancelLoad: (): Promise<boolean> => invoke<boolean>('cancel_load'),
  unloadModel: (): Promise<null> => invoke<null>('unload_model'),
  hubTokenStatus: (): Promise<HubTokenStatus> => invoke<HubTokenStatus>('hub_token_status'),
  /**
   * Saves the token (null or empty: forgets it) and uses it from now on.
   */
  setHubToken: (token: string | null): Promise<HubTokenStatus> => invoke<HubTokenStatus>('set_hub_token', { token }),
  /**
   * The MCP servers and where each stands.
   */
  listToolServers: (): Promise<Array<McpServerStatus>> => invoke<Array<McpServerStatus>>('list_tool_servers'),
  /**
   * Saves the whole list (environment and headers to the keychain); servers changed or gone
   * are stopped.
   */
  saveToolServers: (servers: Array<McpServerConfig>): Promise<Array<McpServerStatus>> => invoke<Array<McpServerStatus>>('save_tool_servers', { servers }),
  /**
   * Adds the servers of pasted `mcpServers` JSON (Claude Desktop, Cursor, LM Studio, VS Code);
   * one of the same name is replaced.
   */
  addToolServers: (json: string): Promise<Array<McpServerStatus>> => invoke<Array<McpServerStatus>>('add_tool_servers', { json }),
  /**
   * Starts the server again (a failure shows in its state, with its stderr).
   */
  restartToolServer: (name: string): Promise<Array<McpServerStatus>> => invoke<Array<McpServerStatus>>('restart_tool_server', { name }),
  /**
   * Signs in to server `name`, which asked to (OAuth): its sign-in page opens in the system's
   * browser; once the user has signed in there, the server starts again with the token (kept
   * in the keychain). Answers when the sign-in is done, failed, or given up after 5 minutes.
   */
  signInToolServer: (name: string): Promise<Array<McpServerStatus>> => invoke<Array<McpServerStatus>>('sign_in_tool_server', { name }),
  /**
   * Signs in to server `name` as a machine client its organisation registered Hearth as (a
   * client id, and its secret or private key): kept in the keychain, the server starts again
   * signing in with them, and again whenever its token runs out. Answers with the servers'
   * states (a refused sign-in shows as the server's failure).
   */
  signInToolServerAsClient: (name: string, credentials: MachineCredentials): Promise<Array<McpServerStatus>> => invoke<Array<McpServerStatus>>('sign_in_tool_server_as_client', { name, credentials }),
  /**
   * Signs in to server `name` with the user's enterprise identity, the user signing in for it
   * at the identity provider's page (opened in the system's browser; `identity`'s token is not
   * used): then as `sign_in_tool_server_as_client`. A sign-in refused at the identity provider
   * is this command's error, the server left as it was; 5 minutes to sign in.
   */
  signInToolServerAtIdp: (name: string, identity: EnterpriseIdentity): Promise<Array<McpServerStatus>> => invoke<Array<McpServerStatus>>('sign_in_tool_server_at_idp', { name, identity }),
  /**
   * Sends the MCP servers' questions waiting for the user (elicitation) over `on_update` now,
   * and again at every change (asked, answered, withdrawn).
   */
  watchToolQuestions: (onUpdate: (message: Array<PendingQuestion>) => void): Promise<null> => invoke<null>('watch_tool_questions', { onUpdate: new Channel<Array<PendingQuestion>>(onUpdate) }),
  /**
   * Answers question `id`: the form sent (what it asked, of its types; fields left out take
   * the server's defaults), its link opened in the system's browser, declined, or dismissed.
   */
  answerToolQuestion: (id: number, answer: Answer): Promise<null> => invoke<null>('answer_tool_question', { id, answer }),
  /**
   * Stops the server; it starts again when a chat needs its tools.
   */
  stopToolServer: (name: string): Promise<Array<McpServerStatus>> => invoke<Array<McpServerStatus>>('stop_tool_server', { name }),
  /**
   * Registers the window for every change of a server's state (the whole list each time).
   */
  watchToolServers: (onUpdate: (message: Array<McpServerStatus>) => void): Promise<null> => invoke<null>('watch_tool_servers', { onUpdate: new Channel<Array<McpServerStatus>>(onUpdate) }),
};

export type Commands = typeof commands;
