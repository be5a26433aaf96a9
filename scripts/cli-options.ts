// Command-line options for the drivers in scripts/ (`npm run bench`, `npm run faults`): each
// option is declared once with its default and a line of help, so `--help` prints every one of
// them and an unknown option is refused with the same usage instead of a stack trace.
import { parseArgs } from 'node:util';

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Booleans default to false. */
  default?: string;
  help: string;
}

/** A string option without a default is undefined when not given. */
type Values<S extends Record<string, OptionSpec>> = {
  [K in keyof S]: S[K]['type'] extends 'boolean' ? boolean : S[K] extends { default: string } ? string : string | undefined;
};

/** The usage text: the command, then every option with its default. */
export function usage(command: string, about: string, specs: Record<string, OptionSpec>): string {
  const rows = Object.entries(specs).map(([name, s]) => [
    `--${name}${s.type === 'string' ? ' <value>' : ''}`,
    `${s.help}${s.type === 'string' && s.default !== undefined ? ` (default ${s.default})` : s.type === 'boolean' ? ' (default off)' : ''}`,
  ]);
  rows.push(['--help', 'print this and exit']);
  const width = Math.max(...rows.map(([k]) => k!.length));
  return `usage: ${command} [options]\n\n${about}\n\noptions:\n${rows.map(([k, v]) => `  ${k!.padEnd(width)}  ${v}`).join('\n')}\n`;
}

/**
 * Parses `argv` against `specs`. `--help` prints the usage to stdout and exits 0; an unknown
 * option, a missing value or a stray argument prints what was wrong and the usage to stderr and
 * exits 2 (the shell's code for a misuse).
 */
export function parseOptions<S extends Record<string, OptionSpec>>(
  command: string,
  about: string,
  specs: S,
  argv = process.argv.slice(2),
): Values<S> {
  const options: Record<string, { type: 'string' | 'boolean'; default?: string | boolean }> = { help: { type: 'boolean', default: false } };
  for (const [name, s] of Object.entries(specs)) {
    options[name] =
      s.type === 'boolean'
        ? { type: 'boolean', default: false }
        : s.default === undefined
          ? { type: 'string' }
          : { type: 'string', default: s.default };
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as typeof values;
  } catch (err) {
    process.stderr.write(`${command}: ${(err as Error).message}\n\n${usage(command, about, specs)}`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(usage(command, about, specs));
    process.exit(0);
  }
  delete values.help;
  return values as Values<S>;
}
