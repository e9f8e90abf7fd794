// Finding entries in Weft source text. No `vscode` import, so it is unit-tested in node.

export const IDENT = "[a-zA-Z_][a-zA-Z0-9_']*";

/** The names of the file's entries with their lines. */
export function entriesOf(text: string): { name: string; line: number }[] {
  const out: { name: string; line: number }[] = [];
  const re = new RegExp(`^entry\\s+(${IDENT})`);
  text.split(/\r?\n/).forEach((line, i) => {
    const m = re.exec(line);
    if (m) {
      out.push({ name: m[1], line: i });
    }
  });
  return out;
}

/**
 * The entry "under the cursor": the entry named by the word under the cursor, else the
 * top-level declaration enclosing the cursor if it is an entry.
 */
export function entryAt(text: string, line: number, word: string | undefined): string | undefined {
  const entries = entriesOf(text);
  if (word && entries.some((e) => e.name === word)) {
    return word;
  }
  const lines = text.split(/\r?\n/);
  const topLevel = /^(entry|def|type|import)\b/;
  for (let i = Math.min(line, lines.length - 1); i >= 0; i--) {
    if (topLevel.test(lines[i])) {
      const m = new RegExp(`^entry\\s+(${IDENT})`).exec(lines[i]);
      return m ? m[1] : undefined;
    }
  }
  return undefined;
}
