import { Channel, invoke } from '@tauri-apps/api/core';
import type { ChatEvent, ChatSummary, ModelInfo, StoredMessage } from './bindings';

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
};
