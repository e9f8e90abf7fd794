// Drives code-server (VS Code 1.100 in the browser) with Debian's headless Chromium
// through playwright-core, and checks what the Weft extension shows: the code lenses,
// hovers, diagnostics of an introduced type error, Show kernels with its lines coloured
// as the source lines they compute and the cursor linking both ways, Run on GPU on POCL,
// runs of an unsaved edit (both lenses, both commands) from the buffer's text, and
// Profile from the palette.
// Started by run.sh, which starts code-server with the extension installed and the
// settings pointing at the freshly built `weft`. One screenshot per step in --out.
//
// Every check waits for a condition with a time limit; nothing sleeps a fixed time
// except where said.
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

function args() {
  const a = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    a[argv[i].replace(/^--/, '')] = argv[i + 1];
  }
  for (const k of ['url', 'file', 'out', 'chromium', 'device']) {
    if (!a[k]) {
      throw new Error(`e2e.js: --${k} is required`);
    }
  }
  return a;
}

const opts = args();
const started = Number(process.env.WEFT_E2E_T0_MS) || Date.now();
const fileName = path.basename(opts.file);
/** The line of `entry scale` (1-based), from the file as saved. */
const entryLine = fs.readFileSync(opts.file, 'utf8').split('\n').findIndex((l) => l.startsWith('entry scale')) + 1;
if (entryLine === 0 || !/\+ 1\) xs$/.test(fs.readFileSync(opts.file, 'utf8').split('\n')[entryLine - 1])) {
  throw new Error(`e2e.js: ${opts.file} has no line \`entry scale ... + 1) xs\``);
}
let page;
let shot = 0;

function say(msg) {
  console.log(`[e2e ${String(Math.floor((Date.now() - started) / 1000)).padStart(3)}s] ${msg}`);
}

async function screenshot(name) {
  shot += 1;
  const file = path.join(opts.out, `${String(shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  say(`screenshot ${path.basename(file)}`);
}

/** Monaco renders spaces as U+00A0. */
function norm(text) {
  return (text ?? '').replace(/\u00a0/g, ' ');
}

/** What a probe of `waitFor` saw last, said when it times out. */
let seen;

/**
 * Polls `probe` (returns a truthy value when the condition holds) until it does or
 * `ms` pass; throws `what` with the last observed state otherwise.
 */
async function waitFor(what, probe, ms = 30000, every = 250) {
  const deadline = Date.now() + ms;
  let last;
  seen = undefined;
  for (;;) {
    try {
      const v = await probe();
      if (v) {
        return v;
      }
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const state = seen !== undefined ? seen : last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${ms / 1000} s waiting for ${what}${state !== undefined ? ` (last seen: ${String(state).replace(/\s+/g, ' ').slice(0, 800)})` : ''}`);
    }
    await page.waitForTimeout(every);
  }
}

/** The source editor of the example: the Monaco editor whose model is the file. */
function sourceEditor() {
  return page.locator(`.editor-instance .monaco-editor[data-uri$="${fileName}"]`).first();
}

async function sourceText() {
  return norm(await sourceEditor().locator('.view-lines').innerText());
}

/** Runs a command through the command palette (F1), by its title. */
async function runCommand(title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`>${title}`);
  // The palette filters as one types: wait until the first row is the command.
  const row = page.locator('.quick-input-list .monaco-list-row .label-name').first();
  await waitFor(`"${title}" first in the command palette`, async () => {
    seen = norm(await row.innerText());
    return seen.trim() === title;
  }, 10000);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: 10000 });
}

/** The text of the Output panel's editor, where the "Weft Run" channel is shown. */
async function outputText() {
  return norm(await page.locator('.part.panel .monaco-editor .view-lines').first().innerText());
}

/** Clicks the code lens titled `title` above the entry, once the lenses are back. */
async function clickLens(title) {
  const lens = sourceEditor().locator('.codelens-decoration a').filter({ hasText: new RegExp(`^${title}$`) }).first();
  // Lenses are asked for again after each edit, and re-rendered: wait for this one.
  await lens.waitFor({ state: 'visible', timeout: 60000 });
  await lens.click();
}

/** Clears the Output panel (its toolbar's "Clear Output"), so the next run is alone there. */
async function clearOutput() {
  await page.locator('.part.panel .codicon-clear-all').first().click();
  await waitFor('an empty Output panel', async () => {
    seen = await outputText();
    return seen.trim() === '';
  }, 10000);
}

/**
 * Waits until the Weft Run output (cleared before the run) holds one finished run of
 * `scale`, and checks that it was printed once and its values once; returns it.
 */
async function waitForRun(what, values) {
  const valueLine = `[${values.map((v) => `${v}.0f32`).join(', ')}]`;
  await waitFor(`${what}: a finished run in the Weft Run output`, async () => {
    const t = await outputText();
    seen = t;
    const last = t.split('\n').map((l) => l.trim()).filter((l) => l).pop() ?? '';
    return t.includes('▶ scale') && /(done|failed)( in \d+ ms)?$/.test(last);
  }, 120000, 500);
  // A second print of the same run would come right after the first: wait until the
  // output has not changed for a second before counting.
  let previous = await outputText();
  const text = await waitFor(`${what}: the output to settle`, async () => {
    await page.waitForTimeout(1000);
    const t = await outputText();
    const same = t === previous;
    previous = t;
    return same ? t : false;
  }, 20000, 0);
  const lines = text.split('\n').map((l) => l.trimEnd());
  say(`${what}:\n${lines.filter((l) => l.trim()).map((l) => `    ${l}`).join('\n')}`);
  const headers = lines.filter((l) => l.startsWith('▶ scale')).length;
  if (headers !== 1) {
    throw new Error(`${what}: ${headers} runs ("▶ scale ...") in the output after one run`);
  }
  const printed = lines.filter((l) => l.trim() === valueLine).length;
  if (printed !== 1) {
    throw new Error(`${what}: the values ${valueLine} were printed ${printed} times, expected once`);
  }
  if (!/done( in \d+ ms)?$/.test(lines.filter((l) => l.trim()).pop() ?? '')) {
    throw new Error(`${what}: the run did not end with "done"`);
  }
  return text;
}

/** Clicks the first (or last) token `word` in the line of `entry scale`. */
async function clickToken(word, last = false) {
  const line = sourceEditor().locator('.view-line').filter({ hasText: 'entry scale' }).first();
  const tokens = line.locator('span > span').filter({ hasText: new RegExp(`^${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) });
  const token = last ? tokens.last() : tokens.first();
  await token.waitFor({ state: 'visible', timeout: 10000 });
  await token.click();
  return token;
}

/**
 * Shows the hover on `word` in the line of `entry scale` (its last occurrence when
 * `last`) and waits until its text satisfies `ok`; returns the text.
 */
async function showHover(word, what, ok, last = false) {
  await page.keyboard.press('Escape');
  await clickToken(word, last);
  const hover = page.locator('.monaco-hover:not(.hidden)').first();
  return waitFor(`a Weft hover on ${what}`, async () => {
    if (!(await hover.isVisible())) {
      // Ctrl+K Ctrl+I: Show or Focus Hover. Shown with the keyboard rather than by
      // moving the mouse (a mouse hover is dropped when the pointer moves, and comes
      // only after a delay). Pressed again while no hover is shown: the first request
      // can come before the server has analysed the file (a null hover).
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      await hover.waitFor({ state: 'visible', timeout: 3000 }).catch(() => undefined);
    }
    const t = norm(await hover.innerText().catch(() => ''));
    seen = t;
    return ok(t) ? t : false;
  }, 60000, 500);
}

/** The colours of the kernel view's links (extension.ts: LINK_COLOURS, FOCUS_COLOUR). */
const LINK_COLOURS = [
  'rgba(255, 170, 0, 0.16)',
  'rgba(0, 160, 255, 0.16)',
  'rgba(90, 210, 90, 0.16)',
  'rgba(220, 90, 220, 0.16)',
  'rgba(255, 90, 90, 0.16)',
  'rgba(60, 210, 210, 0.16)',
];
const FOCUS_COLOUR = 'rgba(255, 215, 0, 0.45)';

/**
 * The decorations drawn in `editor` (Monaco's `.cdr` overlays): background colour,
 * top and left in the page, width.
 */
async function decorations(editor) {
  return editor.locator('.view-overlays .cdr').evaluateAll((els) => els.map((e) => {
    const r = e.getBoundingClientRect();
    return { colour: getComputedStyle(e).backgroundColor, top: Math.round(r.top), left: Math.round(r.left), width: Math.round(r.width) };
  }));
}

/** The top (in the page) of the first line of `editor` containing `text`. */
async function lineTop(editor, text) {
  const line = editor.locator('.view-line').filter({ hasText: text }).first();
  return Math.round((await line.boundingBox()).y);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: opts.chromium,
    headless: true,
    // Root in a container has no user namespaces for Chromium's sandbox.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    timeout: 60000,
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    page = await context.newPage();
    page.setDefaultTimeout(30000);
    const consoleLog = fs.createWriteStream(path.join(opts.out, 'browser-console.log'));
    page.on('console', (m) => consoleLog.write(`${m.type()}: ${m.text()}\n`));

    // ------------------------------------------------------------ open the example
    say(`opening ${opts.url}`);
    await page.goto(opts.url, { waitUntil: 'domcontentloaded', timeout: 60000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60000 });
    // The explorer lists the workspace once the remote file system answers.
    await page.locator('.explorer-folders-view .monaco-list-row').filter({ hasText: fileName }).first()
      .waitFor({ state: 'visible', timeout: 60000 });
    say(`workbench loaded; opening ${fileName}`);
    await page.locator('.explorer-folders-view .monaco-list-row').filter({ hasText: fileName }).first().dblclick();
    await waitFor(`${fileName} in an editor`, async () => (await sourceText()).includes('entry scale'), 30000);
    await sourceEditor().locator('.view-lines').click();
    await screenshot('opened');

    // ------------------------------------------------------------ (c) code lenses
    // The lenses come once the extension has started `weft lsp` and it has answered.
    const lenses = sourceEditor().locator('.codelens-decoration');
    const lensText = await waitFor('the code lenses above `entry scale` ("▶ Run")', async () => {
      const t = norm((await lenses.allInnerTexts()).join(' | '));
      seen = t;
      return /▶ Run\b/.test(t) && t.includes('Show kernels') && t.includes('Run on GPU') ? t : false;
    }, 90000);
    say(`lenses: ${lensText.replace(/\s+/g, ' ')}`);
    await screenshot('lenses');

    // ------------------------------------------------------------ (b) hovers
    // On the `map` of the entry's body: its scheme with sizes and the GPU sections (its
    // kernel and predicted cost); on the `xs` it maps over: its type with sizes and its
    // memory.
    // Its prediction is on the device Run on GPU uses (POCL's, the settings' `cpu`),
    // as `weft-runner devices` told the server, with the reason said.
    const mapHover = await showHover('map', 'the `map` of the entry', (t) =>
      /map\s*:.*\[n\]a\s*->\s*\[n\]r/.test(t) && /Kernel\W+scale_map_\d+/.test(t)
        && /Predicted:/.test(t) && t.includes(opts.device) && /Run on GPU" uses/.test(t));
    say(`hover on map: ${mapHover.replace(/\s+/g, ' ').slice(0, 300)}`);
    await screenshot('hover-map');
    // The derivation is one click away: the hover's last line is a link to it.
    await page.locator('.monaco-hover:not(.hidden) a').filter({ hasText: 'Show the derivation' }).first().click();
    const detailsEditor = page.locator('.editor-instance .monaco-editor[data-uri*="/details/"]').first();
    const detailsText = await waitFor('the hover\'s detail view, opened by its link', async () => {
      const t = norm(await detailsEditor.locator('.view-lines').innerText());
      seen = t;
      return /Cost\*\* of `scale_map_0`/.test(t) && /work `/.test(t) ? t : false;
    }, 30000);
    say(`detail view: ${detailsText.split('\n').find((l) => l.includes('**Cost**'))?.trim().slice(0, 200)}`);
    await screenshot('hover-details');
    // Closed by its tab's close button, so that the kernel view below is the only
    // `weft-kernel:` editor.
    const detailsTab = page.locator('.tabs-container .tab').filter({ hasText: /\.md$/ }).first();
    await detailsTab.hover();
    await detailsTab.locator('.tab-actions .action-label').first().click();
    await detailsEditor.waitFor({ state: 'detached', timeout: 10000 });
    const xsHover = await showHover('xs', 'the `xs` at the end of the entry', (t) =>
      /xs\s*:\s*\[n\]f32/.test(t) && /Memory/i.test(t), true);
    say(`hover on xs: ${xsHover.replace(/\s+/g, ' ').slice(0, 300)}`);
    await screenshot('hover-xs');

    // ------------------------------------------------------------ (a) diagnostics
    // A def whose body is an f32 where an i32 is declared, on a new last line.
    const original = await sourceText();
    await sourceEditor().locator('.view-lines').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('def e2e_bad (x: f32) : i32 = x');
    // Ctrl+End went to the line after the file's last newline; Enter added one more.
    const errorLine = fs.readFileSync(opts.file, 'utf8').split('\n').length + 1;
    await page.keyboard.press('Escape');
    await waitFor('the typed error line in the editor', async () => (await sourceText()).includes('def e2e_bad'), 10000);
    await waitFor('an error squiggle in the editor', async () =>
      (await sourceEditor().locator('.squiggly-error').count()) > 0, 30000);
    // The Problems panel (View: Toggle Problems, Ctrl+Shift+M) lists the error.
    await page.keyboard.press('Control+Shift+M');
    const problems = page.locator('.markers-panel .monaco-list-row');
    const problemText = await waitFor('the type error in the Problems panel', async () => {
      const rows = norm((await problems.allInnerTexts()).join(' | '));
      seen = rows;
      // An error on the typed line that names both types.
      return rows.includes(`[Ln ${errorLine},`) && /i32/.test(rows) && /f32/.test(rows) ? rows : false;
    }, 30000);
    say(`problems: ${problemText.replace(/\s+/g, ' ').slice(0, 300)}`);
    await screenshot('diagnostics');
    // Undo until the text is the original again: typing makes an undo stop per word,
    // so the number of Ctrl+Z is not fixed; each is followed by a wait for the text to
    // change.
    await sourceEditor().locator('.view-lines').click();
    for (let i = 0; i < 40 && (await sourceText()) !== original; i++) {
      const before = await sourceText();
      await page.keyboard.press('Control+Z');
      await waitFor('the text to change on Ctrl+Z', async () => (await sourceText()) !== before, 5000, 50);
    }
    await waitFor('the source as it was after undo', async () => {
      seen = await sourceText();
      return seen === original;
    }, 5000);
    await waitFor('no error squiggle after undo', async () =>
      (await sourceEditor().locator('.squiggly-error').count()) === 0, 30000);
    await waitFor('an empty Problems panel after undo', async () => (await problems.count()) === 0, 30000);
    say('diagnostics: the error came and went with the edit');
    await screenshot('diagnostics-undone');

    // ------------------------------------------------------------ (d) Show kernels
    await clickLens('Show kernels');
    const kernelEditor = page.locator('.editor-instance .monaco-editor[data-uri^="weft-kernel:"]').first();
    const kernelText = await waitFor('a kernel view with OpenCL text (`__kernel`)', async () => {
      const t = norm(await kernelEditor.locator('.view-lines').innerText());
      seen = t;
      return /__kernel\s+void/.test(t) ? t : false;
    }, 60000);
    const uri = await kernelEditor.getAttribute('data-uri');
    say(`kernel view ${uri}: ${kernelText.split('\n').find((l) => l.includes('__kernel'))?.trim()}`);
    await screenshot('show-kernels');

    // ------------------------------------------------------------ (d2) linked lines
    // Compiler Explorer's colours: the kernel's lines computing `entry scale`'s line
    // have that source line's colour, on both sides.
    const linked = await waitFor('kernel lines coloured as the source line they compute, in both editors', async () => {
      const inKernel = (await decorations(kernelEditor)).filter((d) => LINK_COLOURS.includes(d.colour));
      const entryTop = await lineTop(sourceEditor(), 'entry scale');
      const inSource = (await decorations(sourceEditor())).filter((d) => LINK_COLOURS.includes(d.colour) && Math.abs(d.top - entryTop) <= 2);
      seen = JSON.stringify({ kernel: inKernel.slice(0, 4), source: inSource });
      const colour = inSource[0]?.colour;
      return colour && inKernel.some((d) => d.colour === colour) ? { colour, lines: inKernel.filter((d) => d.colour === colour).length } : false;
    }, 30000);
    say(`linked lines: ${linked.lines} kernel lines in ${linked.colour}, as the source line of \`entry scale\``);
    // The cursor on the kernel's line computing `a * x` marks that expression (not the
    // whole line) in the source.
    // (`float v_6 = a_5 * x_4;`: the element is loaded on the line before.)
    const multiply = kernelEditor.locator('.view-line').filter({ hasText: /float[\s\u00a0]+\w+[\s\u00a0]+=[\s\u00a0]+\w+[\s\u00a0]+\*[\s\u00a0]+\w+/ }).first();
    await multiply.waitFor({ state: 'visible', timeout: 10000 });
    await multiply.click();
    const focused = await waitFor('the source expression of the clicked kernel line marked in the source', async () => {
      const entryTop = await lineTop(sourceEditor(), 'entry scale');
      const lineBox = await sourceEditor().locator('.view-line').filter({ hasText: 'entry scale' }).first().boundingBox();
      const marks = (await decorations(sourceEditor())).filter((d) => d.colour === FOCUS_COLOUR && Math.abs(d.top - entryTop) <= 2);
      seen = JSON.stringify({ marks, line: lineBox });
      // An expression of the line: narrower than the line's text.
      return marks.length > 0 && marks[0].width > 0 && marks[0].width < lineBox.width / 2 ? marks[0] : false;
    }, 20000);
    say(`kernel line -> source: marked ${focused.width} px of the entry's line`);
    await screenshot('kernel-line-to-source');
    // The cursor on the source line marks the kernel lines computing it.
    await clickToken('map');
    const marked = await waitFor('the kernel lines computing the clicked source line marked in the kernel view', async () => {
      const marks = (await decorations(kernelEditor)).filter((d) => d.colour === FOCUS_COLOUR);
      seen = JSON.stringify(marks.slice(0, 4));
      return marks.length > 0 ? marks.length : false;
    }, 20000);
    say(`source line -> kernel: ${marked} kernel lines marked`);
    await screenshot('source-line-to-kernel');

    // ------------------------------------------------------------ (e) Run on GPU on POCL
    // settings.json sets weft.runner.device to `cpu`; run.sh asked `weft-runner devices`
    // for POCL's CPU device (--device). The test block's first input is [1, 2, 3] and
    // 2: 2x + 1 is [3, 5, 7].
    await clickLens('▶ Run on GPU');
    let out = await waitForRun('"▶ Run on GPU" on the saved text', [3, 5, 7]);
    if (!out.includes(`on \`${opts.device}\``)) {
      throw new Error(`"▶ Run on GPU" did not say it ran on POCL's \`${opts.device}\``);
    }
    if (!/matched the expected output, done/.test(out)) {
      throw new Error('"▶ Run on GPU" printed the values but not "matched the expected output, done"');
    }
    await screenshot('run-on-pocl');

    // ------------------------------------------------------------ (f) Profile from the palette
    // The report goes to the Weft Run output; the summarised cost graph (summary.svg,
    // written under the user's cache, not beside the source) opens in an editor.
    await clearOutput();
    await clickToken('map');
    await runCommand('Weft: Profile Entry');
    // The panel shows only the lines in view (an editor renders what is visible), and
    // follows the end of the output: wait for the report's last lines, then go to its
    // first lines (how many fit depends on the fonts of the machine).
    const reportEnd = await waitFor('the end of the profile report in the Weft Run output', async () => {
      const t = await outputText();
      seen = t;
      return /wrote\s+\S+summary\.svg/.test(t) ? t : false;
    }, 120000, 500);
    await page.locator('.part.panel .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Home');
    const reportStart = await waitFor('the start of the profile report (span S) in the Weft Run output', async () => {
      const t = await outputText();
      seen = t;
      return /span S/.test(t) ? t : false;
    }, 10000);
    const report = `${reportStart}\n${reportEnd}`;
    say(`profile: ${report.split('\n').filter((l) => /span S|wrote/.test(l)).map((l) => l.trim()).join('; ').slice(0, 300)}`);
    const written = report.split('\n').map((l) => /^\s*wrote\s+(\S+)/.exec(l)?.[1]).filter(Boolean);
    if (written.length === 0 || written.some((f) => f.startsWith(path.dirname(opts.file)))) {
      throw new Error(`"Profile" wrote ${JSON.stringify(written)}: not under the user's cache`);
    }
    const svgTab = page.locator('.tabs-container .tab').filter({ hasText: 'summary.svg' }).first();
    await svgTab.waitFor({ state: 'visible', timeout: 30000 });
    // VS Code's image preview (a webview) draws it: wait until the image has loaded,
    // and check that it is shown whole (the summary fits a window at full size).
    const image = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame').locator('img').first();
    const drawn = await waitFor('the summary drawn in the image preview', async () => {
      const size = await image.evaluate((img) => ({
        natural: [img.naturalWidth, img.naturalHeight],
        shown: [Math.round(img.getBoundingClientRect().width), Math.round(img.getBoundingClientRect().height)],
        view: [document.documentElement.clientWidth, document.documentElement.clientHeight],
      }));
      seen = JSON.stringify(size);
      return size.natural[0] > 0 ? size : false;
    }, 30000);
    say(`profile: summary.svg opened in an editor, ${drawn.natural.join('x')} px, shown at ${drawn.shown.join('x')} in ${drawn.view.join('x')}`);
    // Full size fits a window (the summary has a few boxes, not the whole graph).
    if (drawn.natural[0] > 1000 || drawn.natural[1] > 700) {
      throw new Error(`the summary is ${drawn.natural.join('x')} px: larger than a window`);
    }
    await screenshot('profile');
    // Back to the source, for the edits below.
    await page.locator('.tabs-container .tab').filter({ hasText: fileName }).first().click();

    // ------------------------------------------------------------ runs take the buffer's text
    // `+ 1` becomes `+ 2` without saving. The kernel view beside is asked for again
    // (its text changes); every way to run (both lenses, both palette commands) must
    // compute [4, 6, 8] from the buffer, not the file on disk, print it once, and say
    // that it differs from the test's output.
    const kernelBefore = norm(await kernelEditor.locator('.view-lines').innerText());
    // With the keyboard: the kernel view beside it narrows the source editor, whose
    // scrollbar can then lie over the token a click would aim at.
    await sourceEditor().locator('.view-lines').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+G');
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 10000 });
    await page.keyboard.type(String(entryLine));
    await page.keyboard.press('Enter');
    await page.keyboard.press('End');
    // The line ends `+ 1) xs`: four left of the end is after the `1`.
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('ArrowLeft');
    }
    await page.keyboard.press('Shift+ArrowLeft');
    await page.keyboard.type('2');
    await waitFor('the edit `+ 2` in the editor', async () => (await sourceText()).includes('a * x + 2) xs'), 10000);
    await waitFor('the kernel view to follow the edit (its text changes, still with `__kernel`)', async () => {
      const t = norm(await kernelEditor.locator('.view-lines').innerText());
      seen = t;
      return t !== kernelBefore && /__kernel\s+void/.test(t);
    }, 30000);
    say('kernel view: asked for again after the edit');
    const runs = [
      ['lens', '▶ Run'],
      ['command', 'Weft: Run Entry'],
      ['command', 'Weft: Run Entry on GPU'],
      ['lens', '▶ Run on GPU'],
    ];
    for (const [how, title] of runs) {
      await clearOutput();
      if (how === 'lens') {
        await clickLens(title);
      } else {
        // From the command palette: the cursor is on the entry's line.
        await runCommand(title);
      }
      out = await waitForRun(`"${title}" on the unsaved edit`, [4, 6, 8]);
      if (!/^DIFFERS from the expected output, done/m.test(out)) {
        throw new Error(`"${title}" on the edited text did not say "DIFFERS from the expected output"`);
      }
      if (/GPU/.test(title) && !out.includes(`on \`${opts.device}\``)) {
        throw new Error(`"${title}" did not say it ran on POCL's \`${opts.device}\``);
      }
    }
    await screenshot('run-unsaved-edit');
  } catch (err) {
    if (page) {
      await screenshot('failure').catch(() => undefined);
      fs.writeFileSync(path.join(opts.out, 'failure-page.txt'), await page.locator('body').innerText().catch(() => ''));
    }
    throw err;
  } finally {
    await browser.close();
  }
}

main().then(
  () => say('all checks passed'),
  (err) => {
    console.error(`[e2e] FAIL: ${err.message}`);
    process.exit(1);
  },
);
