// Hostile model replies, shared by the unit tests (tests/unit/xss.test.ts, jsdom) and the browser
// test (tests/browser/render.test.mjs, streamed through the real app in Chromium). Each payload,
// if it worked, would set window.__xss, call alert/confirm/prompt/print, or request LEAK.
// `code`: text that must survive, as text, in a rendered code block.

export const LEAK = 'http://127.0.0.1:9/leak';

const img = 'window.__xss=1';
const raw = String.raw;

/** @type {{ name: string, source: string, code?: string }[]} */
export const PAYLOADS = [
  // Script elements.
  { name: 'script', source: `hi <script>window.__xss=1</script> there` },
  { name: 'script, nested to survive one pass', source: `<scr<script>ipt>window.__xss=1</scr</script>ipt>` },
  { name: 'script, broken case', source: `<ScRiPt >window.__xss=1</sCrIpT>` },
  { name: 'script src', source: `<script src="${LEAK}"></script>` },
  { name: 'script, never closed', source: `text <script>window.__xss=1` },
  { name: 'script inside emphasis', source: `**bold <script>alert(1)</script>**` },
  { name: 'script split by angle brackets', source: `<<script>script>alert(1)<</script>/script>` },

  // Event handlers.
  { name: 'img onerror', source: `<img src=x onerror="${img}">` },
  { name: 'img onerror, backticks', source: 'Look <img src=x onerror=alert`1`> here' },
  { name: 'img onerror after a newline', source: `<img src=x\nonerror=${img}>` },
  { name: 'svg onload', source: `<svg onload="${img}"><circle r=4 /></svg>` },
  { name: 'svg/onload without a space', source: `<svg/onload=${img}>` },
  { name: 'body onload', source: `<body onload="${img}">x</body>` },
  { name: 'details ontoggle', source: `<details open ontoggle="${img}"><summary>s</summary>x</details>` },
  { name: 'video source onerror', source: `<video><source onerror="${img}"></video>` },
  { name: 'audio onerror', source: `<audio src=x onerror="${img}"></audio>` },
  { name: 'marquee onstart', source: `<marquee onstart="${img}">x</marquee>` },
  { name: 'input autofocus onfocus', source: `<input autofocus onfocus="${img}">` },
  { name: 'textarea autofocus onfocus', source: `<textarea autofocus onfocus="${img}">x</textarea>` },
  { name: 'anchor onclick', source: `<a onclick="${img}">click me</a>` },
  { name: 'div onpointerover', source: `<div onpointerover="${img}" onmouseover="${img}">hover me</div>` },
  { name: 'style onload', source: `<style onload="${img}"></style>` },

  // URLs in links, images, frames, forms.
  { name: 'markdown javascript: link', source: `[click me](javascript:alert(1))` },
  { name: 'markdown javascript: image', source: `![pic](javascript:alert(1))` },
  { name: 'reference-style javascript: link', source: `[click me][evil]\n\n[evil]: javascript:alert(1)` },
  { name: 'autolink javascript:', source: `<javascript:alert(1)>` },
  { name: 'html javascript: link', source: `<a href="javascript:${img}">click me</a>` },
  { name: 'entity-encoded javascript:', source: `<a href="&#106;avascript:${img}">click me</a>` },
  { name: 'hex entities, no semicolons', source: `<a href="&#x6A&#x61vascript:alert(1)">click me</a>` },
  { name: 'zero-padded entities', source: `<a href="&#0000106&#0000097vascript:alert(1)">click me</a>` },
  { name: 'mixed-case scheme', source: `<a href="JaVaScRiPt:alert(1)">click me</a>` },
  { name: 'tab inside the scheme', source: `<a href="java\tscript:alert(1)">click me</a>` },
  { name: 'encoded newline inside the scheme', source: `<a href="java&#10;script:alert(1)">click me</a>` },
  { name: 'control character before the scheme', source: `<a href="\u0001javascript:alert(1)">click me</a>` },
  { name: 'space before the scheme', source: `<a href="  javascript:alert(1)">click me</a>` },
  { name: 'markdown link with encoded scheme', source: `[click me](&#106;avascript:alert(1))` },
  { name: 'vbscript: link', source: `<a href="vbscript:msgbox(1)">click me</a> [md](vbscript:msgbox(1))` },
  { name: 'data:text/html link', source: `<a href="data:text/html,<script>alert(1)</script>">click me</a>` },
  { name: 'markdown data: link', source: `[click me](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)` },
  { name: 'img javascript: src', source: `<img src="javascript:alert(1)">` },
  { name: 'img svg data: src', source: `<img src="data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>">` },
  { name: 'remote image', source: `![tracker](${LEAK}) <img src="${LEAK}">` },
  { name: 'srcset and poster', source: `<img srcset="${LEAK} 1x"><video poster="${LEAK}"></video>` },
  { name: 'legacy background attribute', source: `<table background="${LEAK}"><tr><td background="${LEAK}">x</td></tr></table>` },
  { name: 'iframe javascript: src', source: `<iframe src="javascript:parent.__xss=1"></iframe>` },
  { name: 'iframe srcdoc', source: `<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>` },
  { name: 'form action', source: `<form action="javascript:alert(1)"><button>go</button></form>` },
  { name: 'button formaction', source: `<button formaction="javascript:alert(1)">go</button>` },
  { name: 'meta refresh', source: `<meta http-equiv="refresh" content="0;url=javascript:alert(1)">` },
  { name: 'object data', source: `<object data="javascript:alert(1)"></object>` },
  { name: 'object html data: URL', source: `<object data="data:text/html,<script>parent.__xss=1</script>"></object>` },
  { name: 'embed src', source: `<embed src="javascript:alert(1)">` },
  { name: 'base href javascript:', source: `<base href="javascript:alert(1)//">\n\n[relative](/docs)` },
  { name: 'base href elsewhere', source: `<base href="http://127.0.0.1:9/">\n\n<img src="leak"> [rel](leak)` },
  { name: 'link stylesheet', source: `<link rel="stylesheet" href="${LEAK}">` },
  { name: 'link prefetch', source: `<link rel="prefetch" href="${LEAK}">` },

  // SVG.
  { name: 'svg animate href', source: `<svg><a><animate attributeName="href" values="javascript:alert(1)"/><text y="20">click me</text></a></svg>` },
  { name: 'svg set onload', source: `<svg><set attributeName="onload" to="alert(1)"/></svg>` },
  { name: 'svg foreignObject', source: `<svg><foreignObject><img src=x onerror="${img}"></foreignObject></svg>` },
  { name: 'svg use data: href', source: `<svg><use href="data:image/svg+xml,<svg id='x' xmlns='http://www.w3.org/2000/svg'><image href='1' onerror='alert(1)'/></svg>#x"/></svg>` },
  { name: 'svg script', source: `<svg><script>${img}</script></svg>` },
  { name: 'svg style mXSS', source: `<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">` },

  // MathML mutation XSS.
  { name: 'mathml mglyph style', source: `<math><mtext><table><mglyph><style><img src=x onerror="${img}">` },
  { name: 'mathml textarea path', source: `<math><mi><mglyph><svg><mtext><textarea><path id="</textarea><img onerror=alert(1) src=1>">` },
  { name: 'mathml nested forms', source: `<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>` },
  { name: 'mathml href', source: `<math href="javascript:alert(1)"><mi>click me</mi></math>` },

  // Styles.
  { name: 'style element url()', source: `<style>body{background:url(${LEAK})}</style>styled` },
  { name: 'style @import', source: `<style>@import '${LEAK}';</style>imported` },
  { name: 'style attribute url()', source: `<div style="background:url(${LEAK})">x</div>` },
  { name: 'style expression()', source: `<div style="width:expression(alert(1))">x</div>` },
  { name: 'fixed overlay', source: `<div style="position:fixed;inset:0;z-index:9999;background:red">overlay</div>` },

  // Parser-context mutation XSS.
  { name: 'template', source: `<template><img src=x onerror="${img}"></template>` },
  { name: 'noscript', source: `<noscript><p title="</noscript><img src=x onerror=alert(1)>">` },
  { name: 'textarea', source: `<textarea><img title="</textarea><img src=x onerror=alert(1)>">` },
  { name: 'title', source: `<title><img title="</title><img src=x onerror=alert(1)>">` },
  { name: 'xmp', source: `<xmp><img title="</xmp><img src=x onerror=alert(1)>">` },
  { name: 'noembed', source: `<noembed><img title="</noembed><img src=x onerror=alert(1)>">` },
  { name: 'comment breakout', source: `<!--<img src="--><img src=x onerror=alert(1)//">` },

  // DOM clobbering.
  { name: 'clobber window.__xss by id', source: `<a id="__xss" href="#x">x</a>` },
  { name: 'clobber window.__xss by name', source: `<img name="__xss"><form name="__xss"></form>` },
  { name: 'clobber __proto__', source: `<img name="__proto__"><a id="__proto__">x</a><div id="__hearthMock">x</div>` },

  // Markdown-level.
  {
    name: 'html inside a fenced block stays text',
    source: '```html\n<script>window.__xss=1</script>\n<img src=x onerror=alert(1)>\n```',
    code: '<script>window.__xss=1</script>\n<img src=x onerror=alert(1)>',
  },
  { name: 'fence without a language', source: '```\n<svg onload=alert(1)>\n```', code: '<svg onload=alert(1)>' },
  { name: 'fence never closed', source: 'Here:\n\n```js\n<img src=x onerror=alert(1)>\nalert(1)', code: '<img src=x onerror=alert(1)>' },
  { name: 'inline code', source: 'Use `<img src=x onerror=alert(1)>` carefully' },
  { name: 'payloads in a table', source: `| a | b |\n|---|---|\n| <img src=x onerror="${img}"> | [click me](javascript:alert(1)) |\n| <svg onload=alert(1)> | <a href="javascript:alert(1)">click me</a> |` },
  { name: 'payloads in a think block', source: `<think>Plan: <img src=x onerror="${img}"> [click me](javascript:alert(1)) <script>alert(1)</script></think>Answer <svg onload=alert(1)>` },
  { name: 'think never closed', source: `<think><img src=x onerror="${img}"> <iframe srcdoc="<script>parent.__xss=1</script>">` },
  { name: 'think in the middle', source: `Answer first. <think><img src=x onerror="${img}"></think>` },
  { name: 'placeholder lookalikes', source: `hearth0s0e hearthffffffffffffs0e <div>hearth00s1e</div>` },

  // Math.
  { name: 'katex \\href', source: raw`Math: $\href{javascript:alert(1)}{click me}$` },
  { name: 'katex \\url', source: raw`$$\url{javascript:alert(1)}$$` },
  { name: 'katex \\htmlData / \\htmlId', source: raw`$\htmlData{onclick=alert(1)}{x}$ $\htmlId{__xss}{x}$` },
  { name: 'katex \\htmlStyle', source: raw`$\htmlStyle{position:fixed;inset:0;background:url(${LEAK})}{x}$` },
  { name: 'katex \\includegraphics', source: raw`$\includegraphics{${LEAK}}$` },
  { name: 'katex \\style (MathJax)', source: raw`\(\style{background:url(${LEAK})}{x}\)` },
  { name: 'katex \\color with css', source: raw`$\color{red;background:url(${LEAK})}{x}$ $\textcolor{url(${LEAK})}{y}$` },
  { name: 'html inside math', source: raw`$<img src=x onerror="${img}">$ and \[<script>alert(1)</script>\]` },
  { name: 'math macro bomb', source: raw`$\def\a{\a\a}\a$ $$\def\b#1{\b{#1#1}}\b{x}$$` },
  { name: 'huge sizes', source: raw`$\rule{99999em}{99999em}$ $\Huge\kern99999em x$` },
  { name: 'math inside a code span stays text', source: raw`\`$\href{javascript:alert(1)}{x}$\`` },
];

/**
 * What must never be in rendered reply HTML: a list of problems, empty when clean. Self-contained
 * (Playwright serializes it into the page), so it checks the same way in jsdom and in Chromium.
 */
export function violations(root) {
  const NEVER = new Set([
    'script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'form', 'base', 'meta', 'style', 'link',
    'template', 'input', 'textarea', 'select', 'option', 'dialog', 'video', 'audio', 'source', 'track', 'noscript',
    'foreignobject', 'use', 'image', 'animate', 'set', 'animatemotion', 'animatetransform', 'annotation-xml',
  ]);
  const URL_ATTRS = new Set([
    'action', 'formaction', 'xlink:href', 'data', 'poster', 'background', 'ping', 'srcset', 'cite', 'longdesc',
    'codebase', 'dynsrc', 'lowsrc', 'manifest', 'icon',
  ]);
  /** Shown as text, never followed: a KaTeX error's title quotes the TeX, payload and all. */
  const TEXT_ATTRS = new Set(['title', 'alt', 'aria-label', 'class']);
  const found = [];
  const ours = (el, selector) => el.closest(selector) !== null;
  for (const el of root.querySelectorAll('*')) {
    const tag = el.localName.toLowerCase();
    const where = `<${tag}>`;
    if (NEVER.has(tag)) found.push(`${where} element`);
    if (tag === 'button' && !(el.dataset.testid === 'copy-code' && el.parentElement?.classList.contains('code-header'))) {
      found.push('a button that is not a code block copy button');
    }
    if ((tag === 'svg' || tag === 'math') && !ours(el, '.katex, .code-copy')) found.push(`${where} outside KaTeX`);
    for (const { name, value } of el.attributes) {
      const attr = name.toLowerCase();
      if (attr.startsWith('on')) found.push(`${where} ${attr}`);
      if (attr === 'style' && !ours(el, '.katex, .katex-error')) found.push(`${where} style outside KaTeX`);
      if (attr === 'id' || attr === 'name') found.push(`${where} ${attr}="${value}"`);
      if (URL_ATTRS.has(attr)) found.push(`${where} ${attr}="${value}"`);
      if (attr === 'href' && !(tag === 'a' && /^(?:https?:|mailto:|#)/i.test(value))) found.push(`${where} href="${value}"`);
      if (attr === 'src' && !(tag === 'img' && /^data:image\/(?:png|gif|jpe?g|webp);/i.test(value))) found.push(`${where} src="${value}"`);
      // A link the user may follow is fine (it opens outside the app); nothing may load by itself.
      const followed = tag === 'a' && attr === 'href';
      if (!TEXT_ATTRS.has(attr) && /javascript:|vbscript:/i.test(value)) found.push(`${where} ${attr}="${value}"`);
      if (!TEXT_ATTRS.has(attr) && !followed && value.includes('127.0.0.1:9')) found.push(`${where} ${attr}="${value}"`);
    }
  }
  return found;
}
