// A server's question to the user (MCP elicitation) as its form: the values it starts with (the server's
// defaults), why a value does not fit its field, and what is sent. The fields and their kinds come from Rust
// (hearth_mcp::questions); the backend sends back only what fits, with the defaults of fields left out.
import type { Answer, QuestionField, QuestionLink } from '../ipc/bindings';

/** A field's value on the form: text for text, numbers and choices; yes or no; the choices ticked. */
export type FormValue = string | boolean | string[];

/** What each field starts with: its default, else empty (unticked, nothing chosen). */
export function initialValues(fields: readonly QuestionField[]): Record<string, FormValue> {
  return Object.fromEntries(
    fields.map((field) => {
      const d = field.default;
      const kind = field.kind.kind;
      const value: FormValue =
        kind === 'boolean' ? d === true : kind === 'choices' ? (Array.isArray(d) ? [...d] : []) : d === null || d === undefined || Array.isArray(d) ? '' : String(d);
      return [field.name, value];
    }),
  );
}

const FORMATS: Record<string, { test: RegExp; words: string }> = {
  email: { test: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, words: 'an email address' },
  uri: { test: /^[a-z][a-z0-9+.-]*:\S+$/i, words: 'a web address (https://…)' },
  date: { test: /^\d{4}-\d{2}-\d{2}$/, words: 'a date (YYYY-MM-DD)' },
  'date-time': { test: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/, words: 'a date and time' },
};

/** Why `value` does not fit `field` (null: it does). An empty optional field fits: it takes the server's default. */
export function fieldProblem(field: QuestionField, value: FormValue): string | null {
  const kind = field.kind;
  const empty = value === '' || (Array.isArray(value) && value.length === 0);
  if (empty) return field.required && kind.kind !== 'boolean' ? 'Required' : null;
  switch (kind.kind) {
    case 'text': {
      const text = String(value);
      if (kind.minLength !== null && [...text].length < kind.minLength) return `At least ${kind.minLength} characters`;
      if (kind.maxLength !== null && [...text].length > kind.maxLength) return `At most ${kind.maxLength} characters`;
      const format = kind.format ? FORMATS[kind.format] : undefined;
      return format && !format.test.test(text.trim()) ? `Enter ${format.words}` : null;
    }
    case 'number': {
      const n = Number(String(value).trim());
      if (String(value).trim() === '' || !Number.isFinite(n)) return 'Enter a number';
      if (kind.integer && !Number.isInteger(n)) return 'Enter a whole number';
      if (kind.minimum !== null && n < kind.minimum) return `At least ${kind.minimum}`;
      if (kind.maximum !== null && n > kind.maximum) return `At most ${kind.maximum}`;
      return null;
    }
    case 'choices': {
      const count = (value as string[]).length;
      if (kind.minItems !== null && count < kind.minItems) return `Choose at least ${kind.minItems}`;
      if (kind.maxItems !== null && count > kind.maxItems) return `Choose at most ${kind.maxItems}`;
      return null;
    }
    default:
      return null;
  }
}

/** The form sent: each field given, of its type (an empty one is left out: the backend gives it the server's default). */
export function acceptAnswer(fields: readonly QuestionField[], values: Record<string, FormValue>): Answer {
  const content: Record<string, string | number | boolean | string[]> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) continue;
    content[field.name] = field.kind.kind === 'number' ? Number(String(value).trim()) : typeof value === 'string' ? value.trim() : value;
  }
  return { action: 'accept', content };
}

/**
 * A question's link as it is shown: the address whole, its host apart from what comes before and after it (the
 * backend checked it: a web address with its host right after the scheme, no user name before it).
 */
export function linkParts(link: QuestionLink): { before: string; host: string; after: string } {
  const start = link.url.indexOf('://') + 3;
  if (start < 3 || !link.url.startsWith(link.host, start)) return { before: link.url, host: '', after: '' };
  return { before: link.url.slice(0, start), host: link.host, after: link.url.slice(start + link.host.length) };
}
