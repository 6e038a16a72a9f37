#!/usr/bin/env node
// Differential test: `memfs exec --dialect typescript-sdk` against the TypeScript SDK's
// `BetaLocalFilesystemMemoryTool` (npm `@anthropic-ai/sdk@1.12.0`), the dialect's oracle.
//
// Random, seeded sessions of adversarial commands are sent to both. Each answer is compared
// exactly, as `(content, is_error)`. The SDK side is what its tool runner sends the model:
// `runRunnableTool(betaMemoryTool(tool), input)` (the function the SDK's `BetaToolRunner` calls),
// which gives the handler's return value with no `is_error`, or for anything thrown
// `Error: {message}` (a `ToolError`'s own content) with `is_error: true`. The input reaches the
// SDK as `JSON.parse` of the very line memfs reads, as the runner gets it from the API.
//
// A difference is accepted only when a narrow classifier recognises it as one of the documented
// deviations of `docs/COMPAT.md` (each identified by the input and both answers). Everything else
// is UNEXPLAINED: printed in full, and the run exits 1. Where memfs refuses a command that the SDK
// (partly) carried out, the SDK's directory is restored to its snapshot from before the command,
// so both sides keep the same state. A failed command that the SDK answered like memfs but that
// still changed the SDK's directory is a deviation too ("no half-applied failure"). Every
// `--check-every` commands the whole state is compared by viewing every directory and every file
// (hidden ones included) through both; those views are comparisons too.
//
// Setup and run (from the repository root; scripts/test-differential-ts.sh does both):
//
//     (cd tests/differential/ts && npm ci)
//     cargo build -p memfs-cli
//     node tests/differential/differential-ts.mjs --memfs target/debug/memfs --seed 1 --sessions 20 --commands 150
//
// Temp directories must be on ext4 for the SDK's directory sizes to be 4096 (deviation D14 is
// recognised either way, by stat-ing the directory the SDK listed). Run it with an English or C
// locale: the SDK writes 999,999 with `toLocaleString()` (memfs always writes `999,999`).

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const SDK_VERSION = '1.12.0';

// The oracle, from tests/differential/ts (npm ci there): the SDK's CommonJS build, the compiled
// source `tools/memory/node.js`.
const requireSdk = createRequire(path.join(HERE, 'ts', 'package.json'));
let sdk;
try {
  sdk = {
    version: requireSdk('@anthropic-ai/sdk/version').VERSION,
    ...requireSdk('@anthropic-ai/sdk/tools/memory/node'),
    ...requireSdk('@anthropic-ai/sdk/lib/tools/BetaRunnableTool'),
  };
} catch (e) {
  console.error(`differential-ts.mjs: cannot load @anthropic-ai/sdk from ${path.join(HERE, 'ts')}: ${e.message}`);
  console.error('run `npm ci` in tests/differential/ts (scripts/test-differential-ts.sh does)');
  process.exit(2);
}
if (sdk.version !== SDK_VERSION) {
  console.error(`differential-ts.mjs: the oracle is @anthropic-ai/sdk@${SDK_VERSION}, found ${sdk.version}`);
  process.exit(2);
}
const { BetaLocalFilesystemMemoryTool, betaMemoryTool, runRunnableTool } = sdk;

// ---------------------------------------------------------------------------------------------
// Inputs: JSON values with two extra kinds of number, so that one JSON text is what both sides
// read. `F` is a float written as given (`1.0`, `-0.0`, `1.5`: serde_json prints them alike);
// a BigInt is an integer written exactly (`4611686018427387904`), which `JSON.parse` rounds.
// ---------------------------------------------------------------------------------------------

class F {
  constructor(text) {
    this.text = text;
    this.value = Number(text);
  }
}

/** The JSON text of an input: keys in insertion order, strings as `JSON.stringify` writes them
 * (a lone surrogate as a `\ud800` escape). */
function toJson(v) {
  if (v instanceof F) return v.text;
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return '[' + v.map(toJson).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + toJson(x)).join(',') + '}';
  }
  return JSON.stringify(v);
}

/** serde_json's compact rendering (a BTreeMap: keys sorted), as memfs echoes a wrong value. */
function serdeJson(v) {
  if (v instanceof F) return v.text;
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return '[' + v.map(serdeJson).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort(byCodePoint);
    return '{' + keys.map((k) => JSON.stringify(k) + ':' + serdeJson(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}

function byCodePoint(a, b) {
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

const show = (v) => (v === undefined ? 'undefined' : toJson(v));
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof F);
const chars = (s) => Array.from(s).length;

// ---------------------------------------------------------------------------------------------
// The two implementations
// ---------------------------------------------------------------------------------------------

class Sdk {
  /** The oracle: one `BetaLocalFilesystemMemoryTool` over a fresh temp directory. */
  static async create() {
    const s = new Sdk();
    s.base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'memfs-diff-ts-')));
    s.root = path.join(s.base, 'memories');
    s.tool = betaMemoryTool(await BetaLocalFilesystemMemoryTool.init(s.base));
    return s;
  }

  /** What the tool runner sends back for one input line. */
  async call(line) {
    const input = JSON.parse(line);
    const { content, isError } = await runRunnableTool(this.tool, input, {});
    return [content, isError];
  }

  /** [files: Map rel -> Buffer, dirs: Set of rel]; "" is the root, not listed. */
  snapshot() {
    const files = new Map();
    const dirs = new Set();
    const walk = (dir, rel) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        const full = path.join(dir, e.name);
        if (e.isDirectory()) {
          dirs.add(r);
          walk(full, r);
        } else if (e.isFile()) {
          files.set(r, fs.readFileSync(full));
        } else {
          throw new Error(`unexpected file type at ${full}`);
        }
      }
    };
    walk(this.root, '');
    return [files, dirs];
  }

  restore([files, dirs]) {
    fs.rmSync(this.root, { recursive: true, force: true });
    fs.mkdirSync(this.root, { mode: 0o700 });
    for (const d of [...dirs].sort((a, b) => a.split('/').length - b.split('/').length)) {
      fs.mkdirSync(path.join(this.root, d), { mode: 0o700 });
    }
    for (const [rel, data] of files) fs.writeFileSync(path.join(this.root, rel), data, { mode: 0o600 });
  }

  close() {
    fs.rmSync(this.base, { recursive: true, force: true });
  }
}

function sameSnapshot([f1, d1], [f2, d2]) {
  if (f1.size !== f2.size || d1.size !== d2.size) return false;
  for (const d of d1) if (!d2.has(d)) return false;
  for (const [k, v] of f1) if (!f2.has(k) || !f2.get(k).equals(v)) return false;
  return true;
}

class Memfs {
  /** One `memfs exec --dialect typescript-sdk --store memory://` process. */
  constructor(binary) {
    this.proc = spawn(binary, ['exec', '--dialect', 'typescript-sdk', '--store', 'memory://'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.waiting = [];
    this.exited = null;
    readline.createInterface({ input: this.proc.stdout, crlfDelay: Infinity }).on('line', (l) => {
      const w = this.waiting.shift();
      if (w) w.resolve(l);
    });
    this.proc.on('exit', (code) => {
      this.exited = code;
      for (const w of this.waiting.splice(0)) w.reject(new Error(`memfs exited (status ${code})`));
    });
    this.proc.stdin.on('error', () => {}); // reported by the exit handler
  }

  call(line) {
    if (this.exited !== null) return Promise.reject(new Error(`memfs exited (status ${this.exited})`));
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.proc.stdin.write(line + '\n');
    }).then((out) => {
      const v = JSON.parse(out);
      return [v.content, v.is_error];
    });
  }

  close() {
    return new Promise((resolve) => {
      if (this.exited !== null) return resolve();
      this.proc.on('exit', () => resolve());
      this.proc.stdin.end();
    });
  }
}

// ---------------------------------------------------------------------------------------------
// memfs's own rules, ported, to predict its refusal messages (crates/memfs-core/src/{command,
// path,render}.rs) in the typescript-sdk dialect. Used only by the classifier.
// ---------------------------------------------------------------------------------------------

const COMMANDS = 'view, create, str_replace, insert, delete, rename';
const I64_MIN = -(2n ** 63n);
const U64_END = 2n ** 64n;
const E = 'Error: ';

function kind(v) {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'a boolean';
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof F) return 'a number';
  if (typeof v === 'string') return 'a string';
  if (Array.isArray(v)) return 'an array';
  return 'an object';
}

function short(s) {
  const a = Array.from(s);
  return a.length > 80 ? a.slice(0, 80).join('') + '…' : s;
}

/** memfs's `as_integer`: an integer of the i64 or u64 range, or an integral float up to 2^53. */
function asInteger(v) {
  if (typeof v === 'bigint') return v >= I64_MIN && v < U64_END ? v : null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : null;
  if (v instanceof F) return Number.isInteger(v.value) && Math.abs(v.value) <= 2 ** 53 ? BigInt(v.value) : null;
  return null;
}

/** memfs's input error for this input (without `Error: `), or null when it parses. */
function predictedInputError(inp) {
  if (!isObject(inp)) return `Invalid input: expected a JSON object with a \`command\` field, got ${kind(inp)}`;
  const cmd = inp.command;
  if (cmd === undefined || cmd === null) {
    return `Invalid input: missing required field \`command\` (one of: ${COMMANDS})`;
  }
  // The typescript-sdk wording of an unknown command: `betaMemoryTool`'s.
  if (typeof cmd !== 'string') return `${short(serdeJson(cmd))} not implemented`;
  const get = (f) => (inp[f] === null ? undefined : inp[f]);
  const missing = (f) => `Invalid input for command \`${cmd}\`: missing required field \`${f}\``;
  const wrong = (f, expected, v) =>
    `Invalid input for command \`${cmd}\`: field \`${f}\` must be ${expected}, got ${short(serdeJson(v))}`;
  const string = (f, optional = false) => {
    const v = get(f);
    if (v === undefined) return optional ? null : missing(f);
    return typeof v === 'string' ? null : wrong(f, 'a string', v);
  };
  const integer = (f) => {
    const v = get(f);
    if (v === undefined) return missing(f);
    return asInteger(v) !== null ? null : wrong(f, 'an integer', v);
  };
  const viewRange = () => {
    const v = get('view_range');
    const expected = 'an array of two integers [start_line, end_line]';
    if (v === undefined) return null;
    if (!Array.isArray(v) || v.some((i) => asInteger(i) === null)) return wrong('view_range', expected, v);
    return null;
  };
  const checks = {
    view: [() => string('path'), viewRange],
    create: [() => string('path'), () => string('file_text')],
    str_replace: [() => string('path'), () => string('old_str'), () => string('new_str', true)],
    insert: [() => string('path'), () => integer('insert_line'), () => string('insert_text')],
    delete: [() => string('path')],
    rename: [() => string('old_path'), () => string('new_path')],
  };
  if (!Object.hasOwn(checks, cmd)) return `${short(cmd)} not implemented`;
  for (const check of checks[cmd]) {
    const err = check();
    if (err !== null) return err;
  }
  return null;
}

const isControl = (c) => /\p{Cc}/u.test(c);
const isFormat = (c) => /\p{Cf}/u.test(c);

/** One round of `percent_decode_str(..).decode_utf8_lossy()`. */
function percentDecode(s) {
  const bytes = [];
  const src = Buffer.from(s, 'utf8');
  for (let i = 0; i < src.length; i++) {
    const hex = (b) => /[0-9a-fA-F]/.test(String.fromCharCode(b));
    if (src[i] === 0x25 && i + 2 < src.length && hex(src[i + 1]) && hex(src[i + 2])) {
      bytes.push(parseInt(String.fromCharCode(src[i + 1], src[i + 2]), 16));
      i += 2;
    } else {
      bytes.push(src[i]);
    }
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(Uint8Array.from(bytes));
}

function encodedTraversal(name) {
  let current = name;
  for (;;) {
    const decoded = percentDecode(current);
    if (decoded === current) return false;
    if (
      decoded === '.' ||
      decoded === '..' ||
      decoded.includes('/') ||
      decoded.includes('\\') ||
      Array.from(decoded).some(isControl)
    ) {
      return true;
    }
    current = decoded;
  }
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** [kind, memfs message] for a path memfs refuses (`MemoryPath::parse`), else null. For kinds
 * "control" and "format" the message is a RegExp (the path is Rust-`escape_debug`ged). */
function pathError(p) {
  const n = Buffer.byteLength(p, 'utf8');
  if (n > 4096) return ['path-too-long', `${E}Invalid path: it is ${n} bytes long, the limit is 4096 bytes`];
  if (!p.startsWith('/memories')) return ['not-under-root', `${E}Path must start with /memories, got: ${p}`];
  if (Array.from(p).some(isControl)) {
    return ['control', /^Error: Invalid path .*: control characters are not allowed in memory paths$/s];
  }
  if (p.includes('\\')) return ['backslash', `${E}Invalid path ${p}: backslashes are not allowed in memory paths`];
  if (Array.from(p).some(isFormat)) {
    return [
      'format',
      /^Error: Invalid path .*: invisible format characters \(such as bidi controls and zero-width spaces\) are not allowed in memory paths$/s,
    ];
  }
  const rest = p.slice('/memories'.length);
  if (rest && !rest.startsWith('/')) {
    return [
      'sibling',
      `${E}Path ${p} is outside the /memories directory: it must be /memories or start with /memories/`,
    ];
  }
  const comps = [];
  for (const part of rest.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (comps.length === 0) return ['escapes', `${E}Path ${p} would escape /memories directory`];
      comps.pop();
      continue;
    }
    const name = part.normalize('NFC');
    if (Buffer.byteLength(name, 'utf8') > 255) {
      return ['name-too-long', `${E}Invalid path ${p}: a file or directory name is longer than 255 bytes`];
    }
    if (encodedTraversal(name)) {
      return ['encoded', `${E}Invalid path ${p}: percent-encoded traversal sequences are not allowed`];
    }
    comps.push(name);
  }
  return null;
}

/** Lexical normalisation of a valid memory path (memfs's and, inside the root, the SDK's). */
function components(p) {
  const comps = [];
  for (const part of p.slice('/memories'.length).split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') comps.pop();
    else comps.push(part);
  }
  return comps;
}

// ---------------------------------------------------------------------------------------------
// The classifier
// ---------------------------------------------------------------------------------------------

const LISTING_HEAD = "Here're the files and directories up to 2 levels deep in ";

// Answers the SDK gives when it treats a path as an ordinary one (success or its own error).
const SDK_NORMAL_PATTERNS = [
  ['ok: directory listing', /^Here're the files and directories up to 2 levels deep in .*, excluding hidden items and node_modules:\n/s],
  ['ok: file view', /^Here's the content of .* with line numbers:\n/s],
  ['ok: created', /^File created successfully at: /s],
  ['ok: replaced', /^The memory file has been edited\. Here is the snippet/s],
  ['ok: inserted', /^The file .* has been edited\.$/s],
  ['ok: deleted', /^Successfully deleted /s],
  ['ok: renamed', /^Successfully renamed /s],
  ['error: does not exist', /^Error: The path .* does not exist/s],
  ['error: not a file', /^Error: The path .* is not a file\.$/s],
  ['error: file already exists', /^Error: File .* already exists$/s],
  ['error: destination exists', /^Error: The destination .* already exists$/s],
  ['error: old_str not found', /^Error: No replacement was performed, old_str /s],
  ['error: old_str not unique', /^Error: No replacement was performed\. Multiple occurrences/s],
  ['error: insert_line out of range', /^Error: Invalid `insert_line` parameter: /s],
  ['error: too many lines', /^Error: File .* has too many lines \(\d+\)\. Maximum is 999,999 lines\.$/s],
  ['error: not under /memories', /^Error: Path must start with \/memories, got: /s],
  ['error: would escape', /^Error: Path .* would escape \/memories directory$/s],
  ['error: root delete/rename', /^Error: Cannot (delete|rename) the \/memories directory itself$/s],
  ['error: not implemented', /^Error: .* not implemented$/s],
];
// Host errors the SDK passes on, with the host path (`{base}` is the SDK's temp directory).
const LEAK_PATTERNS = [
  ['leak: ENOTDIR', /^Error: ENOTDIR: not a directory, realpath '(.*)'$/s],
  ['leak: ENAMETOOLONG', /^Error: ENAMETOOLONG: name too long, \w+ '.*'$/s],
  ['leak: EINVAL', /^Error: EINVAL: invalid argument, rename '(.*)' -> '(.*)'$/s],
  ['leak: null byte', /^Error: The argument 'path' must be a string, Uint8Array, or URL without null bytes\. Received /s],
];

const sdkNormal = (r) => typeof r[0] === 'string' && SDK_NORMAL_PATTERNS.some(([, re]) => re.test(r[0]));
const leak = (r, name) => {
  if (typeof r[0] !== 'string' || !r[1]) return null;
  const found = LEAK_PATTERNS.find(([n]) => n === name);
  return found[1].exec(r[0]);
};

/** A short name for an SDK answer, for the coverage table. */
function outcome(r) {
  if (typeof r[0] !== 'string') return `non-string: ${typeof r[0]}`;
  for (const [name, re] of [...SDK_NORMAL_PATTERNS, ...LEAK_PATTERNS]) if (re.test(r[0])) return name;
  return r[1] ? 'error: other: ' + r[0].slice(0, 40) : 'ok: other';
}

const PATH_FIELDS = {
  view: ['path'],
  create: ['path'],
  str_replace: ['path'],
  insert: ['path'],
  delete: ['path'],
  rename: ['old_path', 'new_path'],
};

const PATH_CLASSES = {
  sibling: 'D1 /memoriesfoo sibling of the root refused',
  escapes: 'D2 `..` above /memories refused even if it comes back',
  backslash: 'D3 backslash in path refused',
  encoded: 'D4 percent-encoded traversal refused',
  control: 'D5 control character in path refused',
  'name-too-long': 'D6 name > 255 / path > 4096 bytes refused',
  'path-too-long': 'D6 name > 255 / path > 4096 bytes refused',
  format: 'D20 invisible format character in path refused',
};

function hasLoneSurrogate(v) {
  if (typeof v === 'string') return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(v);
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  if (isObject(v)) return Object.values(v).some(hasLoneSurrogate);
  return false;
}

function hasBigInt(v) {
  if (typeof v === 'bigint') return !(v >= I64_MIN && v < U64_END);
  if (Array.isArray(v)) return v.some(hasBigInt);
  if (isObject(v)) return Object.values(v).some(hasBigInt);
  return false;
}

/** The first proper prefix of `comps` that is a file, as a relative path. */
function firstFilePrefix(comps, files) {
  for (let i = 1; i < comps.length; i++) {
    const rel = comps.slice(0, i).join('/');
    if (files.has(rel)) return rel;
  }
  return null;
}

/** For an input memfs must refuse whatever the tree holds (malformed input, a refused path), a
 * check of memfs's answer; null otherwise. Catches memfs answering like the SDK where a safety
 * deviation should apply (for example accepting `/memoriesfoo`). */
function expectedRefusal(inp) {
  if (hasLoneSurrogate(inp)) return (m) => m[1] && m[0].startsWith('Invalid JSON input line: ');
  if (hasBigInt(inp)) return (m) => m[1] && m[0].includes(' must be ');
  let expected = predictedInputError(inp);
  if (expected === null && inp.command === 'str_replace' && (inp.new_str === undefined || inp.new_str === null)) {
    expected = 'Invalid input for command `str_replace`: missing required field `new_str`';
  }
  if (expected !== null) return (m) => m[0] === E + expected && m[1] === true;
  for (const field of PATH_FIELDS[inp.command]) {
    const err = pathError(inp[field]);
    if (err !== null) {
      const [k, msg] = err;
      if (k === 'control' || k === 'format') return (m) => m[1] && msg.test(m[0]);
      return (m) => m[0] === msg && m[1] === true;
    }
  }
  return null;
}

const VIEW_MAX_CHARS = 16000;
const CUT_FILE =
  /^(.*)\n\(Cut at 16000 characters: lines (\d+)-(\d+) of (\d+)-(\d+) shown\.(?: To see the next part, view this file with view_range \[(\d+), (\d+)\]\.)?\)$/s;
const CUT_DIR =
  /^(.*)\n\(Cut at 16000 characters: entries (\d+)-(\d+) of (\d+)-(\d+) shown\. To see the next part, view this directory with view_range \[(\d+), (\d+)\]\.\)$/s;
const CUT_ERROR = /^(.*)\n\(Cut at 16000 characters: this message has (\d+) characters and only its first (\d+) are shown\.\)$/s;

/** D17 when `mem` is `sdk` cut on a line boundary within the limit with the exact note. */
function classifyCutView(sdkText, mem) {
  if (chars(mem) > VIEW_MAX_CHARS) return null;
  const m = CUT_FILE.exec(mem);
  if (!m) return null;
  const [shown, first, last, firstAsked, lastAsked] = [m[1], ...m.slice(2, 6).map(Number)];
  const sdkLines = sdkText.split('\n');
  const want = sdkLines.slice(0, 1 + last - first + 1);
  const got = shown.split('\n');
  if (got.length !== want.length || got.some((l, i) => l !== want[i]) || first !== firstAsked) return null;
  if (sdkLines.length - 1 !== lastAsked - first + 1 || last >= lastAsked) return null;
  if (m[6] === undefined || Number(m[6]) !== last + 1 || Number(m[7]) !== lastAsked) return null;
  return 'D17 view longer than 16,000 characters cut with a note naming the next view_range';
}

/** D17 when `mem` is the SDK's match list cut within the limit: the first lines, then
 * `… and {n} more` for the rest. */
function classifyCutMatches(oldStr, sdkText, mem) {
  const head = `${E}No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: `;
  const tail = '. Please ensure it is unique';
  if (chars(mem) > VIEW_MAX_CHARS || ![sdkText, mem].every((t) => t.startsWith(head) && t.endsWith(tail))) {
    return null;
  }
  const sdkLines = sdkText.slice(head.length, -tail.length).split(', ');
  const body = mem.slice(head.length, -tail.length);
  const at = body.lastIndexOf(', … and ');
  if (at <= 0) return null;
  const listed = body.slice(0, at).split(', ');
  const more = body.slice(at + ', … and '.length);
  if (!/^\d+ more$/.test(more)) return null;
  if (listed.some((l, i) => l !== sdkLines[i]) || listed.length + parseInt(more, 10) !== sdkLines.length) return null;
  return 'D17 str_replace match list longer than 16,000 characters cut with a count of the rest';
}

/** D17 for any other error over the limit: its first characters and a note. */
function classifyCutError(sdkText, mem) {
  const m = CUT_ERROR.exec(mem);
  if (!m || chars(mem) > VIEW_MAX_CHARS) return null;
  const s = Array.from(sdkText);
  if (Number(m[2]) !== s.length || Number(m[3]) !== chars(m[1]) || s.slice(0, Number(m[3])).join('') !== m[1]) {
    return null;
  }
  return 'D17 error longer than 16,000 characters cut with a note';
}

const two = (v) => Array.isArray(v) && v.length === 2;

/** D17 for a directory view: memfs lists the entries `view_range` selects (all without one; the
 * SDK ignores it), cut on a row within 16,000 characters with the exact note. */
function classifyListing(inp, sdkText, mem, side) {
  const lines = sdkText.split('\n');
  const head = lines.slice(0, 2);
  let rows = lines.slice(2);
  const vr = inp.view_range;
  const ranged = two(vr);
  let first = 1;
  if (ranged) {
    const [a, b] = [asInteger(vr[0]), asInteger(vr[1])];
    if (a === null || b === null) return null;
    const len = BigInt(rows.length);
    const start = Number((a > 1n ? a : 1n) - 1n < len ? (a > 1n ? a : 1n) - 1n : len);
    let end;
    if (b === -1n) end = rows.length;
    else if (b < 0n) end = Number(b + len > 0n ? b + len : 0n);
    else end = Number(b < len ? b : len);
    rows = rows.slice(start, Math.max(start, end));
    first = start + 1;
  }
  let expected = [...head, ...rows].join('\n');
  let shown = mem;
  if (chars(expected) > VIEW_MAX_CHARS && rows.length) {
    const m = CUT_DIR.exec(mem);
    if (m === null || chars(mem) > VIEW_MAX_CHARS) return null;
    shown = m[1];
    const [f, last, f2, lastAsked, a2, b2] = m.slice(2, 8).map(Number);
    if (f !== first || f2 !== first || lastAsked !== first + rows.length - 1 || a2 !== last + 1 || b2 !== lastAsked) {
      return null;
    }
    if (!(first <= last && last < lastAsked)) return null;
    expected = [...head, ...rows.slice(0, last - first + 1)].join('\n');
  }
  if (shown !== expected && !onlyDirSizesDiffer(inp.path, expected, shown, side)) return null;
  if (ranged && shown.split('\n').length !== sdkText.split('\n').length) {
    return 'D17 view_range on a directory selects listing entries';
  }
  if (ranged) return null; // every entry selected: D14 at most, below
  return 'D17 view longer than 16,000 characters cut with a note naming the next view_range';
}

/** The SDK's `formatFileSize` (tools/memory/node.js), for D14. */
function formatFileSize(bytes) {
  if (bytes === 0) return '0B';
  const k = 1024;
  const sizes = ['B', 'K', 'M', 'G'];
  const i = Math.floor(Math.log(bytes) / Math.log(k));
  const size = bytes / Math.pow(k, i);
  return (size % 1 === 0 ? size.toString() : size.toFixed(1)) + sizes[i];
}

function onlyDirSizesDiffer(p, sdkText, mem, side) {
  if (!(sdkText.startsWith(LISTING_HEAD) && mem.startsWith(LISTING_HEAD))) return false;
  const s = sdkText.split('\n');
  const m = mem.split('\n');
  if (s.length !== m.length || s[0] !== m[0]) return false;
  const listed = path.join(side.root, ...components(p));
  for (let i = 1; i < s.length; i++) {
    if (s[i] === m[i]) continue;
    const [sSize, ...sRest] = s[i].split('\t');
    const [mSize, ...mRest] = m[i].split('\t');
    if (sRest.join('\t') !== mRest.join('\t') || mSize !== '4K') return false;
    let target;
    if (i === 1) target = listed; // the listed directory's own row
    else if (sRest.join('\t').endsWith('/')) target = path.join(listed, sRest.join('\t').slice(p.length + 1, -1));
    else return false; // a file row: sizes must agree
    let st;
    try {
      st = fs.statSync(target);
    } catch {
      return false;
    }
    if (!st.isDirectory() || formatFileSize(st.size) !== sSize) return false;
  }
  return true;
}

/** Whether `leaked` (a host path in an SDK error) is `p` (a memory path) resolved in `side`. */
function hostPathOf(side, p) {
  return path.join(side.root, ...components(p));
}

/** The deviation class of a difference, or null when it is unexplained. */
function classify(inp, sdkR, mem, pre, side) {
  // D15: a lone surrogate cannot be encoded as UTF-8; memfs refuses the JSON line.
  if (hasLoneSurrogate(inp)) {
    if (mem[1] && mem[0].startsWith('Invalid JSON input line: ')) return 'D15 lone surrogate refused as invalid JSON';
    return null;
  }
  // D16: integers beyond 64 bits (serde reads them as floats).
  if (hasBigInt(inp)) {
    const re =
      /^Error: Invalid input for command `(insert|view)`: field `(insert_line|view_range)` must be (an integer|an array of two integers \[start_line, end_line\]), got .*$/s;
    if (mem[1] && re.test(mem[0])) return 'D16 integer beyond 64 bits refused';
    return null;
  }
  const text = typeof sdkR[0] === 'string' ? sdkR[0] : null;

  // D17: a view longer than the policy's view-max-chars (16,000 by default) is cut after the
  // last whole line that fits and ends with a note; what it shows is the SDK's answer's start.
  // So is a listing, by entries; `view_range` on a directory selects them.
  if (isObject(inp) && inp.command === 'view' && text !== null && !sdkR[1] && !mem[1]) {
    if (text.startsWith(LISTING_HEAD) && mem[0].startsWith(LISTING_HEAD) && (chars(text) > VIEW_MAX_CHARS || two(inp.view_range))) {
      const listing = classifyListing(inp, text, mem[0], side);
      if (listing !== null) return listing;
    }
    if (chars(text) > VIEW_MAX_CHARS) return classifyCutView(text, mem[0]);
  }
  // D17: so is an error: a match list keeps the lines that fit and counts the rest; any other
  // long error is cut with a note.
  if (text !== null && sdkR[1] && mem[1] && chars(text) > VIEW_MAX_CHARS) {
    if (isObject(inp) && inp.command === 'str_replace' && typeof inp.old_str === 'string') {
      const cut = classifyCutMatches(inp.old_str, text, mem[0]);
      if (cut !== null) return cut;
    }
    return classifyCutError(text, mem[0]);
  }

  // D10: malformed input; memfs names the field, the SDK coerces, leaks a JavaScript error, or
  // (a command named like a member of the tool object: `toString`, `constructor`) runs that.
  const expected = predictedInputError(inp);
  if (expected !== null) {
    if (mem[0] === E + expected && mem[1]) return 'D10 malformed input refused with a field-naming error';
    return null;
  }

  const cmd = inp.command;
  // D12: str_replace without new_str. The SDK writes `undefined` (or `null`) in place of
  // old_str on a unique match, or gives one of its own errors before that.
  if (cmd === 'str_replace' && (inp.new_str === undefined || inp.new_str === null)) {
    if (mem[0] === `${E}Invalid input for command \`str_replace\`: missing required field \`new_str\`` && mem[1] && sdkNormal(sdkR)) {
      return 'D12 str_replace without new_str refused';
    }
    return null;
  }

  // D1-D6, D20: path refusals, in memfs's field order.
  for (const field of PATH_FIELDS[cmd]) {
    const err = pathError(inp[field]);
    if (err === null) continue;
    const [k, msg] = err;
    if (!(k in PATH_CLASSES)) return null; // memfs and the SDK give the same message for these
    const okMem = mem[1] && (k === 'control' || k === 'format' ? msg.test(mem[0]) : mem[0] === msg);
    if (!okMem) return null;
    let okSdk;
    if (k === 'control' && inp[field].includes('\0')) okSdk = leak(sdkR, 'leak: null byte') !== null || sdkNormal(sdkR);
    else if (k === 'name-too-long' || k === 'path-too-long') okSdk = leak(sdkR, 'leak: ENAMETOOLONG') !== null || sdkNormal(sdkR);
    else okSdk = sdkNormal(sdkR) || leak(sdkR, 'leak: ENOTDIR') !== null;
    return okSdk ? PATH_CLASSES[k] : null;
  }

  // A view changes nothing: the state before it is the state now.
  const [files, dirs] = pre !== null ? pre : side.snapshot();

  // D7, D11, D22: a path through a file. The SDK's symlink check (`realpath`) fails with
  // ENOTDIR for any such path and passes the error on with the host path; memfs answers as the
  // Python SDK does where that one is clean (does not exist), else with its own D7 message.
  const enotdir = leak(sdkR, 'leak: ENOTDIR');
  if (enotdir !== null) {
    const fields = PATH_FIELDS[cmd];
    const through = fields.filter((f) => firstFilePrefix(components(inp[f]), files) !== null);
    // The SDK validates old_path before new_path; the leaked path is the first one through a file.
    if (through.length === 0 || enotdir[1] !== hostPathOf(side, inp[through[0]])) return null;
    const allowed = [];
    const field = through[0];
    const target = inp[field];
    if (cmd === 'create' || (cmd === 'rename' && field === 'new_path')) {
      const prefix = firstFilePrefix(components(target), files);
      allowed.push(`${E}The path ${target} is not valid: /memories/${prefix} is a file, not a directory`);
    }
    if (cmd === 'rename') {
      allowed.push(`${E}The path ${inp.old_path} does not exist`);
      allowed.push(`${E}The destination ${inp.new_path} already exists`);
      allowed.push(`${E}Cannot rename the /memories directory itself`);
      const prefix = firstFilePrefix(components(inp.new_path), files);
      if (prefix !== null) {
        allowed.push(`${E}The path ${inp.new_path} is not valid: /memories/${prefix} is a file, not a directory`);
      }
    }
    if (['view', 'str_replace', 'insert'].includes(cmd)) {
      allowed.push(`${E}The path ${target} does not exist. Please provide a valid path.`);
    }
    if (cmd === 'delete') allowed.push(`${E}The path ${target} does not exist`);
    if (!mem[1] || !allowed.includes(mem[0])) return null;
    if (cmd === 'create' || (cmd === 'rename' && field === 'new_path')) {
      return 'D7 parent component is a file (create/rename destination)';
    }
    if (cmd === 'rename') return 'D11 rename source through a file';
    return 'D22 path through a file (view/str_replace/insert/delete): the SDK leaks ENOTDIR';
  }

  if (cmd === 'rename') {
    const [oldC, newC] = [components(inp.old_path), components(inp.new_path)];
    const oldRel = oldC.join('/');
    const intoItself = newC.length > oldC.length && oldC.every((c, i) => newC[i] === c);
    const einval = leak(sdkR, 'leak: EINVAL');
    // D8: a directory into its own subtree (the SDK creates the parents, then EINVAL).
    if (intoItself && dirs.has(oldRel)) {
      const msg = `${E}Cannot rename ${inp.old_path} to ${inp.new_path}: a directory cannot be moved into itself`;
      if (mem[0] === msg && mem[1] && einval !== null) return 'D8 rename of a directory into itself refused';
      return null;
    }
    // D8+D9: a missing source with the destination below it: the SDK's mkdir of the
    // destination's parents creates the source, then the rename fails with EINVAL.
    if (intoItself && !files.has(oldRel)) {
      if (mem[0] === `${E}The path ${inp.old_path} does not exist` && mem[1] && einval !== null) {
        return 'D8+D9 rename of a missing source into itself (SDK creates it, then EINVAL)';
      }
      return null;
    }
  }

  // D14: directory sizes, fixed at 4096 in memfs, the host's st_size in the SDK.
  if (cmd === 'view' && text !== null && !sdkR[1] && !mem[1] && onlyDirSizesDiffer(inp.path, text, mem[0], side)) {
    return 'D14 directory size fixed at 4096';
  }
  return null;
}

/** Both answered the same error, but the SDK's directory changed. */
function classifyDrift(inp, pre, post) {
  if (isObject(inp) && inp.command === 'rename') {
    const [preFiles, preDirs] = pre;
    const [postFiles, postDirs] = post;
    const sameFiles = preFiles.size === postFiles.size && [...preFiles].every(([k, v]) => postFiles.get(k)?.equals(v));
    const grew = [...preDirs].every((d) => postDirs.has(d)) && postDirs.size > preDirs.size;
    if (sameFiles && grew) return 'D9 failed rename leaves no created parent dirs';
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The generator (tests/differential/differential.py's, with the TypeScript SDK's own edges:
// names that sort differently by UTF-16 units and by code points, sizes where the SDKs round
// differently, files at the line limit, commands named like members of the tool object)
// ---------------------------------------------------------------------------------------------

const FILE_NAMES = [
  'a.txt', 'b.md', 'notes.md', 'todo', 'c', '日記.md', 'emoji😀.txt', 'sp ace.txt', '100%.md',
  'x%41y.txt', '...', '-dash', 'UPPER.TXT', 'a.txt.bak', '\u00fcn\u00ef', 'z', 'MiXed.Md', 'trail ',
  ' ', 'a.', '~tilde', '#hash',
  // U+FB01 and U+FF5A sort after U+1F600 and U+1D49C by code point, before them by UTF-16 unit.
  'emoji\ufb01.txt', '\uff5a.md', '\u{1d49c}.md', '\ue000private',
];
const DIR_NAMES = ['sub', 'docs', 'deep', 'node_modules', '日本', 'd d', 'x.y', 'proj', 'a', '\u{1d49c}dir', '\uff5adir'];
const HIDDEN_NAMES = ['.hidden', '.cfg.md', '.git'];
const ROOT_SPELLINGS = ['/memories', '/memories/', '/memories/.', '/memories//', '/memories/x/..', '/memories/./'];
const MAX_ENTRIES = 25; // per directory, so ext4 directories stay one 4096-byte block
const MAX_DEPTH = 4; // directory levels below /memories
// Exact sizes where formatFileSize's rounding or unit matters: 1280 and 2304 are ties that
// JavaScript's toFixed rounds up (1.3K, 2.3K; Python 1.2K, 2.2K).
const SIZES = [1023, 1024, 1025, 1280, 1792, 2047, 2048, 2304, 3328, 5632, 10240, 1048575, 1048576, 1310720];
const TS_MEMBERS = ['toString', 'constructor', 'validatePath', '__proto__', 'hasOwnProperty', 'valueOf', 'init', 'basePath'];

const FRAGMENTS = [
  'hello world', 'dup', 'dup dup', 'tab\there', 'lone\rcr', 'é', '日本語テキスト', 'emoji 😀 🎉',
  '$1 $& $$', '\\1 \\n \\g<0>', 'TODO: x', 'key = value', '   indented', 'trailing  ', '',
  '\u2028sep', '\x0b\x0c', 'nul\x00in', 'ﬁ ligature', 'a\u0301 combining', '`backticks`',
  '{"json": 1}', 'x', 'dup\r', 'Ω≈ç√', '\u{1f468}\u200d\u{1f469}\u200d\u{1f467} family', "$' $`",
];

/** A small fast PRNG (sfc32) seeded from a string (cyrb128). */
class Rng {
  constructor(seed) {
    let [h1, h2, h3, h4] = [1779033703, 3144134277, 1013904242, 2773480762];
    for (let i = 0; i < seed.length; i++) {
      const k = seed.charCodeAt(i);
      h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
      h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
      h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
      h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
    }
    h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
    h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
    h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
    h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
    this.s = [(h1 ^ h2 ^ h3 ^ h4) >>> 0, (h2 ^ h1) >>> 0, (h3 ^ h1) >>> 0, (h4 ^ h1) >>> 0];
    for (let i = 0; i < 15; i++) this.random();
  }

  random() {
    let [a, b, c, d] = this.s;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    this.s = [a, b, c, d];
    return (t >>> 0) / 4294967296;
  }

  randint(a, b) {
    return a + Math.floor(this.random() * (b - a + 1));
  }

  randrange(n) {
    return Math.floor(this.random() * n);
  }

  choice(arr) {
    return arr[this.randrange(arr.length)];
  }

  weighted(items, weights) {
    const total = weights.reduce((x, y) => x + y, 0);
    let r = this.random() * total;
    for (let i = 0; i < items.length; i++) {
      r -= weights[i];
      if (r < 0) return items[i];
    }
    return items[items.length - 1];
  }
}

const sorted = (it) => [...it].sort(byCodePoint);

class Gen {
  constructor(rng) {
    this.r = rng;
    this.files = new Map();
    this.dirs = new Set();
  }

  observe([files, dirs]) {
    this.files = files;
    this.dirs = dirs;
  }

  // -- text ---------------------------------------------------------------------------------
  line() {
    return Array.from({ length: this.r.randint(1, 3) }, () => this.r.choice(FRAGMENTS)).join(' ');
  }

  content() {
    const r = this.r.random();
    if (r < 0.08) return '';
    if (r < 0.12) return this.r.choice(['\n', '\n\n\n', '\r\n', '\r', '\t', ' ']);
    if (r < 0.14) return Array.from({ length: this.r.randint(200, 2500) }, (_, i) => `line ${i} dup`).join('\n') + '\n';
    if (r < 0.16) return 'long '.repeat(this.r.randint(500, 3000)) + this.r.choice(['', '\n']);
    if (r < 0.185) {
      // An exact byte size, in lines of ASCII.
      const n = this.r.choice(SIZES);
      const body = Array.from({ length: Math.ceil(n / 64) }, (_, i) => `${i} `.padEnd(63, 'x') + '\n').join('');
      return body.slice(0, n);
    }
    if (r < 0.187) return '\n'.repeat(this.r.choice([999_998, 999_999])); // 999,999 and 1,000,000 lines
    const lines = Array.from({ length: this.r.randint(1, 8) }, () => this.line());
    const sep = this.r.random() < 0.2 ? '\r\n' : '\n';
    let s = lines.join(sep);
    if (this.r.random() < 0.6) s += sep;
    return s;
  }

  oldStr(content) {
    const r = this.r.random();
    const cs = content.length < 100_000 ? Array.from(content) : null; // by code point: no lone surrogate
    if (cs && cs.length && r < 0.45) {
      const i = this.r.randrange(cs.length);
      return cs.slice(i, i + this.r.randint(1, Math.min(40, cs.length - i))).join('');
    }
    if (content && r < 0.55) {
      const lines = content.split('\n').filter((l) => l);
      if (lines.length) return this.r.choice(lines);
    }
    if (r < 0.62) return 'dup';
    if (r < 0.68) return '';
    if (cs && content.includes('\n') && r < 0.75) {
      const nl = cs.indexOf('\n');
      const from = this.r.randrange(nl + 1);
      const i = cs.indexOf('\n', from);
      return cs.slice(Math.max(0, i - this.r.randint(0, 10)), i + this.r.randint(1, 10)).join('');
    }
    if (r < 0.82) return this.r.choice(['\r\n', '\r', '\t', '\n', '😀']);
    return 'not-present-ZZ';
  }

  newStr() {
    return this.r.choice([this.line(), this.line(), '', '$1', "$0 $& \\1 $' $`", 'multi\nline\nnew', 'x\r\ny', this.content(), '😀\n']);
  }

  insertText() {
    return this.r.choice([this.line(), this.line(), '', 'ends\n', 'ends\n\n\n', '\n', 'cr\r', 'two\nlines', 'crlf\r\n', this.content()]);
  }

  // -- tree ---------------------------------------------------------------------------------
  entries(d) {
    const pre = d ? d + '/' : '';
    let n = 0;
    for (const p of [...this.files.keys(), ...this.dirs]) if (p.startsWith(pre) && !p.slice(pre.length).includes('/')) n++;
    return n;
  }

  anyFile() {
    return this.files.size ? this.r.choice(sorted(this.files.keys())) : null;
  }

  anyDir() {
    return this.dirs.size ? this.r.choice(sorted(this.dirs)) : null;
  }

  dirOrRoot() {
    return this.dirs.size && this.r.random() < 0.6 ? this.anyDir() : '';
  }

  name(forDir = false) {
    const r = this.r.random();
    if (r < 0.08) return this.r.choice(HIDDEN_NAMES);
    if (r < 0.09) return 'L'.repeat(this.r.randint(100, 200));
    if (r < 0.095) return 'é'.repeat(127) + 'x'; // exactly 255 bytes
    return this.r.choice(forDir ? DIR_NAMES : FILE_NAMES);
  }

  /** A path for something new (it may exist already when its directory is full). */
  newPath(nested = false) {
    for (let attempt = 0; attempt < 20; attempt++) {
      let parent = this.dirOrRoot();
      const depth = parent ? parent.split('/').length : 0;
      if (depth < MAX_DEPTH && this.entries(parent) < MAX_ENTRIES && (nested || this.r.random() < 0.2)) {
        const levels = this.r.randint(1, MAX_DEPTH - depth);
        for (let i = 0; i < levels; i++) {
          const child = this.name(true);
          const cand = parent ? `${parent}/${child}` : child;
          if (this.files.has(cand)) break;
          parent = cand;
          if (!this.dirs.has(cand)) break; // a new directory: its children are new too
        }
      }
      if (this.files.has(parent)) continue;
      if ((this.dirs.has(parent) || parent === '') && this.entries(parent) >= MAX_ENTRIES) continue;
      const name = this.name();
      return parent ? `${parent}/${name}` : name;
    }
    return this.anyFile() ?? 'a.txt';
  }

  missing() {
    const parent = this.dirOrRoot();
    const name = this.r.choice(['missing.txt', 'nope', 'gone/deeper.md']);
    return parent ? `${parent}/${name}` : name;
  }

  throughFile() {
    const f = this.anyFile();
    if (f === null) return this.missing();
    return f + '/' + this.r.choice(['x', 'x/y.txt', '.', 'sub/']);
  }

  /** A spelling of /memories/<rel>: plain, `//`, `/./`, `x/..`, trailing slash. */
  spell(rel) {
    if (rel === '') return this.r.choice(ROOT_SPELLINGS);
    const comps = rel.split('/');
    const r = this.r.random();
    if (r < 0.6) return '/memories/' + rel;
    const i = this.r.randint(0, comps.length - 1);
    const join = (extra) => '/memories/' + [...comps.slice(0, i), ...extra, ...comps.slice(i)].join('/');
    if (r < 0.68) return join(['']);
    if (r < 0.76) return join(['.']);
    if (r < 0.84) {
      const x = this.r.choice([...FILE_NAMES.slice(0, 4), ...DIR_NAMES.slice(0, 3), ...sorted(this.files.keys()).slice(0, 3)]);
      return join([x, '..']);
    }
    if (r < 0.9) return '/memories/' + rel + '/';
    if (r < 0.93) return '/memories/' + rel + this.r.choice(['/.', '/./', '/x/..', '/sub/../']);
    return '/memories//' + comps.join('//');
  }

  // -- commands -----------------------------------------------------------------------------
  command(unsafeRate) {
    if (this.r.random() < unsafeRate) return this.unsafe();
    const op = this.r.weighted(['view', 'create', 'str_replace', 'insert', 'delete', 'rename'], [25, 22, 15, 12, 8, 12]);
    return this[`gen_${op}`]();
  }

  viewRange(n) {
    return this.r.choice([
      [0, 1], [-5, 2], [3, 1], [2, -1], [2, -2], [10, 20], [], [2], [1, 2, 3], null, [1, n], [n, -1],
      [1, 1], [n + 1, n + 5], [-1, -1], [2, 0], [new F('1.0'), 2], [-(10n ** 18n), 10n ** 18n],
      [-(2n ** 63n), 2n ** 63n - 1n], [new F('-0.0'), 3], [1, 2n ** 64n - 1n],
    ]);
  }

  gen_view() {
    const r = this.r.random();
    let rel;
    if (r < 0.4 && this.files.size) rel = this.anyFile();
    else if (r < 0.7) rel = this.dirOrRoot();
    else if (r < 0.85) rel = this.missing();
    else if (r < 0.95) rel = this.throughFile();
    else rel = '';
    const inp = { command: 'view', path: this.spell(rel) };
    if (this.r.random() < 0.5) {
      const f = this.files.get(rel);
      const n = f ? f.toString('utf8').split('\n').length : 1;
      inp.view_range = this.viewRange(n);
    }
    return inp;
  }

  gen_create() {
    const r = this.r.random();
    let rel;
    if (r < 0.7) rel = this.newPath();
    else if (r < 0.8) rel = this.anyFile() ?? this.newPath();
    else if (r < 0.85) rel = this.anyDir() ?? '';
    else if (r < 0.9) rel = '';
    else rel = this.newPath(true);
    return { command: 'create', path: this.spell(rel), file_text: this.content() };
  }

  editTarget() {
    const r = this.r.random();
    if (r < 0.82 && this.files.size) return this.anyFile();
    if (r < 0.9) return this.missing();
    if (r < 0.95) return this.dirOrRoot();
    return this.throughFile();
  }

  contentOf(rel) {
    const f = this.files.get(rel);
    return f ? f.toString('utf8') : '';
  }

  gen_str_replace() {
    const rel = this.editTarget();
    return { command: 'str_replace', path: this.spell(rel), old_str: this.oldStr(this.contentOf(rel)), new_str: this.newStr() };
  }

  gen_insert() {
    const rel = this.editTarget();
    const lines = this.contentOf(rel).split('\n');
    // Both counts: the Python SDK's (without the empty tail) and the TypeScript SDK's.
    const nTs = lines.length;
    const n = lines[lines.length - 1] === '' ? nTs - 1 : nTs;
    const line = this.r.choice([
      0, 0, n, n, nTs, nTs, nTs + 1, -1, this.r.randint(0, Math.max(n, 0)), 10 ** 6, 1, 2n ** 62n, -(2n ** 63n),
      new F('-0.0'), new F(`${nTs}.0`), 2n ** 64n - 1n,
    ]);
    return { command: 'insert', path: this.spell(rel), insert_line: line, insert_text: this.insertText() };
  }

  gen_delete() {
    const r = this.r.random();
    let rel;
    if (r < 0.55 && this.files.size) rel = this.anyFile();
    else if (r < 0.7 && this.dirs.size) rel = this.anyDir();
    else if (r < 0.9) rel = this.r.choice([this.missing(), this.throughFile()]);
    else rel = '';
    return { command: 'delete', path: this.spell(rel) };
  }

  gen_rename() {
    let r = this.r.random();
    let old;
    if (r < 0.55 && this.files.size) old = this.anyFile();
    else if (r < 0.8 && this.dirs.size) old = this.anyDir();
    else if (r < 0.9) old = this.missing();
    else if (r < 0.95) old = '';
    else old = this.throughFile();
    r = this.r.random();
    let nw;
    if (r < 0.45) nw = this.newPath();
    else if (r < 0.65) nw = this.newPath(true);
    else if (r < 0.8) {
      const existing = [this.anyFile(), this.anyDir()].filter((x) => x);
      nw = this.r.choice(existing.length ? existing : ['']);
    }
    else if (r < 0.85) nw = '';
    else if (r < 0.95 && old) nw = old + '/' + this.r.choice(['x', 'sub/y.md', 'a/b/c']);
    else nw = this.throughFile();
    return { command: 'rename', old_path: this.spell(old), new_path: this.spell(nw) };
  }

  // -- unsafe and malformed inputs ----------------------------------------------------------
  /** Some command on an unsafe path. */
  withPath(p) {
    const op = this.r.choice(['view', 'create', 'create', 'str_replace', 'insert', 'delete', 'rename_old', 'rename_new']);
    if (op === 'view') return { command: 'view', path: p };
    if (op === 'create') return { command: 'create', path: p, file_text: this.content() };
    if (op === 'str_replace') return { command: 'str_replace', path: p, old_str: 'dup', new_str: 'x' };
    if (op === 'insert') return { command: 'insert', path: p, insert_line: 0, insert_text: 'x' };
    if (op === 'delete') return { command: 'delete', path: p };
    const other = this.spell(this.r.choice([this.anyFile() ?? 'a.txt', this.newPath()]));
    if (op === 'rename_old') return { command: 'rename', old_path: p, new_path: other };
    return { command: 'rename', old_path: other, new_path: p };
  }

  underDir(name) {
    const d = this.dirOrRoot();
    return d ? `/memories/${d}/${name}` : `/memories/${name}`;
  }

  unsafe() {
    const r = this.r;
    const kind = r.choice(['D0', 'D1', 'D2', 'D3', 'D4', 'D5', 'D6', 'D7', 'D8', 'D9', 'D10', 'D10', 'D10', 'D11', 'D12', 'D15', 'D16', 'D20', 'D22']);
    if (kind === 'D0') {
      // outside /memories: no deviation, both refuse alike
      return this.withPath(r.choice(['/etc/passwd', 'memories/a.txt', '', '/Memories/a', '/', ' /memories', '/tmp/../memories/a.txt', '//memories/a']));
    }
    if (kind === 'D1') return this.withPath('/memories' + r.choice(['foo/x.txt', 'foo', '_bak/a.txt', '..', '.txt', 'a.txt']));
    if (kind === 'D2') {
      const rel = this.anyFile() ?? this.newPath();
      return this.withPath(r.choice([`/memories/../memories/${rel}`, `/memories/sub/../../memories/${rel}`, '/memories/../memories', `/memories/${rel}/../../../memories/x`]));
    }
    if (kind === 'D3') return this.withPath(r.choice([this.underDir('a\\b.txt'), '/memories/..\\x.txt', '/memories\\x', this.underDir('trailing\\')]));
    if (kind === 'D4') return this.withPath(this.underDir(r.choice(['%2e%2e/x', 'a%2fb', 'a%5cb.txt', '%252e%252e', '%00.txt', '%2E%2E%2Fetc', '%2e', 'x%0a'])));
    if (kind === 'D5') return this.withPath(this.underDir(r.choice(['a\x00b', 'a\nb.txt', 't\tab', 'del\x7f', 'nel\u0085', 'cr\r'])));
    if (kind === 'D6') {
      if (r.random() < 0.5) return this.withPath(this.underDir(r.choice(['n'.repeat(256), 'é'.repeat(128), 'x'.repeat(300) + '.md'])));
      return this.withPath('/memories' + '/abcdefgh'.repeat(r.randint(455, 470)));
    }
    if (kind === 'D7') {
      const f = this.anyFile();
      if (f === null) return this.gen_create();
      let dest = '/memories/' + f + r.choice(['/x.txt', '/sub/y.txt', '/']);
      if (dest.endsWith('/')) dest += 'z';
      if (r.random() < 0.5) return { command: 'create', path: dest, file_text: 't' };
      return { command: 'rename', old_path: this.spell(this.anyFile() ?? 'a.txt'), new_path: dest };
    }
    if (kind === 'D8') {
      const d = this.anyDir() ?? r.choice(DIR_NAMES);
      return { command: 'rename', old_path: this.spell(d), new_path: '/memories/' + d + r.choice(['/x', '/sub/y', '/a/b/c']) };
    }
    if (kind === 'D9') {
      return { command: 'rename', old_path: '/memories/' + this.missing(), new_path: '/memories/' + r.choice(['n1/n2/x.txt', 'n1/x', 'nn/a/b/c.md']) };
    }
    if (kind === 'D10') {
      const f = this.spell(this.anyFile() ?? 'a.txt');
      return r.choice([
        { command: 'view' },
        { command: 'view', path: 5 },
        { command: 'view', path: f, view_range: ['1', 2] },
        { command: 'view', path: f, view_range: [new F('1.5'), 2] },
        { command: 'view', path: f, view_range: '12' },
        { command: 'view', path: f, view_range: [true, 2] },
        { command: 'view', path: f, view_range: [new F('1.0'), new F('2.0')] },
        { command: 'create', path: this.spell(this.newPath()) },
        { command: 'create', path: this.spell(this.newPath(true)), file_text: 5 },
        { command: 'create', path: this.spell(this.newPath()), file_text: null },
        { command: 'insert', path: f, insert_line: '1', insert_text: 'x' },
        { command: 'insert', path: f, insert_line: true, insert_text: 'x' },
        { command: 'insert', path: f, insert_line: false, insert_text: 'x' },
        { command: 'insert', path: f, insert_line: new F('1.5'), insert_text: 'x' },
        { command: 'insert', path: f, insert_line: new F('1.0'), insert_text: 'float' },
        { command: 'insert', path: f, insert_text: 'x' },
        { command: 'insert', path: f, insert_line: 0 },
        { command: 'insert', path: f, insert_line: 0, insert_text: 7 },
        { command: 'str_replace', path: f, old_str: 5, new_str: 'q' },
        { command: 'str_replace', path: f, new_str: 'q' },
        { command: 'delete' },
        { command: 'delete', path: [f] },
        { command: 'rename', old_path: f },
        { command: 'rename', new_path: f },
        { command: 'undo', path: f },
        { command: 'View', path: '/memories' },
        { command: 'x'.repeat(100) },
        { command: r.choice(TS_MEMBERS), path: f },
        { command: 5 },
        { command: null, path: '/memories' },
        { command: true },
        { command: ['view'] },
        { path: '/memories' },
        [1],
        'view',
        null,
        7,
        { command: 'view', path: '/memories', extra: 'ignored' },
      ]);
    }
    if (kind === 'D11') return { command: 'rename', old_path: '/memories/' + this.throughFile(), new_path: this.spell(this.newPath()) };
    if (kind === 'D12') {
      const f = this.anyFile() ?? 'a.txt';
      const inp = { command: 'str_replace', path: this.spell(f), old_str: this.oldStr(this.contentOf(f)) };
      if (r.random() < 0.3) inp.new_str = null;
      return inp;
    }
    if (kind === 'D15') {
      if (r.random() < 0.5) return { command: 'create', path: this.spell(this.newPath()), file_text: 'lone \ud800 surrogate' };
      return { command: 'insert', path: this.spell(this.anyFile() ?? 'a.txt'), insert_line: 0, insert_text: '\udc00' };
    }
    if (kind === 'D20') return this.withPath(this.underDir(r.choice(['txt\u202e.exe', 'a\u200bb', '\ufeffbom', 'soft\u00adhyphen', 'd\u2066/x'])));
    if (kind === 'D22') {
      const p = '/memories/' + this.throughFile();
      return r.choice([
        { command: 'view', path: p },
        { command: 'str_replace', path: p, old_str: 'dup', new_str: 'x' },
        { command: 'insert', path: p, insert_line: 0, insert_text: 'x' },
        { command: 'delete', path: p },
      ]);
    }
    // D16
    const f = this.spell(this.anyFile() ?? 'a.txt');
    return r.choice([
      { command: 'insert', path: f, insert_line: 10n ** 20n, insert_text: 'x' },
      { command: 'insert', path: f, insert_line: -(10n ** 20n), insert_text: 'x' },
      { command: 'view', path: f, view_range: [1, 10n ** 20n] },
    ]);
  }
}

// ---------------------------------------------------------------------------------------------
// Where the TypeScript SDK answers otherwise than the Python SDK: identical answers that only the
// typescript-sdk dialect gives, counted to show that the run exercised them.
// ---------------------------------------------------------------------------------------------

/** Python's `_format_file_size` (anthropic==2.10.0): round-half-even tenths, unit capped at G. */
function pythonFileSize(bytes) {
  if (bytes === 0) return '0B';
  const units = ['B', 'K', 'M', 'G'];
  const i = Math.min(Math.floor((bytes.toString(2).length - 1) / 10), 3);
  const b = BigInt(bytes);
  const shift = BigInt(10 * i);
  if (b % (1n << shift) === 0n) return `${b >> shift}${units[i]}`;
  const twice = (20n * b) >> shift; // 2 * 10 * value, floored
  const exact = (20n * b) % (1n << shift) === 0n;
  let tenths = twice / 2n;
  if (twice % 2n === 1n && (!exact || tenths % 2n === 1n)) tenths += 1n; // above half, or a tie to even
  return `${tenths / 10n}.${tenths % 10n}${units[i]}`;
}

/** The Python SDK's insert (`_split_lines_keeping_cr`, `rstrip("\\n")`, a final newline). */
function pythonInsert(content, at, text) {
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.splice(at, 0, text.replace(/\n+$/, ''));
  const out = lines.join('\n');
  return out.endsWith('\n') ? out : out + '\n';
}

function countOccurrences(content, old) {
  if (old === '') return Array.from(content).length + 1;
  let n = 0;
  for (let at = content.indexOf(old); at !== -1; at = content.indexOf(old, at + old.length)) n++;
  return n;
}

/** The TypeScript-only behaviours an identical answer `r` to `inp` shows. */
function tsFeatures(inp, r, pre, post, state) {
  const out = [];
  if (!isObject(inp) || typeof r[0] !== 'string') return out;
  const text = r[0];
  const fileOf = (p) => components(p).join('/');
  if (inp.command === 'view' && !r[1] && text.startsWith(LISTING_HEAD)) {
    const rows = text.split('\n').slice(2).map((l) => l.split('\t'));
    // Siblings in UTF-16 order that code point order puts the other way round.
    const rels = rows.map(([, p]) => p.slice(inp.path.length + 1).replace(/\/$/, ''));
    const byParent = new Map();
    for (const rel of rels) {
      const cut = rel.lastIndexOf('/');
      const parent = rel.slice(0, cut + 1);
      if (!byParent.has(parent)) byParent.set(parent, []);
      byParent.get(parent).push(rel.slice(cut + 1));
    }
    if ([...byParent.values()].some((names) => names.some((n, i) => i > 0 && byCodePoint(names[i - 1], n) > 0))) {
      out.push('listing order: UTF-16 units, not code points');
    }
    // File sizes Python writes otherwise (1280 bytes: `1.3K`, Python `1.2K`).
    const base = components(inp.path);
    const files = state()[0];
    const sizes = rows.slice(1).map(([size], i) => [size, files.get([...base, rels[i + 1]].join('/'))]);
    if (sizes.some(([size, data]) => data !== undefined && size !== pythonFileSize(data.length))) {
      out.push('listing size as formatFileSize writes it (Python writes it otherwise)');
    }
    if (rels.some((rel) => rel.split('/').includes('node_modules'))) out.push('node_modules listed (must not be)');
  }
  if (inp.command === 'view' && r[1] && /has too many lines/.test(text)) out.push('too many lines, in its own words');
  if (/^Error: .* not implemented$/s.test(text) && r[1]) out.push('unknown command: not implemented');
  const content = pre?.[0].get(fileOf(inp.path ?? ''))?.toString('utf8');
  if (inp.command === 'str_replace' && typeof inp.old_str === 'string' && content !== undefined) {
    const n = countOccurrences(content, inp.old_str);
    if (!r[1] && n > 1) out.push('str_replace: several occurrences on one line, the first replaced');
    if (r[1] && text.includes('did not appear verbatim') && n > 0) out.push('str_replace: old_str spanning lines never matches');
    if (r[1] && text.includes('Multiple occurrences') && n !== text.split('in lines: ')[1].split(', ').length) {
      out.push('str_replace: each matching line listed once');
    }
  }
  if (inp.command === 'insert' && content !== undefined && typeof inp.insert_text === 'string') {
    if (!r[1] && post) {
      const at = Number(JSON.parse(toJson(inp.insert_line)));
      const after = post[0].get(fileOf(inp.path))?.toString('utf8');
      if (after !== undefined && after !== pythonInsert(content, at, inp.insert_text)) {
        out.push('insert: split("\\n") lines, one \\n stripped, no newline added');
      }
    }
    if (r[1] && /\[0, (\d+)\]$/.test(text) && content.endsWith('\n')) out.push('insert: the empty last line counts');
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

class Stats {
  constructor() {
    this.sessions = 0;
    this.randomCommands = 0;
    this.checkViews = 0;
    this.identical = 0;
    this.classes = new Map();
    this.unexplained = 0;
    this.restores = 0;
    this.coverage = new Map(); // "command\toutcome" -> count, random commands
    this.features = new Map(); // TypeScript-only behaviours in identical answers
  }

  get compared() {
    return this.randomCommands + this.checkViews;
  }

  count(map, key) {
    map.set(key, (map.get(key) ?? 0) + 1);
  }
}

const cmdName = (inp) => (isObject(inp) && typeof inp.command === 'string' ? inp.command : show(isObject(inp) ? inp.command : inp).slice(0, 20));
const showResult = (r) => `is_error=${r[1]} content=${typeof r[0] === 'string' ? JSON.stringify(r[0]) : show(r[0])}`;

class Session {
  constructor(args, index, stats) {
    this.args = args;
    this.index = index;
    this.stats = stats;
    this.rng = new Rng(`${args.seed}/${index}`);
    this.gen = new Gen(this.rng);
    this.broken = false;
    this.log = []; // the input lines so far, to replay a failure
  }

  report(what, inp, sdkR, mem) {
    this.stats.unexplained += 1;
    console.error(`\n=== UNEXPLAINED ${what} (session ${this.index}, command #${this.log.length}) ===`);
    console.error(`input: ${show(inp).slice(0, 2000)}`);
    console.error(`sdk:   ${showResult(sdkR).slice(0, 4000)}`);
    console.error(`memfs: ${showResult(mem).slice(0, 4000)}`);
    if (this.args.verbose) {
      console.error('session inputs so far:');
      for (const line of this.log) console.error('  ' + line.slice(0, 2000));
    }
  }

  /** Send one input to both sides, compare, classify, resynchronise. */
  async step(inp, checking = false) {
    const line = toJson(inp);
    this.log.push(line);
    const mutating = !(isObject(inp) && inp.command === 'view');
    const pre = mutating ? this.sdk.snapshot() : null;
    const sdkR = await this.sdk.call(line);
    const mem = await this.mem.call(line);
    const refusal = expectedRefusal(inp);
    if (refusal !== null && !refusal(mem)) {
      this.report('memfs answer where it must refuse (deviation not applied)', inp, sdkR, mem);
      this.broken = true;
      return;
    }
    if (!checking) this.stats.count(this.stats.coverage, `${cmdName(inp)}\t${outcome(sdkR)}`);
    if (sdkR[0] === mem[0] && sdkR[1] === mem[1]) {
      this.stats.identical += 1;
      const post = isObject(inp) && inp.command === 'insert' && !sdkR[1] ? this.sdk.snapshot() : null;
      const state = () => pre ?? this.sdk.snapshot();
      for (const f of tsFeatures(inp, sdkR, pre, post, state)) this.stats.count(this.stats.features, f);
      if (pre !== null && sdkR[1]) {
        const post = this.sdk.snapshot();
        if (!sameSnapshot(pre, post)) {
          const cls = classifyDrift(inp, pre, post);
          if (cls === null) {
            this.report('state change by a failed SDK command', inp, sdkR, mem);
          } else {
            // An identical answer, but a deviation in effect: counted as such.
            this.stats.identical -= 1;
            this.stats.count(this.stats.classes, cls);
          }
          this.sdk.restore(pre);
          this.stats.restores += 1;
        }
      }
      return;
    }
    const cls = classify(inp, sdkR, mem, pre, this.sdk);
    if (cls === null) {
      this.report('difference', inp, sdkR, mem);
      if (!mem[1] || pre === null) this.broken = true; // states may differ now: stop this session
    } else {
      this.stats.count(this.stats.classes, cls);
    }
    if (mem[1] && pre !== null && !sameSnapshot(this.sdk.snapshot(), pre)) {
      // memfs refused and changed nothing: undo whatever the SDK did.
      this.sdk.restore(pre);
      this.stats.restores += 1;
    }
  }

  /** View every directory and every file through both sides. */
  async checkState(probeHidden = false) {
    const [files, dirs] = this.sdk.snapshot();
    const paths = ['/memories', ...sorted(dirs).map((d) => `/memories/${d}`), ...sorted(files.keys()).map((f) => `/memories/${f}`)];
    if (probeHidden) {
      // a hidden file memfs has and the SDK lacks would not show in any listing
      for (const d of ['', ...sorted(dirs)]) {
        for (const h of HIDDEN_NAMES) {
          const rel = d ? `${d}/${h}` : h;
          if (!files.has(rel) && !dirs.has(rel)) paths.push(`/memories/${rel}`);
        }
      }
    }
    for (const p of paths) {
      if (this.broken) return;
      this.stats.checkViews += 1;
      await this.step({ command: 'view', path: p }, true);
    }
  }

  async run() {
    this.sdk = await Sdk.create();
    this.mem = new Memfs(this.args.memfs);
    try {
      for (let i = 0; i < this.args.commands; i++) {
        if (this.broken) return;
        this.gen.observe(this.sdk.snapshot());
        const inp = this.gen.command(this.args.unsafeRate);
        this.stats.randomCommands += 1;
        await this.step(inp);
        if ((i + 1) % this.args.checkEvery === 0) await this.checkState();
      }
      await this.checkState(true);
    } catch (e) {
      // memfs died: an unexplained failure, and the end of this session
      this.stats.unexplained += 1;
      this.broken = true;
      console.error(`\n=== UNEXPLAINED failure (session ${this.index}) ===\n${e.stack ?? e}`);
    } finally {
      await this.mem.close();
      this.sdk.close();
      this.stats.sessions += 1;
    }
  }
}

function parseArgs(argv) {
  const args = {
    seed: 1,
    sessions: 20,
    commands: 150,
    memfs: path.join(REPO, 'target', 'debug', 'memfs'),
    checkEvery: 20,
    unsafeRate: 0.1,
    onlySession: null,
    verbose: false,
    coverage: false,
  };
  const usage = () => {
    console.log(`usage: differential-ts.mjs [--memfs PATH] [--seed N] [--sessions N] [--commands N]
    [--check-every N] [--unsafe-rate X] [--only-session N] [-v|--verbose] [--coverage]`);
    process.exit(0);
  };
  const num = (name, v) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n)) {
      console.error(`differential-ts.mjs: ${name} needs a number`);
      process.exit(2);
    }
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--seed') args.seed = num(a, argv[++i]);
    else if (a === '--sessions') args.sessions = num(a, argv[++i]);
    else if (a === '--commands') args.commands = num(a, argv[++i]);
    else if (a === '--memfs') args.memfs = argv[++i];
    else if (a === '--check-every') args.checkEvery = num(a, argv[++i]);
    else if (a === '--unsafe-rate') args.unsafeRate = num(a, argv[++i]);
    else if (a === '--only-session') args.onlySession = num(a, argv[++i]);
    else if (a === '-v' || a === '--verbose') args.verbose = true;
    else if (a === '--coverage') args.coverage = true;
    else if (a === '-h' || a === '--help') usage();
    else {
      console.error(`differential-ts.mjs: unknown argument ${a}`);
      process.exit(2);
    }
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  try {
    fs.accessSync(args.memfs, fs.constants.X_OK);
  } catch {
    console.error(`differential-ts.mjs: ${args.memfs} is not executable; run \`cargo build -p memfs-cli\``);
    return 2;
  }
  if ((999999).toLocaleString() !== '999,999') {
    console.error(`differential-ts.mjs: this locale writes 999,999 as ${(999999).toLocaleString()}; run with LC_ALL=C`);
    return 2;
  }
  const stats = new Stats();
  const started = process.hrtime.bigint();
  const indices = args.onlySession !== null ? [args.onlySession] : Array.from({ length: args.sessions }, (_, i) => i);
  for (const i of indices) await new Session(args, i, stats).run();
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;

  const requested = indices.length * args.commands;
  const deviations = [...stats.classes.values()].reduce((a, b) => a + b, 0);
  console.log(`differential-ts: @anthropic-ai/sdk@${sdk.version}, seed ${args.seed}, ${stats.sessions} sessions x ${args.commands} commands, ${elapsed.toFixed(1)}s`);
  console.log(`  commands compared: ${stats.compared} (${stats.randomCommands} random + ${stats.checkViews} state-check views)`);
  console.log(`  identical:         ${stats.identical}`);
  console.log(`  differences:       ${deviations + stats.unexplained} (${deviations} explained deviations, ${stats.unexplained} unexplained)`);
  console.log(`  deviations:        ${deviations} (SDK directory restored ${stats.restores} times)`);
  const order = (c) => [parseInt(/^D(\d+)/.exec(c)[1], 10), c];
  for (const cls of [...stats.classes.keys()].sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return x[0] - y[0] || (x[1] < y[1] ? -1 : 1);
  })) {
    console.log(`    ${String(stats.classes.get(cls)).padStart(6)}  ${cls}`);
  }
  console.log(`  unexplained:       ${stats.unexplained}`);
  console.log('  identical answers where the TypeScript SDK differs from the Python SDK:');
  for (const f of [...stats.features.keys()].sort()) console.log(`    ${String(stats.features.get(f)).padStart(6)}  ${f}`);
  if (args.coverage) {
    console.log('  SDK answers to the random commands:');
    for (const key of [...stats.coverage.keys()].sort()) {
      const [cmd, what] = key.split('\t');
      console.log(`    ${String(stats.coverage.get(key)).padStart(6)}  ${cmd.padEnd(14)} ${what}`);
    }
  }
  if (stats.unexplained || stats.randomCommands < requested) {
    if (stats.randomCommands < requested) console.error(`  only ${stats.randomCommands} of ${requested} random commands ran`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
