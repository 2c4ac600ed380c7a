// The token inspector's words and figures: a reply's tokens with the distribution each was drawn from
// (token_probs), how a token's text is shown, its tint, and what a branch from one of its alternatives
// opens with. Pure functions; TokenInspector.svelte renders them.
import type { ReplyStats, TokenAlternative, TokenProbs } from '../ipc/bindings';

/** Whitespace made visible, for a token shown on its own: "␣the", "↵", "⇥". */
const VISIBLE: Record<string, string> = { ' ': '␣', '\n': '↵', '\t': '⇥', '\r': '␍' };

/** A token's text with its whitespace made visible (a token shown on its own); "" stays "" (the end of the turn). */
export function visibleText(text: string): string {
  return text.replace(/[ \n\t\r]/g, (c) => VISIBLE[c]);
}

/**
 * A token's text as it is shown in the reply, in pieces: its text, and its line breaks apart (each shown
 * with a faint ↵ before it, so a token that is only a line break still has something to point at).
 */
export function tokenPieces(text: string): { text: string; newline: boolean }[] {
  return text
    .split(/(\n)/)
    .filter((piece) => piece !== '')
    .map((piece) => ({ text: piece, newline: piece === '\n' }));
}

/** The end of the turn: the token that ended the reply, which has no text. */
export function isEnd(token: Pick<TokenProbs | TokenAlternative, 'text'>): boolean {
  return token.text === '';
}

/**
 * How warm a token's tint is, 0 (none) to 4, from its probability: the less likely the token was, the
 * warmer. `TINT_LEVELS` says which probabilities each level covers, for the legend.
 */
export function tintLevel(p: number): number {
  if (!Number.isFinite(p)) return 0;
  return TINT_LEVELS.findIndex((level) => p >= level.from);
}

export const TINT_LEVELS: readonly { from: number; label: string }[] = [
  { from: 0.9, label: '≥ 90%' },
  { from: 0.6, label: '60–90%' },
  { from: 0.3, label: '30–60%' },
  { from: 0.1, label: '10–30%' },
  { from: -Infinity, label: '< 10%' },
];

/** A probability as a percentage: "43.1%", "100%", "<0.1%"; "–" when it is not a number. */
export function formatPercent(p: number): string {
  if (!Number.isFinite(p)) return '–';
  const percent = p * 100;
  if (percent <= 0) return '0%';
  if (percent < 0.05) return '<0.1%';
  if (percent >= 99.95) return '100%';
  return `${percent.toFixed(1)}%`;
}

/** A distribution's entropy: "1.92 bits"; "0 bits" when only one token could come. */
export function formatEntropy(bits: number): string {
  if (!Number.isFinite(bits)) return '–';
  if (bits < 0.005) return '0 bits';
  return `${bits.toFixed(2)} bits`;
}

/**
 * Why a reply has no tokens to inspect, in words: beam search and consensus keep none; otherwise the
 * reasons it may be one of (the window cannot tell a provider's reply or an old one from its stats).
 */
export function noTokensReason(stats: ReplyStats | null | undefined): string {
  if (stats?.beams && stats.beams.length > 0) {
    return 'This reply was found by beam search, which keeps no token probabilities: its tokens were ranked by their log-probabilities, not drawn.';
  }
  if (stats?.consensus) {
    return 'This reply was chosen by consensus, which keeps no token probabilities for its candidates.';
  }
  return (
    'No token probabilities were kept for this reply. They are kept for replies of the local model (and of a llama.cpp ' +
    'server with llama.cpp fields on) while Settings → Sampling → Alternatives kept per token is above 0; other providers’ ' +
    'replies have none, and neither do replies written with it at 0 or before the token inspector existed.'
  );
}
