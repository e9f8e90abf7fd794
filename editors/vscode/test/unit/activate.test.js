// Activation test with stand-ins for `vscode` and `vscode-languageclient/node`: checks
// what the extension registers, how it starts the server, and its code-lens and
// executeCommand middleware. Runs in node (`node --test`), no VS Code needed.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const Module = require('node:module');

const calls = { commands: {}, providers: {}, clients: [], opened: [], output: [], requests: [], decorated: [], handlers: {} };
const config = {
  'server.path': '/opt/weft/bin/weft',
  'server.extraEnv': { WEFT_DEVICE: 'cpu' },
  'runner.path': '/opt/weft/bin/weft-runner',
  'runner.device': 'gpu',
  'runner.timeoutSecs': 5,
  'hover.detail': 'full',
  'hover.sections': ['kernels', 'predictions'],
  'costs.profile': 'pocl-cpu',
  'costs.predictionSize': 65536,
  'diagnostics.allow': ['bank-conflict'],
  'diagnostics.perf': false,
};
const registered = new Set(['weft.server.runEntry']); // what the languageclient registered

class Uri {
  constructor(scheme, path, query) { Object.assign(this, { scheme, path, query: query || '' }); }
  static parse(s) { const m = /^([a-z-]+):(?:\/\/)?([^?]*)\??(.*)$/.exec(s); return new Uri(m[1], m[2], m[3]); }
  static from(o) { return new Uri(o.scheme, o.path, o.query); }
  static file(p) { return new Uri('file', p); }
  toString() { return `${this.scheme}://${this.path}`; }
}
const disposable = { dispose() {} };
const channel = (name) => ({ name, appendLine: (l) => calls.output.push(l), append: (l) => calls.output.push(l), show() {}, dispose() {} });
const vscode = {
  Uri,
  EventEmitter: class { constructor() { this.event = () => disposable; } fire() {} dispose() {} },
  Range: class { constructor(l0, c0, l1, c1) { Object.assign(this, { l0, c0, l1, c1 }); } },
  ViewColumn: { Beside: -2 },
  TextEditorRevealType: { InCenterIfOutsideViewport: 2 },
  MarkdownString: class { constructor(value) { this.value = value; this.isTrusted = false; } },
  Hover: class { constructor(contents, range) { Object.assign(this, { contents, range }); } },
  ProgressLocation: { Window: 10 },
  window: {
    createOutputChannel: channel,
    showErrorMessage: async () => undefined,
    showWarningMessage: async () => undefined,
    showInformationMessage: async () => undefined,
    showTextDocument: async (doc) => { calls.opened.push(doc); },
    withProgress: async (_o, f) => f(),
    activeTextEditor: undefined,
    visibleTextEditors: [],
    createTextEditorDecorationType: (o) => ({ colour: o.backgroundColor, border: o.border, dispose() {} }),
    onDidChangeVisibleTextEditors: (f) => { calls.handlers.visible = f; return disposable; },
    onDidChangeTextEditorSelection: (f) => { calls.handlers.selection = f; return disposable; },
  },
  commands: {
    registerCommand: (name, fn) => { calls.commands[name] = fn; return disposable; },
    getCommands: async () => [...Object.keys(calls.commands), ...registered],
    executeCommand: async (...a) => { calls.executed = [...(calls.executed || []), a]; return undefined; },
  },
  workspace: {
    getConfiguration: () => ({ get: (k) => config[k] }),
    registerTextDocumentContentProvider: (scheme, p) => { calls.providers[scheme] = p; return disposable; },
    onDidChangeConfiguration: () => disposable,
    onDidChangeTextDocument: (f) => { calls.handlers.changed = f; return disposable; },
    createFileSystemWatcher: (glob) => ({ glob, dispose() {} }),
    openTextDocument: async (uri) => ({ uri, languageId: 'plaintext', text: calls.providers['weft-kernel'].provideTextDocumentContent(uri) }),
    asRelativePath: (u) => String(u),
  },
  languages: {
    getLanguages: async () => ['c', 'weft'],
    setTextDocumentLanguage: async (doc, languageId) => ({ ...doc, languageId }),
  },
};
class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions, state: 2 });
    calls.clients.push(this);
  }
  async start() {}
  async stop() {}
  async dispose() {}
  async sendRequest(type, params) { calls.requests.push({ type, params }); return { uri: 'weft-kernel:///dot.cl', text: '__kernel void dot() {}' }; }
}
const languageclient = {
  LanguageClient,
  State: { Stopped: 1, Running: 2, Starting: 3 },
  ExecuteCommandRequest: { type: { method: 'workspace/executeCommand' } },
  RequestType: class { constructor(method) { this.method = method; } },
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'vscode' || request === 'vscode-languageclient/node') return request;
  return resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: vscode };
require.cache['vscode-languageclient/node'] = { id: 'lc', filename: 'lc', loaded: true, exports: languageclient };

const ext = require('../../out/extension.js');

test('activate registers the commands and the weft-kernel provider and starts `<path> lsp`', async () => {
  await ext.activate({ subscriptions: [] });
  for (const c of ['weft.restartServer', 'weft.runEntry', 'weft.runEntryOnGpu', 'weft.showGeneratedKernel', 'weft.showHoverDetails', 'weft.profileEntry']) {
    assert.ok(calls.commands[c], `command ${c}`);
  }
  assert.ok(!Object.keys(calls.commands).some((c) => c.startsWith('weft.server.')), 'no weft.server.* registered by the client');
  assert.ok(calls.providers['weft-kernel']);
  assert.strictEqual(calls.clients.length, 1);
  const c = calls.clients[0];
  assert.strictEqual(c.id, 'weft'); // so `weft.trace.server` applies
  assert.strictEqual(c.serverOptions.run.command, '/opt/weft/bin/weft');
  assert.deepStrictEqual(c.serverOptions.run.args, ['lsp']);
  assert.strictEqual(c.serverOptions.run.options.env.WEFT_DEVICE, 'cpu');
  // Weft and APL (docs/apl.md) documents, saved and untitled.
  assert.deepStrictEqual(c.clientOptions.documentSelector.map((s) => s.language), ['weft', 'weft', 'apl', 'apl']);
  // The weft.runner.*, hover, costs and diagnostics settings reach the server as
  // initializationOptions (docs/lsp.md): VS Code has the settings Neovim has.
  assert.deepStrictEqual(c.clientOptions.initializationOptions, {
    runnerPath: '/opt/weft/bin/weft-runner',
    device: 'gpu',
    gpuRunTimeoutSecs: 5,
    hoverDetail: 'full',
    hoverSections: ['kernels', 'predictions'],
    costProfile: 'pocl-cpu',
    predictionSize: 65536,
    allow: ['bank-conflict'],
    perfDiagnostics: false,
  });
});

test('code lenses with an unregistered weft.server.* command go through executeCommand', async () => {
  const mw = calls.clients[0].clientOptions.middleware;
  const lenses = [
    { command: { title: 'Run on GPU', command: 'weft.server.runEntry', arguments: [{ entry: 'dot' }] } },
    { command: { title: 'Show kernel', command: 'weft.server.showKernel', arguments: [{ entry: 'dot' }] } },
    { command: { title: 'other', command: 'editor.action.showReferences', arguments: [] } },
  ];
  const out = await mw.provideCodeLenses({}, {}, async () => lenses);
  assert.strictEqual(out[0].command.command, 'weft.server.runEntry'); // registered: untouched
  assert.strictEqual(out[1].command.command, 'weft.internal.executeServerCommand');
  assert.deepStrictEqual(out[1].command.arguments, ['weft.server.showKernel', { entry: 'dot' }]);
  assert.strictEqual(out[2].command.command, 'editor.action.showReferences');

  await calls.commands['weft.internal.executeServerCommand'](...out[1].command.arguments);
  const req = calls.requests.at(-1);
  assert.strictEqual(req.type.method, 'workspace/executeCommand');
  assert.deepStrictEqual(req.params, { command: 'weft.server.showKernel', arguments: [{ entry: 'dot' }] });
  // A { uri, text } result opens as a read-only kernel document.
  await new Promise((r) => setTimeout(r, 10));
  const doc = calls.opened.at(-1);
  assert.strictEqual(doc.uri.scheme, 'weft-kernel');
  assert.strictEqual(doc.languageId, 'c');
  assert.match(doc.text, /__kernel void dot/);
});

test('executeCommand middleware shows a run result', async () => {
  const mw = calls.clients[0].clientOptions.middleware;
  const result = await mw.executeCommand('weft.server.runEntry', [{ uri: 'file:///a.weft', entry: 'dot' }],
    async () => ({ ok: true, values: ['32f32'], timeMs: 3 }));
  assert.deepStrictEqual(result, { ok: true, values: ['32f32'], timeMs: 3 });
  assert.ok(calls.output.includes('32f32'));
  assert.ok(calls.output.includes('done in 3 ms'));
});

test('a run prints each value once and whether it matched the expected output', async () => {
  const mw = calls.clients[0].clientOptions.middleware;
  const run = {
    ok: true,
    entry: 'dot',
    values: ['22.0f32'],
    stdout: '22.0f32\n',
    message: '`dot` (interpreter): 22.0f32; differs from the expected output: value #0: expected 11.0f32, got 22.0f32; 5 ms',
    timeMs: 5,
    expected: '11f32',
    matched: false,
  };
  calls.output.length = 0;
  await mw.executeCommand('weft.server.runEntry', [{ uri: 'file:///a.weft', entry: 'dot' }], async () => run);
  assert.strictEqual(calls.output.filter((l) => l.includes('22.0f32') && !l.includes('expected')).length, 1, calls.output.join('\n'));
  assert.ok(calls.output.includes('expected: 11f32'));
  assert.ok(calls.output.includes('DIFFERS from the expected output, done in 5 ms'));
  calls.output.length = 0;
  await mw.executeCommand('weft.server.runEntry', [{ uri: 'file:///a.weft', entry: 'dot' }],
    async () => ({ ...run, values: ['11.0f32'], stdout: '11.0f32\n', message: 'ok', matched: true }));
  assert.ok(calls.output.includes('matched the expected output, done in 5 ms'));
});

test('executeCommand middleware shows a GPU run result with its kernel time', async () => {
  const mw = calls.clients[0].clientOptions.middleware;
  const gpu = {
    ok: true,
    entry: 'dot',
    values: ['32f32'],
    message: '`dot` on fake device: 32f32; kernels 1.0 µs (2 launches), wall 1.50 ms',
    timeMs: 40,
    kernelNs: 1000,
  };
  const result = await mw.executeCommand('weft.server.runOnGpu', [{ uri: 'file:///a.weft', entry: 'dot' }], async () => gpu);
  assert.deepStrictEqual(result, gpu);
  assert.ok(calls.output.includes('▶ dot on GPU'));
  assert.ok(calls.output.includes(gpu.message));
  assert.ok(calls.output.includes('done in 40 ms'));
});

test('executeCommand middleware shows a profile and opens its SVG', async () => {
  const mw = calls.clients[0].clientOptions.middleware;
  const profile = {
    ok: true,
    entry: 'dot',
    svg: '/w/main.dot.profile/graph.svg',
    dot: '/w/main.dot.profile/graph.dot',
    dir: '/w/main.dot.profile',
    report: 'work W = 42\n',
    message: 'profile of `dot`: cost graph /w/main.dot.profile/graph.svg',
    timeMs: 12,
  };
  calls.executed = [];
  const result = await mw.executeCommand('weft.server.profile', [{ uri: 'file:///w/main.weft', entry: 'dot' }], async () => profile);
  assert.deepStrictEqual(result, profile);
  assert.ok(calls.output.includes('▶ profile dot'));
  assert.ok(calls.output.includes('work W = 42\n'));
  assert.ok(calls.output.includes(profile.message));
  await new Promise((r) => setImmediate(r));
  const open = calls.executed.find((a) => a[0] === 'vscode.open');
  assert.ok(open, JSON.stringify(calls.executed));
  assert.strictEqual(open[1].scheme, 'file');
  assert.strictEqual(open[1].path, '/w/main.dot.profile/graph.svg');
});

test('a failed profile opens nothing', async () => {
  const mw = calls.clients[0].clientOptions.middleware;
  calls.executed = [];
  await mw.executeCommand('weft.server.profile', [{ uri: 'file:///w/main.weft', entry: 'nope' }],
    async () => ({ ok: false, entry: 'nope', svg: null, message: 'no entry `nope` in `/w/main.weft`' }));
  await new Promise((r) => setImmediate(r));
  assert.ok(calls.output.includes('no entry `nope` in `/w/main.weft`'));
  assert.ok(!calls.executed.some((a) => a[0] === 'vscode.open'));
});

test('a kernel view colours each kernel and the source it computes alike, and is asked for again after an edit', async () => {
  const source = 'file:///w/dot.weft';
  const view = {
    uri: 'weft-kernel:///dot/dot.cl',
    text: '// two kernels\n__kernel void a() {\n}\n__kernel void b() {\n}\n',
    links: [
      { kernel: 'a', lines: { start: 1, end: 3 }, sources: [{ uri: source, range: { start: { line: 4, character: 2 }, end: { line: 4, character: 9 } } }] },
      { kernel: 'b', lines: { start: 3, end: 5 }, sources: [{ uri: source, range: { start: { line: 6, character: 0 }, end: { line: 6, character: 5 } } }] },
    ],
  };
  const painted = (uri) => {
    const found = [];
    const editor = { document: { uri: Uri.parse(uri) }, setDecorations: (d, ranges) => { if (ranges.length) found.push([d.colour, ranges.map((r) => [r.l0, r.c0, r.l1, r.c1 === Number.MAX_SAFE_INTEGER ? 'end' : r.c1])]); } };
    return { editor, found };
  };
  const kernelEditor = painted(view.uri);
  const sourceEditor = painted(source);
  vscode.window.visibleTextEditors = [kernelEditor.editor, sourceEditor.editor];
  const requests = calls.requests.length;
  calls.clients[0].sendRequest = async (type, params) => { calls.requests.push({ type, params }); return view; };
  const args = [{ textDocument: { uri: source }, position: { line: 0, character: 7 } }];
  await calls.commands['weft.internal.executeServerCommand']('weft.server.showKernel', ...args);
  await new Promise((r) => setTimeout(r, 10));
  // Kernel `a`: lines 1-2 of the view and its source range share the first colour.
  assert.deepStrictEqual(kernelEditor.found, [
    ['rgba(255, 170, 0, 0.16)', [[1, 0, 2, 'end']]],
    ['rgba(0, 160, 255, 0.16)', [[3, 0, 4, 'end']]],
  ]);
  assert.deepStrictEqual(sourceEditor.found, [
    ['rgba(255, 170, 0, 0.16)', [[4, 2, 4, 9]]],
    ['rgba(0, 160, 255, 0.16)', [[6, 0, 6, 5]]],
  ]);
  // An edit of the source asks for the view again, once the edits pause.
  calls.handlers.changed({ document: { uri: Uri.parse(source) } });
  calls.handlers.changed({ document: { uri: Uri.parse(source) } });
  assert.strictEqual(calls.requests.length, requests + 1);
  await new Promise((r) => setTimeout(r, 700));
  assert.strictEqual(calls.requests.length, requests + 2);
  assert.deepStrictEqual(calls.requests.at(-1).params, { command: 'weft.server.showKernel', arguments: args });
  // An edit elsewhere does not.
  calls.handlers.changed({ document: { uri: Uri.parse('file:///w/other.weft') } });
  await new Promise((r) => setTimeout(r, 700));
  assert.strictEqual(calls.requests.length, requests + 2);
  vscode.window.visibleTextEditors = [];
});

test('a kernel view colours each line as the source line it computes, and the cursor links them both ways', async () => {
  const source = 'file:///w/scale.weft';
  const range = (line, c0, c1) => ({ start: { line, character: c0 }, end: { line, character: c1 } });
  // Lines 2-3 compute `map` (source line 5), line 4 `a * x` (line 6), line 5 `y + 1` (line 7).
  const view = {
    uri: 'weft-kernel:///scale/scale.cl',
    text: '// a kernel\n__kernel void k(\n  for (...) {\n    float y = a * x;\n    out[i] = y + 1;\n  }\n}\n',
    links: [{ kernel: 'k', lines: { start: 1, end: 7 }, sources: [{ uri: source, range: range(5, 2, 30) }] }],
    lines: [
      { line: 2, source: { uri: source, range: range(5, 2, 30) } },
      { line: 3, source: { uri: source, range: range(6, 10, 15) } },
      { line: 4, source: { uri: source, range: range(7, 5, 10) } },
    ],
  };
  const editorOf = (uri) => {
    const found = new Map();
    const revealed = [];
    const editor = {
      document: { uri: Uri.parse(uri) },
      setDecorations: (d, ranges) => found.set(d.border ? 'focus-range' : d.colour, ranges.map((r) => [r.l0, r.c0, r.l1, r.c1 === Number.MAX_SAFE_INTEGER ? 'end' : r.c1])),
      revealRange: (r) => revealed.push([r.l0, r.c0]),
    };
    return { editor, found, revealed };
  };
  const kernelEditor = editorOf(view.uri);
  const sourceEditor = editorOf(source);
  vscode.window.visibleTextEditors = [kernelEditor.editor, sourceEditor.editor];
  calls.clients[0].sendRequest = async (type, params) => { calls.requests.push({ type, params }); return view; };
  await calls.commands['weft.internal.executeServerCommand']('weft.server.showKernel', { textDocument: { uri: source }, position: { line: 5, character: 2 } });
  await new Promise((r) => setTimeout(r, 10));
  const [first, second, third] = ['rgba(255, 170, 0, 0.16)', 'rgba(0, 160, 255, 0.16)', 'rgba(90, 210, 90, 0.16)'];
  // Per line, not per kernel: three source lines, three colours, on both sides.
  assert.deepStrictEqual(kernelEditor.found.get(first), [[2, 0, 2, 'end']]);
  assert.deepStrictEqual(kernelEditor.found.get(second), [[3, 0, 3, 'end']]);
  assert.deepStrictEqual(kernelEditor.found.get(third), [[4, 0, 4, 'end']]);
  assert.deepStrictEqual(sourceEditor.found.get(first), [[5, 0, 5, 'end']]);
  assert.deepStrictEqual(sourceEditor.found.get(second), [[6, 0, 6, 'end']]);
  assert.deepStrictEqual(sourceEditor.found.get(third), [[7, 0, 7, 'end']]);
  // The cursor on the kernel's line 3 marks `a * x` in the source and scrolls to it.
  calls.handlers.selection({ textEditor: kernelEditor.editor, selections: [{ active: { line: 3 } }] });
  assert.deepStrictEqual(sourceEditor.found.get('focus-range'), [[6, 10, 6, 15]]);
  assert.deepStrictEqual(sourceEditor.revealed.at(-1), [6, 10]);
  assert.deepStrictEqual(kernelEditor.found.get('rgba(255, 215, 0, 0.45)'), [[3, 0, 3, 'end']]);
  // The cursor on source line 7 marks the kernel line computing it, scrolled to.
  calls.handlers.selection({ textEditor: sourceEditor.editor, selections: [{ active: { line: 7 } }] });
  assert.deepStrictEqual(kernelEditor.found.get('rgba(255, 215, 0, 0.45)'), [[4, 0, 4, 'end']]);
  assert.deepStrictEqual(kernelEditor.revealed.at(-1), [4, 0]);
  // A line nothing is linked to clears the marks.
  calls.handlers.selection({ textEditor: sourceEditor.editor, selections: [{ active: { line: 0 } }] });
  assert.deepStrictEqual(kernelEditor.found.get('rgba(255, 215, 0, 0.45)'), []);
  vscode.window.visibleTextEditors = [];
});

test('the hover line naming the detail view becomes a link that opens it for the hovered position', async () => {
  const mw = calls.clients[0].clientOptions.middleware;
  calls.clients[0].code2ProtocolConverter = { asUri: (u) => u.toString() };
  const value = '```weft\nmap : (a -> r) -> [n]a -> [n]r\n```\n\n**Predicted**: 8 µs\n\n*Derivation: command "Weft: Show Hover Details" (Neovim: `:WeftDetails`).*';
  const document = { uri: Uri.parse('file:///w/scale.weft') };
  const hover = await mw.provideHover(document, { line: 11, character: 48 }, {}, async () => ({ contents: [{ value }], range: 'r' }));
  const md = hover.contents[0];
  assert.strictEqual(md.isTrusted, true);
  const link = /\[Show the derivation\]\(command:weft\.server\.hoverDetails\?([^ )]+)/.exec(md.value);
  assert.ok(link, md.value);
  assert.deepStrictEqual(JSON.parse(decodeURIComponent(link[1])), [
    { textDocument: { uri: 'file:///w/scale.weft' }, position: { line: 11, character: 48 } },
  ]);
  assert.ok(md.value.includes('**Predicted**: 8 µs'));
  assert.strictEqual(hover.range, 'r');
  // A hover without that line is left as it is.
  const plain = await mw.provideHover(document, { line: 0, character: 0 }, {}, async () => ({ contents: [{ value: 'x : i64' }] }));
  assert.strictEqual(plain.contents[0].value, 'x : i64');
});
