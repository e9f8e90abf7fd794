// The Weft extension: starts `weft lsp` through vscode-languageclient and adds the
// client-side commands that need more than plain LSP (running an entry, showing the
// generated OpenCL kernel in a read-only virtual document).
//
// Command names: the client's own commands are `weft.*`; every command the server
// implements (code lenses, code actions) is `weft.server.*`, so the two never collide.
// vscode-languageclient registers the commands the server lists in
// `executeCommandProvider.commands` itself (ExecuteCommandFeature): we never register a
// `weft.server.*` name, we only wrap their execution (middleware.executeCommand) to show
// what they return, and route lenses whose command the server did not register through
// `workspace/executeCommand` by hand.

import * as vscode from 'vscode';
import {
  CodeLensMiddleware,
  ExecuteCommandRequest,
  Executable,
  LanguageClient,
  LanguageClientOptions,
  Middleware,
  RequestType,
  ServerOptions,
  State,
  TextDocumentIdentifier,
  Position as LspPosition,
} from 'vscode-languageclient/node';
import { entriesOf, entryAt } from './entries';

export const KERNEL_SCHEME = 'weft-kernel';
const SERVER_COMMAND_PREFIX = 'weft.server.';
const RUN_ENTRY_SERVER_COMMAND = 'weft.server.runEntry';
const HOVER_DETAILS_SERVER_COMMAND = 'weft.server.hoverDetails';
const RUN_ON_GPU_SERVER_COMMAND = 'weft.server.runOnGpu';
const PROFILE_SERVER_COMMAND = 'weft.server.profile';
/** Internal, not in package.json: runs a `weft.server.*` command the client did not register. */
const DISPATCH_COMMAND = 'weft.internal.executeServerCommand';

/** `weft/showKernel`: the generated OpenCL for the code at a position. */
export interface ShowKernelParams {
  textDocument: TextDocumentIdentifier;
  position: LspPosition;
}
export interface ShowKernelResult {
  uri: string;
  text: string;
  /** Per kernel, its lines in `text` and the source it computes (docs/lsp.md). */
  links?: KernelLink[];
  /** Per line of `text` that computes part of the source, the expression it computes. */
  lines?: LineLink[];
}
/** One kernel of a kernel view: its lines (0-based, end exclusive) and its sources. */
export interface KernelLink {
  kernel: string;
  lines: { start: number; end: number };
  sources: { uri: string; range: { start: LspPosition; end: LspPosition } }[];
}
/** One line of a kernel view (0-based) and the location of the source expression it computes. */
export interface LineLink {
  line: number;
  source: { uri: string; range: { start: LspPosition; end: LspPosition } };
}
export const ShowKernelRequest = new RequestType<ShowKernelParams, ShowKernelResult | null, void>(
  'weft/showKernel',
);

/**
 * What `weft.server.runEntry` and `weft.server.runOnGpu` may return: plain text, or
 * this object (a GPU run adds the device and the measured kernel times).
 */
export interface RunEntryResult {
  ok?: boolean;
  entry?: string;
  values?: string[];
  stdout?: string;
  stderr?: string;
  message?: string;
  timeMs?: number;
  device?: string | null;
  kernelNs?: number | null;
  kernels?: { kernel: string; ns: number }[];
  /** The test block's `output { ... }` for the input run, when it has one. */
  expected?: string | null;
  /** Whether the values matched `expected`. */
  matched?: boolean | null;
}

/** What `weft.server.profile` returns: the cost graph's files and the profiler's report. */
export interface ProfileResult {
  ok?: boolean;
  entry?: string;
  svg?: string | null;
  dot?: string | null;
  dir?: string;
  report?: string;
  stderr?: string;
  message?: string;
  timeMs?: number;
}

let client: LanguageClient | undefined;
let runOutput: vscode.OutputChannel;
let serverOutput: vscode.OutputChannel;
let kernels: KernelDocuments;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  runOutput = vscode.window.createOutputChannel('Weft Run');
  serverOutput = vscode.window.createOutputChannel('Weft Language Server');
  kernels = new KernelDocuments();
  context.subscriptions.push(
    runOutput,
    serverOutput,
    kernels,
    vscode.workspace.registerTextDocumentContentProvider(KERNEL_SCHEME, kernels),
    vscode.window.onDidChangeVisibleTextEditors(() => kernels.paint()),
    vscode.window.onDidChangeTextEditorSelection((e) => kernels.follow(e.textEditor, e.selections[0]?.active.line)),
    vscode.workspace.onDidChangeTextDocument((e) => kernels.sourceChanged(e.document)),
    vscode.commands.registerCommand('weft.restartServer', restartServer),
    vscode.commands.registerCommand('weft.runEntry', () => runEntry(RUN_ENTRY_SERVER_COMMAND)),
    vscode.commands.registerCommand('weft.runEntryOnGpu', () => runEntry(RUN_ON_GPU_SERVER_COMMAND)),
    vscode.commands.registerCommand('weft.profileEntry', () => runEntry(PROFILE_SERVER_COMMAND)),
    vscode.commands.registerCommand('weft.showGeneratedKernel', showGeneratedKernel),
    vscode.commands.registerCommand('weft.showHoverDetails', showHoverDetails),
    vscode.commands.registerCommand(DISPATCH_COMMAND, dispatchServerCommand),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      const restartOn = ['weft.server', 'weft.runner', 'weft.hover', 'weft.costs', 'weft.diagnostics'];
      if (restartOn.some((section) => e.affectsConfiguration(section))) {
        await restartServer();
      }
    }),
  );
  await startServer();
}

export async function deactivate(): Promise<void> {
  await stopServer();
}

// ------------------------------------------------------------------------------ server

function serverOptions(): ServerOptions {
  const config = vscode.workspace.getConfiguration('weft');
  const command = config.get<string>('server.path') || 'weft';
  const extraEnv = config.get<Record<string, string>>('server.extraEnv') ?? {};
  const executable: Executable = {
    command,
    args: ['lsp'],
    options: { env: { ...process.env, ...extraEnv } },
  };
  return { run: executable, debug: executable };
}

/** The server's settings (docs/lsp.md), sent as `initializationOptions`. */
export function initializationOptions(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('weft');
  const options: Record<string, unknown> = {};
  const runner = config.get<string>('runner.path');
  if (runner) {
    options.runnerPath = runner;
  }
  const device = config.get<string>('runner.device');
  if (device) {
    options.device = device;
  }
  const timeout = config.get<number>('runner.timeoutSecs');
  if (typeof timeout === 'number' && timeout > 0) {
    options.gpuRunTimeoutSecs = timeout;
  }
  const detail = config.get<string>('hover.detail');
  if (detail) {
    options.hoverDetail = detail;
  }
  const sections = config.get<string[]>('hover.sections');
  if (Array.isArray(sections)) {
    options.hoverSections = sections;
  }
  const profile = config.get<string>('costs.profile');
  if (profile) {
    options.costProfile = profile;
  }
  const size = config.get<number>('costs.predictionSize');
  if (typeof size === 'number' && size > 0) {
    options.predictionSize = size;
  }
  const allow = config.get<string[]>('diagnostics.allow');
  if (Array.isArray(allow) && allow.length > 0) {
    options.allow = allow;
  }
  const perf = config.get<boolean>('diagnostics.perf');
  if (typeof perf === 'boolean') {
    options.perfDiagnostics = perf;
  }
  return options;
}

/** "Weft: Show Hover Details": the full hover (symbolic costs, regions) at the cursor. */
async function showHoverDetails(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'weft') {
    void vscode.window.showWarningMessage('Weft: open a .weft file to see hover details.');
    return;
  }
  const c = await runningClient();
  if (!c) {
    return;
  }
  const args = [{
    textDocument: c.code2ProtocolConverter.asTextDocumentIdentifier(editor.document),
    position: c.code2ProtocolConverter.asPosition(editor.selection.active),
  }];
  try {
    const result = await c.sendRequest(ExecuteCommandRequest.type, { command: HOVER_DETAILS_SERVER_COMMAND, arguments: args });
    if (!isKernel(result)) {
      void vscode.window.showInformationMessage('Weft: nothing to show under the cursor.');
      return;
    }
    await openKernel(result);
  } catch (err) {
    void vscode.window.showErrorMessage(`Weft: Show Hover Details failed: ${errorText(err)}`);
  }
}

function clientOptions(): LanguageClientOptions {
  return {
    initializationOptions: initializationOptions(),
    documentSelector: [
      { scheme: 'file', language: 'weft' },
      { scheme: 'untitled', language: 'weft' },
      // APL files go through the APL front end (diagnostics, hovers with TAIL types).
      { scheme: 'file', language: 'apl' },
      { scheme: 'untitled', language: 'apl' },
    ],
    synchronize: {
      // Imports make other files matter: tell the server when any .weft file changes,
      // and when a project's `weft.json` (its diagnostics settings, as CI's) does.
      fileEvents: [
        vscode.workspace.createFileSystemWatcher('**/*.weft'),
        vscode.workspace.createFileSystemWatcher('**/weft.json'),
      ],
    },
    outputChannel: serverOutput,
    middleware: middleware(),
  };
}

function middleware(): Middleware {
  const codeLens: CodeLensMiddleware = {
    provideCodeLenses: async (document, token, next) => {
      const lenses = await next(document, token);
      return lenses ? routeServerCommands(lenses) : lenses;
    },
    resolveCodeLens: async (lens, token, next) => {
      const resolved = await next(lens, token);
      if (resolved) {
        await routeServerCommands([resolved]);
      }
      return resolved;
    },
  };
  return {
    ...codeLens,
    // The hover's last line says where its derivation is: make it a link that opens it
    // for the hovered position.
    provideHover: async (document, position, token, next) => {
      const hover = await next(document, position, token);
      return hover ? withDetailsLink(hover, document, position) : hover;
    },
    // Runs when a `weft.server.*` command that the languageclient registered for the
    // server is invoked (from a code lens, a code action or the palette).
    executeCommand: async (command, args, next) => {
      const result = await next(command, args);
      presentServerResult(command, args, result);
      return result;
    },
  };
}

/** The hover line that names the detail view (weft-ide's `DETAILS_HINT`). */
const DETAILS_HINT = /^\*Derivation: .*Weft: Show Hover Details.*$/m;

/**
 * `hover` with its line naming the detail view made a link that runs
 * `weft.server.hoverDetails` for `position` (the languageclient registered it for the
 * server; its result opens as a markdown document).
 */
export function withDetailsLink(hover: vscode.Hover, document: vscode.TextDocument, position: vscode.Position): vscode.Hover {
  const args = [{
    textDocument: { uri: client?.code2ProtocolConverter.asUri(document.uri) ?? document.uri.toString() },
    position: { line: position.line, character: position.character },
  }];
  const link = `*[Show the derivation](command:${HOVER_DETAILS_SERVER_COMMAND}?${encodeURIComponent(JSON.stringify(args))} "Weft: Show Hover Details"): symbolic costs, regions, every kernel.*`;
  const contents = hover.contents.map((c) => {
    const value = typeof c === 'string' ? c : c.value;
    if (!DETAILS_HINT.test(value)) {
      return c;
    }
    const md = new vscode.MarkdownString(value.replace(DETAILS_HINT, link));
    md.isTrusted = true;
    return md;
  });
  return new vscode.Hover(contents, hover.range);
}

/**
 * Lenses whose `weft.server.*` command the client has not registered (the server did
 * not list it in executeCommandProvider) would fail with "command not found": send
 * those through our dispatcher, which calls `workspace/executeCommand` itself.
 */
async function routeServerCommands(lenses: vscode.CodeLens[]): Promise<vscode.CodeLens[]> {
  const needsRoute = lenses.some((l) => l.command?.command.startsWith(SERVER_COMMAND_PREFIX));
  if (!needsRoute) {
    return lenses;
  }
  const known = new Set(await vscode.commands.getCommands(true));
  for (const lens of lenses) {
    const cmd = lens.command;
    if (cmd && cmd.command.startsWith(SERVER_COMMAND_PREFIX) && !known.has(cmd.command)) {
      lens.command = {
        title: cmd.title,
        tooltip: cmd.tooltip,
        command: DISPATCH_COMMAND,
        arguments: [cmd.command, ...(cmd.arguments ?? [])],
      };
    }
  }
  return lenses;
}

async function dispatchServerCommand(command: string, ...args: unknown[]): Promise<unknown> {
  const c = await runningClient();
  if (!c) {
    return undefined;
  }
  const result = await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  presentServerResult(command, args, result);
  return result;
}

async function startServer(): Promise<void> {
  const c = new LanguageClient('weft', 'Weft Language Server', serverOptions(), clientOptions());
  client = c;
  try {
    await c.start();
  } catch (err) {
    const path = vscode.workspace.getConfiguration('weft').get<string>('server.path') || 'weft';
    const choice = await vscode.window.showErrorMessage(
      `Weft: could not start the language server \`${path} lsp\`: ${String(err)}`,
      'Open Settings',
    );
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'weft.server.path');
    }
  }
}

async function stopServer(): Promise<void> {
  const c = client;
  client = undefined;
  if (!c) {
    return;
  }
  try {
    if (c.state === State.Running) {
      await c.stop();
    }
  } catch {
    // A server that died already cannot be stopped; dispose anyway.
  }
  await c.dispose();
}

async function restartServer(): Promise<void> {
  await stopServer();
  await startServer();
}

async function runningClient(): Promise<LanguageClient | undefined> {
  if (client && client.state === State.Running) {
    return client;
  }
  const choice = await vscode.window.showErrorMessage(
    'Weft: the language server is not running.',
    'Restart Server',
  );
  if (choice === 'Restart Server') {
    await restartServer();
  }
  return client && client.state === State.Running ? client : undefined;
}

// ------------------------------------------------------------------------------ run entry

/** Runs the entry under the cursor with `weft.server.runEntry` or `weft.server.runOnGpu`. */
async function runEntry(serverCommand: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'weft') {
    void vscode.window.showWarningMessage('Weft: open a .weft file to run one of its entries.');
    return;
  }
  const doc = editor.document;
  const pos = editor.selection.active;
  const wordRange = doc.getWordRangeAtPosition(pos);
  let entry = entryAt(doc.getText(), pos.line, wordRange ? doc.getText(wordRange) : undefined);
  if (!entry) {
    const names = entriesOf(doc.getText()).map((e) => e.name);
    if (names.length === 0) {
      void vscode.window.showWarningMessage('Weft: this file has no entry to run.');
      return;
    }
    entry = names.length === 1 ? names[0] : await vscode.window.showQuickPick(names, { placeHolder: 'Entry to run' });
    if (!entry) {
      return;
    }
  }
  const c = await runningClient();
  if (!c) {
    return;
  }
  const args = [{ uri: c.code2ProtocolConverter.asUri(doc.uri), entry }];
  if (serverCommand === PROFILE_SERVER_COMMAND) {
    // The report goes to the Run output and the cost graph opens, as from the lens.
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Weft: profiling ${entry}` },
        () => c.sendRequest(ExecuteCommandRequest.type, { command: serverCommand, arguments: args }),
      );
      await presentProfile(result as ProfileResult);
    } catch (err) {
      runOutput.appendLine(`error: ${errorText(err)}`);
    }
    return;
  }
  const where = serverCommand === RUN_ON_GPU_SERVER_COMMAND ? ' on GPU' : '';
  runOutput.show(true);
  runOutput.appendLine(`▶ ${entry}${where} (${vscode.workspace.asRelativePath(doc.uri)})`);
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Weft: running ${entry}${where}` },
      () => c.sendRequest(ExecuteCommandRequest.type, { command: serverCommand, arguments: args }),
    );
    appendRunResult(result);
  } catch (err) {
    runOutput.appendLine(`error: ${errorText(err)}`);
  }
}

function appendRunResult(result: unknown): void {
  if (result === null || result === undefined) {
    runOutput.appendLine('(no result)');
    return;
  }
  if (typeof result === 'string') {
    runOutput.appendLine(result);
    return;
  }
  const r = result as RunEntryResult;
  const known = ['values', 'stdout', 'stderr', 'message', 'timeMs', 'ok'].some((k) => k in r);
  if (!known) {
    runOutput.appendLine(JSON.stringify(result, null, 2));
    return;
  }
  // The values once: `stdout` is what they were read from.
  const values = r.values ?? [];
  for (const v of values) {
    runOutput.appendLine(v);
  }
  if (r.stdout && values.length === 0) {
    runOutput.append(r.stdout.endsWith('\n') ? r.stdout : r.stdout + '\n');
  }
  if (r.stderr) {
    runOutput.append(r.stderr.endsWith('\n') ? r.stderr : r.stderr + '\n');
  }
  if (r.message) {
    runOutput.appendLine(r.message);
  }
  if (r.matched === false && r.expected !== undefined) {
    runOutput.appendLine(`expected: ${r.expected}`);
  }
  let status = r.ok === false ? 'failed' : 'done';
  if (r.matched === true) {
    status = `matched the expected output, ${status}`;
  } else if (r.matched === false) {
    status = `DIFFERS from the expected output, ${status}`;
  }
  runOutput.appendLine(r.timeMs !== undefined ? `${status} in ${r.timeMs} ms` : status);
}

/** Shows what a `weft.server.*` command returned, when it returned something to show. */
function presentServerResult(command: string, args: unknown[], result: unknown): void {
  if (isKernel(result)) {
    const again = async () => (await runningClient())?.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    void openKernel(result, again, sourceOf(args[0]));
    return;
  }
  if (command === PROFILE_SERVER_COMMAND && result && typeof result === 'object') {
    void presentProfile(result as ProfileResult);
    return;
  }
  if (command === RUN_ENTRY_SERVER_COMMAND || command === RUN_ON_GPU_SERVER_COMMAND) {
    const first = args[0] as { entry?: string } | undefined;
    const where = command === RUN_ON_GPU_SERVER_COMMAND ? ' on GPU' : '';
    runOutput.show(true);
    runOutput.appendLine(`▶ ${first?.entry ?? command}${where}`);
    appendRunResult(result);
    return;
  }
  if (result !== null && result !== undefined) {
    runOutput.appendLine(`${command}: ${typeof result === 'string' ? result : JSON.stringify(result, null, 2)}`);
  }
}

/** "Profile": the report in the Run output, and the cost graph's SVG opened in an editor. */
async function presentProfile(r: ProfileResult): Promise<void> {
  runOutput.show(true);
  runOutput.appendLine(`▶ profile ${r.entry ?? ''}`);
  if (r.report) {
    runOutput.append(r.report.endsWith('\n') ? r.report : r.report + '\n');
  }
  if (r.message) {
    runOutput.appendLine(r.message);
  }
  if (r.ok && r.svg) {
    await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(r.svg));
  } else if (!r.ok && r.stderr) {
    runOutput.append(r.stderr.endsWith('\n') ? r.stderr : r.stderr + '\n');
  }
}

function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) {
    return String((err as { message: unknown }).message);
  }
  return String(err);
}

// ------------------------------------------------------------------------------ kernels

function isKernel(x: unknown): x is ShowKernelResult {
  return (
    !!x &&
    typeof x === 'object' &&
    typeof (x as ShowKernelResult).uri === 'string' &&
    typeof (x as ShowKernelResult).text === 'string'
  );
}

/** The source document a command's first argument names (`{ textDocument }` or `{ uri }`). */
function sourceOf(arg: unknown): string | undefined {
  const a = arg as { textDocument?: { uri?: unknown }; uri?: unknown } | undefined;
  const uri = a?.textDocument?.uri ?? a?.uri;
  return typeof uri === 'string' ? uri : undefined;
}

/**
 * Compiler Explorer's colour linking: every source line that generated code computes gets
 * a colour (six in turn, by first appearance in the view), and so do the view's lines
 * computing it; the cursor on a line of either side marks the lines linked to it on the
 * other (and scrolls them into view).
 */
const LINK_COLOURS = [
  'rgba(255, 170, 0, 0.16)',
  'rgba(0, 160, 255, 0.16)',
  'rgba(90, 210, 90, 0.16)',
  'rgba(220, 90, 220, 0.16)',
  'rgba(255, 90, 90, 0.16)',
  'rgba(60, 210, 210, 0.16)',
];
/** The mark of the lines linked to the cursor's line (and of the exact source expression). */
export const FOCUS_COLOUR = 'rgba(255, 215, 0, 0.45)';

/** How long a source must stay unedited before its open kernel views are asked for again. */
const REFRESH_DELAY_MS = 500;

/** An open kernel view: its links, its source and how to ask for it again. */
interface KernelView {
  links: KernelLink[];
  lines: LineLink[];
  source?: string;
  again?: () => Promise<unknown>;
}

/** The colour index of each linked source line (`uri#line`) of a view, by first appearance. */
function sourceLineColours(view: KernelView): Map<string, number> {
  const colours = new Map<string, number>();
  for (const link of view.lines) {
    const key = sourceLineKey(link.source.uri, link.source.range.start.line);
    if (!colours.has(key)) {
      colours.set(key, colours.size % LINK_COLOURS.length);
    }
  }
  return colours;
}

function sourceLineKey(uri: string, line: number): string {
  return `${normUri(uri)}#${line}`;
}

const wholeLine = (line: number) => new vscode.Range(line, 0, line, Number.MAX_SAFE_INTEGER);

/**
 * Read-only documents with the generated OpenCL, under `weft-kernel:` URIs, with their
 * lines coloured as the source lines they compute, and asked for again when that source
 * is edited.
 */
class KernelDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly views = new Map<string, KernelView>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private decorations: vscode.TextEditorDecorationType[] = [];
  private focusLines: vscode.TextEditorDecorationType | undefined;
  private focusRange: vscode.TextEditorDecorationType | undefined;
  private refresh: ReturnType<typeof setTimeout> | undefined;
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, text: string, view?: KernelView): void {
    this.texts.set(uri.toString(), text);
    if (view) {
      this.views.set(uri.toString(), view);
    }
    this.changed.fire(uri);
    this.paint();
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '// This kernel is no longer available: run "Weft: Show Generated Kernel" again.\n';
  }

  private ensureDecorations(): void {
    if (this.decorations.length === 0) {
      this.decorations = LINK_COLOURS.map((backgroundColor) =>
        vscode.window.createTextEditorDecorationType({ backgroundColor, isWholeLine: true }));
      this.focusLines = vscode.window.createTextEditorDecorationType({ backgroundColor: FOCUS_COLOUR, isWholeLine: true });
      this.focusRange = vscode.window.createTextEditorDecorationType({
        backgroundColor: FOCUS_COLOUR,
        border: '1px solid rgba(255, 215, 0, 0.9)',
      });
    }
  }

  /** Colours every visible kernel view and every visible source of one. */
  paint(): void {
    this.ensureDecorations();
    for (const editor of vscode.window.visibleTextEditors ?? []) {
      const byColour: vscode.Range[][] = LINK_COLOURS.map(() => []);
      const shown = editor.document.uri.toString();
      const own = this.views.get(shown);
      if (own && own.lines.length > 0) {
        const colours = sourceLineColours(own);
        for (const link of own.lines) {
          const colour = colours.get(sourceLineKey(link.source.uri, link.source.range.start.line)) ?? 0;
          byColour[colour].push(wholeLine(link.line));
        }
      } else {
        // A server without per-line links: each kernel's lines alike.
        own?.links.forEach((link, i) => {
          const end = Math.max(link.lines.start, link.lines.end - 1);
          byColour[i % LINK_COLOURS.length].push(new vscode.Range(link.lines.start, 0, end, Number.MAX_SAFE_INTEGER));
        });
      }
      const painted = new Set<string>();
      for (const view of this.views.values()) {
        if (view.lines.length > 0) {
          for (const [key, colour] of sourceLineColours(view)) {
            const at = key.lastIndexOf('#');
            const line = Number(key.slice(at + 1));
            if (sameUri(key.slice(0, at), shown) && !painted.has(key)) {
              painted.add(key);
              byColour[colour].push(wholeLine(line));
            }
          }
          continue;
        }
        view.links.forEach((link, i) => {
          for (const source of link.sources) {
            if (sameUri(source.uri, shown)) {
              const { start, end } = source.range;
              byColour[i % LINK_COLOURS.length].push(new vscode.Range(start.line, start.character, end.line, end.character));
            }
          }
        });
      }
      this.decorations.forEach((d, i) => editor.setDecorations(d, byColour[i]));
    }
  }

  /**
   * The cursor moved to `line` of `editor`: in a kernel view, marks the source expression
   * its line computes and the view's lines computing the same source line; in a source,
   * marks the lines of its kernel views computing the cursor's line. Marks go where the
   * cursor is not, scrolled into view.
   */
  follow(editor: vscode.TextEditor, line: number | undefined): void {
    if (line === undefined) {
      return;
    }
    this.ensureDecorations();
    const here = editor.document.uri.toString();
    const own = this.views.get(here);
    // What to mark: per kernel view, its lines; per source document, its ranges.
    const viewLines = new Map<string, number[]>();
    const sourceRanges: { uri: string; range: vscode.Range }[] = [];
    if (own) {
      const link = own.lines.find((l) => l.line === line);
      if (!link) {
        this.clearFocus();
        return;
      }
      const { start, end } = link.source.range;
      sourceRanges.push({ uri: link.source.uri, range: new vscode.Range(start.line, start.character, end.line, end.character) });
      viewLines.set(here, own.lines.filter((l) => sameUri(l.source.uri, link.source.uri) && l.source.range.start.line === start.line).map((l) => l.line));
    } else {
      for (const [uri, view] of this.views) {
        const lines = view.lines.filter((l) => sameUri(l.source.uri, here) && l.source.range.start.line === line).map((l) => l.line);
        if (lines.length > 0) {
          viewLines.set(uri, lines);
        }
      }
      if (viewLines.size === 0) {
        this.clearFocus();
        return;
      }
      sourceRanges.push({ uri: here, range: wholeLine(line) });
    }
    for (const other of vscode.window.visibleTextEditors ?? []) {
      const uri = other.document.uri.toString();
      const lines = viewLines.get(uri) ?? [];
      other.setDecorations(this.focusLines!, lines.map(wholeLine));
      const ranges = sourceRanges.filter((s) => sameUri(s.uri, uri)).map((s) => s.range);
      other.setDecorations(this.focusRange!, ranges);
      if (other !== editor) {
        const first = ranges[0] ?? (lines.length > 0 ? wholeLine(Math.min(...lines)) : undefined);
        if (first) {
          other.revealRange(first, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        }
      }
    }
  }

  private clearFocus(): void {
    for (const other of vscode.window.visibleTextEditors ?? []) {
      other.setDecorations(this.focusLines!, []);
      other.setDecorations(this.focusRange!, []);
    }
  }

  /** A source was edited: ask for its views again once the edits pause. */
  sourceChanged(document: vscode.TextDocument): void {
    const edited = document.uri.toString();
    const stale = [...this.views.entries()].filter(([, v]) => v.source !== undefined && sameUri(v.source, edited) && v.again);
    if (stale.length === 0) {
      return;
    }
    if (this.refresh) {
      clearTimeout(this.refresh);
    }
    this.refresh = setTimeout(() => {
      for (const [uri, view] of stale) {
        void view.again?.().then((result) => {
          if (isKernel(result) && kernelUri(result.uri).toString() === uri) {
            this.set(kernelUri(result.uri), result.text, { ...view, links: result.links ?? [], lines: result.lines ?? [] });
          }
        }, () => undefined);
      }
    }, REFRESH_DELAY_MS);
  }

  dispose(): void {
    if (this.refresh) {
      clearTimeout(this.refresh);
    }
    this.decorations.forEach((d) => d.dispose());
    this.focusLines?.dispose();
    this.focusRange?.dispose();
    this.changed.dispose();
  }
}

/** A URI as both spellings (the server's and VS Code's) read. */
function normUri(u: string): string {
  return decodeURIComponent(u).replace(/\/$/, '');
}

/** Whether two URIs name the same document (the server's and VS Code's spellings differ). */
function sameUri(a: string, b: string): boolean {
  return normUri(a) === normUri(b);
}

/** The server's URI if it is a `weft-kernel:` one, else one made from its path. */
function kernelUri(raw: string): vscode.Uri {
  let parsed: vscode.Uri;
  try {
    parsed = vscode.Uri.parse(raw, true);
  } catch {
    return vscode.Uri.from({ scheme: KERNEL_SCHEME, path: '/' + raw.replace(/[^A-Za-z0-9_./-]/g, '_') });
  }
  if (parsed.scheme === KERNEL_SCHEME) {
    return parsed;
  }
  return vscode.Uri.from({ scheme: KERNEL_SCHEME, path: parsed.path || '/kernel.cl', query: parsed.query });
}

async function openKernel(result: ShowKernelResult, again?: () => Promise<unknown>, source?: string): Promise<void> {
  const uri = kernelUri(result.uri);
  kernels.set(uri, result.text, { links: result.links ?? [], lines: result.lines ?? [], source, again });
  let doc = await vscode.workspace.openTextDocument(uri);
  const languages = await vscode.languages.getLanguages();
  // Hover details are markdown; kernels are OpenCL.
  const language = result.uri.endsWith('.md') ? 'markdown' : languages.includes('opencl') ? 'opencl' : 'c';
  if (doc.languageId !== language) {
    doc = await vscode.languages.setTextDocumentLanguage(doc, language);
  }
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
}

async function showGeneratedKernel(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'weft') {
    void vscode.window.showWarningMessage('Weft: open a .weft file to see its generated kernels.');
    return;
  }
  const c = await runningClient();
  if (!c) {
    return;
  }
  const params: ShowKernelParams = {
    textDocument: c.code2ProtocolConverter.asTextDocumentIdentifier(editor.document),
    position: c.code2ProtocolConverter.asPosition(editor.selection.active),
  };
  try {
    const result = await c.sendRequest(ShowKernelRequest, params);
    if (!result) {
      void vscode.window.showInformationMessage('Weft: no kernel is generated for the code under the cursor.');
      return;
    }
    const again = async () => (await runningClient())?.sendRequest(ShowKernelRequest, params);
    await openKernel(result, again, params.textDocument.uri);
  } catch (err) {
    void vscode.window.showErrorMessage(`Weft: Show Generated Kernel failed: ${errorText(err)}`);
  }
}
