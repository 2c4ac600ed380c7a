import { describe, expect, it } from 'vitest';
import { DraftReadAhead, INTERVAL_MS, LEAD_MS, PAUSE_MS } from '../../src/lib/read-ahead';
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
  const clock = virtualTimers();
  const sent: [number, string][] = [];
  const reader = new DraftReadAhead((text) => sent.push([clock.timers.now(), text]), clock.timers);
  for (const [at, draft] of steps) {
    clock.advanceTo(at);
    if (draft === RESET) reader.reset();
    else reader.typed(draft);
  }
  clock.advanceTo((steps.at(-1)?.[0] ?? 0) + 5000);
  return sent;
}

const cases: { name: string; steps: Step[]; sent: [number, string][] }[] = [
  { name: 'nothing typed, nothing sent', steps: [], sent: [] },
  { name: 'the first keystroke goes out soon', steps: [[0, 'H']], sent: [[LEAD_MS, 'H']] },
  {
    name: 'a burst within the lead goes as one',
    steps: [[0, 'a'], [50, 'ab'], [100, 'abc']],
    sent: [[150, 'abc']],
  },
  {
    name: 'typing on (a key every 100 ms): 500 ms after the first key not yet sent, the last 500 ms after the previous send',
    steps: typing('Hello there friend', 0, 100),
    sent: [
      [150, 'He'],
      [700, 'Hello t'],
      [1200, 'Hello there '],
      [1700, 'Hello there frien'],
      [2200, 'Hello there friend'],
    ],
  },
  {
    name: 'fast typing (a key every 30 ms): still about every 500 ms; the final text at the next mark',
    steps: typing('abcdefghijklmnopqrstuvwxyz0123456789', 0, 30),
    sent: [
      [150, 'abcde'],
      [650, 'abcdefghijklmnopqrstuv'],
      [1160, 'abcdefghijklmnopqrstuvwxyz0123456789'],
    ],
  },
  {
    name: 'typing stops: the text goes out 300 ms after the last key',
    steps: [[0, 'H'], [100, 'He'], [250, 'Hel'], [350, 'Hell'], [420, 'Hello']],
    sent: [
      [150, 'He'],
      [420 + PAUSE_MS, 'Hello'],
    ],
  },
  {
    name: 'a pause, then typing again: the first key after it goes out soon',
    steps: [...typing('Hi', 0, 100), ...typing(' you', 1000, 100, 'Hi')],
    sent: [
      [150, 'Hi'],
      [1150, 'Hi y'],
      [1650, 'Hi you'],
    ],
  },
  {
    name: 'slow typing (a key every 350 ms, each after a pause): still at most one send per 500 ms',
    steps: typing('abcdef', 0, 350),
    sent: [
      [150, 'a'],
      [650, 'ab'],
      [1150, 'abcd'],
      [1650, 'abcde'],
      [2150, 'abcdef'],
    ],
  },
  {
    name: 'a draft typed back to what was sent is not sent again',
    steps: [[0, 'a'], [100, 'ab'], [300, 'a'], [400, 'ab']],
    sent: [[150, 'ab']],
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
    steps: [...typing('Hi there', 0, 100), [750, RESET], [800, 'N'], [900, 'No']],
    sent: [
      [150, 'Hi'],
      [700, 'Hi ther'],
      [950, 'No'],
    ],
  },
  {
    name: 'after a reset the same text is sent again (another chat, or the message sent)',
    steps: [[0, 'same'], [400, RESET], [500, 'same']],
    sent: [
      [150, 'same'],
      [650, 'same'],
    ],
  },
];

describe('DraftReadAhead', () => {
  it.each(cases)('$name', ({ steps, sent }) => {
    expect(run(steps)).toEqual(sent);
  });

  it('for any typing speed: sends at least INTERVAL_MS apart, growing, far fewer than keys; the final text within INTERVAL_MS', () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    for (const every of [20, 60, 110, 170, 240, 290, 350, 700]) {
      const steps = typing(text, 0, every);
      const sent = run(steps);
      const lastKey = steps.at(-1)![0];
      for (let i = 1; i < sent.length; i++) {
        expect(sent[i][0] - sent[i - 1][0]).toBeGreaterThanOrEqual(INTERVAL_MS);
        expect(sent[i][1].startsWith(sent[i - 1][1]) && sent[i][1].length > sent[i - 1][1].length).toBe(true);
      }
      expect(sent.length).toBeLessThanOrEqual(Math.ceil(lastKey / INTERVAL_MS) + 1);
      const [finalAt, finalText] = sent.at(-1)!;
      expect(finalText).toBe(text);
      expect(finalAt).toBeGreaterThan(lastKey);
      expect(finalAt).toBeLessThanOrEqual(lastKey + INTERVAL_MS);
    }
  });
});
