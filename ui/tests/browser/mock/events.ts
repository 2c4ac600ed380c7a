// Tauri's event plugin (`plugin:event|listen`, `plugin:event|unlisten`), Tauri's own commands rather than the
// backend's: only the webview's drag-and-drop events are sent, by the test through `__hearthMock.emit`.
import { runCallback, type TauriCommands } from './ipc';
import { state } from './state';

const listeners: { event: string; handler: number; id: number }[] = [];
let nextEventId = 1;

export function initEvents() {
  state.emit = (event, payload) => {
    for (const l of listeners.filter((x) => x.event === event)) runCallback(l.handler, { event, id: l.id, payload });
  };
  (window as unknown as Record<string, unknown>).__TAURI_EVENT_PLUGIN_INTERNALS__ = { unregisterListener: () => {} };
}

export const eventCommands: TauriCommands = {
  'plugin:event|listen': (payload) => {
    const id = nextEventId++;
    listeners.push({ event: payload.event as string, handler: payload.handler as number, id });
    return id;
  },
  'plugin:event|unlisten': (payload) => {
    const at = listeners.findIndex((l) => l.event === payload.event && l.id === payload.eventId);
    if (at >= 0) listeners.splice(at, 1);
    return null;
  },
};
