import type { Answer, PendingQuestion } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';

/**
 * The MCP servers' questions waiting for the user (elicitation), oldest first, as the backend lists them
 * (`watchToolQuestions`, for the window's life): the first is shown; answering sends it back.
 */
export class ToolQuestionsStore {
  pending = $state<PendingQuestion[]>([]);
  /** An answer is on its way. */
  sending = $state(false);
  /** Why the last answer was not taken (the question withdrawn, the backend gone). */
  error = $state<string | null>(null);

  readonly #api: Pick<HearthApi, 'watchToolQuestions' | 'answerToolQuestion'>;

  constructor(api: Pick<HearthApi, 'watchToolQuestions' | 'answerToolQuestion'>) {
    this.#api = api;
  }

  /** Follow the list from now on (once, at start). */
  async watch(): Promise<void> {
    try {
      await this.#api.watchToolQuestions((pending) => {
        this.pending = pending;
        if (!pending.some((q) => q.id === this.#answering)) this.error = null;
      });
    } catch (e) {
      this.error = errorMessage(e);
    }
  }

  #answering: number | null = null;

  /** Send question `id` its answer; true once taken (the list then drops it). */
  async answer(id: number, answer: Answer): Promise<boolean> {
    this.sending = true;
    this.#answering = id;
    try {
      await this.#api.answerToolQuestion(id, answer);
      this.error = null;
      this.pending = this.pending.filter((q) => q.id !== id);
      return true;
    } catch (e) {
      this.error = errorMessage(e);
      return false;
    } finally {
      this.sending = false;
      this.#answering = null;
    }
  }
}
