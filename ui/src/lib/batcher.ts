/** Schedules a callback for the next frame; returns a handle for cancel. */
export type FrameScheduler = {
  request: (cb: () => void) => number;
  cancel: (handle: number) => void;
};

export const animationFrames: FrameScheduler = {
  request: (cb) => requestAnimationFrame(() => cb()),
  cancel: (handle) => cancelAnimationFrame(handle),
};

/**
 * Collects streamed text deltas and hands them over at most once per animation frame,
 * so the UI re-renders per frame rather than per token.
 */
export class DeltaBatcher {
  #pending = '';
  #handle: number | null = null;
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
    if (this.#handle === null) {
      this.#handle = this.#frames.request(() => {
        this.#handle = null;
        this.flush();
      });
    }
  }

  /** Hand over everything pending now (e.g. before the final message replaces the stream). */
  flush(): void {
    if (this.#handle !== null) {
      this.#frames.cancel(this.#handle);
      this.#handle = null;
    }
    if (!this.#pending) return;
    const text = this.#pending;
    this.#pending = '';
    this.#flush(text);
  }

  /** Drop pending text and any scheduled frame. */
  cancel(): void {
    if (this.#handle !== null) this.#frames.cancel(this.#handle);
    this.#handle = null;
    this.#pending = '';
  }
}
