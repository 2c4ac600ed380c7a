import { WINDOW_UPDATE_INTERVAL_MS } from '../ipc/contract';

/** Schedules a callback for the next frame; returns a handle for cancel. With a clock (`now`,
 *  `after`), updates are also paced (see DeltaBatcher); without one, one update per frame. */
export type FrameScheduler = {
  request: (cb: () => void) => number;
  cancel: (handle: number) => void;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
  /** Runs `cb` after `ms` (a timer, no frame held open meanwhile); returns a handle. */
  after?: (cb: () => void, ms: number) => number;
  cancelAfter?: (handle: number) => void;
  /** Brings layout up to date now (so an update's measured cost includes its layout). */
  settle?: () => void;
};

export const animationFrames: FrameScheduler = {
  request: (cb) => requestAnimationFrame(() => cb()),
  cancel: (handle) => cancelAnimationFrame(handle),
  now: () => performance.now(),
  after: (cb, ms) => window.setTimeout(cb, ms),
  cancelAfter: (handle) => window.clearTimeout(handle),
  // Reading a layout value lays the page out now instead of at the frame: no extra work.
  settle: () => void document.documentElement.offsetHeight,
};

/** The backend sends deltas at most this often (contract.json's windowUpdateIntervalMs), so painting
 *  more often would show nothing new. That pace suits the window too: reading needs no more than
 *  ~10–15 updates a second, and each update costs the web view a style, layout and paint pass (and
 *  the app its share of the paint), taken from the cores the model decodes on: make bench-app
 *  measured 0.81 of the engine's speed in the window at 15 a second, 0.87 at 10 (2 cores). */
export const MIN_INTERVAL_MS = WINDOW_UPDATE_INTERVAL_MS;
/** An update may take at most this share of the time between updates, its painted frame included:
 *  a renderer that falls behind (a long table, a huge code block, a slow machine, cores the model
 *  keeps busy) gets fewer, larger updates. */
export const MAX_RENDER_SHARE = 0.1;
/** Never slower than this: the text must still be seen to move. */
export const MAX_INTERVAL_MS = 500;

/** The time between updates for an update that cost `costMs` (its DOM, layout and paint). */
const paced = (costMs: number): number => Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, costMs / MAX_RENDER_SHARE));

/**
 * Collects streamed text deltas and hands them over in an animation frame: the first at once (time
 * to first token is what the user waits for), then at most every `MIN_INTERVAL_MS`, or longer
 * when the last hand-over and the frame that painted it took more than `MAX_RENDER_SHARE` of that time.
 */
export class DeltaBatcher {
  #pending = '';
  #frame: number | null = null;
  #timer: number | null = null;
  /** When the last update was handed over (null: none since the stream began). */
  #lastAt: number | null = null;
  #interval = MIN_INTERVAL_MS;
  /** Counts cancels, so a late measure of an earlier stream's update is dropped. */
  #stream = 0;
  readonly #flush: (text: string) => void;
  readonly #frames: FrameScheduler;

  constructor(flush: (text: string) => void, frames: FrameScheduler = animationFrames) {
    this.#flush = flush;
    this.#frames = frames;
  }

  /** Text received but not yet handed over. */
  get pending(): string {
    return this.#pending;
  }

  /** The time between updates the batcher keeps now (ms). */
  get interval(): number {
    return this.#interval;
  }

  push(text: string): void {
    if (!text) return;
    this.#pending += text;
    if (this.#frame !== null || this.#timer !== null) return;
    const { now, after } = this.#frames;
    const wait = this.#lastAt === null || !now || !after ? 0 : this.#lastAt + this.#interval - now();
    if (wait <= 0) this.#requestFrame();
    else this.#timer = after!(() => {
      this.#timer = null;
      this.#requestFrame();
    }, wait);
  }

  /** Hand over everything pending now (e.g. before the final message replaces the stream). */
  flush(): void {
    this.#unschedule();
    if (!this.#pending) return;
    const text = this.#pending;
    this.#pending = '';
    const now = this.#frames.now;
    const start = now?.() ?? 0;
    this.#flush(text);
    this.#frames.settle?.();
    if (now) {
      const end = now();
      const cost = end - start;
      this.#lastAt = start;
      this.#interval = paced(cost);
      // The frame that paints the update comes after it: the first task after that frame sees
      // its cost too (and the time the renderer waited for a core the model keeps busy).
      const { after } = this.#frames;
      const stream = this.#stream;
      after?.(() => {
        if (stream === this.#stream && this.#lastAt === start) this.#interval = paced(cost + (now() - end));
      }, 0);
    }
  }

  /** Drop pending text and anything scheduled; the next stream starts afresh. */
  cancel(): void {
    this.#stream += 1;
    this.#unschedule();
    this.#pending = '';
    this.#lastAt = null;
    this.#interval = MIN_INTERVAL_MS;
  }

  #requestFrame(): void {
    this.#frame = this.#frames.request(() => {
      this.#frame = null;
      this.flush();
    });
  }

  #unschedule(): void {
    if (this.#frame !== null) this.#frames.cancel(this.#frame);
    if (this.#timer !== null) this.#frames.cancelAfter?.(this.#timer);
    this.#frame = null;
    this.#timer = null;
  }
}
