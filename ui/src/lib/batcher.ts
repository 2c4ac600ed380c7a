/** Schedules a callback for the next frame; returns a handle for cancel. A clock and timers where
 *  the caller needs them. */
export type FrameScheduler = {
  request: (cb: () => void) => number;
  cancel: (handle: number) => void;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
  /** Runs `cb` after `ms` (a timer, no frame held open meanwhile); returns a handle. */
  after?: (cb: () => void, ms: number) => number;
  cancelAfter?: (handle: number) => void;
};

export const animationFrames: FrameScheduler = {
  request: (cb) => requestAnimationFrame(() => cb()),
  cancel: (handle) => cancelAnimationFrame(handle),
  now: () => performance.now(),
  after: (cb, ms) => window.setTimeout(cb, ms),
  cancelAfter: (handle) => window.clearTimeout(handle),
};

/**
 * Collects streamed text deltas and hands them over at the next animation frame: a frame paints at
 * most one update, however many deltas arrived since the last. It does not pace the stream: the
 * backend does, from what the window costs (hearth_app::window_pace, its figures in contract.json's
 * `windowPace`), so deltas arrive at most every ~100 ms and each is painted at once.
 */
export class DeltaBatcher {
  #pending = '';
  #frame: number | null = null;
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

  push(text: string): void {
    if (!text) return;
    this.#pending += text;
    if (this.#frame !== null) return;
    this.#frame = this.#frames.request(() => {
      this.#frame = null;
      this.flush();
    });
  }

  /** Hand over everything pending now (e.g. before the final message replaces the stream). */
  flush(): void {
    this.#unschedule();
    if (!this.#pending) return;
    const text = this.#pending;
    this.#pending = '';
    this.#flush(text);
  }

  /** Drop pending text and the frame scheduled. */
  cancel(): void {
    this.#unschedule();
    this.#pending = '';
  }

  #unschedule(): void {
    if (this.#frame !== null) this.#frames.cancel(this.#frame);
    this.#frame = null;
  }
}
