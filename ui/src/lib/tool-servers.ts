import type { McpServerConfig, McpServerState, McpTransport } from '../ipc/bindings';

/**
 * Settings → Tools' add and edit form, as typed: one text per field, lists one item a line. The
 * backend checks what a server needs to start (a command, a URL with a host, names of variables
 * and headers); the form only turns its lines into the lists and maps the config carries.
 */
export type ToolServerForm = {
  name: string;
  kind: McpTransport['kind'];
  command: string;
  /** One argument a line. */
  args: string;
  /** `KEY=value`, one a line. */
  env: string;
  /** The working folder; empty: Hearth's own. */
  cwd: string;
  url: string;
  /** `Name: value`, one a line. */
  headers: string;
};

export function newToolServerForm(): ToolServerForm {
  return { name: '', kind: 'stdio', command: '', args: '', env: '', cwd: '', url: '', headers: '' };
}

/** The form showing a saved server (its environment and headers included: the edit form masks them). */
export function formOfServer(config: McpServerConfig): ToolServerForm {
  const form = { ...newToolServerForm(), name: config.name, kind: config.transport.kind };
  const t = config.transport;
  if (t.kind === 'stdio') {
    return { ...form, command: t.command, args: t.args.join('\n'), env: linesOfMap(t.env, '='), cwd: t.cwd ?? '' };
  }
  return { ...form, url: t.url, headers: linesOfMap(t.headers, ': ') };
}

/** The lines of a text box: line breaks of any system, blank lines dropped. */
export function lines(text: string): string[] {
  return text.split(/\r\n|\r|\n/).filter((line) => line.trim() !== '');
}

/** What a map's lines are: `KEY=value` (`sep` "=") or `Name: value` (`sep` ": "), in the map's order. */
export function linesOfMap(map: Record<string, string>, sep: '=' | ': '): string {
  return Object.entries(map)
    .map(([key, value]) => `${key}${sep}${value}`)
    .join('\n');
}

/**
 * Reads `KEY=value` (`sep` "=") or `Name: value` (`sep` ":") lines into a map: split at the first
 * `sep`, the name and the value trimmed. A line without `sep`, or with nothing before it, or a name
 * given twice, is a problem, in words (`what`: "environment" or "header"), naming its line.
 */
export function mapOfLines(text: string, sep: '=' | ':', what: 'environment' | 'header'): { map: Record<string, string> } | { problem: string } {
  const map: Record<string, string> = {};
  const example = sep === '=' ? 'KEY=value' : 'Name: value';
  const all = text.split(/\r\n|\r|\n/);
  for (const [i, line] of all.entries()) {
    if (line.trim() === '') continue;
    const at = line.indexOf(sep);
    const key = at < 0 ? '' : line.slice(0, at).trim();
    if (at < 0 || key === '') {
      // The line itself is not repeated: it may hold a secret.
      return { problem: `${what} line ${i + 1} is not ${example}` };
    }
    if (Object.hasOwn(map, key)) return { problem: `${what} ${JSON.stringify(key)} is given twice` };
    map[key] = line.slice(at + 1).trim();
  }
  return { map };
}

/**
 * The config the form describes; `previous` (the server edited) keeps its switch and its tools'.
 * A problem in words when a line cannot be read.
 */
export function configOfForm(form: ToolServerForm, previous: McpServerConfig | null): { config: McpServerConfig } | { problem: string } {
  let transport: McpTransport;
  if (form.kind === 'stdio') {
    const env = mapOfLines(form.env, '=', 'environment');
    if ('problem' in env) return env;
    const cwd = form.cwd.trim();
    transport = { kind: 'stdio', command: form.command.trim(), args: lines(form.args).map((a) => a.trim()), env: env.map, cwd: cwd === '' ? null : cwd };
  } else {
    const headers = mapOfLines(form.headers, ':', 'header');
    if ('problem' in headers) return headers;
    transport = { kind: 'http', url: form.url.trim(), headers: headers.map };
  }
  return {
    config: {
      name: form.name.trim(),
      transport,
      enabled: previous?.enabled ?? true,
      disabledTools: [...(previous?.disabledTools ?? [])],
    },
  };
}

/** A command line as a person reads it: an argument with spaces (or nothing) in quotes. */
export function commandLine(command: string, args: string[]): string {
  const quote = (a: string) => (a === '' || /[\s"'\\]/.test(a) ? JSON.stringify(a) : a);
  return [command, ...args].map(quote).join(' ');
}

/** What the server runs (its command line) or where it is reached (its URL). */
export function transportText(transport: McpTransport): string {
  return transport.kind === 'stdio' ? commandLine(transport.command, transport.args) : transport.url;
}

/** The state's badge: its words, and a tone for its colour. */
export function stateBadge(state: McpServerState): { text: string; tone: 'off' | 'idle' | 'busy' | 'ok' | 'ask' | 'failed' } {
  switch (state.state) {
    case 'off':
      return { text: 'Off', tone: 'off' };
    case 'idle':
      return { text: 'Starts when needed', tone: 'idle' };
    case 'starting':
      return { text: 'Starting…', tone: 'busy' };
    case 'ready':
      return { text: `Ready · ${state.tools.length} ${state.tools.length === 1 ? 'tool' : 'tools'}`, tone: 'ok' };
    case 'signIn':
      return { text: 'Sign-in needed', tone: 'ask' };
    case 'failed':
      return { text: 'Failed', tone: 'failed' };
  }
}

/** A server that runs (or is starting): it can be stopped. */
export function isRunning(state: McpServerState): boolean {
  return state.state === 'starting' || state.state === 'ready';
}

/** The list with `name`'s config changed by `change`; the others as they are. */
export function withServer(configs: McpServerConfig[], name: string, change: (config: McpServerConfig) => McpServerConfig): McpServerConfig[] {
  return configs.map((c) => (c.name === name ? change(c) : c));
}

/** The config with `tool` switched on or off. */
export function withTool(config: McpServerConfig, tool: string, on: boolean): McpServerConfig {
  const others = config.disabledTools.filter((t) => t !== tool);
  return { ...config, disabledTools: on ? others : [...others, tool] };
}
