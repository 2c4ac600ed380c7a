// The backend's refusals of the inputs the browser tests send, recorded from the real commands: the mock
// answers them from refusals.json instead of checking the input again itself. tests/app.rs calls each case's
// command in the real app with its arguments and fails when the backend answers otherwise
// (`UPDATE_REFUSALS=1 cargo test -p hearth --test app` writes its answers into the file). An input a test
// sends that the file does not hold is accepted: add it there (with the error left empty) and record it.
import type { IpcError } from '../../../src/ipc/bindings';
import CASES from './refusals.json';

/** One recorded case: a command, its arguments as the window sent them (channels as "__CHANNEL__:0"), the backend's error. */
type Refusal = { cmd: string; args: Record<string, unknown>; error: IpcError };

const CHANNEL = /^__CHANNEL__:\d+$/;

/** The arguments as one string: keys sorted, channels all alike. */
function canonical(value: unknown): string {
  if (typeof value === 'string' && CHANNEL.test(value)) return '"__CHANNEL__"';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const byCall = new Map((CASES as Refusal[]).map((c) => [`${c.cmd} ${canonical(c.args)}`, c.error]));

/** The backend's refusal of `cmd` called with `payload`, where one was recorded. */
export function recordedRefusal(cmd: string, payload: Record<string, unknown>): IpcError | undefined {
  return byCall.get(`${cmd} ${canonical(payload)}`);
}
