import { describe, expect, it } from 'vitest';
import { DeltaBatcher, MAX_INTERVAL_MS, MAX_RENDER_SHARE, MIN_INTERVAL_MS, type FrameScheduler } from '../../src/lib/batcher';
import { manualFrames } from './helpers';

/** Steps: a string pushes a delta, 'frame' runs a frame, 'flush' forces a flush, 'cancel' drops pending. */
type Step = string | { op: 'frame' | 'flush' | 'cancel' };
const frame = { op: 'frame' } as const;
const flush = { op: 'flush' } as const;
const cancel = { op: 'cancel' } as const;

const cases: { name: string; steps: Step[]; flushed: string[]; maxScheduled?: number }[] = [
  { name: 'nothing pushed, nothing flushed', steps: [frame], flushed: [] },
  { name: 'many deltas in one frame become one update', steps: ['Hel', 'lo', ', ', 'world', frame], flushed: ['Hello, world'], maxScheduled: 1 },
  { name: 'one update per frame', steps: ['a', 'b', frame, 'c', frame, frame, 'd', frame], flushed: ['ab', 'c', 'd'] },
  { name: 'no frame, no update', steps: ['a', 'b'], flushed: [] },
  { name: 'flush hands over pending text immediately', steps: ['a', 'b', flush], flushed: ['ab'] },
  { name: 'flush cancels the scheduled frame', steps: ['a', flush, frame, 'b', frame], flushed: ['a', 'b'] },
  { name: 'flush with nothing pending is a no-op', steps: [flush, frame], flushed: [] },
  { name: 'empty deltas are ignored', steps: ['', '', frame], flushed: [] },
  { name: 'cancel drops pending text', steps: ['a', cancel, frame, 'b', frame], flushed: ['b'] },
  { name: 'unicode survives concatenation', steps: ['🔥', 'é', '漢', frame], flushed: ['🔥é漢'] },
];

describe('DeltaBatcher', () => {
  it.each(cases)('$name', ({ steps, flushed, maxScheduled }) => {
    const clock = manualFrames();
    const out: string[] = [];
    const batcher = new DeltaBatcher((text) => out.push(text), clock.frames);
    let peak = 0;
    for (const step of steps) {
      if (typeof step === 'string') batcher.push(step);
      else if (step.op === 'frame') clock.tick();
      else if (step.op === 'flush') batcher.flush();
      else batcher.cancel();
      peak = Math.max(peak, clock.scheduled);
    }
    expect(out).toEqual(flushed);
    if (maxScheduled !== undefined) expect(peak).toBeLessThanOrEqual(maxScheduled);
  });
});

/** Frames and timers on a virtual clock: `advance(ms)` runs the timers due, `tick()` a frame. */
function pacedClock(renderCostMs: () => number) {
  let time = 0;
  let next = 1;
  const frames = new Map<number, () => void>();
  const timers = new Map<number, { at: number; cb: () => void }>();
  const scheduler: FrameScheduler = {
    request: (cb) => (frames.set(next, cb), next++),
    cancel: (id) => void frames.delete(id),
    now: () => time,
    after: (cb, ms) => (timers.set(next, { at: time + ms, cb }), next++),
    cancelAfter: (id) => void timers.delete(id),
  };
  return {
    scheduler,
    /** One update handed over: the clock moves on by its render cost. */
    onFlush: () => (time += renderCostMs()),
    tick() {
      const callbacks = [...frames.values()];
      frames.clear();
      callbacks.forEach((cb) => cb());
    },
    advance(ms: number) {
      const until = time + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        time = due[1].at;
        due[1].cb();
      }
      time = until;
    },
  };
}

/** A stream of one delta every `everyMs` for `forMs`, a frame every 16 ms; returns the updates' times. */
function stream(renderCostMs: () => number, everyMs: number, forMs: number) {
  const clock = pacedClock(renderCostMs);
  const at: number[] = [];
  let text = '';
  const batcher = new DeltaBatcher((t) => {
    at.push(clock.scheduler.now!());
    text += t;
    clock.onFlush();
  }, clock.scheduler);
  let sent = '';
  for (let t = 0; t < forMs; t += 16) {
    if (t % everyMs === 0) {
      batcher.push('x');
      sent += 'x';
    }
    clock.tick();
    clock.advance(16);
  }
  batcher.flush();
  return { at, complete: text === sent, batcher };
}

describe('DeltaBatcher pacing', () => {
  it('hands the first delta over at the next frame', () => {
    expect(stream(() => 1, 16, 160).at[0]).toBe(0);
  });

  it('keeps to about 10 updates a second when updates are cheap, and loses no text', () => {
    const { at, complete } = stream(() => 1, 16, 2000);
    expect(complete).toBe(true);
    const perSecond = (at.length - 1) / 2;
    expect(perSecond).toBeGreaterThanOrEqual(8);
    expect(perSecond).toBeLessThanOrEqual(1000 / MIN_INTERVAL_MS);
    for (let i = 1; i < at.length - 1; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(MIN_INTERVAL_MS);
  });

  it('backs off when updates are costly, up to a limit', () => {
    const slow = stream(() => 40, 16, 4000);
    expect(slow.complete).toBe(true);
    expect(slow.batcher.interval).toBeCloseTo(40 / MAX_RENDER_SHARE);
    const verySlow = stream(() => 300, 16, 6000);
    expect(verySlow.batcher.interval).toBe(MAX_INTERVAL_MS);
    // The renderer's share of the time stays bounded.
    const gaps = slow.at.slice(2, -1).map((t, i) => t - slow.at[i + 1]);
    for (const gap of gaps) expect(40 / gap).toBeLessThanOrEqual(MAX_RENDER_SHARE + 0.01);
  });

  it('starts afresh after cancel: the next stream\'s first delta is not held back', () => {
    const clock = pacedClock(() => 100);
    const out: number[] = [];
    const batcher = new DeltaBatcher(() => (out.push(clock.scheduler.now!()), clock.onFlush()), clock.scheduler);
    batcher.push('a');
    clock.tick();
    expect(batcher.interval).toBe(MAX_INTERVAL_MS);
    batcher.cancel();
    expect(batcher.interval).toBe(MIN_INTERVAL_MS);
    batcher.push('b');
    clock.tick();
    expect(out).toEqual([0, 100]);
  });
});
