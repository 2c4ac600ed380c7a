import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import lua from 'highlight.js/lib/languages/lua';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import powershell from 'highlight.js/lib/languages/powershell';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Lru } from './memo';

// Syntax highlighting of fenced code in replies. The languages are registered by hand (the core
// build, not all ~190); each brings its aliases (js, ts, py, sh, rs, html, yml, toml, c++…).
const LANGUAGES = {
  bash, c, cpp, csharp, css, diff, dockerfile, go, ini, java, javascript, json, kotlin, lua, makefile,
  markdown, php, powershell, python, ruby, rust, shell, sql, swift, typescript, xml, yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

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
};

const cache = new Lru<Highlighted>(400, 2_000_000);

/**
 * The code of one block, highlighted by `lang` (the fence's info string; '' when none).
 * Memoized by (lang, code): finished blocks are not highlighted again on every frame of a stream.
 */
export function highlightCode(code: string, lang: string): Highlighted {
  return cache.get(`${lang}\u0000${code}`, () => highlight(code, lang));
}

/** The fence's language as a label: its first word, lower case, bounded. */
export function languageLabel(lang: string): string {
  return (lang.trim().split(/\s/, 1)[0] ?? '').toLowerCase().slice(0, 24);
}

function highlight(code: string, lang: string): Highlighted {
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
