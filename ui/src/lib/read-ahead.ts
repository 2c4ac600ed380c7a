import { animationFrames } from './batcher';

/** A clock and its timers (the browser's, or a test's virtual one). */
export type Timers = {
  /** Milliseconds on a monotonic clock. */
  now: () => number;
  after: (cb: () => void, ms: number) => number;
  cancelAfter: (handle: number) => void;
};

export const browserTimers: Timers = {
  now: animationFrames.now!,
  after: animationFrames.after!,
  cancelAfter: animationFrames.cancelAfter!,
};

/** A keystroke after a pause is sent this much later: "soon", yet a burst (a paste, the next
 *  key or two) goes as one, and a message sent at once (typed, Enter) is not read twice. */
export const LEAD_MS = 150;
/** Never two sends closer than this; while the user types on, a send about this often. */
export const INTERVAL_MS = 500;
/** No keystroke for this long is a pause: the text as it stands is sent. */
export const PAUSE_MS = 300;

/**
 * Decides when the draft being typed is handed to the backend to read ahead (`prefill_draft`).
 * The text not yet sent goes out `INTERVAL_MS` after its first keystroke (typing on), or
 * `PAUSE_MS` after its last if that is sooner (typing paused), or `LEAD_MS` after its first when
 * that keystroke came after a pause; never sooner than `INTERVAL_MS` after the previous send.
 * Only a draft that is not blank and differs from the last one sent goes out; a blank draft drops
 * what was pending. The caller `reset`s when the draft was sent or the chat changed.
 */
export class DraftReadAhead {
  readonly #send: (text: string) => void;
  readonly #timers: Timers;
  /** The text waiting to go out (null: nothing new since the last send). */
  #pending: string | null = null;
  /** The first keystroke of the pending text, and whether it came after a pause. */
  #pendingSince = 0;
  #afterPause = true;
  #lastKeyAt = -Infinity;
  #lastSent: string | null = null;
  #lastSentAt = -Infinity;
  #timer: number | null = null;
  #dueAt = 0;

  constructor(send: (text: string) => void, timers: Timers = browserTimers) {
    this.#send = send;
    this.#timers = timers;
  }

  /** The draft as it is now, after a keystroke. */
  typed(text: string): void {
    const now = this.#timers.now();
    const sincePreviousKey = now - this.#lastKeyAt;
    this.#lastKeyAt = now;
    if (text.trim() === '' || text === this.#lastSent) {
      this.cancel();
      return;
    }
    if (this.#pending === null) {
      this.#pendingSince = now;
      this.#afterPause = sincePreviousKey >= PAUSE_MS;
    }
    this.#pending = text;
    const wanted = this.#afterPause ? this.#pendingSince + LEAD_MS : Math.min(this.#pendingSince + INTERVAL_MS, now + PAUSE_MS);
    const due = Math.max(wanted, this.#lastSentAt + INTERVAL_MS);
    if (this.#timer !== null && due === this.#dueAt) return;
    this.#unschedule();
    this.#dueAt = due;
    this.#timer = this.#timers.after(() => this.#fire(), Math.max(0, due - now));
  }

  /** Drop what is waiting to go out (the composer was emptied, a reply started). */
  cancel(): void {
    this.#unschedule();
    this.#pending = null;
  }

  /** Start afresh: the draft was sent, or another chat is on show. */
  reset(): void {
    this.cancel();
    this.#lastSent = null;
    this.#lastSentAt = -Infinity;
    this.#lastKeyAt = -Infinity;
  }

  #fire(): void {
    this.#timer = null;
    const text = this.#pending;
    this.#pending = null;
    if (text === null) return;
    this.#lastSent = text;
    this.#lastSentAt = this.#timers.now();
    this.#send(text);
  }

  #unschedule(): void {
    if (this.#timer !== null) this.#timers.cancelAfter(this.#timer);
    this.#timer = null;
  }
}
