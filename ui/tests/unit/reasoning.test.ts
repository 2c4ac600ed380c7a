import { describe, expect, it } from 'vitest';
import { splitReasoning, type ReplyParts } from '../../src/lib/reasoning';
import shared from '../../../src-tauri/crates/hearth-core/tests/data/reasoning_split.json';

function check(content: string, streaming: boolean, expected: ReplyParts) {
  expect(splitReasoning(content, streaming)).toEqual(expected);
}

const none = (answer: string): ReplyParts => ({ reasoning: null, thinking: false, answer });

describe('splitReasoning', () => {
  const cases: [string, string, boolean, ReplyParts][] = [
    ['no think block', 'Hello there', false, none('Hello there')],
    ['closed', '<think>Plan it.</think>The answer.', false, { reasoning: 'Plan it.', thinking: false, answer: 'The answer.' }],
    ['closed, whitespace around', '\n  <think>\nPlan\n</think>\n\nAnswer', false, { reasoning: 'Plan', thinking: false, answer: 'Answer' }],
    ['closed while streaming', '<think>Plan</think>Ans', true, { reasoning: 'Plan', thinking: false, answer: 'Ans' }],
    ['open while streaming', '<think>Let me see', true, { reasoning: 'Let me see', thinking: true, answer: '' }],
    ['just opened', '<think>', true, { reasoning: '', thinking: true, answer: '' }],
    ['half a closing tag held back', '<think>Hmm</thi', true, { reasoning: 'Hmm', thinking: true, answer: '' }],
    ['half an opening tag held back', '<thi', true, none('')],
    ['half an opening tag after whitespace', '\n<', true, none('')],
    ['half a tag in a finished reply is text', '<thi', false, none('<thi')],
    ['cut off while thinking', '<think>Half a thought', false, { reasoning: 'Half a thought', thinking: false, answer: '' }],
    ['empty reasoning', '<think>\n\n</think>Answer', false, none('Answer')],
    ['empty and cut off', '<think>  ', false, none('')],
    ['think elsewhere is text', 'Answer <think>x</think>', false, none('Answer <think>x</think>')],
    ['other tag first', '<thing>x', true, none('<thing>x')],
    ['upper case is not a think block', '<THINK>x</THINK>y', false, none('<THINK>x</THINK>y')],
    ['second think block stays in the answer', '<think>a</think>b<think>c</think>', false, { reasoning: 'a', thinking: false, answer: 'b<think>c</think>' }],
  ];
  it.each(cases)('%s', (_name, content, streaming, expected) => check(content, streaming, expected));
});

// The cases hearth_core::split_reasoning is tested on: a finished reply splits alike on both sides.
describe('splitReasoning, as hearth_core splits a finished reply', () => {
  it.each(shared.map((c) => [JSON.stringify(c.content), c] as const))('%s', (_name, c) => {
    const parts = splitReasoning(c.content, false);
    expect({ reasoning: parts.reasoning, answer: parts.answer }).toEqual({ reasoning: c.reasoning, answer: c.answer });
  });
});
