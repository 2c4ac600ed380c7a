// Tauri's IPC as @tauri-apps/api/core uses it (`window.__TAURI_INTERNALS__`), in front of the mock's commands:
//   - `invoke(cmd, args)`: args are JSON round-tripped like the real IPC, so a `Channel` arrives as the string
//     "__CHANNEL__:<callbackId>" (Channel.toJSON); every call's arguments are checked against contract.json;
//   - `transformCallback(cb, once)` / `unregisterCallback(id)`: the callback registry;
//   - channel messages are delivered by calling the channel's callback with `{ index, message }`, and the end
//     of the channel with `{ index, end: true }` (what Rust's Channel drop sends).
// The commands are typed by the generated bindings (`Commands`, src/ipc/bindings.ts): each handler takes the
// arguments the window's function takes, in its order (a channel as a Sink of its messages), and answers its
// result; so a command whose arguments or result change in Rust fails the type check of the mock.
import type { CacheBudgets, Commands, LoadParams, SamplingParams, SettingsScope } from '../../../src/ipc/bindings';
import { COMMAND_ARGS, ERROR_KINDS, type ArgSpec } from './contract';
import { recordedRefusal } from './refusals';
import { state } from './state';
import { clone, delay, isU32 } from './util';

/** What the mock sends to one of the window's channels. */
export interface Sink<T> {
  send(message: T): void;
  end(): void;
}

/** A handler's argument for the window's: a channel's callback becomes a Sink of its messages. */
type HandlerArg<A> = A extends (message: infer M) => void ? Sink<M> : A;
type HandlerArgs<P extends unknown[]> = { [I in keyof P]: HandlerArg<P[I]> };
/** What command K resolves to. */
export type Answer<K extends keyof Commands> = Awaited<ReturnType<Commands[K]>>;
/** The mock's command K: bindings.ts' `commands[K]`, its channels as sinks, answering now or later. */
export type Handler<K extends keyof Commands> = (...args: HandlerArgs<Parameters<Commands[K]>>) => Answer<K> | Promise<Answer<K>>;
/** Every command of the backend, by the window's name for it (`listChats` for `list_chats`). */
export type Handlers = { [K in keyof Commands]: Handler<K> };
/** Tauri's own commands the window calls (the event plugin), by their IPC name. */
export type TauriCommands = Record<string, (payload: Record<string, unknown>) => unknown>;

/**
 * Tauri's own argument check (serde): an argument of the wrong shape never reaches the command, and the window
 * gets a plain string. Each problem is a contract violation.
 */
export function argsRefused(cmd: string, arg: string, problems: string[]): never {
  state.contractErrors.push(...problems.map((p) => `${cmd}: ${p}`));
  throw `invalid args \`${arg}\` for command \`${cmd}\`: ${problems[0]}`;
}

/**
 * Serde's check of a struct of u32 fields with defaults (`#[serde(default)]`, so every field is optional in JSON but
 * the window sends all): an object, no unknown field, each a u32. What its `validate` refuses is in refusals.json.
 */
export function checkU32Fields<T extends object>(cmd: string, arg: string, value: T, defaults: Readonly<T>): T {
  const problems: string[] = [];
  if (!value || typeof value !== 'object') problems.push(`${arg} is not an object`);
  else {
    for (const key of Object.keys(value)) if (!(key in defaults)) problems.push(`unknown field ${key}`);
    for (const key of Object.keys(defaults) as (keyof T)[]) if (!isU32(value[key])) problems.push(`${String(key)} is not a u32: ${value[key]}`);
  }
  if (problems.length > 0) argsRefused(cmd, arg, problems);
  return clone(value);
}

/** An IpcError the mock answers with must be of a kind the backend has. */
export function checkErrorKind(where: string, error: unknown) {
  if (error && typeof error === 'object' && !ERROR_KINDS.includes((error as { kind: never }).kind)) {
    state.contractErrors.push(`${where}: error kind ${JSON.stringify((error as { kind: unknown }).kind)} is not one of the backend's`);
  }
}

// --- Callbacks and channels. ---
export const callbacks = new Map<number, (data: unknown) => void>();
let nextCallback = 1;

function transformCallback(callback?: (data: unknown) => void, once = false) {
  const id = nextCallback++;
  callbacks.set(id, (data) => {
    if (once) callbacks.delete(id);
    if (callback) callback(data);
  });
  return id;
}

function unregisterCallback(id: number) {
  callbacks.delete(id);
}

export function runCallback(id: number, data: unknown) {
  const cb = callbacks.get(id);
  if (cb) cb(data);
}

const CHANNEL = /^__CHANNEL__:(\d+)$/;

/** The channel a serialized `Channel` argument stands for. */
function sink(arg: unknown): Sink<unknown> {
  const m = CHANNEL.exec(String(arg));
  if (!m) {
    state.contractErrors.push(`argument is not a serialized Channel: ${JSON.stringify(arg)}`);
    throw { kind: 'invalidInput', message: 'expected a Channel' };
  }
  const id = Number(m[1]);
  let index = 0;
  return {
    send(message) {
      runCallback(id, { index: index++, message: clone(message) });
    },
    end() {
      runCallback(id, { index, end: true });
    },
  };
}

// --- The commands' arguments, as contract.json has them: each { name, type } or { name, channel }. ---

/**
 * Whether `value` is of the TypeScript type `type` as bindings.ts writes it: primitives, `Array<T>`,
 * `T | null`; a named type (SamplingParams, ExportFormat …) only needs to be there: the commands
 * check their shape themselves, as serde would.
 */
function fits(value: unknown, type: string): boolean {
  const alternatives = type.split(' | ');
  if (alternatives.length > 1) return alternatives.some((t) => fits(value, t));
  if (type === 'null') return value === null;
  if (['number', 'string', 'boolean'].includes(type)) return typeof value === type;
  const item = /^Array<(.+)>$/.exec(type);
  if (item) return Array.isArray(value) && value.every((v) => fits(v, item[1]));
  return value !== undefined && value !== null;
}

/** Tauri's argument check against the contract: a wrong or missing argument never reaches the command. */
function checkArgs(cmd: string, payload: Record<string, unknown>) {
  const args = COMMAND_ARGS.get(cmd);
  if (!args) {
    state.contractErrors.push(`unknown command ${cmd}`);
    throw `command ${cmd} not found`;
  }
  for (const name of Object.keys(payload)) {
    if (!args.some((a) => a.name === name)) state.contractErrors.push(`${cmd}: unexpected argument ${name}`);
  }
  for (const arg of args) {
    const value = payload[arg.name];
    const ok = arg.channel ? CHANNEL.test(String(value)) : fits(value, arg.type ?? '');
    if (!ok) {
      const expected = arg.channel ? `a Channel<${arg.channel}>` : arg.type;
      state.contractErrors.push(`${cmd}: argument ${arg.name} should be ${expected}, got ${JSON.stringify(value)}`);
      throw `invalid args \`${arg.name}\` for command \`${cmd}\`: expected ${expected}`;
    }
  }
  return args;
}

/** What the window asked to save, refused or not, for the tests to read (`samplingSaves`, `loadSaves`, `budgetSaves`). */
function noteAsked(cmd: string, payload: Record<string, unknown>) {
  if (cmd === 'set_sampling') {
    state.samplingSaves.push(clone(payload.params as SamplingParams));
    state.samplingScopes.push(clone((payload.scope as SettingsScope | null) ?? { kind: 'global' }));
  }
  if (cmd === 'set_load_settings') state.loadSaves.push(clone(payload.params as LoadParams));
  if (cmd === 'set_chat_cache_budgets') state.budgetSaves.push(clone(payload.budgets as CacheBudgets));
}

/** The window's name for a command: `list_chats` → `listChats`. */
const camel = (cmd: string) => cmd.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Defines `window.__TAURI_INTERNALS__` over `handlers` (the backend's commands) and `tauri` (Tauri's own). A call
 * is logged in `calls`, its arguments checked, then it fails as `failNext` says, or as the backend refused it
 * (refusals.json), or goes to its handler with its arguments in the contract's order.
 */
export function installIpc(handlers: Handlers, tauri: TauriCommands) {
  const byName = handlers as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const cmd of COMMAND_ARGS.keys()) {
    if (!Object.hasOwn(handlers, camel(cmd))) state.contractErrors.push(`the mock does not answer ${cmd}`);
  }

  async function handle(cmd: string, payload: Record<string, unknown>, args: ArgSpec[]) {
    const handler = Object.hasOwn(byName, camel(cmd)) ? byName[camel(cmd)] : undefined;
    if (!handler) {
      state.contractErrors.push(`the mock does not answer ${cmd}`);
      throw { kind: 'invalidInput', message: `The mock does not answer ${cmd}` };
    }
    return handler(...args.map((a) => (a.channel ? sink(payload[a.name]) : payload[a.name])));
  }

  async function invoke(cmd: string, args: Record<string, unknown> = {}) {
    const payload = JSON.parse(JSON.stringify(args ?? {})) as Record<string, unknown>;
    state.calls.push({ cmd, payload });
    await delay(2);
    const spec = Object.hasOwn(tauri, cmd) ? null : checkArgs(cmd, payload);
    try {
      const failure = state.failNext[cmd];
      if (failure) {
        delete state.failNext[cmd];
        throw clone(failure);
      }
      if (spec) noteAsked(cmd, payload);
      const refused = spec && recordedRefusal(cmd, payload);
      if (refused) throw clone(refused);
      return await (spec ? handle(cmd, payload, spec) : tauri[cmd](payload));
    } catch (error) {
      checkErrorKind(cmd, error);
      throw error;
    }
  }

  (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {
    invoke,
    transformCallback,
    unregisterCallback,
    runCallback,
    callbacks,
    metadata: { currentWindow: { label: 'main' }, currentWebview: { windowLabel: 'main', label: 'main' } },
  };
}
