import type { AttachmentLimits } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { ATTACHMENT_LIMIT_DEFAULTS } from '../ipc/contract';
import { EmbeddingModelStore } from './embedding-model.svelte';
import { errorFields, errorMessage } from './format';

export type LimitKey = keyof AttachmentLimits;

function isLimitKey(key: string): key is LimitKey {
  return key in ATTACHMENT_LIMIT_DEFAULTS;
}

/** The limits on attached files (Settings → Attachments): read when the panel opens, saved one edit at a time. */
export class AttachmentLimitsStore {
  /** The limits on screen: those in force, or the last set while the backend refuses them; null until read. */
  limits = $state<AttachmentLimits | null>(null);
  /** Why the last read or change failed. */
  error = $state<string | null>(null);
  /** The limits `error` is about (the backend's `IpcError.field`), to mark their boxes. */
  errorKeys = $state<LimitKey[]>([]);

  /** The embedding model that ranks retrieved passages by meaning too (the same group of Settings). */
  readonly embedding: EmbeddingModelStore;

  readonly #api: HearthApi;
  /** What is in force, for a box to go back to after a failure that is not about it. */
  #saved: AttachmentLimits | null = null;
  /** Answers to an earlier request than the last are dropped. */
  #token = 0;

  constructor(api: HearthApi) {
    this.#api = api;
    this.embedding = new EmbeddingModelStore(api);
  }

  async load(): Promise<void> {
    await Promise.all([this.#ask(() => this.#api.getAttachmentLimits()), this.embedding.load()]);
  }

  /** Save the limits; the next file attached is read within them. */
  set(limits: AttachmentLimits): Promise<void> {
    this.limits = { ...limits };
    return this.#ask(() => this.#api.setAttachmentLimits(limits));
  }

  async #ask(request: () => Promise<AttachmentLimits>): Promise<void> {
    const token = ++this.#token;
    try {
      const limits = await request();
      if (token !== this.#token) return;
      this.#saved = limits;
      this.limits = { ...limits };
      this.error = null;
      this.errorKeys = [];
    } catch (e) {
      if (token !== this.#token) return;
      this.error = errorMessage(e);
      this.errorKeys = errorFields(e).filter(isLimitKey);
      // A refused limit stays in its box, marked; after any other failure the boxes show what is in force.
      if (this.errorKeys.length === 0 && this.#saved) this.limits = { ...this.#saved };
    }
  }
}
