// A server's question as its form (lib/tool-questions.ts): the values it starts with, why a value does not
// fit its field, and what is sent.
import { describe, expect, it } from 'vitest';
import type { FieldKind, QuestionField } from '../../src/ipc/bindings';
import { acceptAnswer, fieldProblem, initialValues, linkParts, type FormValue } from '../../src/lib/tool-questions';
import { table } from './helpers';

const field = (name: string, kind: FieldKind, more: Partial<QuestionField> = {}): QuestionField => ({
  name,
  title: null,
  description: null,
  required: false,
  kind,
  default: null,
  ...more,
});
const text = (format: string | null = null, minLength: number | null = null, maxLength: number | null = null): FieldKind => ({ kind: 'text', format, minLength, maxLength });
const number = (integer: boolean, minimum: number | null = null, maximum: number | null = null): FieldKind => ({ kind: 'number', integer, minimum, maximum });
const options = ['a', 'b', 'c'].map((value) => ({ value, label: value.toUpperCase() }));

const FORM = [
  field('name', text(), { required: true, default: 'Ada' }),
  field('age', number(true, 1, 120), { default: 36 }),
  field('agree', { kind: 'boolean' }, { default: true }),
  field('size', { kind: 'choice', options }),
  field('tags', { kind: 'choices', options, minItems: 1, maxItems: 2 }, { default: ['a'] }),
];

describe('initialValues', () => {
  it('starts each field at its default, else empty', () => {
    expect(initialValues(FORM)).toEqual({ name: 'Ada', age: '36', agree: true, size: '', tags: ['a'] });
  });
});

table('fieldProblem: why a value does not fit its field', ([f, value]: [QuestionField, FormValue]) => fieldProblem(f, value), [
  [[FORM[0], ''], 'Required'],
  [[FORM[0], 'Grace'], null],
  [[FORM[1], ''], null], // optional: the server's default
  [[FORM[1], 'x'], 'Enter a number'],
  [[FORM[1], '2.5'], 'Enter a whole number'],
  [[FORM[1], '0'], 'At least 1'],
  [[FORM[1], '121'], 'At most 120'],
  [[FORM[1], ' 40 '], null],
  [[field('score', number(false, 0, 10)), '9.5'], null],
  [[field('email', text('email')), 'me@example'], 'Enter an email address'],
  [[field('email', text('email')), 'me@example.com'], null],
  [[field('site', text('uri')), 'example.com'], 'Enter a web address (https://…)'],
  [[field('born', text('date')), '1815-12-10'], null],
  [[field('born', text('date')), '10/12/1815'], 'Enter a date (YYYY-MM-DD)'],
  [[field('code', text(null, 3, 4)), 'ab'], 'At least 3 characters'],
  [[field('code', text(null, 3, 4)), 'abcde'], 'At most 4 characters'],
  [[FORM[4], ['a', 'b', 'c']], 'Choose at most 2'],
  [[field('must', { kind: 'choices', options, minItems: 1, maxItems: null }, { required: true }), []], 'Required'],
  [[FORM[2], false], null],
]);

describe('acceptAnswer', () => {
  it('sends each field given, of its type; empty ones are left to their defaults', () => {
    const values = { name: ' Grace ', age: '40', agree: false, size: '', tags: [] };
    expect(acceptAnswer(FORM, values)).toEqual({ action: 'accept', content: { name: 'Grace', age: 40, agree: false } });
  });
});

describe('linkParts', () => {
  it('shows the host apart from the rest of the address', () => {
    expect(linkParts({ url: 'https://bistro.example/link?next=https://other.example', host: 'bistro.example', warning: null })).toEqual({
      before: 'https://',
      host: 'bistro.example',
      after: '/link?next=https://other.example',
    });
    expect(linkParts({ url: 'http://[::1]:9000/', host: '[::1]', warning: 'local' })).toEqual({ before: 'http://', host: '[::1]', after: ':9000/' });
  });
  it('shows an address whose host it cannot find whole, with no host apart', () => {
    expect(linkParts({ url: 'https://a.example/', host: 'b.example', warning: null })).toEqual({ before: 'https://a.example/', host: '', after: '' });
  });
});
