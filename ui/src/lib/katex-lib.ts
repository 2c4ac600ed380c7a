// KaTeX and its stylesheet, one chunk fetched at the first formula (see lazy-module.svelte.ts).
import 'katex/dist/katex.min.css';

export { default } from 'katex';
