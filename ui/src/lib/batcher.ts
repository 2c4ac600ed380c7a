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
/** An update may take at most this share of the time between updates: a renderer that falls
 *  behind (a long table, a huge code block, a slow machine) gets fewer, larger updates. */
export const MAX_RENDER_SHARE = 0.1;
/** Never slower than this: the text must still be seen to move. */
export const MAX_INTERVAL_MS = 500;

/**
 * Collects streamed text deltas and hands them over in an animation frame: the first at once (time
 * to first token is what the user waits for), then at most every `MIN_INTERVAL_MS`, or longer
 * when the last hand-over took more than `MAX_RENDER_SHARE` of that time.
 */
export class DeltaBatcher {
  #pending = '';
  #frame: number | null = null;
  #timer: number | null = null;
  /** When the last update was handed over (null: none since the stream began). */
  #lastAt: number | null = null;
  #interval = MIN_INTERVAL_MS;
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
      const cost = now() - start;
      this.#lastAt = start;
      this.#interval = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, cost / MAX_RENDER_SHARE));
    }
  }

  /** Drop pending text and anything scheduled; the next stream starts afresh. */
  cancel(): void {
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
