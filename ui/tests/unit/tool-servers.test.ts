import { describe, expect, it } from 'vitest';
import type { McpServerConfig, McpServerState } from '../../src/ipc/bindings';
import {
  commandLine,
  configOfForm,
  formOfServer,
  isRunning,
  lines,
  linesOfMap,
  mapOfLines,
  newToolServerForm,
  stateBadge,
  transportText,
  withServer,
  withTool,
} from '../../src/lib/tool-servers';

const files: McpServerConfig = {
  name: 'files',
  transport: { kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/My Documents'], env: { LOG: 'debug', TOKEN: 'a=b' }, cwd: '/tmp' },
  enabled: false,
  disabledTools: ['write_file'],
};
const tracker: McpServerConfig = {
  name: 'tracker',
  transport: { kind: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x:y' } },
  enabled: true,
  disabledTools: [],
};

describe('the form’s lines', () => {
  it('reads lines of any system, blank ones dropped', () => {
    expect(lines('a\r\nb\rc\n\n  \nd')).toEqual(['a', 'b', 'c', 'd']);
    expect(lines('')).toEqual([]);
  });

  it('reads KEY=value at the first "=", trimmed; a value may hold "="', () => {
    expect(mapOfLines(' A = 1 \n\nB=x=y\nC=', '=', 'environment')).toEqual({ map: { A: '1', B: 'x=y', C: '' } });
    expect(mapOfLines('', '=', 'environment')).toEqual({ map: {} });
  });

  it('reads Name: value at the first ":"; a value may hold ":"', () => {
    expect(mapOfLines('Authorization: Bearer a:b\r\nX-Team:core', ':', 'header')).toEqual({ map: { Authorization: 'Bearer a:b', 'X-Team': 'core' } });
  });

  it('names the line it cannot read, without repeating it (it may hold a secret)', () => {
    expect(mapOfLines('A=1\n\nGITHUB_TOKEN ghp_secret', '=', 'environment')).toEqual({ problem: 'environment line 3 is not KEY=value' });
    expect(mapOfLines('=value', '=', 'environment')).toEqual({ problem: 'environment line 1 is not KEY=value' });
    expect(mapOfLines('Authorization Bearer x', ':', 'header')).toEqual({ problem: 'header line 1 is not Name: value' });
    expect(mapOfLines('A=1\nA=2', '=', 'environment')).toEqual({ problem: 'environment "A" is given twice' });
  });

  it('writes a map as lines and reads them back as they were', () => {
    const env = { LOG: 'debug', TOKEN: 'a=b' };
    expect(linesOfMap(env, '=')).toBe('LOG=debug\nTOKEN=a=b');
    expect(mapOfLines(linesOfMap(env, '='), '=', 'environment')).toEqual({ map: env });
    const headers = { Authorization: 'Bearer x:y', 'X-Team': 'core' };
    expect(linesOfMap(headers, ': ')).toBe('Authorization: Bearer x:y\nX-Team: core');
    expect(mapOfLines(linesOfMap(headers, ': '), ':', 'header')).toEqual({ map: headers });
  });
});

describe('the form and the config', () => {
  it('a saved server makes the form, and the form makes it again', () => {
    const form = formOfServer(files);
    expect(form).toEqual({
      ...newToolServerForm(),
      name: 'files',
      kind: 'stdio',
      command: 'npx',
      args: '-y\n@modelcontextprotocol/server-filesystem\n/home/me/My Documents',
      env: 'LOG=debug\nTOKEN=a=b',
      cwd: '/tmp',
    });
    expect(configOfForm(form, files)).toEqual({ config: files });
    expect(configOfForm(formOfServer(tracker), tracker)).toEqual({ config: tracker });
  });

  it('a new server is on, with every tool; blanks trimmed, an empty folder is none', () => {
    const form = { ...newToolServerForm(), name: ' git ', command: ' uvx ', args: 'mcp-server-git\n\n  --repository \n', cwd: '  ' };
    expect(configOfForm(form, null)).toEqual({
      config: {
        name: 'git',
        transport: { kind: 'stdio', command: 'uvx', args: ['mcp-server-git', '--repository'], env: {}, cwd: null },
        enabled: true,
        disabledTools: [],
      },
    });
  });

  it('an edited server keeps its switch and its tools’; the kind on show is the one saved', () => {
    const form = { ...formOfServer(files), kind: 'http' as const, url: 'http://127.0.0.1:3000/mcp', headers: 'X-Key: 1' };
    expect(configOfForm(form, files)).toEqual({
      config: { ...files, transport: { kind: 'http', url: 'http://127.0.0.1:3000/mcp', headers: { 'X-Key': '1' } } },
    });
  });

  it('a line it cannot read is a problem, nothing saved', () => {
    expect(configOfForm({ ...newToolServerForm(), name: 'a', command: 'x', env: 'NOPE' }, null)).toEqual({ problem: 'environment line 1 is not KEY=value' });
    expect(configOfForm({ ...newToolServerForm(), name: 'a', kind: 'http', url: 'http://h', headers: 'NOPE' }, null)).toEqual({
      problem: 'header line 1 is not Name: value',
    });
  });
});

describe('what a row shows', () => {
  it('the command line, arguments with spaces quoted; or the URL', () => {
    expect(commandLine('npx', ['-y', 'pkg', '/home/me/My Documents', ''])).toBe('npx -y pkg "/home/me/My Documents" ""');
    expect(transportText(files.transport)).toBe('npx -y @modelcontextprotocol/server-filesystem "/home/me/My Documents"');
    expect(transportText(tracker.transport)).toBe('https://mcp.example.com/mcp');
  });

  it('each state’s badge', () => {
    const tool = { name: 't', title: null, description: '', inputSchema: {}, readOnly: false };
    const cases: [McpServerState, string, string][] = [
      [{ state: 'off' }, 'Off', 'off'],
      [{ state: 'idle' }, 'Starts when needed', 'idle'],
      [{ state: 'starting' }, 'Starting…', 'busy'],
      [{ state: 'ready', tools: [tool] }, 'Ready · 1 tool', 'ok'],
      [{ state: 'ready', tools: [tool, { ...tool, name: 'u' }] }, 'Ready · 2 tools', 'ok'],
      [{ state: 'ready', tools: [] }, 'Ready · 0 tools', 'ok'],
      [{ state: 'signIn' }, 'Sign-in needed', 'ask'],
      [{ state: 'failed', message: 'it stopped', stderr: [] }, 'Failed', 'failed'],
    ];
    for (const [state, text, tone] of cases) expect(stateBadge(state)).toEqual({ text, tone });
    expect(cases.filter(([s]) => isRunning(s)).map(([s]) => s.state)).toEqual(['starting', 'ready', 'ready', 'ready']);
  });
});

describe('changes to the list', () => {
  it('changes one server, the others as they are', () => {
    const list = [files, tracker];
    expect(withServer(list, 'tracker', (c) => ({ ...c, enabled: false }))).toEqual([files, { ...tracker, enabled: false }]);
    expect(list[1].enabled).toBe(true);
  });

  it('switches a tool off once, and on again', () => {
    expect(withTool(tracker, 'search', false).disabledTools).toEqual(['search']);
    expect(withTool(files, 'write_file', false).disabledTools).toEqual(['write_file']);
    expect(withTool(files, 'write_file', true).disabledTools).toEqual([]);
    expect(withTool(files, 'read_file', true)).toEqual(files);
  });
});
