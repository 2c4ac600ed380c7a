import { Channel, invoke } from '@tauri-apps/api/core';
import type { ChatEvent, ChatSummary, ModelInfo, StoredMessage } from './bindings';
import type { SamplingParams, SamplingSettings } from './settings-types';

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
  /** The global sampling settings: current values, defaults and the validated numeric ranges. */
  getSampling(): Promise<SamplingSettings>;
  /** Validate and save; used from the next reply on. Rejects with `invalidInput` naming the field. */
  setSampling(params: SamplingParams): Promise<SamplingParams>;
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
  getSampling: () => invoke<SamplingSettings>('get_sampling'),
  setSampling: (params) => invoke<SamplingParams>('set_sampling', { params }),
};
