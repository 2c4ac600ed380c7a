import { describe, expect, it } from 'vitest';
import { DraftReadAhead, MIN_GAP_MS, QUIET_MS } from '../../src/lib/read-ahead';
import { virtualTimers } from './helpers';

/** A step at a time (ms): the draft after a keystroke, or RESET (Enter sent it, another chat opened). */
const RESET = null;
type Step = [number, string | typeof RESET];

/** `text` typed one character every `everyMs` from `start`: the draft after each key. */
function typing(text: string, start: number, everyMs: number, before = ''): Step[] {
  return [...text].map((_, i) => [start + i * everyMs, before + text.slice(0, i + 1)]);
}

/** Runs the steps on a virtual clock (timers due at a step's time run before it); returns [time, draft] per send. */
function run(steps: Step[]): [number, string][] {
  return runSaying(steps).map(([at, text]) => [at, text]);
}

/** As `run`, with whether each send said keys were still coming. */
function runSaying(steps: Step[]): [number, string, boolean][] {
  const clock = virtualTimers();
  const sent: [number, string, boolean][] = [];
  const reader = new DraftReadAhead((text, stillTyping) => sent.push([clock.timers.now(), text, stillTyping]), clock.timers);
  for (const [at, draft] of steps) {
    clock.advanceTo(at);
    if (draft === RESET) reader.reset();
    else reader.typed(draft);
  }
  clock.advanceTo((steps.at(-1)?.[0] ?? 0) + 5000);
  return sent;
}

// The pace as the backend sets it (80 / 200 / 150 ms); the cases below are written for it.
const cases: { name: string; steps: Step[]; sent: [number, string][] }[] = [
  { name: 'nothing typed, nothing sent', steps: [], sent: [] },
  { name: 'a keystroke goes out once typing pauses', steps: [[0, 'H']], sent: [[QUIET_MS, 'H']] },
  {
    name: 'a burst goes as one',
    steps: [[0, 'a'], [50, 'ab'], [100, 'abc']],
    sent: [[100 + QUIET_MS, 'abc']],
  },
  {
    name: "an ordinary pace (a key every 200 ms, issue 16's typist): each key goes out, the last before the next key",
    steps: typing('Hello', 0, 200),
    sent: [
      [80, 'H'],
      [280, 'He'],
      [480, 'Hel'],
      [680, 'Hell'],
      [880, 'Hello'],
    ],
  },
  {
    name: 'a quick typist (a key every 100 ms): every other key, never closer than MIN_GAP_MS',
    steps: typing('Hello there', 0, 100),
    sent: [
      [80, 'H'],
      [280, 'Hel'],
      [480, 'Hello'],
      [680, 'Hello t'],
      [880, 'Hello the'],
      [1080, 'Hello there'],
    ],
  },
  {
    name: 'fast typing (a key every 30 ms): at the latest MAX_WAIT_MS after the first key not sent',
    steps: typing('abcdefghijklmnopqrstuvwxyz', 0, 30),
    sent: [
      [200, 'abcdefg'],
      [410, 'abcdefghijklmn'],
      [620, 'abcdefghijklmnopqrstu'],
      [830, 'abcdefghijklmnopqrstuvwxyz'],
    ],
  },
  {
    name: 'a key undone before it went out is not sent',
    steps: [[0, 'a'], [100, 'ab'], [150, 'a']],
    sent: [[80, 'a']],
  },
  {
    name: 'blank drafts are never sent',
    steps: [[0, ' '], [100, '  '], [200, '\n']],
    sent: [],
  },
  {
    name: 'emptying the composer drops what was pending',
    steps: [[0, 'ab'], [50, '']],
    sent: [],
  },
  {
    name: 'Enter (reset) drops the pending send; the next message starts afresh',
    steps: [...typing('Hi', 0, 200), [250, RESET], [300, 'N'], [330, 'No']],
    sent: [
      [80, 'H'],
      [410, 'No'],
    ],
  },
  {
    name: 'after a reset the same text is sent again (another chat, or the message sent)',
    steps: [[0, 'same'], [400, RESET], [500, 'same']],
    sent: [
      [80, 'same'],
      [580, 'same'],
    ],
  },
];

describe('DraftReadAhead', () => {
  it.each(cases)('$name', ({ steps, sent }) => {
    expect(run(steps)).toEqual(sent);
  });

  it('a send while keys still come says so; one after a pause does not', () => {
    // Fast typing, then a pause: the sends on MAX_WAIT_MS come mid-burst, the last after it.
    const sent = runSaying(typing('abcdefghijklmnopqrstuvwxyz', 0, 30));
    expect(sent.map(([, , stillTyping]) => stillTyping)).toEqual([...sent.slice(1).map(() => true), false]);
    // An ordinary pace: every send comes after its key's pause.
    expect(runSaying(typing('Hello', 0, 200)).every(([, , stillTyping]) => !stillTyping)).toBe(true);
    // A send held back by MIN_GAP_MS past the pause is a pause's too.
    expect(runSaying([[0, 'a'], [100, 'ab']])).toEqual([[80, 'a', false], [230, 'ab', false]]);
  });

  it('for any typing speed: sends at least MIN_GAP_MS apart, growing, no more than keys; the final text within MIN_GAP_MS', () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    for (const every of [20, 60, 110, 170, 240, 290, 350, 700]) {
      const steps = typing(text, 0, every);
      const sent = run(steps);
      const lastKey = steps.at(-1)![0];
      for (let i = 1; i < sent.length; i++) {
        expect(sent[i][0] - sent[i - 1][0]).toBeGreaterThanOrEqual(MIN_GAP_MS);
        expect(sent[i][1].startsWith(sent[i - 1][1]) && sent[i][1].length > sent[i - 1][1].length).toBe(true);
      }
      expect(sent.length).toBeLessThanOrEqual(Math.min(text.length, Math.ceil(lastKey / MIN_GAP_MS) + 1));
      const [finalAt, finalText] = sent.at(-1)!;
      expect(finalText).toBe(text);
      expect(finalAt).toBeGreaterThan(lastKey);
      expect(finalAt).toBeLessThanOrEqual(lastKey + MIN_GAP_MS);
      // A typist slower than the quiet time has every key read ahead before the next one.
      if (every > QUIET_MS && every >= MIN_GAP_MS) expect(sent.length).toBe(text.length);
    }
  });
});
