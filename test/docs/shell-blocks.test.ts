import { describe, expect, it } from 'vitest';
import { blockScript, serviceRunsFromTheStart, shellBlocks } from '../helpers/shell-blocks.js';

const ports = { service: 41000, fakeProvider: 42000 };
const block = (text: string) => ({ line: 1, text });

describe('turning a doc block into the script its reader runs', () => {
  it('finds only ```sh blocks, with the line of their fence', () => {
    const md = [
      '# t',
      '```sh',
      'echo a',
      '```',
      '```text',
      'npm test',
      '```',
      '```ts',
      '```sh inside ts',
      '```',
      '```sh',
      'echo b',
      '```',
    ].join('\n');
    expect(shellBlocks(md)).toEqual([
      { line: 2, text: 'echo a' },
      { line: 11, text: 'echo b' },
    ]);
  });

  it("moves the docs' default ports to the run's", () => {
    const script = blockScript(
      'curl -s localhost:3000/v1/x\nnpm run fake-provider -- --port 4010 &\necho http://127.0.0.1:4010/graph',
      ports,
    );
    expect(script).toBe('curl -s 127.0.0.1:41000/v1/x\nnpm run fake-provider -- --port 42000 &\necho http://127.0.0.1:42000/graph');
  });

  it('holds a curl to the status its comment states, on its last line or the line after, and no other', () => {
    const script = blockScript(
      [
        'curl -s -X POST localhost:3000/a \\\n  -d \'{"n": "# 42"}\'   # 202, queued',
        'curl -s localhost:3000/b\n# 201 {"data":…}',
        'curl -s localhost:3000/c   # → 401',
        'curl -s localhost:3000/d\n# 2. the next step',
        'KEY=$(curl -s localhost:3000/e)   # 201',
      ].join('\n'),
      ports,
    );
    expect(script.split('\n').filter((l) => l.includes('curl'))).toEqual([
      'EXPECT_STATUS=202 curl -s -X POST 127.0.0.1:41000/a \\',
      'EXPECT_STATUS=201 curl -s 127.0.0.1:41000/b',
      'EXPECT_STATUS=401 curl -s 127.0.0.1:41000/c   # → 401',
      'curl -s 127.0.0.1:41000/d',
      'KEY=$(curl -s 127.0.0.1:41000/e)   # 201',
    ]);
  });

  it('turns the directive lines into calls, and leaves other comments alone', () => {
    const script = blockScript(
      '# restart the service (Ctrl-C, npm start)\n# wait until it prints "it\'s up"\n# we restart the service later',
      ports,
    );
    expect(script.split('\n')).toEqual([
      '__docs_restart # restart the service (Ctrl-C, npm start)',
      `__docs_wait_for 'it'\\''s up' # wait until it prints "it's up"`,
      '# we restart the service later',
    ]);
  });

  it('refuses a "…" placeholder in a command, not in a comment', () => {
    expect(() => blockScript('echo ok   # key: inbox_ak_…\nKEY=inbox_ak_…', ports)).toThrow(/line 2 of the block: "…" in a command/);
    expect(() => blockScript('echo \'{\n  "a": "…"\n}\'', ports)).toThrow(/line 1 of the block/);
  });

  it('refuses a block whose quote never closes', () => {
    expect(() => blockScript("echo 'the account's token'", ports)).toThrow(/quote is never closed/);
  });

  it('runs the service from the start unless a file starts it itself or never speaks to it', () => {
    expect(serviceRunsFromTheStart([block('curl -s localhost:3000/x')])).toBe(true);
    expect(serviceRunsFromTheStart([block("echo 'A=1' >> .env\n# start the service: npm start"), block('curl localhost:3000')])).toBe(
      false,
    );
    expect(serviceRunsFromTheStart([block('# restart the service'), block('# start the service')])).toBe(true);
    expect(serviceRunsFromTheStart([block('cp .env.example .env')])).toBe(false);
  });
});
