import type { BeamHypothesis, ChatSummary, Consensus, MbrUtility, PromptSource, ReplyStats } from '../../src/ipc/bindings';
import {
  beamsOf,
  chatTitle,
  consensusOf,
  errorFields,
  errorMessage,
  fileName,
  formatBytes,
  formatCacheUsage,
  formatMemory,
  formatMemoryUsage,
  formatModelMemory,
  formatClock,
  formatMs,
  formatReasoning,
  formatMegabytes,
  formatDropped,
  formatLogprob,
  formatScore,
  formatStats,
  formatStatsDetail,
  importSummary,
  relativeDate,
  replyNotice,
  searchProgress,
  sentence,
} from '../../src/lib/format';
import { table } from './helpers';
import { stats } from './reply-fixtures';


table('formatDropped: the notice under a reply that did not see the whole chat', formatDropped, [
  [stats({}), ''],
  [stats({ droppedMessages: 1 }), '1 earlier message left out to fit the context'],
  [stats({ droppedMessages: 3 }), '3 earlier messages left out to fit the context'],
  [null, ''],
  [undefined, ''],
]);

table("formatReasoning: a finished reply's reasoning in its block's summary", formatReasoning, [
  [stats(), ''],
  [null, ''],
  [stats({ reasoningMs: 3412 }), 'Thought for 3.4 s'],
  [stats({ reasoningMs: 42 }), 'Thought for under a second'],
  [stats({ reasoningMs: 65_400, reasoningTokens: 1 }), 'Thought for 65 s · 1 token'],
  [stats({ reasoningMs: 1500, reasoningTokens: 120 }), 'Thought for 1.5 s · 120 tokens'],
]);

table("searchProgress: a beam search's or consensus's progress while its reply is written out of sight", searchProgress, [
  [1, 'Searching · 1 token'],
  [37, 'Searching · 37 tokens'],
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
  [stats({ cachedTokens: 15 }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 cached'],
  [stats({ interruptedBy: 'the engine was killed (SIGKILL)' }), ''],
  [null, ''],
  [undefined, ''],
]);

table('formatStats: what speculative decoding guessed ahead, when it did', formatStats, [
  [stats({ draftedTokens: 64, acceptedTokens: 41 }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 41/64 drafts accepted'],
  [stats({ draftedTokens: 8, acceptedTokens: 0 }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 0/8 drafts accepted'],
  [
    stats({ cachedTokens: 15, promptSource: 'ram', draftedTokens: 30, acceptedTokens: 30 }),
    '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 restored from RAM · 30/30 drafts accepted',
  ],
  // Speculation off: nothing said.
  [stats({ draftedTokens: 0, acceptedTokens: 0 }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  // Stats saved before there were drafts read as before.
  [stats({ draftedTokens: undefined, acceptedTokens: undefined }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ draftedTokens: 5, acceptedTokens: undefined }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 0/5 drafts accepted'],
  [stats({ draftedTokens: 64, acceptedTokens: 41, interruptedBy: 'the engine was killed (SIGKILL)' }), ''],
]);

/** A consensus reply's candidates: `scores` in index order, the one at `chosen` the reply. */
const consensus = (scores: number[], chosen: number, utility: MbrUtility = 'chrF'): Consensus => ({
  utility,
  chosen,
  candidates: scores.map((score, i) => ({ text: `Candidate ${i + 1}`, score })),
});

table('formatStats: how many candidates a consensus reply was the best of', formatStats, [
  [stats({ consensus: consensus([0.41, 0.62, 0.55, 0.5, 0.48, 0.6, 0.33, 0.52], 1) }), '12 tokens · 85.3 tok/s · TTFT 120 ms · best of 8'],
  [stats({ consensus: consensus([0.5, 0.5], 0, 'exactMatch') }), '12 tokens · 85.3 tok/s · TTFT 120 ms · best of 2'],
  [
    stats({ cachedTokens: 15, promptSource: 'live', draftedTokens: 64, acceptedTokens: 41, consensus: consensus([0.7, 0.2, 0.4], 0) }),
    '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 cached · 41/64 drafts accepted · best of 3',
  ],
  // A sampled reply, and stats saved before consensus existed: nothing said.
  [stats({ consensus: undefined }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({}), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  // No candidates to be the best of.
  [stats({ consensus: consensus([], 0) }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ consensus: consensus([0.7, 0.2, 0.4], 0), interruptedBy: 'the engine was killed (SIGKILL)' }), ''],
]);

table('formatStatsDetail: how a consensus reply was chosen', formatStatsDetail, [
  [
    stats({ consensus: consensus([0.41, 0.62, 0.55], 1) }),
    "Prompt: 20 tokens · Reply: 12 tokens\nConsensus: the best of 3 candidates by chrF (score 0.62); tok/s counts every candidate's tokens, TTFT waits for all of them.",
  ],
  [
    stats({ consensus: consensus([0.75, 0.75, 0, 0.5], 0, 'exactMatch') }),
    "Prompt: 20 tokens · Reply: 12 tokens\nConsensus: the best of 4 candidates by exact match (score 0.75); tok/s counts every candidate's tokens, TTFT waits for all of them.",
  ],
  [
    stats({ draftedTokens: 8, acceptedTokens: 4, consensus: consensus([0.5, 0.6], 1) }),
    "Prompt: 20 tokens · Reply: 12 tokens\nSpeculative decoding guessed 8 tokens ahead; the sampler kept 4 (50%).\nConsensus: the best of 2 candidates by chrF (score 0.60); tok/s counts every candidate's tokens, TTFT waits for all of them.",
  ],
  // A chosen index with no candidate at it: no score to give.
  [
    stats({ consensus: consensus([0.5, 0.6], 5) }),
    "Prompt: 20 tokens · Reply: 12 tokens\nConsensus: the best of 2 candidates by chrF; tok/s counts every candidate's tokens, TTFT waits for all of them.",
  ],
  [stats({ consensus: undefined }), 'Prompt: 20 tokens · Reply: 12 tokens'],
  [stats({ consensus: consensus([], 0) }), 'Prompt: 20 tokens · Reply: 12 tokens'],
]);

table('consensusOf: the candidates to list under a reply', (s: ReplyStats | null | undefined) => consensusOf(s)?.candidates.length ?? null, [
  [stats({ consensus: consensus([0.4, 0.6, 0.5], 1) }), 3],
  [stats({ consensus: consensus([], 0) }), null],
  [stats({}), null],
  [null, null],
  [undefined, null],
]);

table('fileName', fileName, [
  ['/home/me/models/a.gguf', 'a.gguf'],
  ['C:\\Users\\me\\b.gguf', 'b.gguf'],
  ['c.gguf', 'c.gguf'],
]);

table('formatScore', formatScore, [
  [0.6234, '0.62'],
  [1, '1.00'],
  [0, '0.00'],
  [0.005, '0.01'],
  [Number.NaN, '–'],
]);

/** A beam search's best replies, best first: [score, logprob, tokens] each. */
const beams = (...rows: [number, number, number][]): BeamHypothesis[] =>
  rows.map(([score, logprob, tokens], i) => ({ text: `Beam ${i + 1}`, score, logprob, tokens }));

table('formatStats: which of the beam search\'s best replies is the reply', formatStats, [
  [stats({ beams: beams([-0.43, -5.12, 12], [-0.51, -6.6, 13], [-0.6, -6.0, 10], [-0.72, -8.64, 12]) }), '12 tokens · 85.3 tok/s · TTFT 120 ms · beam 1 of 4'],
  [stats({ beams: beams([-0.2, -2.4, 12], [-0.3, -3.3, 11]) }), '12 tokens · 85.3 tok/s · TTFT 120 ms · beam 1 of 2'],
  [
    stats({ cachedTokens: 15, promptSource: 'ram', beams: beams([-0.2, -2.4, 12], [-0.3, -3.3, 11], [-0.4, -4, 10]) }),
    '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 restored from RAM · beam 1 of 3',
  ],
  // Only the reply kept (n-best 1, width 1): nothing to compare it with, nothing said.
  [stats({ beams: beams([-0.2, -2.4, 12]) }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ beams: [] }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  // A sampled reply, and stats saved before beam search existed.
  [stats({ beams: undefined }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ beams: beams([-0.2, -2.4, 12], [-0.3, -3.3, 11]), interruptedBy: 'the engine was killed (SIGKILL)' }), ''],
]);

table('formatStatsDetail: how a beam search reply was chosen', formatStatsDetail, [
  [
    stats({ beams: beams([-0.4267, -5.12, 12], [-0.51, -6.6, 13], [-0.6, -6.0, 10], [-0.72, -8.64, 12]) }),
    "Prompt: 20 tokens · Reply: 12 tokens\nBeam search: the best of the 4 replies it kept (score −0.43, log-probability −5.12 over 12 tokens); tok/s counts every beam's tokens, TTFT waits for the search to end.",
  ],
  [
    stats({ cachedTokens: 15, promptSource: 'live', beams: beams([-0.001, -0.001, 1], [-2, -4, 2]) }),
    "Prompt: 20 tokens (15 cached) · Reply: 12 tokens\nThe model still held this chat's cache from its last reply.\nBeam search: the best of the 2 replies it kept (score 0.00, log-probability 0.00 over 1 token); tok/s counts every beam's tokens, TTFT waits for the search to end.",
  ],
  [stats({ beams: beams([-0.2, -2.4, 12]) }), 'Prompt: 20 tokens · Reply: 12 tokens'],
  [stats({ beams: undefined }), 'Prompt: 20 tokens · Reply: 12 tokens'],
]);

table('beamsOf: the replies to list under a beam search reply', (s: ReplyStats | null | undefined) => beamsOf(s)?.length ?? null, [
  [stats({ beams: beams([-0.2, -2.4, 12], [-0.3, -3.3, 11], [-0.4, -4, 10]) }), 3],
  [stats({ beams: beams([-0.2, -2.4, 12]) }), null],
  [stats({ beams: [] }), null],
  [stats({}), null],
  [null, null],
  [undefined, null],
]);

table('formatLogprob: a log-probability or a beam\'s score', formatLogprob, [
  [-5.1234, '−5.12'],
  [-0.426, '−0.43'],
  [-0.004, '0.00'],
  [0, '0.00'],
  [1.5, '1.50'],
  [Number.NEGATIVE_INFINITY, '–'],
  [Number.NaN, '–'],
]);

table('formatStats: where the cached prompt tokens came from', formatStats, [
  [stats({ cachedTokens: 15, promptSource: 'live' }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 cached'],
  [stats({ cachedTokens: 15, promptSource: 'ram' }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 restored from RAM'],
  [stats({ cachedTokens: 15, promptSource: 'disk' }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 restored from disk'],
  [stats({ cachedTokens: 15, promptSource: 'typed' }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 read while you typed'],
  // A new chat's cached tokens are a prefix it shared with what was loaded: no source to name.
  [stats({ cachedTokens: 15, promptSource: 'new' }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 cached'],
  // Nothing cached: no source either, wherever it came from.
  [stats({ promptSource: 'new' }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ promptSource: 'live' }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ promptSource: 'ram' }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ promptSource: 'disk' }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  [stats({ promptSource: 'typed' }), '12 tokens · 85.3 tok/s · TTFT 120 ms'],
  // Stats without a source, or with one this table does not know yet, read as before.
  [stats({ cachedTokens: 15, promptSource: undefined }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 cached'],
  [stats({ cachedTokens: 15, promptSource: 'later' as string as PromptSource }), '12 tokens · 85.3 tok/s · TTFT 120 ms · 15 cached'],
  [stats({ cachedTokens: 7900, promptSource: 'disk', interruptedBy: 'the engine was killed (SIGKILL)' }), ''],
]);

table('formatStatsDetail', formatStatsDetail, [
  [stats({}), 'Prompt: 20 tokens · Reply: 12 tokens'],
  [stats({ cachedTokens: 15 }), 'Prompt: 20 tokens (15 cached) · Reply: 12 tokens'],
  [
    stats({ cachedTokens: 15, promptSource: 'live' }),
    "Prompt: 20 tokens (15 cached) · Reply: 12 tokens\nThe model still held this chat's cache from its last reply.",
  ],
  [
    stats({ cachedTokens: 15, promptSource: 'ram' }),
    "Prompt: 20 tokens (15 restored from RAM) · Reply: 12 tokens\nThis chat's cache was kept in RAM while another chat answered, then brought back.",
  ],
  [
    stats({ promptTokens: 8100, cachedTokens: 7900, completionTokens: 1, promptSource: 'disk' }),
    "Prompt: 8100 tokens (7900 restored from disk) · Reply: 1 token\nThis chat's cache was read back from disk, where it was saved when the model was unloaded or RAM ran short.",
  ],
  [
    stats({ cachedTokens: 19, promptSource: 'typed' }),
    'Prompt: 20 tokens (19 read while you typed) · Reply: 12 tokens\nThe model read this chat and your message ahead while you were typing it.',
  ],
  [stats({ promptSource: 'disk' }), 'Prompt: 20 tokens · Reply: 12 tokens'],
  [stats({ cachedTokens: 15, promptSource: undefined }), 'Prompt: 20 tokens (15 cached) · Reply: 12 tokens'],
  [
    stats({ draftedTokens: 64, acceptedTokens: 41 }),
    'Prompt: 20 tokens · Reply: 12 tokens\nSpeculative decoding guessed 64 tokens ahead; the sampler kept 41 (64%).',
  ],
  [
    stats({ cachedTokens: 15, promptSource: 'live', draftedTokens: 1, acceptedTokens: 1 }),
    "Prompt: 20 tokens (15 cached) · Reply: 12 tokens\nThe model still held this chat's cache from its last reply.\nSpeculative decoding guessed 1 token ahead; the sampler kept 1 (100%).",
  ],
  [stats({ draftedTokens: undefined, acceptedTokens: undefined }), 'Prompt: 20 tokens · Reply: 12 tokens'],
  [null, ''],
]);

table('replyNotice: the label under a reply that did not end where the model ended it', replyNotice, [
  [{ status: 'complete', stats: stats({}) }, null],
  [{ status: 'complete', stats: null }, null],
  [{ status: 'streaming', stats: null }, null],
  [{ status: 'stopped', stats: null }, 'Stopped'],
  [{ status: 'interrupted', stats: null }, 'Interrupted — Hearth closed while this reply was being written'],
  [
    { status: 'interrupted', stats: stats({ interruptedBy: 'the model crashed: GGML_ASSERT(x) failed in ggml.c:12' }) },
    'Interrupted — The model crashed: GGML_ASSERT(x) failed in ggml.c:12',
  ],
  [{ status: 'failed', stats: null }, 'Failed'],
  [{ status: 'complete', stats: stats({ cutAtLimit: true }) }, 'Cut off at the length limit'],
  [{ status: 'stopped', stats: stats({ cutAtLimit: true }) }, 'Stopped'],
]);

const NOW = new Date(2025, 5, 15, 12, 0).getTime();
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
table('relativeDate', (ms: number) => relativeDate(ms, NOW), [
  [NOW, 'just now'],
  [NOW - 59_000, 'just now'],
  [NOW + 5 * MIN, 'just now'],
  [NOW - 5 * MIN, '5 min ago'],
  [NOW - 59 * MIN, '59 min ago'],
  [NOW - 3 * 60 * MIN, '3 h ago'],
  [NOW - DAY, 'yesterday'],
  [NOW - 4 * DAY, '4 days ago'],
  [new Date(2025, 2, 12, 12, 0).getTime(), '12 Mar'],
  [new Date(2023, 11, 24, 12, 0).getTime(), '24 Dec 2023'],
]);

table('errorFields: the fields an IpcError names, by top-level name', errorFields, [
  [{ kind: 'invalidInput', message: 'topP must be between 0 and 1, got 2', field: 'topP' }, ['topP']],
  [{ kind: 'invalidInput', message: '…', field: 'logitBias.bias' }, ['logitBias']],
  [{ kind: 'invalidInput', message: '…', field: 'kvCacheType,flashAttention' }, ['kvCacheType', 'flashAttention']],
  [{ kind: 'invalidInput', message: 'topP must be between 0 and 1, got 2' }, []],
  [{ kind: 'store', message: 'disk full' }, []],
  ['invalid args `params` for command `set_sampling`', []],
  [null, []],
]);

table('errorMessage', errorMessage, [
  [{ kind: 'noModel', message: 'No model is loaded' }, 'No model is loaded'],
  [{ kind: 'busy', message: '  ' }, 'A reply is already being generated.'],
  [{ kind: 'store' }, 'Could not read or write the chat history.'],
  [{ kind: 'file' }, 'Could not read or write the file.'],
  [{ kind: 'mystery' }, 'Something went wrong.'],
  [{ kind: 'network' }, 'The provider could not be reached.'],
  [new Error('boom'), 'boom'],
  ['plain string', 'plain string'],
  [null, 'Something went wrong.'],
  [42, 'Something went wrong.'],
  [{ message: { nested: true } }, 'Something went wrong.'],
]);

table('sentence: a backend message shown on its own', sentence, [
  ['the connection broke off', 'The connection broke off'],
  ['OpenAI refused the key', 'OpenAI refused the key'],
  ['', ''],
]);

const imported = (n: number): ChatSummary[] =>
  Array.from({ length: n }, (_, i) => ({ id: i + 1, title: `Chat ${i + 1}`, updatedAt: 0, pinned: false, systemPrompt: '', model: { kind: 'local', model: null }, modelName: null }));
const skipped = (n: number) => Array.from({ length: n }, (_, i) => ({ chat: `chat ${i + 1}`, reason: 'broken' }));

table('importSummary: the headline of an import report', importSummary, [
  [{ imported: imported(1), skipped: [], notes: [] }, 'Imported 1 chat'],
  [{ imported: imported(3), skipped: skipped(2), notes: ['a note'] }, 'Imported 3 chats'],
  [{ imported: [], skipped: skipped(1), notes: [] }, 'Nothing was imported: the chat in the file was skipped'],
  [{ imported: [], skipped: skipped(4), notes: [] }, 'Nothing was imported: all 4 chats in the file were skipped'],
  [{ imported: [], skipped: [], notes: [] }, 'Nothing was imported: the file holds no chats'],
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

table('formatMegabytes: megabytes of 2^20 bytes, the unit of the cache budgets', formatMegabytes, [
  [0, ''],
  [-1, ''],
  [1_000, '0.1 MB'],
  [2_621_440, '2.5 MB'],
  [3 * 2 ** 20, '3 MB'],
  [94_371_840, '90 MB'],
  [4096 * 2 ** 20, '4096 MB'],
]);

const budgets = { ramMb: 1024, diskMb: 4096, unloadIdleMinutes: 0, modelsRamMb: 4096 };
const noModel = { modelBytes: 0, contextBytes: 0, keptModelBytes: 0 };
table('formatCacheUsage: the chats\' caches in RAM and on disk, the models kept', formatCacheUsage, [
  [{ bytes: 0, chats: 0, ramBytes: 0, budgets, ...noModel }, { ram: 'none', disk: 'none', models: 'none' }],
  [{ bytes: 31_457_280, chats: 1, ramBytes: 62_914_560, budgets, ...noModel }, { ram: '60 MB', disk: '30 MB (1 chat)', models: 'none' }],
  [{ bytes: 2_100_000_000, chats: 57, ramBytes: 0, budgets, ...noModel, keptModelBytes: 98 * 2 ** 20 }, { ram: 'none', disk: '2003 MB (57 chats)', models: '98 MB' }],
]);

const MB = 2 ** 20;
table('formatMemory: in all, and each part held', (parts: [string, number][]) => formatMemory(parts), [
  [[['weights', 92 * MB], ['context', 180 * MB]], { total: '272 MB', parts: 'weights 92 MB, context 180 MB' }],
  [[['weights', 92 * MB], ['context', 0], ['chat caches', 60 * MB]], { total: '152 MB', parts: 'weights 92 MB, chat caches 60 MB' }],
  [[['weights', 0], ['context', Number.NaN]], null],
  [[], null],
]);

table('formatMemoryUsage: what Hearth holds in memory, in the budgets\' unit', formatMemoryUsage, [
  [{ modelBytes: 92 * MB, contextBytes: 180 * MB, ramBytes: 0, keptModelBytes: 0 }, { total: '272 MB', parts: 'weights 92 MB, context 180 MB' }],
  [
    { modelBytes: 1926 * MB, contextBytes: 256 * MB, ramBytes: 60 * MB, keptModelBytes: 98 * MB },
    { total: '2340 MB', parts: 'weights 1926 MB, context 256 MB, chat caches 60 MB, other models 98 MB' },
  ],
  [{ modelBytes: 0, contextBytes: 0, ramBytes: 0, keptModelBytes: 0 }, { total: 'none', parts: 'no model loaded' }],
  [{ modelBytes: 0, contextBytes: 0, ramBytes: 30 * MB, keptModelBytes: 0 }, { total: '30 MB', parts: 'chat caches 30 MB; no model loaded' }],
]);

table('formatModelMemory: the loaded model, as its sizes are shown elsewhere', formatModelMemory, [
  [{ sizeBytes: 2_019_377_696, kvBytes: 268_435_456 }, { total: '2.3 GB', parts: 'weights 2.0 GB, context 268.4 MB' }],
  [{ sizeBytes: 2_019_377_696 }, { total: '2.0 GB', parts: 'weights 2.0 GB' }],
  [{ sizeBytes: 0, kvBytes: 0 }, null],
]);

table('formatMs: a duration', formatMs, [
  [842, '842 ms'],
  [1240, '1.24 s'],
  [12_345, '12.3 s'],
  [-1, '–'],
]);

// Local times, so the table holds in any time zone.
table('formatClock: the time of day, HH:MM:SS on 24 hours', formatClock, [
  [new Date(2026, 10, 25, 9, 5, 7).getTime(), '09:05:07'],
  [new Date(2026, 10, 25, 0, 0, 0).getTime(), '00:00:00'],
  [new Date(2026, 10, 25, 23, 59, 59, 999).getTime(), '23:59:59'],
]);
