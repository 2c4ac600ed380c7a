import { DRAFT_PACE } from '../ipc/contract';
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

/** The draft goes out this long after the last key (at an ordinary pace, after each key; a paste
 *  or a burst goes as one; Enter right after a key does not read it twice). */
export const QUIET_MS = DRAFT_PACE.quietMs;
/** Typing faster than that: at the latest this long after the first key not yet sent. */
export const MAX_WAIT_MS = DRAFT_PACE.maxWaitMs;
/** Never two sends closer than this: each re-reads the message's last word (and after a pause the
 *  turn's closing). */
export const MIN_GAP_MS = DRAFT_PACE.minGapMs;

/** What goes out: the draft, and whether keys were still coming (its last word is not final; the
 *  backend leaves it, and the turn's closing, for a later send). */
export type DraftSend = (text: string, stillTyping: boolean) => void;

/**
 * Decides when the draft being typed is handed to the backend to read ahead (`prefill_draft`),
 * by the backend's pace (hearth_core::DRAFT_PACE): the text not yet sent goes out `QUIET_MS` after
 * its last key, or `MAX_WAIT_MS` after its first if that is sooner; never sooner than
 * `MIN_GAP_MS` after the previous send. So what is left to read at Enter is what was typed in the
 * last moment before it. A send while keys still come (less than `QUIET_MS` after the last) says so. Only a draft that is not blank and differs from the last one sent goes
 * out; a blank draft drops what was pending. The caller `reset`s when the draft was sent or the
 * chat changed.
 */
export class DraftReadAhead {
  readonly #send: DraftSend;
  readonly #timers: Timers;
  /** The text waiting to go out (null: nothing new since the last send). */
  #pending: string | null = null;
  /** The first keystroke of the pending text. */
  #pendingSince = 0;
  #lastKeyAt = -Infinity;
  #lastSent: string | null = null;
  #lastSentAt = -Infinity;
  #timer: number | null = null;
  #dueAt = 0;

  constructor(send: DraftSend, timers: Timers = browserTimers) {
    this.#send = send;
    this.#timers = timers;
  }

  /** The draft as it is now, after a keystroke. */
  typed(text: string): void {
    const now = this.#timers.now();
    if (text.trim() === '' || text === this.#lastSent) {
      this.cancel();
      return;
    }
    if (this.#pending === null) this.#pendingSince = now;
    this.#pending = text;
    this.#lastKeyAt = now;
    const wanted = Math.min(now + QUIET_MS, this.#pendingSince + MAX_WAIT_MS);
    const due = Math.max(wanted, this.#lastSentAt + MIN_GAP_MS);
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
  }

  #fire(): void {
    this.#timer = null;
    const text = this.#pending;
    this.#pending = null;
    if (text === null) return;
    this.#lastSent = text;
    this.#lastSentAt = this.#timers.now();
    this.#send(text, this.#lastSentAt - this.#lastKeyAt < QUIET_MS);
  }

  #unschedule(): void {
    if (this.#timer !== null) this.#timers.cancelAfter(this.#timer);
    this.#timer = null;
  }
}
