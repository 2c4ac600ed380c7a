import type { FrameScheduler } from '../../src/lib/batcher';

/** A manual frame clock: frames run only when the test calls `tick()`. */
export function manualFrames() {
  let next = 1;
  const queued = new Map<number, () => void>();
  const frames: FrameScheduler = {
    request: (cb) => {
      const id = next++;
      queued.set(id, cb);
      return id;
    },
    cancel: (id) => void queued.delete(id),
  };
  return {
    frames,
    get scheduled() {
      return queued.size;
    },
    tick() {
      const callbacks = [...queued.values()];
      queued.clear();
      callbacks.forEach((cb) => cb());
    },
  };
}

