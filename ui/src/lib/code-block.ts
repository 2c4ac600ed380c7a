import { escapeHtml, highlightCode, languageLabel } from './highlight';

// A fenced code block of a reply: a header with the language and a Copy button, then the code.
// Built after sanitizing (a reply's own HTML may never hold a button), from the raw code, so
// nothing in it comes from the model's markup.

const SVG = 'http://www.w3.org/2000/svg';

/** The block for `code` fenced as `lang` (unhighlighted if `plain`); the copy button copies
 *  `pre code`'s text, the exact code. Not `final` while highlight.js is being fetched. */
export function codeBlock(code: string, lang: string, plain = false): { node: HTMLElement; final: boolean } {
  const { html, language, final = true } = plain ? { html: escapeHtml(code), language: null } : highlightCode(code, lang);
  const block = element('div', 'code-block');
  block.dataset.testid = 'code-block';

  const header = element('div', 'code-header');
  const label = element('span', 'code-lang');
  label.textContent = languageLabel(lang) || language || 'text';
  const copy = element('button', 'code-copy');
  copy.setAttribute('type', 'button');
  copy.dataset.testid = 'copy-code';
  copy.title = 'Copy code';
  const copyLabel = element('span', 'code-copy-label');
  copyLabel.textContent = 'Copy';
  copy.append(copyIcon(), copyLabel);
  header.append(label, copy);

  const pre = document.createElement('pre');
  const codeEl = element('code', language ? `hljs language-${language}` : 'hljs');
  // highlight.js escapes the code it highlights; plain blocks are escaped by highlightCode.
  codeEl.innerHTML = html;
  pre.append(codeEl);
  block.append(header, pre);
  return { node: block, final };
}

/** How long a copy button says "Copied". */
export const COPIED_MS = 1_600;

/**
 * Attachment for the element holding rendered replies: one click listener serves every copy
 * button inside it, including those of blocks re-rendered while a reply streams.
 */
export function copyCodeOnClick(host: HTMLElement): () => void {
  const onClick = (event: MouseEvent) => {
    const button = (event.target as Element | null)?.closest?.('[data-testid="copy-code"]');
    if (!button || !host.contains(button)) return;
    const code = button.closest('[data-testid="code-block"]')?.querySelector('pre code')?.textContent ?? '';
    navigator.clipboard.writeText(code).then(
      () => flash(button, 'Copied', 'copied'),
      () => flash(button, 'Copy failed', 'failed'),
    );
  };
  host.addEventListener('click', onClick);
  return () => host.removeEventListener('click', onClick);
}

function flash(button: Element, text: string, state: string): void {
  const label = button.querySelector('.code-copy-label');
  if (!label) return;
  label.textContent = text;
  button.classList.add(state);
  setTimeout(() => {
    label.textContent = 'Copy';
    button.classList.remove(state);
  }, COPIED_MS);
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  el.className = className;
  return el;
}

/** Two overlapping rounded squares. */
function copyIcon(): SVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  for (const [name, value] of [['viewBox', '0 0 16 16'], ['width', '13'], ['height', '13'], ['aria-hidden', 'true']]) {
    svg.setAttribute(name, value);
  }
  for (const d of ['M5.5 5.5h7a1 1 0 0 1 1 1v7a1 1 0 0 1-1 1h-7a1 1 0 0 1-1-1v-7a1 1 0 0 1 1-1z', 'M2.5 10.5v-7a1 1 0 0 1 1-1h7']) {
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', d);
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke', 'currentColor');
    path.setAttribute('stroke-width', '1.4');
    path.setAttribute('stroke-linecap', 'round');
    svg.append(path);
  }
  return svg;
}
