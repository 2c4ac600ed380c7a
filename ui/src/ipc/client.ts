import { commands, type ChatEvent, type ChatSummary, type Commands } from './bindings';

/** Streams a turn's events; the command resolves after the terminal `finished`/`failed` event was sent. */
export type OnChatEvent = (event: ChatEvent) => void;

/**
 * The backend's commands as generated from Rust (bindings.ts: names, arguments and results),
 * plus `onChatUpdated`, a subscription built on `watchChats`. Rejections carry an IpcError
 * `{ kind, message, field? }`; callers turn them into words with `errorMessage`.
 */
export type HearthApi = Commands & {
  /** Calls `onChat` whenever the backend changed a chat on its own; resolves to the unsubscribe. */
  onChatUpdated(onChat: (chat: ChatSummary) => void): Promise<() => void>;
};

export const tauriApi: HearthApi = {
  ...commands,
  onChatUpdated: async (onChat) => {
    let listening = true;
    await commands.watchChats((chat) => {
      if (listening) onChat(chat);
    });
    // The backend forgets a channel once a send to it fails; until then, this side ignores it.
    return () => {
      listening = false;
    };
  },
};
