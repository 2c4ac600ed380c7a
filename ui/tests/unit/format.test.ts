import type { ReplyStats } from '../../src/ipc/bindings';
import { chatTitle, errorMessage, formatBytes, formatDropped, formatStats, formatStatsDetail, statusLabel } from '../../src/lib/format';
import { table } from './helpers';

const stats = (over: Partial<ReplyStats>): ReplyStats => ({
  promptTokens: 20,
  cachedTokens: 0,
  completionTokens: 12,
  ttftMs: 120,
  decodeTps: 85.33,
  droppedMessages: 0,
  ...over,
});

table('formatDropped: the notice under a reply that did not see the whole chat', formatDropped, [
  [stats({}), ''],
  [stats({ droppedMessages: 1 }), '1 earlier message left out to fit the context'],
  [stats({ droppedMessages: 3 }), '3 earlier messages left out to fit the context'],
  [null, ''],
  [undefined, ''],
]);

table('formatStats', formatStats, [
  [stats({}), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ completionTokens: 1 }), '1 token · 85.3 tok/s · TTFT 120 ms'],
  [stats({ completionTokens: 0, decodeTps: 0 }), '0 tokens · TTFT 120 ms'],
  [stats({ ttftMs: 119.6 }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ ttftMs: 1534 }), '12 tokens · 85.3 tok/s · TTFT 1.53 s'],
  [stats({ ttftMs: 12_340 }), '12 tokens · 85.3 tok/s · TTFT 12.3 s'],
  [stats({ decodeTps: 4.04 }), '12 tokens · 4.0 tok/s · TTFT 120 ms'],
  [stats({ decodeTps: Number.NaN }), '12 tokens · TTFT 120 ms'],
  [null, ''],
  [undefined, ''],
]);

table('formatStatsDetail', formatStatsDetail, [
  [stats({}), 'Prompt: 20 tokens · Reply: 12 tokens'],
  [stats({ cachedTokens: 15 }), 'Prompt: 20 tokens (15 cached) · Reply: 12 tokens'],
  [null, ''],
]);

table('statusLabel', statusLabel, [
  ['complete', null],
  ['streaming', null],
  ['stopped', 'Stopped'],
  ['interrupted', 'Interrupted'],
  ['failed', 'Failed'],
]);

table('errorMessage', errorMessage, [
  [{ kind: 'noModel', message: 'No model is loaded' }, 'No model is loaded'],
  [{ kind: 'busy', message: '  ' }, 'A reply is already being generated.'],
  [{ kind: 'store' }, 'Could not read or write the chat history.'],
  [{ kind: 'mystery' }, 'Something went wrong.'],
  [new Error('boom'), 'boom'],
  ['plain string', 'plain string'],
  [null, 'Something went wrong.'],
  [42, 'Something went wrong.'],
  [{ message: { nested: true } }, 'Something went wrong.'],
]);

table('chatTitle', chatTitle, [
  ['Trip to Lisbon', 'Trip to Lisbon'],
  ['  padded  ', 'padded'],
  ['', 'New chat'],
  [null, 'New chat'],
]);

table('formatBytes', formatBytes, [
  [0, ''],
  [512, '512 B'],
  [1_500_000, '1.5 MB'],
  [4_920_000_000, '4.9 GB'],
]);
