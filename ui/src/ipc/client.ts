import { commands, type ChatEvent, type ChatSummary, type Commands, type ModelInfo } from './bindings';

/** Streams a turn's events; the command resolves after the terminal `finished`/`failed` event was sent. */
export type OnChatEvent = (event: ChatEvent) => void;

/** Calls `on` with each change the backend sends; resolves to the unsubscribe. */
type Subscribe<T> = (on: (change: T) => void) => Promise<() => void>;

/**
 * The backend's commands as generated from Rust (bindings.ts: names, arguments and results),
 * plus subscriptions built on its `watch…` commands: `onChatUpdated` (`watchChats`) and
 * `onModelChanged` (`watchModel`). Rejections carry an IpcError `{ kind, message, field? }`;
 * callers turn them into words with `errorMessage`.
 */
export type HearthApi = Commands & {
  /** Calls `onChat` whenever the backend changed a chat on its own; resolves to the unsubscribe. */
  onChatUpdated: Subscribe<ChatSummary>;
  /**
   * Calls `onModel` whenever the loaded model changed without this window asking (null: unloaded
   * after the idle time set); resolves to the unsubscribe.
   */
  onModelChanged: Subscribe<ModelInfo | null>;
};

/** A subscription over a `watch…` command, which registers its channel for the window's lifetime. */
function subscription<T>(watch: (on: (change: T) => void) => Promise<null>): Subscribe<T> {
  return async (on) => {
    let listening = true;
    await watch((change) => {
      if (listening) on(change);
    });
    // The backend forgets a channel once a send to it fails; until then, this side ignores it.
    return () => {
      listening = false;
    };
  };
}

export const tauriApi: HearthApi = {
  ...commands,
  onChatUpdated: subscription((on) => commands.watchChats(on)),
  onModelChanged: subscription((on) => commands.watchModel(on)),
};
