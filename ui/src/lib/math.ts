import DOMPurify, { type Config } from 'dompurify';
import type { KatexOptions } from 'katex';
import type Katex from './katex-lib';
import type { TokenizerAndRendererExtension, Tokens } from 'marked';
import { escapeHtml } from './highlight';
import { LazyModule } from './lazy-module.svelte';
import { Lru } from './memo';

// TeX in replies: found by marked extensions (so never inside code spans or blocks), typeset by
// KaTeX. KaTeX's HTML needs inline `style`, which the main sanitizer forbids for the model's own
// markup, so formulas go in after that pass, each through its own narrow DOMPurify pass below.

export type Formula = { tex: string; display: boolean };

/** A run of text without a blank line in it (a stray delimiter never swallows paragraphs). */
const SPAN = String.raw`((?:(?!\n[ \t]*\n)[\s\S])+?)`;

const INLINE: [RegExp, boolean][] = [
  [new RegExp(String.raw`^\$\$${SPAN}\$\$`), true],
  [new RegExp(String.raw`^\\\[${SPAN}\\\]`), true],
  [new RegExp(String.raw`^\\\(${SPAN}\\\)`), false],
  // $…$, not currency: the opening $ is not followed by a space, the closing one not preceded by
  // a space nor followed by a digit ("$5 and $10" stays text). \$ inside is TeX's own dollar.
  [/^\$(?![\s$])((?:\\[\s\S]|[^\\$])+?)(?<!\s)\$(?!\d)/, false],
];
const BLOCK: RegExp[] = [
  new RegExp(String.raw`^ {0,3}\$\$${SPAN}\$\$[ \t]*(?:\n+|$)`),
  new RegExp(String.raw`^ {0,3}\\\[${SPAN}\\\][ \t]*(?:\n+|$)`),
];

type MathToken = Tokens.Generic & Formula;

/**
 * marked extensions for $…$, \(…\), $$…$$ and \[…\]; `place` turns a formula into what the
 * HTML holds in its stead (a placeholder the caller later replaces with `renderMath`'s nodes).
 */
export function mathExtensions(place: (formula: Formula, block: boolean) => string): TokenizerAndRendererExtension[] {
  const token = (type: string, raw: string, tex: string, display: boolean): MathToken | undefined =>
    tex.trim() === '' ? undefined : { type, raw, tex: tex.trim(), display };
  return [
    {
      name: 'mathBlock',
      level: 'block',
      start: (src) => /^ {0,3}(?:\$\$|\\\[)/m.exec(src)?.index,
      tokenizer(src) {
        for (const rule of BLOCK) {
          const m = rule.exec(src);
          if (m) return token('mathBlock', m[0], m[1], true);
        }
        return undefined;
      },
      renderer: (t) => place(t as MathToken, true),
    },
    {
      name: 'mathInline',
      level: 'inline',
      start: (src) => {
        const i = src.search(/\$|\\[([]/);
        return i < 0 ? undefined : i;
      },
      tokenizer(src) {
        for (const [rule, display] of INLINE) {
          const m = rule.exec(src);
          if (m) return token('mathInline', m[0], m[1], display);
        }
        return undefined;
      },
      renderer: (t) => place(t as MathToken, false),
    },
  ];
}

const KATEX: KatexOptions = {
  throwOnError: false,
  trust: false,
  strict: 'ignore',
  output: 'htmlAndMathml',
  maxSize: 20,
  maxExpand: 500,
};
/** Longer TeX is shown as source: nobody reads a formula this long, and typesetting it stalls. */
const MAX_TEX = 10_000;

const cache = new Lru<DocumentFragment>(500, 500_000);

/** KaTeX and its stylesheet, fetched at the first formula. */
const katexLib = new LazyModule(() => import('./katex-lib').then((m) => m.default));

/** KaTeX, fetched if need be (tests and anything that must not show a stand-in). */
export const loadKatex = (): Promise<unknown> => katexLib.load();

/** A formula typeset, or its source while KaTeX is being fetched (`final: false`). */
export type RenderedMath = { node: DocumentFragment; final: boolean };

/** The typeset formula (or its source in the error style), sanitized; memoized by (tex, display). */
export function renderMath(tex: string, display: boolean): RenderedMath {
  const katex = katexLib.get();
  if (katex === null) return { node: pending(tex, display), final: false };
  const cached = cache.get(`${display ? 'D' : 'I'}${tex}`, () =>
    purifier().sanitize(typeset(katex, tex, display).replace(TEX_ANNOTATION, ''), PURIFY),
  );
  return { node: cached.cloneNode(true) as DocumentFragment, final: true };
}

/** The formula's source, as written, until KaTeX is here. */
function pending(tex: string, display: boolean): DocumentFragment {
  const fragment = document.createDocumentFragment();
  const span = fragment.appendChild(document.createElement('span'));
  span.className = 'math-pending';
  span.textContent = display ? `$$${tex}$$` : `$${tex}$`;
  return fragment;
}

/**
 * The TeX source KaTeX keeps in its MathML; the narrow pass allows no <annotation>, which would
 * leave the source as visible text. Removed before sanitizing, so the pass does not rely on it.
 */
const TEX_ANNOTATION = /<annotation encoding="application\/x-tex">[^<]*<\/annotation>/g;

function typeset(katex: typeof Katex, tex: string, display: boolean): string {
  if (tex.length <= MAX_TEX) {
    try {
      // throwOnError: false renders TeX errors as .katex-error; anything else it throws lands below.
      return katex.renderToString(tex, { ...KATEX, displayMode: display });
    } catch {
      // fall through
    }
  }
  return `<span class="katex-error">${escapeHtml(display ? `$$${tex}$$` : `$${tex}$`)}</span>`;
}

// The narrow pass, for KaTeX's output only: its HTML, MathML and SVG (square roots, arrows) with
// inline styles; nothing that loads, links or runs. Its own DOMPurify instance, so its settings and
// hook never touch the main pass.
const PURIFY: Config & { RETURN_DOM_FRAGMENT: true } = {
  USE_PROFILES: { html: true, mathMl: true, svg: true },
  FORBID_TAGS: [
    'a', 'img', 'image', 'use', 'style', 'script', 'link', 'meta', 'base', 'form', 'input', 'button', 'textarea',
    'select', 'iframe', 'object', 'embed', 'video', 'audio', 'source', 'picture', 'template', 'details', 'dialog',
    'foreignObject', 'animate', 'animateMotion', 'animateTransform', 'set', 'annotation-xml', 'maction',
  ],
  FORBID_ATTR: ['href', 'xlink:href', 'src', 'srcset', 'action', 'formaction', 'id', 'name', 'background', 'poster', 'target', 'tabindex'],
  ALLOW_DATA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  RETURN_DOM_FRAGMENT: true,
};

/** The CSS properties KaTeX writes inline (sizes, offsets, colours); values of plain lengths and names. */
const STYLE_PROPS = new Set([
  'height', 'width', 'min-width', 'max-width', 'vertical-align', 'top', 'bottom', 'left', 'right',
  'margin-left', 'margin-right', 'margin-top', 'margin-bottom', 'padding-left', 'padding-right', 'padding-top',
  'padding-bottom', 'border-bottom-width', 'border-top-width', 'border-right-width', 'border-left-width',
  'border', 'border-style', 'border-right-style', 'border-color', 'border-width', 'color', 'background-color', 'font-size',
]);
const STYLE_VALUE = /^[-+\w.#%\s,]*$/;

/**
 * Keeps only the declarations of `style` that KaTeX would write; anything else (url(), fixed
 * positions, var(), expression()) goes. KaTeX positions relative to the text only.
 */
export function katexStyle(style: string): string {
  return style
    .split(';')
    .map((decl) => {
      const colon = decl.indexOf(':');
      const prop = decl.slice(0, colon).trim().toLowerCase();
      const value = decl.slice(colon + 1).trim();
      const allowed = prop === 'position' ? value === 'relative' : STYLE_PROPS.has(prop) && STYLE_VALUE.test(value);
      return colon > 0 && allowed ? `${prop}:${value}` : '';
    })
    .filter(Boolean)
    .join(';');
}

let narrow: ReturnType<typeof DOMPurify> | null = null;
function purifier(): ReturnType<typeof DOMPurify> {
  if (narrow) return narrow;
  narrow = DOMPurify(window);
  narrow.addHook('uponSanitizeAttribute', (_node, data) => {
    if (data.attrName !== 'style') return;
    data.attrValue = katexStyle(data.attrValue);
    if (data.attrValue === '') data.keepAttr = false;
  });
  return narrow;
}
