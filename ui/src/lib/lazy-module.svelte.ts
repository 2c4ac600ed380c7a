/**
 * A library fetched the first time something needs it, not at start: KaTeX and highlight.js
 * are most of the page's script, and a window with no formula or code on show (the welcome
 * screen, a plain chat) has no use for them. Measured by `make bench-app`, loading them at start
 * held ~5 MB of the web process at rest.
 *
 * `get()` is the library once it is here; before that it starts the fetch and returns null, and
 * the caller shows a plain stand-in (code unhighlighted, a formula as its TeX). Reading `get()`
 * inside a `$derived` makes the view render again when the library arrives.
 */
export class LazyModule<T> {
  #value = $state.raw<T | null>(null);
  #loading: Promise<T> | null = null;
  readonly #fetch: () => Promise<T>;

  constructor(fetch: () => Promise<T>) {
    this.#fetch = fetch;
  }

  /** The library, or null while it is being fetched (the fetch started by this call if need be;
   *  one that fails leaves the stand-ins, and the next need tries again). */
  get(): T | null {
    if (this.#value === null) this.load().catch(() => undefined);
    return this.#value;
  }

  /** The library, fetched if need be. A failed fetch is tried again at the next need. */
  load(): Promise<T> {
    this.#loading ??= this.#fetch().then(
      (value) => (this.#value = value),
      (error: unknown) => {
        this.#loading = null;
        throw error;
      },
    );
    return this.#loading;
  }
}
