import { describe, expect, it } from 'vitest';
import { DeltaBatcher } from '../../src/lib/batcher';
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
  // The backend paces the stream: every delta is painted at the next frame, none held longer.
  { name: 'a delta after an update waits for no more than the next frame', steps: ['a', frame, 'b', frame, 'c', frame], flushed: ['a', 'b', 'c'] },
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
