import type { ReplyStats } from '../../src/ipc/bindings';
import {
  TINT_LEVELS,
  formatEntropy,
  formatPercent,
  isEnd,
  noTokensReason,
  tintLevel,
  tokenPieces,
  visibleText,
} from '../../src/lib/inspector';
import { table } from './helpers';
import { stats } from './reply-fixtures';

table('visibleText: a token on its own, its whitespace shown', visibleText, [
  [' the', '␣the'],
  ['Hello', 'Hello'],
  ['\n\n', '↵↵'],
  ['\tx ', '⇥x␣'],
  ['a\r\n', 'a␍↵'],
  ['<img src=x onerror=alert(1)>', '<img␣src=x␣onerror=alert(1)>'],
  ['', ''],
]);

table('tokenPieces: a token in the reply, its line breaks apart', tokenPieces, [
  [' the', [{ text: ' the', newline: false }]],
  ['\n', [{ text: '\n', newline: true }]],
  ['.\n\nSo', [{ text: '.', newline: false }, { text: '\n', newline: true }, { text: '\n', newline: true }, { text: 'So', newline: false }]],
  ['', []],
]);

table('isEnd: the end of the turn has no text', isEnd, [
  [{ text: '' }, true],
  [{ text: ' ' }, false],
  [{ text: 'end' }, false],
]);

table('tintLevel: the less likely, the warmer', tintLevel, [
  [1, 0],
  [0.9, 0],
  [0.89, 1],
  [0.6, 1],
  [0.45, 2],
  [0.3, 2],
  [0.29, 3],
  [0.1, 3],
  [0.05, 4],
  [0, 4],
  [Number.NaN, 0],
]);

table('TINT_LEVELS: the legend, one label per level', (i: number) => TINT_LEVELS[i].label, [
  [0, '≥ 90%'],
  [1, '60–90%'],
  [2, '30–60%'],
  [3, '10–30%'],
  [4, '< 10%'],
]);

table('formatPercent: a probability', formatPercent, [
  [0.431, '43.1%'],
  [0.05, '5.0%'],
  [1, '100%'],
  [0.99961, '100%'],
  [0.9994, '99.9%'],
  [0.0004, '<0.1%'],
  [0, '0%'],
  [Number.NaN, '–'],
]);

table('formatEntropy: how spread the choice was', formatEntropy, [
  [1.9234, '1.92 bits'],
  [0, '0 bits'],
  [0.001, '0 bits'],
  [3, '3.00 bits'],
  [Number.NaN, '–'],
]);

table('noTokensReason: why a reply has no tokens to inspect', (s: ReplyStats | null) => noTokensReason(s).split(':')[0].split('.')[0], [
  [stats({ beams: [{ text: 'x', logprob: -1, score: -1, tokens: 1 }] }), 'This reply was found by beam search, which keeps no token probabilities'],
  [stats({ consensus: { utility: 'chrF', chosen: 0, candidates: [{ text: 'x', score: 1 }] } }), 'This reply was chosen by consensus, which keeps no token probabilities for its candidates'],
  [stats({}), 'No token probabilities were kept for this reply'],
  [null, 'No token probabilities were kept for this reply'],
]);

table('noTokensReason: the reasons a plain reply may have none, in full', (s: ReplyStats | null) => noTokensReason(s), [
  [
    null,
    'No token probabilities were kept for this reply. They are kept for replies of the local model (and of a llama.cpp server with llama.cpp fields on) while Settings → Sampling → Alternatives kept per token is above 0; other providers’ replies have none, and neither do replies written with it at 0 or before the token inspector existed.',
  ],
]);
