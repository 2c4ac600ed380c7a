import { Marked, type TokensList } from 'marked';
import DOMPurify from 'dompurify';
import { codeBlock } from './code-block';
import { GrowingLexer, RAW_BLOCK } from './growing-lexer';
import { mathExtensions, renderMath, type Formula } from './math';
import { Lru } from './memo';
import { rawPieceHtml, rawPieces } from './raw-pieces';

// Model output is untrusted: parse Markdown, then sanitize the resulting HTML.
// No raw HTML may execute: scripts, event handlers and javascript: URLs are removed,
// and tags that could restyle or take over the app are forbidden outright.
//
// What the model's markup may not hold but a reply shows (code blocks with a Copy button, KaTeX
// with its inline styles) is left out of that pass: marked writes a placeholder in its stead, and
// after sanitizing, the placeholders in the DOM's text are replaced by nodes we build. Placeholders
// are matched in text nodes only, never in attributes or in the HTML string.

const FORBID_TAGS = [
  'style', 'script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'base',
  'link', 'meta', 'form', 'input', 'button', 'textarea', 'select', 'option', 'dialog',
  'template', 'svg', 'math', 'video', 'audio', 'source', 'track',
];
// `background` too: Chromium still loads <table background=…>, a request no CSP-less test would see.
const FORBID_ATTR = ['style', 'id', 'name', 'srcset', 'action', 'formaction', 'autofocus', 'tabindex', 'background'];

// Only these URL schemes survive in href/src (DOMPurify strips javascript:, vbscript:, etc. too).
const SAFE_URL = /^(?:https?:|mailto:|#)/i;
const SAFE_IMG = /^data:image\/(?:png|gif|jpe?g|webp);/i;

let hooked = false;
function installHooks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      const href = node.getAttribute('href');
      if (href !== null && !SAFE_URL.test(href.trim())) node.removeAttribute('href');
      if (node.hasAttribute('href') && !href!.trim().startsWith('#')) {
        // Never navigate the app window itself.
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
    } else if (node.tagName === 'IMG') {
      // Remote images are blocked by the CSP anyway; keep only inline raster data.
      const src = node.getAttribute('src');
      if (src === null || !SAFE_IMG.test(src.trim())) node.removeAttribute('src');
    }
  });
}

/** What a placeholder stands for. */
type Slot = { kind: 'code'; code: string; lang: string } | ({ kind: 'math' } & Formula);

/** Random per load, so a reply cannot spell a placeholder by chance. Letters and digits only: Markdown leaves them be. */
const NONCE = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, '0')).join('');
const PREFIX = `hearth${NONCE}s`;
const PLACEHOLDER = new RegExp(`${PREFIX}(\\d+)e`, 'g');

/** The slots of the render in progress (rendering is synchronous). */
let slots: Slot[] = [];
function place(slot: Slot, block: boolean): string {
  slots.push(slot);
  const mark = `${PREFIX}${slots.length - 1}e`;
  return block ? `<div>${mark}</div>\n` : mark;
}

const marked = new Marked(
  { gfm: true, breaks: true, async: false },
  {
    extensions: [
      ...mathExtensions((formula, block) => place({ kind: 'math', ...formula }, block)),
      // An overlong block still being written, shown as written (see GrowingLexer).
      { name: RAW_BLOCK, level: 'block', renderer: (token) => rawPieceHtml(token.text) },
    ],
    renderer: {
      code: ({ text, lang }) => place({ kind: 'code', code: text, lang: lang ?? '' }, true),
    },
  },
);

/** Markdown's tokens as the window renders them. */
export const lexMarkdown = (source: string): TokensList => marked.lexer(source);

/** A block being written longer than this is shown as written until the reply is complete. */
export const STREAMING_LEXED_MAX = 8_000;

/** Replies being written are lexed again only at their end (see GrowingLexer). */
const growing = new GrowingLexer(lexMarkdown, 8, STREAMING_LEXED_MAX);

/** Render untrusted Markdown (model output) to sanitized HTML. */
export function renderMarkdown(source: string): string {
  return renderBlocks(source).join('');
}

/**
 * The same, one sanitized HTML string per top-level block (paragraph, list, code block, table…).
 * While a reply streams only its last block changes: the window keeps the DOM of the others, so
 * a frame's work stays the size of that block instead of growing with the whole reply.
 */
export function renderBlocks(source: string, { streaming = false } = {}): string[] {
  installHooks();
  const started = performance.now();
  const tokens = streaming ? growing.lexGrowing(source) : lexMarkdown(source);
  // Reference-style links are defined anywhere in the reply and used in any block.
  const links = tokens.links;
  const context = Object.keys(links).length === 0 ? '' : JSON.stringify(links);
  const blocks: string[] = [];
  let last = tokens.length - 1;
  while (last >= 0 && (tokens[last].type === 'space' || tokens[last].type === 'def')) last--;
  tokens.forEach((token, i) => {
    if (token.type === 'space' || token.type === 'def') return;
    if (token.type === RAW_BLOCK) {
      // Escaped text, in pieces that stay the same as it grows (raw-pieces.ts); all but the last
      // are done.
      const pieces = rawPieces(token.raw);
      pieces.forEach((piece, p) =>
        blocks.push(p === pieces.length - 1 ? rawPieceHtml(piece) : blockCache.get(`raw\u0000${piece}`, () => rawPieceHtml(piece))),
      );
      return;
    }
    // The code block being written is re-rendered at every update: past a size, highlighting it
    // each time would cost more than the update itself, so it is highlighted once it is done.
    const plain = streaming && i === last && token.type === 'code' && token.text.length > STREAMING_HIGHLIGHT_MAX;
    // A block shown with a stand-in (highlight.js or KaTeX still on its way) is not kept.
    let final = true;
    const render = () => {
      const rendered = sanitizeBlock(Object.assign([token], { links }), plain);
      final = rendered.final;
      return rendered.html;
    };
    // The block being written changes at every update: caching it would only push others out.
    if (streaming && i === last) blocks.push(render());
    else blocks.push(blockCache.get(`${plain ? 'plain' : ''}\u0000${context}\u0000${token.raw}`, render, () => final));
  });
  if (streaming) growing.spent(source, performance.now() - started);
  return blocks;
}

/** A streaming code block longer than this is shown unhighlighted until it is complete. */
export const STREAMING_HIGHLIGHT_MAX = 4_000;

/** Finished blocks of the replies on show, looked up every frame while one streams. */
const blockCache = new Lru<string>(2_000, 4_000_000);

function sanitizeBlock(tokens: TokensList, plainCode = false): { html: string; final: boolean } {
  const { html, placed } = parse(tokens);
  const fragment = DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS,
    FORBID_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_UNKNOWN_PROTOCOLS: false,
    RETURN_DOM_FRAGMENT: true,
  });
  const final = fillSlots(fragment, placed, plainCode);
  for (const table of fragment.querySelectorAll('table')) wrap(table, 'table-wrap');
  const host = document.createElement('div');
  host.append(fragment);
  return { html: host.innerHTML, final };
}

function parse(tokens: TokensList): { html: string; placed: Slot[] } {
  slots = [];
  try {
    return { html: marked.parser(tokens) as string, placed: slots };
  } finally {
    slots = [];
  }
}

/** Replace each placeholder in the fragment's text with the node its slot stands for; false when
 *  a node is a stand-in for now. */
function fillSlots(root: DocumentFragment, placed: Slot[], plainCode: boolean): boolean {
  if (placed.length === 0) return true;
  let final = true;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if ((node as Text).data.includes(PREFIX)) texts.push(node as Text);
  }
  for (const text of texts) {
    const parts = document.createDocumentFragment();
    let last = 0;
    for (const m of text.data.matchAll(PLACEHOLDER)) {
      const slot = placed[Number(m[1])];
      if (!slot) continue;
      if (m.index > last) parts.append(text.data.slice(last, m.index));
      const built = build(slot, plainCode);
      final &&= built.final;
      parts.append(built.node);
      last = m.index + m[0].length;
    }
    if (last < text.data.length) parts.append(text.data.slice(last));
    const parent = text.parentElement;
    // A block's placeholder came in a bare <div> of its own: the block takes the div's place.
    const bare = parent?.tagName === 'DIV' && parent.attributes.length === 0 && parent.childNodes.length === 1;
    (bare ? parent : text).replaceWith(parts);
  }
  return final;
}

function build(slot: Slot, plainCode: boolean): { node: Node; final: boolean } {
  return slot.kind === 'code' ? codeBlock(slot.code, slot.lang, plainCode) : renderMath(slot.tex, slot.display);
}

/** Put `el` inside a new <div class=…> (a wide table scrolls in it). */
function wrap(el: Element, className: string): void {
  const box = document.createElement('div');
  box.className = className;
  el.replaceWith(box);
  box.append(el);
}
