import { getCurrentWebview } from '@tauri-apps/api/webview';

declare global {
  interface Window {
    /** Test hook: stands in for files dropped on the window (the browser tests have no native drops). */
    __hearthDropPaths?: (paths: string[]) => Promise<void>;
  }
}

export type FileDropHandlers = {
  /** Files are dragged over the window (true) or left it (false). */
  onHover: (hovering: boolean) => void;
  onDrop: (paths: string[]) => Promise<void>;
};

/**
 * Files dropped on the window, from Tauri's drag-and-drop events, and from the test hook
 * `window.__hearthDropPaths`. Where the events cannot be listened to (no Tauri, or no permission),
 * drops are not offered and nothing fails. Returns the way to stop.
 */
export function watchFileDrops({ onHover, onDrop }: FileDropHandlers): () => void {
  let stopped = false;
  let unlisten: (() => void) | null = null;
  const hook = (paths: string[]) => onDrop(paths);
  window.__hearthDropPaths = hook;

  try {
    getCurrentWebview()
      .onDragDropEvent(({ payload }) => {
        if (payload.type === 'enter' || payload.type === 'over') onHover(true);
        else if (payload.type === 'leave') onHover(false);
        else {
          onHover(false);
          void onDrop(payload.paths);
        }
      })
      .then((stop) => {
        if (stopped) void stop();
        else unlisten = () => void stop();
      })
      .catch(() => {});
  } catch {
    // Not inside Tauri: the test hook is the only way in.
  }

  return () => {
    stopped = true;
    unlisten?.();
    if (window.__hearthDropPaths === hook) delete window.__hearthDropPaths;
  };
}
