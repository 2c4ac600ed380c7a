import { Channel, invoke } from '@tauri-apps/api/core';
import type {
  ChatEvent,
  ChatSummary,
  ConnectionReport,
  ExportFormat,
  FieldSupport,
  ImportReport,
  KeyStorage,
  ModelInfo,
  ModelTarget,
  ProviderConfig,
  ProviderView,
  RemoteModel,
  SearchHit,
  StoredMessage,
} from './bindings';
import type {
  Download,
  FitEstimate,
  HubRepo,
  HubTokenStatus,
  ImportMode,
  LibraryModel,
  RepoQuant,
} from './hub-types';
import type { LoadParams, LoadSettings, SamplingParams, SamplingSettings, SettingsScope } from './settings-types';

/** Streams a turn's events; the command resolves after the terminal `finished`/`failed` event was sent. */
export type OnChatEvent = (event: ChatEvent) => void;

/**
 * Thin typed wrapper over the Rust commands. Rejections carry an IpcError `{ kind, message }`
 * (see bindings.ts); callers turn them into words with `errorMessage`.
 */
export interface HearthApi {
  /** Pinned chats first, then the most recently updated. */
  listChats(): Promise<ChatSummary[]>;
  createChat(): Promise<ChatSummary>;
  /** The path on show: the chat's first message down to its current leaf. */
  listMessages(chatId: number): Promise<StoredMessage[]>;
  sendMessage(chatId: number, content: string, onEvent: OnChatEvent): Promise<null>;
  /** A new version of user message `messageId` and a reply to it (events as for sendMessage). */
  editMessage(chatId: number, messageId: number, content: string, onEvent: OnChatEvent): Promise<null>;
  /** Another reply beside assistant message `messageId`; no `userSaved` event. */
  regenerateReply(chatId: number, messageId: number, onEvent: OnChatEvent): Promise<null>;
  /** Writes on from where reply `messageId` ended; the same message grows. */
  continueReply(chatId: number, messageId: number, onEvent: OnChatEvent): Promise<null>;
  stopGeneration(chatId: number): Promise<null>;
  /** Shows the branch through `messageId`; returns the new path. */
  switchBranch(chatId: number, messageId: number): Promise<StoredMessage[]>;
  /** Deletes a message and everything under it; returns the path now shown. */
  deleteMessage(chatId: number, messageId: number): Promise<StoredMessage[]>;
  renameChat(chatId: number, title: string): Promise<ChatSummary>;
  pinChat(chatId: number, pinned: boolean): Promise<ChatSummary>;
  setSystemPrompt(chatId: number, prompt: string): Promise<ChatSummary>;
  deleteChat(chatId: number): Promise<null>;
  /** Matching messages of every chat, best first, at most 50. Any text is a valid query. */
  searchMessages(query: string): Promise<SearchHit[]>;
  /**
   * Writes chats `chatIds` (all of them when null) to a file the user picks in the system's save
   * dialog, which the backend opens. Resolves to the path written, or null when the user cancelled;
   * rejects with `file` when the file could not be written.
   */
  exportChats(chatIds: number[] | null, format: ExportFormat): Promise<string | null>;
  /**
   * Adds the chats of an export file the user picks in the system's open dialog (opened by the
   * backend). Null when the user cancelled; rejects with `invalidInput` for a file that is not a
   * Hearth export or comes from a newer version.
   */
  importChats(): Promise<ImportReport | null>;
  /** Calls `onChat` whenever the backend changed a chat on its own; resolves to the unsubscribe. */
  onChatUpdated(onChat: (chat: ChatSummary) => void): Promise<() => void>;
  activeModel(): Promise<ModelInfo | null>;
  /** The sampling settings in force at `scope`, whether they are its own, the defaults, ranges and presets. */
  getSampling(scope: SettingsScope): Promise<SamplingSettings>;
  /** Validate and save at `scope`; used from the next reply on. Rejects with `invalidInput` naming the field. */
  setSampling(params: SamplingParams, scope: SettingsScope): Promise<SamplingParams>;
  /** Drop `scope`'s own settings: it inherits from the broader scopes again. */
  clearSampling(scope: SettingsScope): Promise<void>;
  /** Save (or replace) a user preset; built-in names are refused with `invalidInput`. */
  savePreset(name: string, params: SamplingParams): Promise<void>;
  deletePreset(name: string): Promise<void>;
  /** The loaded model's load settings; rejects with `noModel` when none is loaded. */
  getLoadSettings(): Promise<LoadSettings>;
  /** Validate and save the loaded model's load settings; they apply at its next load. */
  setLoadSettings(params: LoadParams): Promise<LoadSettings>;
  /** Reload the loaded model with its saved settings; on failure it is loaded as it was and this rejects with `engine`. */
  reloadModel(): Promise<LoadSettings>;
  /** The configured providers with where each one's key is (never the key). */
  listProviders(): Promise<ProviderView[]>;
  /** Adds `config`, or replaces the provider with its id; rejects with `invalidInput` in words for a bad config. */
  saveProvider(config: ProviderConfig): Promise<ProviderView>;
  /** Removes a provider and forgets its key. */
  deleteProvider(provider: string): Promise<null>;
  /** Saves `key` for `provider` and says where it went; an empty key forgets it (null). */
  setApiKey(provider: string, key: string): Promise<KeyStorage | null>;
  /** The provider's models endpoint plus the models typed into its config; rejects with a provider IpcError. */
  listProviderModels(provider: string): Promise<RemoteModel[]>;
  /** Lists the models with the saved URL and key, timing the round trip. */
  testProvider(provider: string): Promise<ConnectionReport>;
  /** Where the chat's next reply comes from; earlier replies keep the model that wrote them. */
  setChatModel(chatId: number, target: ModelTarget): Promise<ChatSummary>;
  /** One entry per sampling setting: whether it reaches the model behind `target`, and a note. */
  samplingSupportFor(target: ModelTarget): Promise<FieldSupport[]>;

  // --- The model manager: Hugging Face, downloads, the local library. ---
  /** GGUF repositories on Hugging Face matching `query`; rejects with `network` when the hub cannot be reached. */
  hubSearch(query: string): Promise<HubRepo[]>;
  /** A repository's GGUF files grouped by quantization; rejects with `hubAuth` for a gated or private one without a valid token. */
  hubRepoFiles(repo: string): Promise<RepoQuant[]>;
  /**
   * Whether `file` (a quantization's first part) would fit this machine at `contextLength` tokens,
   * from its GGUF header read off the hub; null: the model's own context length.
   */
  hubFit(repo: string, file: string, contextLength: number | null): Promise<FitEstimate>;
  /** Queues the download of one quantization (all its parts); progress arrives through `watchDownloads`. */
  startDownload(repo: string, quant: string, files: string[]): Promise<Download>;
  /** Every download the backend remembers, finished ones included. */
  listDownloads(): Promise<Download[]>;
  /** Calls `onUpdate` with a download each time it changes; called once, when the app starts. */
  watchDownloads(onUpdate: (download: Download) => void): Promise<null>;
  pauseDownload(id: string): Promise<Download>;
  /** Resumes a paused download, or retries a failed one from where it stopped. */
  resumeDownload(id: string): Promise<Download>;
  /** Stops a download and deletes its partial file. */
  cancelDownload(id: string): Promise<null>;
  /** The GGUF files Hearth knows: the Hugging Face cache, its models folder, imported ones. */
  listLibrary(): Promise<LibraryModel[]>;
  /** Adds a GGUF file at `path`: copied into Hearth's models folder, or used where it is. */
  importModel(path: string, mode: ImportMode): Promise<LibraryModel>;
  /** As importModel, with a file the user picks in the system's open dialog; null when cancelled. */
  importModelDialog(mode: ImportMode): Promise<LibraryModel | null>;
  /** Deletes the file, or (linked) only forgets it. */
  deleteModel(path: string): Promise<null>;
  /** Shows the file in the system's file manager. */
  revealModel(path: string): Promise<null>;
  /** Loads the model at `path` in place of the loaded one, reporting 0..1; on failure the previous one stays loaded. */
  loadModel(path: string, onProgress: (fraction: number) => void): Promise<ModelInfo>;
  /** Gives up the load under way; false if none was. */
  cancelLoad(): Promise<boolean>;
  unloadModel(): Promise<null>;
  hubTokenStatus(): Promise<HubTokenStatus>;
  /** Saves the Hugging Face token (null forgets it) and says where it is kept. */
  setHubToken(token: string | null): Promise<HubTokenStatus>;
}

/** The turn commands all stream over a Channel passed as `onEvent`. */
function streamTurn(command: string, args: Record<string, unknown>, onEvent: OnChatEvent): Promise<null> {
  return invoke<null>(command, { ...args, onEvent: new Channel<ChatEvent>(onEvent) });
}

export const tauriApi: HearthApi = {
  listChats: () => invoke<ChatSummary[]>('list_chats'),
  createChat: () => invoke<ChatSummary>('create_chat'),
  listMessages: (chatId) => invoke<StoredMessage[]>('list_messages', { chatId }),
  sendMessage: (chatId, content, onEvent) => streamTurn('send_message', { chatId, content }, onEvent),
  editMessage: (chatId, messageId, content, onEvent) =>
    streamTurn('edit_message', { chatId, messageId, content }, onEvent),
  regenerateReply: (chatId, messageId, onEvent) => streamTurn('regenerate_reply', { chatId, messageId }, onEvent),
  continueReply: (chatId, messageId, onEvent) => streamTurn('continue_reply', { chatId, messageId }, onEvent),
  stopGeneration: (chatId) => invoke<null>('stop_generation', { chatId }),
  switchBranch: (chatId, messageId) => invoke<StoredMessage[]>('switch_branch', { chatId, messageId }),
  deleteMessage: (chatId, messageId) => invoke<StoredMessage[]>('delete_message', { chatId, messageId }),
  renameChat: (chatId, title) => invoke<ChatSummary>('rename_chat', { chatId, title }),
  pinChat: (chatId, pinned) => invoke<ChatSummary>('pin_chat', { chatId, pinned }),
  setSystemPrompt: (chatId, prompt) => invoke<ChatSummary>('set_system_prompt', { chatId, prompt }),
  deleteChat: (chatId) => invoke<null>('delete_chat', { chatId }),
  searchMessages: (query) => invoke<SearchHit[]>('search_messages', { query }),
  exportChats: (chatIds, format) => invoke<string | null>('export_chats', { chatIds, format }),
  importChats: () => invoke<ImportReport | null>('import_chats'),
  onChatUpdated: async (onChat) => {
    const channel = new Channel<ChatSummary>(onChat);
    await invoke<null>('watch_chats', { onUpdate: channel });
    // The backend forgets a channel once a send to it fails; until then, this side ignores it.
    return () => {
      channel.onmessage = () => {};
    };
  },
  activeModel: () => invoke<ModelInfo | null>('active_model'),
  getSampling: (scope) => invoke<SamplingSettings>('get_sampling', { scope }),
  setSampling: (params, scope) => invoke<SamplingParams>('set_sampling', { params, scope }),
  clearSampling: (scope) => invoke<void>('clear_sampling', { scope }),
  savePreset: (name, params) => invoke<void>('save_preset', { name, params }),
  deletePreset: (name) => invoke<void>('delete_preset', { name }),
  getLoadSettings: () => invoke<LoadSettings>('get_load_settings'),
  setLoadSettings: (params) => invoke<LoadSettings>('set_load_settings', { params }),
  reloadModel: () => invoke<LoadSettings>('reload_model'),
  listProviders: () => invoke<ProviderView[]>('list_providers'),
  saveProvider: (config) => invoke<ProviderView>('save_provider', { config }),
  deleteProvider: (provider) => invoke<null>('delete_provider', { provider }),
  setApiKey: (provider, key) => invoke<KeyStorage | null>('set_api_key', { provider, key }),
  listProviderModels: (provider) => invoke<RemoteModel[]>('list_provider_models', { provider }),
  testProvider: (provider) => invoke<ConnectionReport>('test_provider', { provider }),
  setChatModel: (chatId, target) => invoke<ChatSummary>('set_chat_model', { chatId, target }),
  samplingSupportFor: (target) => invoke<FieldSupport[]>('sampling_support_for', { target }),
  hubSearch: (query) => invoke<HubRepo[]>('hub_search', { query }),
  hubRepoFiles: (repo) => invoke<RepoQuant[]>('hub_repo_files', { repo }),
  hubFit: (repo, file, contextLength) => invoke<FitEstimate>('hub_fit', { repo, file, contextLength }),
  startDownload: (repo, quant, files) => invoke<Download>('start_download', { repo, quant, files }),
  listDownloads: () => invoke<Download[]>('list_downloads'),
  watchDownloads: (onUpdate) => invoke<null>('watch_downloads', { onUpdate: new Channel<Download>(onUpdate) }),
  pauseDownload: (id) => invoke<Download>('pause_download', { id }),
  resumeDownload: (id) => invoke<Download>('resume_download', { id }),
  cancelDownload: (id) => invoke<null>('cancel_download', { id }),
  listLibrary: () => invoke<LibraryModel[]>('list_library'),
  importModel: (path, mode) => invoke<LibraryModel>('import_model', { path, mode }),
  importModelDialog: (mode) => invoke<LibraryModel | null>('import_model_dialog', { mode }),
  deleteModel: (path) => invoke<null>('delete_model', { path }),
  revealModel: (path) => invoke<null>('reveal_model', { path }),
  loadModel: (path, onProgress) => invoke<ModelInfo>('load_model', { path, onProgress: new Channel<number>(onProgress) }),
  cancelLoad: () => invoke<boolean>('cancel_load'),
  unloadModel: () => invoke<null>('unload_model'),
  hubTokenStatus: () => invoke<HubTokenStatus>('hub_token_status'),
  setHubToken: (token) => invoke<HubTokenStatus>('set_hub_token', { token }),
};
