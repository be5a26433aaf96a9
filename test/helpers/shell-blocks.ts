/**
 * The ```sh blocks of a markdown file, and the script a reader's terminal would run for each.
 *
 * Docs are written for a reader with the service on its default address and a second
 * terminal beside it. Turning a block into a runnable script changes exactly this:
 * - addresses: the docs' default ports (3000 for the service, 4010 for `npm run
 *   fake-provider`) become the free ports this run got, so runs never meet each other or a
 *   developer's own service;
 * - a comment line beginning `# restart the service` becomes a call that restarts it (the
 *   reader stops `npm start` and starts it again, so a `.env` edit takes effect). A file whose
 *   first such line begins `# start the service` has no service before that line: its first
 *   block configures one (`echo … >> .env`) and starts it there. A file that never speaks
 *   to the service (no address of it, no directive) gets none;
 * - a comment line `# wait until it prints "TEXT"` waits until what the block printed so far
 *   holds TEXT (a server or listener started with `&` is ready), and fails as soon as that
 *   command has ended instead (60 s at most);
 * - a curl command whose comment starts with a status (`# 202 {…}`, `# → 422`), on its last
 *   line or the line after it, must answer exactly that status; every other curl must
 *   answer below 400 (the session's `curl` function checks it).
 * A `…` in a command (outside its comment) is a placeholder no reader can run, and is refused
 * before anything runs: set a variable from an earlier command instead.
 */

export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
}

/** Every ```sh fenced block, in document order. Other fences (```text, ```ts, …) are skipped whole. */
export function shellBlocks(markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  let open: { line: number; body: string[] } | undefined;
  let inOtherFence = false;
  markdown.split('\n').forEach((line, i) => {
    const fence = /^```(\S*)\s*$/.exec(line);
    if (open) {
      if (fence && fence[1] === '') {
        blocks.push({ line: open.line, text: open.body.join('\n') });
        open = undefined;
      } else open.body.push(line);
    } else if (inOtherFence) {
      if (fence && fence[1] === '') inOtherFence = false;
    } else if (fence) {
      if (fence[1] === 'sh') open = { line: i + 1, body: [] };
      else inOtherFence = true;
    } else if (/^```/.test(line)) inOtherFence = true;
  });
  if (open) throw new Error(`the sh block at line ${open.line} is never closed`);
  return blocks;
}

/** One command as the shell reads it: continuation lines and multi-line quotes joined. */
interface Command {
  /** Offsets in the block's text: where its code starts and where its line ends. */
  start: number;
  end: number;
  code: string;
  comment: string | undefined;
}

/**
 * Splits a block into commands, quote-aware: a `#` starting a word outside quotes begins a
 * comment, a newline outside quotes and not escaped ends a command. Enough of the shell's
 * grammar for documentation; `$(…)` is read as plain text, which its uses here allow.
 */
function commands(text: string): Command[] {
  const out: Command[] = [];
  let quote: "'" | '"' | undefined;
  let start = 0;
  let commentAt: number | undefined;
  const finish = (end: number) => {
    const code = text.slice(start, commentAt ?? end);
    const lead = code.length - code.trimStart().length;
    out.push({
      start: start + lead,
      end,
      code: code.trim(),
      comment: commentAt === undefined ? undefined : text.slice(commentAt, end).trim(),
    });
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (commentAt !== undefined) {
      if (c === '\n') {
        finish(i);
        start = i + 1;
        commentAt = undefined;
      }
    } else if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') {
      i++; // an escaped character, a newline included (a continuation line)
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === start || /\s/.test(text[i - 1] ?? ''))) {
      commentAt = i;
    } else if (c === '\n') {
      finish(i);
      start = i + 1;
    }
  }
  if (quote) throw new Error(`a ${quote} quote is never closed`);
  finish(text.length);
  return out;
}

const STATUS_COMMENT = /^#\s*(?:→\s*)?([1-5]\d\d)(?!\d)/;
const START_DIRECTIVE = /^#\s*(re)?start the service\b/i;
const WAIT_DIRECTIVE = /^#\s*wait until it prints "([^"]+)"/i;

/** The shell functions docs-session.sh defines for the directives. */
const DIRECTIVES = { restart: '__docs_restart', waitFor: '__docs_wait_for' } as const;

const singleQuoted = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

const SERVICE_ADDRESS = /\b(?:localhost|127\.0\.0\.1):3000\b/;

/**
 * Whether the service runs before the file's first block: unless the file starts it itself
 * (its first start directive is `# start the service`), or never speaks to it at all.
 */
export function serviceRunsFromTheStart(blocks: ShellBlock[]): boolean {
  for (const block of blocks) {
    for (const cmd of commands(block.text)) {
      const m = cmd.code === '' && cmd.comment ? START_DIRECTIVE.exec(cmd.comment) : null;
      if (m) return m[1] !== undefined;
    }
  }
  return blocks.some((b) => SERVICE_ADDRESS.test(b.text));
}

export interface Ports {
  service: number;
  fakeProvider: number;
}

/** The docs' default addresses, moved to this run's ports. */
export function withPorts(text: string, ports: Ports): string {
  return text
    .replace(/\b(?:localhost|127\.0\.0\.1):3000\b/g, `127.0.0.1:${ports.service}`)
    .replace(/\b(?:localhost|127\.0\.0\.1):4010\b/g, `127.0.0.1:${ports.fakeProvider}`)
    .replace(/--port 4010\b/g, `--port ${ports.fakeProvider}`);
}

/**
 * The script the session sources for one block. `EXPECT_STATUS` is what the session's `curl`
 * compares the answer with.
 */
export function blockScript(text: string, ports: Ports): string {
  const moved = withPorts(text, ports);
  const cmds = commands(moved);
  const edits: { at: number; end: number; insert: string }[] = [];
  cmds.forEach((cmd, i) => {
    if (cmd.code.includes('…')) {
      const line = moved.slice(0, cmd.start).split('\n').length;
      throw new Error(`line ${line} of the block: "…" in a command is a placeholder no reader can run`);
    }
    if (cmd.code === '' && cmd.comment) {
      const wait = WAIT_DIRECTIVE.exec(cmd.comment);
      if (START_DIRECTIVE.test(cmd.comment)) edits.push({ at: cmd.start, end: cmd.end, insert: `${DIRECTIVES.restart} ${cmd.comment}` });
      else if (wait) edits.push({ at: cmd.start, end: cmd.end, insert: `${DIRECTIVES.waitFor} ${singleQuoted(wait[1]!)} ${cmd.comment}` });
      return;
    }
    if (!/^curl\s/.test(cmd.code)) return;
    const next = cmds[i + 1];
    const said = cmd.comment ?? (next && next.code === '' ? next.comment : undefined);
    const status = said === undefined ? undefined : STATUS_COMMENT.exec(said)?.[1];
    if (status) edits.push({ at: cmd.start, end: cmd.start, insert: `EXPECT_STATUS=${status} ` });
  });
  let script = moved;
  for (const e of edits.sort((a, b) => b.at - a.at)) script = script.slice(0, e.at) + e.insert + script.slice(e.end);
  return script;
}
