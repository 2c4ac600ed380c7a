import { describe, expect, it } from 'vitest';
import type { HearthApi } from '../../src/ipc/client';
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


/** A HearthApi with `methods`; calling any other command fails the test, naming it. */
export function fakeApi(who: string, methods: Partial<HearthApi>): HearthApi {
  return new Proxy(methods, {
    get: (target, key) =>
      target[key as keyof HearthApi] ?? (() => Promise.reject(new Error(`${who} does not call ${String(key)}`))),
  }) as HearthApi;
}

/** One helper, many cases: [input, expected]. */
export function table<I, O>(name: string, fn: (input: I) => O, cases: [I, O][]) {
  describe(name, () => {
    it.each(cases)('%j -> %j', (input, expected) => expect(fn(input)).toEqual(expected));
  });
}
