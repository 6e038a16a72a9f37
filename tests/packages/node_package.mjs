// The Node package as a user installs it: `memfs-store` (packed from crates/memfs-node with its
// native addon) and `@anthropic-ai/sdk@1.12.0`, installed with npm into a fresh folder, no memfs
// binary anywhere.
//
// Run by scripts/test-packages.sh from that folder: `node node_package.mjs SERVER_SCRIPT`.
// Each case on a throwaway store in a temp folder:
//
// 1. the SDK's tool runner (`client.beta.messages.toolRunner`) with `memfsMemoryTool(store)`,
//    against tests/scripted/messages_server.py playing the documentation's example: the answer,
//    every tool_result the SDK sent back (the typescript-sdk dialect), and the history;
// 2. all six commands and refusals as the runner runs them (`runRunnableTool`: a thrown error
//    becomes the result's content), compared exactly;
// 3. stores that cannot open: a clear error of the right class, never a crash;
// 4. two tools sharing one store, and two stores on one folder, at once: no answer lost;
// 5. the event loop goes on while memfs works.
//
// Exit status 1 on any mismatch.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const require = createRequire(join(process.cwd(), 'index.js'));
const { Store, memfsMemoryTool, MemfsError, NoStoreError, CredentialError, StoreError, OutcomeUnknownError } = require('memfs-store');
const Anthropic = require('@anthropic-ai/sdk').default;
const { runRunnableTool } = require('@anthropic-ai/sdk/lib/tools/BetaRunnableTool');

const SERVER = process.argv[2];
const FINAL =
  'Based on your customer service guidelines, I can help you craft a response. Please share the ticket details...';
const GUIDELINES = '<guidelines>\n  <tone>Warm, brief, exact.</tone>\n</guidelines>\n';
const GUIDELINES_PATH = '/memories/customer_service_guidelines.xml';
const HEADER =
  "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:";
const GUIDELINES_VIEW =
  `Here's the content of ${GUIDELINES_PATH} with line numbers:\n` +
  '     1\t<guidelines>\n     2\t  <tone>Warm, brief, exact.</tone>\n     3\t</guidelines>\n     4\t';

const failures = [];
function check(what, actual, expected) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) {
    failures.push(what);
    console.error(`FAIL ${what}\n  expected: ${e}\n    actual: ${a}`);
  } else {
    console.log(`ok   ${what}`);
  }
}

const work = mkdtempSync(join(tmpdir(), 'memfs-node-'));

async function newStore(name, seeded) {
  const folder = join(work, name);
  const store = await Store.init(join(folder, 'store'), { keyFile: join(folder, 'key'), actor: 'node-test' });
  if (seeded) {
    check(`${name}: seed`, await store.call({ command: 'create', path: GUIDELINES_PATH, file_text: GUIDELINES }), {
      content: `File created successfully at: ${GUIDELINES_PATH}`,
      isError: false,
    });
  }
  return { store, folder };
}

/** tests/scripted/messages_server.py on 127.0.0.1, recording every request. */
async function startServer() {
  const record = join(work, `requests-${Date.now()}.jsonl`);
  const proc = spawn('python3', [SERVER, '--record', record], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout });
  const url = await new Promise((resolve) => lines.once('line', resolve));
  return {
    url,
    stop: async () => {
      proc.stdin.end();
      await new Promise((resolve) => proc.once('exit', resolve));
      return readFileSync(record, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    },
  };
}

function toolResults(requests) {
  return requests.flatMap((r) =>
    ((r.body ?? {}).messages ?? [])
      .filter((m) => Array.isArray(m.content))
      .flatMap((m) => m.content.filter((b) => b.type === 'tool_result')),
  );
}

async function runnerCase() {
  const { store } = await newStore('runner', true);
  const server = await startServer();
  let final;
  try {
    const client = new Anthropic({ baseURL: server.url, apiKey: 'sk-ant-test-key' });
    final = await client.beta.messages.toolRunner({
      model: 'claude-sonnet-5-5',
      max_tokens: 2048,
      tools: [memfsMemoryTool(store)],
      messages: [{ role: 'user', content: 'Help me respond to this customer service ticket.' }],
    });
  } finally {
    var requests = await server.stop();
  }
  check('tool runner: answer', final.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), FINAL);
  check('tool runner: requests', requests.length, 3);
  check('tool runner: tool definition', (requests[0]?.body ?? {}).tools, [{ name: 'memory', type: 'memory_20250818' }]);
  check(
    'tool runner: tool results sent',
    toolResults(requests).map(({ type, tool_use_id, content, is_error }) => ({ type, tool_use_id, content, is_error })),
    [
      { type: 'tool_result', tool_use_id: 'toolu_01', content: `${HEADER}\n4K\t/memories\n62B\t${GUIDELINES_PATH}` },
      { type: 'tool_result', tool_use_id: 'toolu_02', content: GUIDELINES_VIEW },
    ],
  );
  const log = await store.log();
  check('tool runner: history', log.map((c) => [c.generation, c.actor, c.command.command]), [[1, 'node-test', 'create']]);
  await store.close();
}

const NOTES = '/memories/notes.md';
const MOVED = '/memories/archive/notes.md';
const SESSION = [
  [{ command: 'create', path: NOTES, file_text: 'hello\nworld\n' }, [`File created successfully at: ${NOTES}`, false]],
  [
    { command: 'str_replace', path: NOTES, old_str: 'world', new_str: 'memfs' },
    [
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
        '     1\thello\n     2\tmemfs\n     3\t',
      false,
    ],
  ],
  [{ command: 'insert', path: NOTES, insert_line: 1, insert_text: 'between' }, [`The file ${NOTES} has been edited.`, false]],
  [{ command: 'rename', old_path: NOTES, new_path: MOVED }, [`Successfully renamed ${NOTES} to ${MOVED}`, false]],
  [
    { command: 'view', path: MOVED },
    [`Here's the content of ${MOVED} with line numbers:\n     1\thello\n     2\tbetween\n     3\tmemfs\n     4\t`, false],
  ],
  [{ command: 'create', path: MOVED, file_text: 'again' }, [`Error: File ${MOVED} already exists`, true]],
  [{ command: 'view', path: '/memories/../etc/passwd' }, ['Error: Path /memories/../etc/passwd would escape /memories directory', true]],
  [{ command: 'delete', path: MOVED }, [`Successfully deleted ${MOVED}`, false]],
  [{ command: 'view', path: '/memories' }, [`${HEADER}\n4K\t/memories\n4K\t/memories/archive/`, false]],
];

async function commandsCase() {
  const { store } = await newStore('commands', false);
  const tool = memfsMemoryTool(store);
  let n = 0;
  for (const [input, expected] of SESSION) {
    const toolUse = { type: 'tool_use', id: `toolu_test_${++n}`, name: 'memory', input };
    const { content, isError } = await runRunnableTool(tool, input, { toolUse, toolUseBlock: toolUse });
    check(`commands: ${JSON.stringify(input)}`, [content, isError], expected);
  }
  check('commands: one commit per mutation', (await store.log()).map((c) => c.generation), [5, 4, 3, 2, 1]);
  check('commands: undo', await store.undo(), 6);
  check('commands: restore', await store.restore('@1'), 7);
  check('commands: restored', await store.call({ command: 'view', path: NOTES }), {
    content: `Here's the content of ${NOTES} with line numbers:\n     1\thello\n     2\tworld\n     3\t`,
    isError: false,
  });
  await store.close();
  await store.close();
}

async function brokenCase() {
  const folder = join(work, 'broken');
  await (await Store.init(join(folder, 'store'), { passphrase: 'right', kdf: [8, 1, 1] })).close();
  const cases = [
    ['no store', () => Store.open(join(folder, 'nowhere'), { passphrase: 'pw' }), NoStoreError, 'no memfs store'],
    ['a missing key file', () => Store.open(join(folder, 'store'), { keyFile: join(folder, 'nokey') }), CredentialError, 'key file'],
    ['a wrong passphrase', () => Store.open(join(folder, 'store'), { passphrase: 'wrong' }), CredentialError, 'wrong passphrase or key file'],
    ['no credential', () => Store.open(join(folder, 'store')), CredentialError, 'is encrypted'],
    ['a bad dialect', () => Store.open(join(folder, 'store'), { passphrase: 'right', dialect: 'klingon' }), TypeError, 'unknown dialect'],
    ['a store there already', () => Store.init(join(folder, 'store'), { passphrase: 'x', kdf: [8, 1, 1] }), StoreError, 'already'],
  ];
  for (const [name, open, Kind, words] of cases) {
    try {
      await open();
      check(`unopenable: ${name}`, 'opened', Kind.name);
    } catch (error) {
      check(`unopenable: ${name}: ${Kind.name} says ${JSON.stringify(words)}`, [error instanceof Kind, String(error.message).includes(words)], [true, true]);
    }
  }
  check('errors: kinds', [NoStoreError, CredentialError, StoreError].map((K) => K.prototype instanceof MemfsError), [true, true, true]);
  // A change whose answer was lost may have landed: a store error, told apart by its class.
  check('errors: outcome unknown', OutcomeUnknownError.prototype instanceof StoreError, true);
  // A path from the current folder is a local store folder.
  const here = process.cwd();
  process.chdir(folder);
  try {
    await (await Store.init('relative', { keyFile: 'relative.key' })).close();
    check('a relative path: the store is in the current folder', existsSync(join(folder, 'relative', 'log')), true);
    const again = await Store.open('./relative', { keyFile: 'relative.key' });
    check('a relative path opens', (await again.call({ command: 'view', path: '/memories' })).isError, false);
    await again.close();
  } finally {
    process.chdir(here);
  }
}

async function concurrentCase() {
  const { store, folder } = await newStore('shared', false);
  const other = await Store.open(join(folder, 'store'), { keyFile: join(folder, 'key'), actor: 'second-store' });
  const tools = [memfsMemoryTool(store), memfsMemoryTool(store), memfsMemoryTool(other)];
  const answers = await Promise.all(
    tools.map(async (tool, i) => {
      const out = [];
      for (let n = 0; n < 30; n++) {
        const input = { command: 'create', path: `/memories/t${i}/f${n}.md`, file_text: `${i}-${n}\n` };
        const toolUse = { type: 'tool_use', id: `toolu_${i}_${n}`, name: 'memory', input };
        out.push((await runRunnableTool(tool, input, { toolUse, toolUseBlock: toolUse })).content);
      }
      return out;
    }),
  );
  answers.forEach((a, i) =>
    check(`concurrent: tool ${i} answered every create`, a, [...Array(30).keys()].map((n) => `File created successfully at: /memories/t${i}/f${n}.md`)),
  );
  check('concurrent: every commit', (await store.log()).length, 90);
  await store.close();
  await other.close();
}

async function eventLoopCase() {
  const { store } = await newStore('loop', false);
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  const started = Date.now();
  // A blocked loop would fire the timer only between calls; a free one about once a
  // millisecond. 200 creates take tens of milliseconds in all, however fast each one is.
  const creates = 200;
  for (let n = 0; n < creates; n++) {
    await store.call({ command: 'create', path: `/memories/a${n}.md`, file_text: 'x'.repeat(10000) });
  }
  clearInterval(ticker);
  console.log(`     (${creates} creates in ${(Date.now() - started) / 1000} s; the timer fired ${ticks} times meanwhile)`);
  check('event loop: the timer fired while memfs worked', ticks >= 40, true);
  await store.close();
}

try {
  await runnerCase();
  await commandsCase();
  await brokenCase();
  await concurrentCase();
  await eventLoopCase();
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (failures.length) {
  console.error(`${failures.length} failed: ${JSON.stringify(failures)}`);
  process.exit(1);
}
console.log('node package: all passed');
