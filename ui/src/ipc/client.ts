import { Channel, invoke } from '@tauri-apps/api/core';
import type { ChatEvent, ChatSummary, ModelInfo, StoredMessage } from './bindings';
import type { LoadParams, LoadSettings, SamplingParams, SamplingSettings, SettingsScope } from './settings-types';

/**
 * Thin typed wrapper over the Rust commands. Rejections carry an IpcError `{ kind, message }`
 * (see bindings.ts); callers turn them into words with `errorMessage`.
 */
export interface HearthApi {
  listChats(): Promise<ChatSummary[]>;
  createChat(): Promise<ChatSummary>;
  listMessages(chatId: number): Promise<StoredMessage[]>;
  /** Resolves after the terminal `finished`/`failed` event was sent. */
  sendMessage(chatId: number, content: string, onEvent: (event: ChatEvent) => void): Promise<null>;
  stopGeneration(chatId: number): Promise<null>;
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
}

export const tauriApi: HearthApi = {
  listChats: () => invoke<ChatSummary[]>('list_chats'),
  createChat: () => invoke<ChatSummary>('create_chat'),
  listMessages: (chatId) => invoke<StoredMessage[]>('list_messages', { chatId }),
  sendMessage: (chatId, content, onEvent) => {
    const channel = new Channel<ChatEvent>(onEvent);
    return invoke<null>('send_message', { chatId, content, onEvent: channel });
  },
  stopGeneration: (chatId) => invoke<null>('stop_generation', { chatId }),
  activeModel: () => invoke<ModelInfo | null>('active_model'),
  getSampling: (scope) => invoke<SamplingSettings>('get_sampling', { scope }),
  setSampling: (params, scope) => invoke<SamplingParams>('set_sampling', { params, scope }),
  clearSampling: (scope) => invoke<void>('clear_sampling', { scope }),
  savePreset: (name, params) => invoke<void>('save_preset', { name, params }),
  deletePreset: (name) => invoke<void>('delete_preset', { name }),
  getLoadSettings: () => invoke<LoadSettings>('get_load_settings'),
  setLoadSettings: (params) => invoke<LoadSettings>('set_load_settings', { params }),
  reloadModel: () => invoke<LoadSettings>('reload_model'),
};
