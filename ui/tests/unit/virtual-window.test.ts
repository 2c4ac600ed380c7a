import { describe, expect, it } from 'vitest';
import { RowHeights, anchorAt, prefixOffsets, rowAt, scrollForAnchor, visibleRange } from '../../src/lib/virtual-window';
import { table } from './helpers';

// Rows of 100, 50, 200, 100 px: tops at 0, 100, 150, 350; 450 in all.
const OFFSETS = prefixOffsets([100, 50, 200, 100]);

table('prefixOffsets', prefixOffsets, [
  [[], [0]],
  [[40], [0, 40]],
  [[100, 50, 200, 100], [0, 100, 150, 350, 450]],
]);

table('rowAt: the row a y falls in, clamped', (y: number) => rowAt(OFFSETS, y), [
  [-50, 0],
  [0, 0],
  [99.5, 0],
  [100, 1],
  [149, 1],
  [150, 2],
  [349, 2],
  [350, 3],
  [449, 3],
  [10_000, 3],
]);

table('rowAt with no rows', (y: number) => rowAt([0], y), [[0, -1]]);

type Window = { top: number; height: number; overscan: number };
table('visibleRange: rows overlapping the viewport plus overscan', ({ top, height, overscan }: Window) => visibleRange(OFFSETS, top, height, overscan), [
  [{ top: 0, height: 120, overscan: 0 }, { start: 0, end: 2 }],
  [{ top: 120, height: 100, overscan: 0 }, { start: 1, end: 3 }],
  [{ top: 160, height: 100, overscan: 0 }, { start: 2, end: 3 }],
  [{ top: 160, height: 100, overscan: 40 }, { start: 1, end: 3 }],
  [{ top: 160, height: 100, overscan: 100 }, { start: 0, end: 4 }],
  [{ top: 400, height: 500, overscan: 0 }, { start: 3, end: 4 }],
  [{ top: -30, height: 10, overscan: 0 }, { start: 0, end: 1 }],
  [{ top: 0, height: 10_000, overscan: 0 }, { start: 0, end: 4 }],
]);

table('visibleRange of an empty list', (top: number) => visibleRange([0], top, 500, 100), [[0, { start: 0, end: 0 }]]);

describe('anchoring: rows above changing height do not move what is on screen', () => {
  it('keeps the first visible row at the same distance from the top', () => {
    const anchor = anchorAt(OFFSETS, 180); // row 2 starts at 150: 30 px of it are above the viewport
    expect(anchor).toEqual({ index: 2, offset: 30 });
    const grown = prefixOffsets([100, 250, 200, 100]); // row 1 measured 200 px taller
    expect(scrollForAnchor(grown, anchor!)).toBe(380);
    const shrunk = prefixOffsets([60, 50, 200, 100]);
    expect(scrollForAnchor(shrunk, anchor!)).toBe(140);
  });

  it('has no anchor without rows', () => {
    expect(anchorAt([0], 0)).toBeNull();
  });
});

describe('RowHeights', () => {
  it('estimates unmeasured rows from the measured ones', () => {
    const heights = new RowHeights(120);
    expect(heights.offsets([1, 2, 3])).toEqual([0, 120, 240, 360]);
    expect(heights.set(1, 100)).toBe(true);
    expect(heights.set(2, 60)).toBe(true);
    expect(heights.set(2, 60)).toBe(false); // unchanged
    expect(heights.estimate).toBe(80);
    expect(heights.offsets([1, 2, 3])).toEqual([0, 100, 160, 240]);
    expect(heights.set(2, 20)).toBe(true);
    expect(heights.estimate).toBe(60);
  });

  it('forgets rows no longer listed once the map grows large', () => {
    const heights = new RowHeights(50);
    for (let id = 0; id < 300; id++) heights.set(id, 10);
    heights.set(1000, 110);
    expect(heights.offsets([1000])).toEqual([0, 110]); // the other 300 dropped
    expect(heights.estimate).toBe(110);
  });

  it('handles 2,000 rows quickly', () => {
    const heights = new RowHeights(100);
    const keys = Array.from({ length: 2000 }, (_, i) => i);
    keys.forEach((k) => heights.set(k, 40 + (k % 7) * 10));
    const started = performance.now();
    for (let i = 0; i < 100; i++) visibleRange(heights.offsets(keys), i * 500, 700, 900);
    expect(performance.now() - started).toBeLessThan(200);
  });
});
