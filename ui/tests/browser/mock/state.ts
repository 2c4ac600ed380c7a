// The mock backend's state: what a test configures (MockConfig, the JSON the harness passes), and what the
// backend keeps (MockState), shared by every part of the mock and exposed to the tests as `window.__hearthMock`
// (read and changed there through page.evaluate, so the parts always read it through `state`).
import type {
  Answer,
  Attachment,
  AttachmentLimits,
  AvailableUpdate,
  BeamHypothesis,
  CacheBudgets,
  CallProgress,
  Candidate,
  ChatSummary,
  Decision,
  DeviceReport,
  Download,
  HubRepo,
  IpcError,
  KeyStorage,
  LibraryModel,
  LoadParams,
  MachineCredentials,
  McpServerStatus,
  McpTool,
  ModelInfo,
  Offload,
  PendingQuestion,
  Preset,
  ProviderView,
  RemoteModel,
  RequestRecord,
  Role,
  SamplingParams,
  ServerSettings,
  SettingsScope,
  StarterModel,
  StoredMessage,
  TokenProbs,
  UpdateSettings,
  WrittenCall,
} from '../../../src/ipc/bindings';
import { ATTACHMENT_LIMIT_DEFAULTS, CACHE_BUDGET_DEFAULTS, DEFAULT_PROVIDERS, DEFAULT_SAMPLING, SERVER_DEFAULTS } from './contract';
import { DEFAULT_REPLY, DEVICES, DOWNLOAD_TROUBLE, GB, OFFLOAD, REMOTE_MODELS, STARTER, defaultLibrary, hubRepos } from './fixtures';
import { clone } from './util';

/** A chat as the store keeps it: its summary and the message its path ends at (null: no messages). */
export type Chat = Omit<ChatSummary, 'modelName'> & {
  leafId: number | null;
  /** What the backend calls the file the chat names where the library does not list it (a file that is gone):
   *  the test says, as the backend reads it from the path. A listed file is called by its library name. */
  modelName?: string | null;
};

/** A message as the store keeps it; `siblings` is derived on the way out. */
export type Message = Omit<StoredMessage, 'siblings'>;

/**
 * A reply the mock writes (`replies`, `defaultReply`): its text in `chunkSize` pieces, one every `delayMs`, after
 * `ttftMs`; or, with `tokensPerSecond`, offered at that rate (see offerAtRate); or its failure `failWith`.
 */
export type Reply = {
  text: string;
  chunkSize?: number;
  delayMs?: number;
  ttftMs?: number;
  failWith?: IpcError | null;
  tokensPerSecond?: number;
  tickMs?: number;
  /** What speculative decoding guessed ahead and kept (reported when the chat's settings have it on). */
  drafts?: { drafted: number; accepted: number };
  droppedMessages?: number;
  cutAtLimit?: boolean;
  templateNotice?: string;
  /** The question's tokens as the local model read it, with its files (the engine counts them). */
  questionTokens?: number;
  /** Of those, each document's read whole, in the order the question carries them. */
  documentTokens?: number[];
  /** A consensus reply's candidates (else made up around its text). */
  candidates?: Candidate[];
  /** A beam search's best replies, best first (else made up around its text). */
  beams?: Omit<BeamHypothesis, 'score'>[] | BeamHypothesis[];
  /**
   * The tools this reply calls (its `text` writes their blocks, as the model would): a local reply that ends
   * complete is saved with these calls (the backend reads them from its text; the mock is told) and ends its
   * round (`roundFinished`); then each call goes as scripted (turns.ts' runCalls), and the next of `replies`
   * (else `defaultReply`) reads their results. Past the chat's sampling `maxToolRounds`, `roundLimit` then `finished`.
   */
  calls?: ScriptedCall[];
};

/**
 * A call as a scenario scripts it: the call as the backend reads it from the reply; the server that has the tool and what
 * it says of it (asked about unless the tool was allowed for the session); how long it runs (Stop ends it) and the
 * progress it reports meanwhile (every `stepMs`, else spread evenly over `runMs`); the result it gives when it runs.
 */
export type ScriptedCall = {
  call: WrittenCall;
  server: string;
  description?: string;
  readOnly?: boolean;
  runMs?: number;
  progress?: CallProgress[];
  /** The time between progress reports (else they are spread evenly over `runMs`). */
  stepMs?: number;
  /** What the tool answers when it runs: the text the model reads, and the whole result's length when it was cut. */
  result?: { content: string; isError?: boolean; chars?: number; cut?: boolean; elapsedMs?: number };
};

/**
 * A model file as the engine loads it (config.model: the harness's MODEL); `projector`: the mmproj file it reads
 * images through, found beside it (none: it reads text only, and a turn with an image fails as the engine says).
 */
/** A model file; `projectors`: the projectors beside it, the first read with it unless one is chosen. */
export type ModelFile = { name: string; path: string; sizeBytes: number; nCtxTrain?: number; notice?: string; projectors?: string[] };

/** A library entry as the backend keeps it; `loaded` is derived on the way out. */
export type LibraryFile = Omit<LibraryModel, 'loaded'>;

/** What goes wrong with a download: the connection drops at a fraction (retried), or the disk fills up at one. */
export type DownloadTrouble = { dropAt?: number; diskFullAt?: number; dropped?: boolean; failed?: boolean };

/** The file import_chats reads: its chats, those it cannot take, and notes. */
export type ImportFile = {
  chats?: { title: string; updatedAt: number; pinned?: boolean; systemPrompt?: string; messages?: [Role, string][] }[];
  skipped?: { chat: string; reason: string }[];
  notes?: string[];
};

/**
 * How an MCP server's start goes in the mock (tools.ts): after `startMs` it is ready with `tools`, or it
 * failed with `failed`'s message and stderr lines. A server without one starts with no tools.
 */
/**
 * How a server's start goes (after `startMs`: ready with `tools`, or `failed`); `signIn`: it asks to sign in (OAuth)
 * until the user has, which takes them `signInMs` in the browser, or fails with `signInFailed`'s words.
 */
export type ToolScript = {
  startMs?: number;
  tools?: McpTool[];
  failed?: { message: string; stderr: string[] };
  signIn?: boolean;
  signInMs?: number;
  signInFailed?: string;
  /** The secret its authorization server takes from a machine client (`sign_in_tool_server_as_client`). */
  machineSecret?: string;
  /** The token its enterprise's identity provider takes from the user (an enterprise identity's sign-in). */
  idpToken?: string;
};

/** What a test sets up (every field optional; the harness adds `model`). */
export type MockConfig = {
  model?: ModelFile;
  load?: Partial<LoadParams>;
  chats?: (Pick<Chat, 'id' | 'title' | 'updatedAt'> & Partial<Chat>)[];
  messages?: (Omit<Message, 'parentId' | 'tool' | 'toolCalls' | 'attachments' | 'passages'> &
    Partial<Pick<Message, 'parentId' | 'tool' | 'toolCalls' | 'attachments' | 'passages'>> & { siblings?: number[] })[];
  replies?: Reply[];
  defaultReply?: Reply;
  reloadMs?: number;
  maxCtx?: number;
  exportDir?: string | null;
  importFile?: ImportFile | null;
  providers?: ProviderView[];
  keys?: Record<string, string>;
  keyStorage?: KeyStorage;
  remoteModels?: Record<string, RemoteModel[]>;
  providerFailures?: Record<string, IpcError>;
  cacheFileBytes?: number;
  kvBytesPerToken?: number;
  devices?: DeviceReport;
  offload?: Offload;
  cacheBudgets?: CacheBudgets;
  tokenProbs?: Record<string, TokenProbs[]>;
  serverRequests?: RequestRecord[];
  busyPorts?: number[];
  ownSampling?: [SettingsScope, Partial<SamplingParams>][];
  sampling?: Partial<SamplingParams>;
  presets?: { name: string; params: Partial<SamplingParams> }[];
  cachesOnDisk?: number[];
  readsAhead?: boolean;
  hubRepos?: HubRepo[];
  hubToken?: string | null;
  hubTokenStorage?: KeyStorage;
  freeRamBytes?: number;
  freeVramBytes?: number | null;
  hubDelayMs?: number;
  downloads?: Download[];
  downloadTickMs?: number;
  downloadSteps?: number;
  downloadSpeed?: number;
  retryWaitS?: number;
  downloadTrouble?: Record<string, DownloadTrouble>;
  library?: LibraryFile[];
  loadFailures?: Record<string, IpcError>;
  loadStepMs?: number;
  importPick?: string | null;
  /** The files pick_attachments' open dialog picks ([]: it is cancelled), and how long attach_file takes to read one. */
  attachPick?: string[];
  attachDelayMs?: number;
  /** How many times a document attached says how much of it is indexed while it is read (0: none, as a short one). */
  attachIndexSteps?: number;
  /** The embedding model chosen at start (a path), and how long choosing one is checked (ms). */
  embeddingModel?: string | null;
  embedCheckMs?: number;
  /** The bytes (base64) of images stored before, by hash: get_attached_image's answers. */
  attachedImages?: Record<string, string>;
  /** Hugging Face cannot be reached: every hub command fails as a network error. */
  hubOffline?: boolean;
  /** What starter_model answers (the welcome screen's recommendation). */
  starter?: StarterModel;
  /** Updates: this build has a release key; its settings; its version; the newer one the check finds. */
  updateEnabled?: boolean;
  updateSettings?: UpdateSettings;
  updateCurrent?: string;
  updateAvailable?: AvailableUpdate | null;
  updateCheckFailure?: IpcError | null;
  updateInstallFailure?: IpcError | null;
  updateRefusal?: IpcError | null;
  /** The first download is cut off halfway, and the backend tries again. */
  updateCutOnce?: boolean;
  updateTickMs?: number;
  /** Settings → Tools: the MCP servers saved, and how each one's start goes, by name. */
  toolServers?: McpServerStatus[];
  toolScripts?: Record<string, ToolScript>;
  /** The MCP servers' questions waiting for the user at start (elicitation). */
  toolQuestions?: PendingQuestion[];
  /** Why the system's browser cannot open a link (a question by link said yes to); unset: it opens. */
  browserFails?: string;
};

/** Where a kept cache is: put away in RAM, or spilled to a file. */
export type KeptIn = 'ram' | 'disk';

export type MockState = ReturnType<typeof initialState> & {
  /** Stands in for the backend changing a chat on its own (an automatic title): change it, tell the watchers. */
  updateChat: (chatId: number, patch: Partial<Chat>) => void;
  /** The engine's idle timer ran out (see unloadIdle in loading.ts). */
  unloadIdle: () => void;
  /** Sends a Tauri event (the webview's drag and drop) to the window's listeners. */
  emit: (event: string, payload: unknown) => void;
};

function initialState(config: MockConfig) {
  return {
    /** The loaded ModelInfo (see modelInfo in load.ts); config.model names the file. */
    model: null as ModelInfo | null,
    chats: clone(config.chats ?? []) as Chat[],
    messages: clone(config.messages ?? []) as Message[],
    nextId: 1000,
    /** chatId -> { stop } while a reply is generated. */
    generating: new Map<number, { stop: boolean }>(),
    /** Replies to use for the next turns (FIFO), then `defaultReply`. */
    replies: clone(config.replies ?? []) as Reply[],
    defaultReply: config.defaultReply ?? DEFAULT_REPLY,
    /** cmd -> IpcError: the next call of that command rejects with it. */
    failNext: {} as Record<string, IpcError>,
    /** Every invoke, with its JSON payload. */
    calls: [] as { cmd: string; payload: Record<string, unknown> }[],
    /** Contract violations noticed by the mock (wrong argument names or types). */
    contractErrors: [] as string[],
    /** SamplingParams::default, for the tests to compare with. */
    defaultSampling: DEFAULT_SAMPLING,
    /** Each scope's own sampling params, by the backend's storage key ("sampling", "sampling:chat:1"…). */
    sampling: {} as Record<string, SamplingParams>,
    /** The params of every set_sampling call, accepted or not, and the scope of each. */
    samplingSaves: [] as SamplingParams[],
    samplingScopes: [] as SettingsScope[],
    /** The user's presets. */
    presets: [] as Preset[],
    /** Load settings saved per model path. */
    loadSaved: {} as Record<string, LoadParams>,
    /** The params of every set_load_settings call. */
    loadSaves: [] as LoadParams[],
    /** How long reload_model takes, and the longest context it can allocate (llama.cpp refuses more). */
    reloadMs: config.reloadMs ?? 300,
    maxCtx: config.maxCtx ?? 131072,
    /** The folder export_chats' save dialog picks (the file is named as the backend proposes); null: it is cancelled. */
    exportDir: (config.exportDir === undefined ? '/home/me/Documents' : config.exportDir) as string | null,
    /** The files export_chats wrote. */
    exported: [] as { path: string; chatIds: number[] | null; format: string }[],
    /** The file import_chats' open dialog picks, as the backend reads it; null: it is cancelled. */
    importFile: clone(config.importFile ?? null) as ImportFile | null,
    /** The providers as the backend keeps them: { config, key: KeyStorage | null }; a fresh install has two. */
    providers: clone(config.providers ?? DEFAULT_PROVIDERS.map((c) => ({ config: clone(c), key: null }))) as ProviderView[],
    /** The keys themselves, by provider id: never sent back to the window. */
    keys: clone(config.keys ?? {}) as Record<string, string>,
    /** Where set_api_key puts a key: the keychain, or the fallback file when no keychain answers. */
    keyStorage: clone(config.keyStorage ?? { kind: 'keychain' }) as KeyStorage,
    /** What each provider's models endpoint lists, by provider id. */
    remoteModels: clone(config.remoteModels ?? REMOTE_MODELS) as Record<string, RemoteModel[]>,
    /** provider id -> IpcError: listing its models (and testing it) fails with it. */
    providerFailures: clone(config.providerFailures ?? {}) as Record<string, IpcError>,
    /** How long a provider takes to list its models. */
    listDelayMs: undefined as number | undefined,
    /** Replies offered at a fixed rate (`tokensPerSecond`): when each token was sent; see offerAtRate. */
    offered: [] as { tokensPerSecond: number; sentAt: number[] }[],
    /**
     * Each chat's KV cache, as the engine keeps it (what a local reply's stats call `promptSource`), by
     * "<model path>|<context>#<chat id>": `live`, the chat that answered last; `kept`, the others: 'ram'
     * once another chat answered after them, 'disk' once the model was unloaded (or replaced) under them;
     * `typed`, the live one when a draft was read into it.
     */
    caches: { live: null as string | null, kept: new Map<string, KeptIn>(), typed: null as string | null },
    /** What one chat's cache takes, in RAM or as a file on disk. */
    cacheFileBytes: config.cacheFileBytes ?? 31_457_280,
    /** What one token of the loaded model's context takes in its KV cache (its `kvBytes`: every cell, allocated at load). */
    kvBytesPerToken: config.kvBytesPerToken ?? 32_768,
    /** The engine's compute devices (`compute_devices`). */
    devices: config.devices ?? DEVICES,
    /** Where a loaded model's layers are, as the engine says (`Offload`). */
    offload: config.offload ?? OFFLOAD,
    /** The budgets for the caches (MB of 2^20 bytes) and the idle minutes, and those of every set_chat_cache_budgets call. */
    cacheBudgets: clone(config.cacheBudgets ?? CACHE_BUDGET_DEFAULTS) as CacheBudgets,
    budgetSaves: [] as CacheBudgets[],
    /** The limits on attached files (`set_attachment_limits`; the mock's attach_file reads no file against them). */
    attachmentLimits: clone(ATTACHMENT_LIMIT_DEFAULTS) as AttachmentLimits,
    /** The embedding model chosen for search by meaning (a path); null: words alone. */
    embeddingModel: (config.embeddingModel ?? null) as string | null,
    /** Models kept in memory after another was loaded, the least recently used first. */
    keptModels: [] as { path: string; sizeBytes: number }[],
    /** The token inspector's data the engine kept, by reply id (see tokenProbsOf). */
    tokenProbs: new Map<number, TokenProbs[]>(Object.entries(clone(config.tokenProbs ?? {})).map(([id, tokens]) => [Number(id), tokens])),
    /** Every prefill_draft call (`at`: performance.now()). */
    prefills: [] as { chatId: number; draft: string; stillTyping: boolean; at: number }[],
    /**
     * The OpenAI-compatible server: its settings, whether a key is saved, the requests it answered (newest
     * first), and the ports other programs hold.
     */
    server: {
      settings: clone(SERVER_DEFAULTS) as ServerSettings,
      keySet: false,
      requests: clone(config.serverRequests ?? []) as RequestRecord[],
      busyPorts: config.busyPorts ?? ([] as number[]),
    },
    /** Hugging Face's repositories, the token the backend keeps and where it keeps it. */
    hubRepos: clone(config.hubRepos ?? hubRepos()) as HubRepo[],
    hubToken: (config.hubToken ?? null) as string | null,
    hubTokenStorage: clone(config.hubTokenStorage ?? { kind: 'keychain' }) as KeyStorage,
    /** What hub_fit measures this machine at. */
    freeRamBytes: config.freeRamBytes ?? 12.4 * GB,
    freeVramBytes: (config.freeVramBytes === undefined ? 6 * GB : config.freeVramBytes) as number | null,
    hubDelayMs: config.hubDelayMs ?? 60,
    /** Downloads: each advances by a step per tick; `downloadSpeed` is what a real link would report. */
    downloads: clone(config.downloads ?? []) as Download[],
    downloadTickMs: config.downloadTickMs ?? 90,
    downloadSteps: config.downloadSteps ?? 24,
    downloadSpeed: config.downloadSpeed ?? 23.4e6,
    retryWaitS: config.retryWaitS ?? 2,
    downloadTrouble: clone(config.downloadTrouble ?? DOWNLOAD_TROUBLE) as Record<string, DownloadTrouble>,
    /** The library of GGUF files; the loaded model is the one whose path is the model's. */
    library: clone(config.library ?? defaultLibrary(config)) as LibraryFile[],
    /** path → IpcError: loading that file fails with it (after some progress); the loaded model stays. */
    loadFailures: clone(config.loadFailures ?? {}) as Record<string, IpcError>,
    loadStepMs: config.loadStepMs ?? 70,
    loadCancelled: false,
    /** The file import_model_dialog's open dialog picks; null: it is cancelled. */
    hubOffline: config.hubOffline ?? false,
    starter: clone(config.starter ?? STARTER) as StarterModel,
    updateEnabled: config.updateEnabled ?? true,
    updateSettings: clone(config.updateSettings ?? { checkAtStart: true, endpoint: 'https://releases.hearth.example/latest.json' }) as UpdateSettings,
    updateCurrent: config.updateCurrent ?? '0.1.0',
    updateAvailable: clone(config.updateAvailable ?? null) as AvailableUpdate | null,
    updateCheckFailure: clone(config.updateCheckFailure ?? null) as IpcError | null,
    updateInstallFailure: clone(config.updateInstallFailure ?? null) as IpcError | null,
    updateRefusal: clone(config.updateRefusal ?? null) as IpcError | null,
    updateCutOnce: config.updateCutOnce ?? false,
    updateTickMs: config.updateTickMs ?? 70,
    /** The install finished: the backend would have restarted Hearth. */
    updateRestarted: false,
    importPick: (config.importPick === undefined ? '/home/me/Downloads/gemma-2-2b-it-Q4_K_M.gguf' : config.importPick) as string | null,
    /** The folders reveal_model showed. */
    revealed: [] as string[],
    /** The model the backend loaded last (its active model): what a chat naming none gets while none is loaded. */
    lastLoaded: null as string | null,
    /** The files pick_attachments' open dialog picks ([]: cancelled); how long attach_file reads one. */
    attachPick: clone(config.attachPick ?? ['/home/me/Documents/notes.md', '/home/me/Documents/budget.csv']) as string[],
    attachDelayMs: config.attachDelayMs ?? 40,
    attachIndexSteps: config.attachIndexSteps ?? 0,
    embedCheckMs: config.embedCheckMs ?? 150,
    /** The attachments attach_file stored, by hash (a message's must be there). */
    attachments: {} as Record<string, Attachment>,
    /** The bytes (base64) of the images attach_bytes stored, by hash: get_attached_image's answers. */
    attachedImages: clone(config.attachedImages ?? {}) as Record<string, string>,
    /** The MCP servers with their states (tools.ts), and how each one's start goes, by name. */
    toolServers: clone(config.toolServers ?? []) as McpServerStatus[],
    toolScripts: clone(config.toolScripts ?? {}) as Record<string, ToolScript>,
    /** The servers' questions waiting, oldest first, and every answer given (`answer_tool_question`). */
    toolQuestions: clone(config.toolQuestions ?? []) as PendingQuestion[],
    questionAnswers: [] as { id: number; answer: Answer }[],
    /** Why the browser cannot open a link (null: it opens), and the links opened, in order. */
    browserFails: config.browserFails ?? null,
    /** Every machine client given (`sign_in_tool_server_as_client`), in order. */
    machineSignIns: [] as { name: string; credentials: MachineCredentials }[],
    opened: [] as string[],
    /** Every answer_tool_call the backend took, in order. */
    toolDecisions: [] as { chatId: number; decision: Decision }[],
    /** chatId -> what wakes the call that waits for the user's word (answer_tool_call's decision, or null at Stop). */
    toolWaiting: new Map<number, (decision: Decision | null) => void>(),
    /** Tools allowed for the session ("server/tool"): their calls are not asked about. */
    toolsAllowed: [] as string[],
    /** The scripts of the calls each reply made (by its id), which run again as they did (rerun_tool_calls). */
    callScripts: new Map<number, ScriptedCall[]>(),
    /** The loads a turn made without progress (the window did not load the chat's model first). */
    /** The files turns loaded before their replies (reported on their events). */
    turnLoads: [] as string[],
  };
}

/** The mock's state, once installMockTauri made it. */
export let state: MockState;
/** What the test set up. */
export let config: MockConfig;

/** Makes the state from `c`; the parts add their own (chats' trees, the loaded model, …) as they start. */
export function createState(c: MockConfig): MockState {
  config = c;
  const unset = () => {
    throw new Error('the mock is still starting');
  };
  state = { ...initialState(c), updateChat: unset, unloadIdle: unset, emit: unset };
  return state;
}
