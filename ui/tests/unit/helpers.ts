import { describe, expect, it } from 'vitest';
import type { HearthApi } from '../../src/ipc/client';
import type { FrameScheduler } from '../../src/lib/batcher';
import type { Timers } from '../../src/lib/read-ahead';

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

/** Timers on a virtual clock: nothing runs until the test moves the clock with `advanceTo`. */
export function virtualTimers() {
  let time = 0;
  let next = 1;
  const due = new Map<number, { at: number; cb: () => void }>();
  const timers: Timers = {
    now: () => time,
    after: (cb, ms) => (due.set(next, { at: time + ms, cb }), next++),
    cancelAfter: (id) => void due.delete(id),
  };
  return {
    timers,
    /** Runs every timer due by `until`, in order, each at its own time; then the clock reads `until`. */
    advanceTo(until: number) {
      for (;;) {
        const [id, timer] = [...due.entries()].sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0] ?? [];
        if (id === undefined || timer!.at > until) break;
        due.delete(id);
        time = timer!.at;
        timer!.cb();
      }
      time = until;
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
