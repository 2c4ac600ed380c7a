import type { HLJSApi } from 'highlight.js';
import { LazyModule } from './lazy-module.svelte';
import { Lru } from './memo';

// Syntax highlighting of fenced code in replies, by highlight.js fetched at the first block.
const hljsLib = new LazyModule(() => import('./highlight-lib').then((m) => m.default));

/** highlight.js, fetched if need be (tests and anything that must not show a stand-in). */
export const loadHighlighter = (): Promise<unknown> => hljsLib.load();

/** Blocks without a language are guessed only up to this size (guessing tries every grammar). */
const GUESS_MAX = 2_000;
/** How sure a guess must be; prose and logs score low and stay plain. */
const GUESS_MIN_RELEVANCE = 7;
/** Past this, a block is shown plain: a huge paste should not stall a frame. */
const HIGHLIGHT_MAX = 100_000;

export type Highlighted = {
  /** Escaped HTML of the code: highlight.js's spans (it escapes the code), or the code escaped. */
  html: string;
  /** The grammar used, or null when the block is shown as plain text. */
  language: string | null;
  /** False while highlight.js is being fetched: the code is shown plain for now, not for good. */
  final?: false;
};

const cache = new Lru<Highlighted>(400, 2_000_000);

/**
 * The code of one block, highlighted by `lang` (the fence's info string; '' when none).
 * Memoized by (lang, code): finished blocks are not highlighted again on every frame of a stream.
 */
export function highlightCode(code: string, lang: string): Highlighted {
  const hljs = hljsLib.get();
  if (hljs === null) return { html: escapeHtml(code), language: null, final: false };
  return cache.get(`${lang}\u0000${code}`, () => highlight(hljs, code, lang));
}

/** The fence's language as a label: its first word, lower case, bounded. */
export function languageLabel(lang: string): string {
  return (lang.trim().split(/\s/, 1)[0] ?? '').toLowerCase().slice(0, 24);
}

function highlight(hljs: HLJSApi, code: string, lang: string): Highlighted {
  const wanted = languageLabel(lang);
  if (code.length <= HIGHLIGHT_MAX) {
    if (wanted !== '' && hljs.getLanguage(wanted)) {
      return { html: hljs.highlight(code, { language: wanted, ignoreIllegals: true }).value, language: wanted };
    }
    if (wanted === '' && code.length <= GUESS_MAX) {
      const guess = hljs.highlightAuto(code);
      if (guess.language && guess.relevance >= GUESS_MIN_RELEVANCE) return { html: guess.value, language: guess.language };
    }
  }
  return { html: escapeHtml(code), language: null };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]);
}
