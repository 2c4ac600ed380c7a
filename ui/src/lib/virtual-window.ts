/**
 * The arithmetic of a virtualised list of rows with variable heights: which rows to render for a
 * scroll position, where each row starts, and a map of measured heights with an estimate for the
 * rows not measured yet. No DOM here; MessageList measures and scrolls.
 */

/** Lists shorter than this render every row, exactly as a plain list. */
export const VIRTUALISE_FROM = 60;

/** Rows [start, end) to render. */
export type RowRange = { start: number; end: number };

/** offsets[i] is the top of row i, offsets[n] the height of all n rows. */
export function prefixOffsets(heights: readonly number[]): number[] {
  const offsets = new Array<number>(heights.length + 1);
  offsets[0] = 0;
  for (let i = 0; i < heights.length; i++) offsets[i + 1] = offsets[i] + heights[i];
  return offsets;
}

/** The row that `y` falls in, clamped to the rows there are (-1 when there are none). */
export function rowAt(offsets: readonly number[], y: number): number {
  const count = offsets.length - 1;
  if (count <= 0) return -1;
  let low = 0;
  let high = count - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (offsets[mid] <= y) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The rows overlapping the viewport [top, top + height), widened by `overscan` px on each side. */
export function visibleRange(offsets: readonly number[], top: number, height: number, overscan: number): RowRange {
  const count = offsets.length - 1;
  if (count <= 0) return { start: 0, end: 0 };
  const start = rowAt(offsets, top - overscan);
  const last = rowAt(offsets, top + height + overscan);
  return { start, end: last + 1 };
}

/** Where a row sits relative to the viewport's top: kept in place when rows above it change height. */
export type Anchor = { index: number; offset: number };

/** The first row visible at scroll position `top`, and how far above the viewport its top is. */
export function anchorAt(offsets: readonly number[], top: number): Anchor | null {
  const index = rowAt(offsets, top);
  return index < 0 ? null : { index, offset: top - offsets[index] };
}

/** The scroll position that puts `anchor` where it was, with the rows' new offsets. */
export function scrollForAnchor(offsets: readonly number[], anchor: Anchor): number {
  return offsets[Math.min(anchor.index, offsets.length - 1)] + anchor.offset;
}

/** Measured row heights by key; unmeasured rows count as the average measured height. */
export class RowHeights {
  readonly #measured = new Map<number, number>();
  readonly #fallback: number;
  #sum = 0;

  /** `fallback`: the estimate while nothing is measured. */
  constructor(fallback: number) {
    this.#fallback = fallback;
  }

  get estimate(): number {
    return this.#measured.size > 0 ? this.#sum / this.#measured.size : this.#fallback;
  }

  /** Records a measurement; true when it changed what was known. */
  set(key: number, height: number): boolean {
    const old = this.#measured.get(key);
    if (old === height) return false;
    this.#sum += height - (old ?? 0);
    this.#measured.set(key, height);
    return true;
  }

  offsets(keys: readonly number[]): number[] {
    if (this.#measured.size > 2 * keys.length + 100) this.#keepOnly(keys);
    const estimate = this.estimate;
    return prefixOffsets(keys.map((k) => this.#measured.get(k) ?? estimate));
  }

  /** Forget rows no longer listed (another chat, deleted messages) so the map stays small. */
  #keepOnly(keys: readonly number[]): void {
    const kept = new Set(keys);
    for (const [key, height] of this.#measured) {
      if (!kept.has(key)) {
        this.#measured.delete(key);
        this.#sum -= height;
      }
    }
  }
}
