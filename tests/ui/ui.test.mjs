// Browser tests of `memfs ui` (docs/UI.md): playwright-core driving Debian's headless Chromium
// against the real server, each test on a fresh encrypted store in a temp folder. After every
// write made in the page, what the store holds is checked through the engine (`memfs cat`,
// `memfs log --json`), not through the page.
//
//   scripts/test-ui.sh                                   # installs what it needs, then runs this
//   node --test tests/ui/ui.test.mjs                     # MEMFS_BIN or target/debug/memfs
//   node tests/ui/ui.test.mjs --memfs target/debug/memfs
//
// A failing test leaves a screenshot in target/ui-test-failures/NAME.png. The README's
// screenshots (docs/ui-tree.png, docs/ui-timeline.png) are rewritten only with
// MEMFS_UI_SCREENSHOTS=1; otherwise they go to target/ui-screenshots/.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const CHROMIUM = process.env.MEMFS_UI_CHROMIUM || '/usr/bin/chromium-headless-shell';

function memfsBinary() {
  const i = process.argv.indexOf('--memfs');
  const given = i >= 0 ? process.argv[i + 1] : process.env.MEMFS_BIN;
  return path.resolve(REPO, given || 'target/debug/memfs');
}
const MEMFS = memfsBinary();
if (!fs.existsSync(MEMFS)) {
  throw new Error(`ui.test.mjs: ${MEMFS} is missing: run cargo build -p memfs-cli first (or pass --memfs PATH / MEMFS_BIN)`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Retries `fn` (which asserts) until it passes or `timeout` ms went by; then its last error. */
async function eventually(fn, timeout = 10000) {
  const end = Date.now() + timeout;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > end) throw e;
    }
    await sleep(50);
  }
}

// -----------------------------------------------------------------------------------------------
// A store in a temp folder, the memfs command line on it, and `memfs ui` serving it
// -----------------------------------------------------------------------------------------------

class Store {
  constructor(name) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `memfs-ui-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}-`));
    this.url = `file://${this.dir}/store`;
    this.key = path.join(this.dir, 'k');
    this.env = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MEMFS_')) this.env[k] = v;
    Object.assign(this.env, {
      HOME: this.dir,
      XDG_STATE_HOME: this.dir,
      XDG_CONFIG_HOME: path.join(this.dir, 'config'),
      XDG_DATA_HOME: path.join(this.dir, 'data'),
      XDG_CACHE_HOME: path.join(this.dir, 'cache'),
    });
    this.server = null;
    this.run(['init']);
  }

  /** Runs memfs with this store; its stdout. Throws on a non-zero exit unless `allowFail`. */
  run(args, { input, actor, allowFail } = {}) {
    const argv = ['--store', this.url, '--key-file', this.key, ...(actor ? ['--actor', actor] : []), ...args];
    const r = spawnSync(MEMFS, argv, { env: this.env, input, encoding: 'utf8', timeout: 60000 });
    if (r.error) throw r.error;
    if (r.status !== 0 && !allowFail) {
      throw new Error(`memfs ${argv.join(' ')} exited ${r.status}\n${r.stderr}`);
    }
    return allowFail ? r : r.stdout;
  }

  /** Memory-tool calls as JSON lines through `memfs exec`; one parsed answer per call. */
  exec(actor, ...commands) {
    const out = this.run(['exec'], { actor, input: commands.map((c) => JSON.stringify(c)).join('\n') + '\n' });
    const answers = out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(answers.length, commands.length, `one answer per call: ${out}`);
    return answers;
  }

  /** `exec` that expects every call to succeed. */
  write(actor, ...commands) {
    const answers = this.exec(actor, ...commands);
    for (const [i, a] of answers.entries()) assert.equal(a.is_error, false, `${JSON.stringify(commands[i])}: ${a.content}`);
    return answers;
  }

  cat(p) {
    return this.run(['cat', p]);
  }

  /** Whether the live tree has a file at `p` (`memfs cat` succeeds). */
  has(p) {
    return this.run(['cat', p], { allowFail: true }).status === 0;
  }

  /** `memfs log --json`, newest first. */
  log() {
    return this.run(['log', '--json']).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }

  /** Starts `memfs ui` as `actor`; resolves with the printed address (stdout's first line). */
  async startUi(actor = 'alice') {
    const argv = ['--store', this.url, '--key-file', this.key, '--actor', actor, 'ui', '--http', '127.0.0.1:0'];
    const proc = spawn(MEMFS, argv, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.server = proc;
    let stderr = '';
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d) => { stderr += d; });
    this.serverStderr = () => stderr;
    const line = await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`memfs ui printed no address in 30 s; stderr:\n${stderr}`)), 30000);
      proc.stdout.setEncoding('utf8');
      proc.stdout.on('data', (d) => {
        out += d;
        const nl = out.indexOf('\n');
        if (nl >= 0) {
          clearTimeout(timer);
          resolve(out.slice(0, nl));
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`memfs ui exited ${code} before printing its address; stderr:\n${stderr}`));
      });
    });
    const m = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+)$/.exec(line);
    assert.ok(m, `memfs ui's first line is its address with a token: ${JSON.stringify(line)}`);
    this.port = Number(m[1]);
    this.origin = `http://127.0.0.1:${this.port}`;
    this.token = m[2];
    this.address = line;
    return line;
  }

  async stop() {
    const proc = this.server;
    this.server = null;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const done = await Promise.race([exited.then(() => true), sleep(10000).then(() => false)]);
      if (!done) {
        proc.kill('SIGKILL');
        await exited;
      }
    }
  }

  remove() {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// -----------------------------------------------------------------------------------------------
// The browser, and one test = one store, one server, one page
// -----------------------------------------------------------------------------------------------

/** Launches Chromium; a launch that fails (the headless shell has been seen to crash on start,
 * rarely) is tried again, twice. */
async function launch() {
  let last;
  for (let i = 0; i < 3; i += 1) {
    try {
      return await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    } catch (e) {
      last = e;
      await sleep(500);
    }
  }
  throw last;
}

let browserPromise = null;
/** The browser shared by the tests: launched once, and again if it went away. */
async function browser() {
  if (browserPromise) {
    const b = await browserPromise.catch(() => null);
    if (b && b.isConnected()) return b;
  }
  browserPromise = launch();
  return browserPromise;
}

after(async () => {
  const b = browserPromise && await browserPromise.catch(() => null);
  if (b) await b.close();
});

const slug = (name) => name.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase();

/**
 * A browser test: `setup(store)` fills the fresh store before the server starts; `body` gets
 * the store and a page signed in (the printed address opened), on the overview.
 */
function uiTest(name, { setup, viewport, actor, dir } = {}, body) {
  test(name, { timeout: 180000 }, async () => {
    const store = new Store(dir || name);
    let context = null;
    let page = null;
    const problems = [];
    try {
      if (setup) await setup(store);
      await store.startUi(actor || 'alice');
      const b = await browser();
      context = await b.newContext({ viewport: viewport || { width: 1200, height: 800 }, locale: 'en-GB', timezoneId: 'UTC' });
      context.setDefaultTimeout(10000);
      page = await context.newPage();
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
      });
      // The page never uses the browser's own dialogs (confirm, alert, prompt).
      page.on('dialog', (d) => {
        problems.push(`a browser dialog opened: ${d.type()} ${d.message()}`);
        d.dismiss().catch(() => {});
      });
      await page.goto(store.address);
      assert.equal(page.url(), `${store.origin}/`, 'the page takes the token out of its address, then trades it for a session');
      await page.getByTestId('overview-view').waitFor();
      const tree = page.getByTestId('tree');
      await page.locator('[data-testid="tree"][data-generation], [data-testid="tree"][data-error]').waitFor({ state: 'attached' });
      assert.equal(await tree.getAttribute('data-error'), null, 'the tree loads');
      await body({ store, page, context });
      assert.deepEqual(problems, [], 'no script error, CSP refusal or browser dialog');
    } catch (e) {
      if (page) {
        const dir = path.join(REPO, 'target', 'ui-test-failures');
        fs.mkdirSync(dir, { recursive: true });
        await page.screenshot({ path: path.join(dir, `${slug(name)}.png`), fullPage: true }).catch(() => {});
      }
      if (problems.length) e.message += `\nalso seen: ${problems.join('\n')}`;
      if (store.serverStderr) e.message += `\nmemfs ui stderr:\n${store.serverStderr()}`;
      throw e;
    } finally {
      if (context) await context.close().catch(() => {});
      await store.stop();
      store.remove();
    }
  });
}

// Page helpers -----------------------------------------------------------------------------------

const byPath = (page, testid, p) => page.locator(`[data-testid="${testid}"][data-path="${p}"]`);

async function openFile(page, p) {
  await byPath(page, 'tree-file', p).click();
  await eventually(async () => assert.equal(await page.getByTestId('file-path').textContent(), p));
  await page.getByTestId('file-lines').or(page.getByTestId('file-empty')).waitFor();
}

async function fileLines(page) {
  return page.getByTestId('file-view').getByTestId('file-line').locator('.lt').allTextContents();
}

/** Waits until the message area shows exactly `text`, of `kind` (ok, warn, error). */
async function expectMessage(page, text, kind) {
  const box = page.getByTestId('message');
  await eventually(async () => {
    assert.equal(await box.getByTestId('message-text').textContent(), text);
    if (kind) assert.equal(await box.getAttribute('data-kind'), kind);
  });
}

async function messageText(page) {
  return page.getByTestId('message').getByTestId('message-text').textContent();
}

/** The newest commit, checked: by `actor`, with the tool command or operation `command`. */
function newestCommit(store, actor, command) {
  const [c] = store.log();
  assert.equal(c.actor, actor, `the newest commit's actor: ${JSON.stringify(c)}`);
  assert.equal(c.command.command, command, `the newest commit's command: ${JSON.stringify(c)}`);
  return c;
}

const focused = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return a ? { testid: a.getAttribute('data-testid'), path: a.getAttribute('data-path'), tag: a.tagName, text: a.textContent } : null;
});

/** Presses Tab until the focused element matches; keyboard only. */
async function tabTo(page, match, { max = 80, back = false } = {}) {
  for (let i = 0; i < max; i += 1) {
    const f = await focused(page);
    if (f && match(f)) return f;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`Tab never reached the element (last: ${JSON.stringify(await focused(page))})`);
}

/** `memfs exec` a few commits by two actors, as a small but real history. */
function fillHistory(store) {
  store.write('agent-1',
    { command: 'create', path: '/memories/notes.md', file_text: 'hello\n' },
    { command: 'create', path: '/memories/projects/alpha/plan.md', file_text: '# Alpha\n\n- ship the parser\n- write the docs\n' },
    { command: 'create', path: '/memories/user/preferences.md', file_text: 'Prefers short answers.\nUses Rust and TypeScript.\n' });
  store.write('agent-2',
    { command: 'str_replace', path: '/memories/projects/alpha/plan.md', old_str: '- write the docs', new_str: '- write the docs\n- review the API' },
    { command: 'str_replace', path: '/memories/notes.md', old_str: 'hello', new_str: 'hello world' });
  store.write('agent-1',
    { command: 'str_replace', path: '/memories/projects/alpha/plan.md', old_str: 'ship the parser', new_str: 'ship the parser (done)' });
}

// -----------------------------------------------------------------------------------------------
// Who may talk to it: plain HTTP from node, no browser
// -----------------------------------------------------------------------------------------------

/** One HTTP request with full control of the headers (Host included). */
function request(origin, pathAndQuery, { method = 'GET', headers = {}, body } = {}) {
  const u = new URL(pathAndQuery, origin);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { data += d; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(data); } catch (e) { json = null; }
        resolve({ status: res.statusCode, headers: res.headers, body: data, json });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

test('refusals: no session, a used or wrong token, another origin, another host, a write without the session header', { timeout: 120000 }, async () => {
  const store = new Store('refusals');
  try {
    store.write('agent-1', { command: 'create', path: '/memories/notes.md', file_text: 'hello\n' });
    await store.startUi('alice');
    const o = store.origin;
    const host = `127.0.0.1:${store.port}`;
    const json = { 'content-type': 'application/json' };
    const open = (token, headers = {}) => request(o, '/api/session', { method: 'POST', body: JSON.stringify({ token }), headers: { ...json, ...headers } });

    // No session: the API answers 401 JSON. The page and its files hold no secret and are
    // served to anyone who names the right host (its script reads the token from its address).
    let r = await request(o, '/api/session');
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, { error: 'no session: open the address memfs ui printed' });
    r = await request(o, '/api/tree');
    assert.equal(r.status, 401);
    r = await request(o, '/');
    assert.equal(r.status, 200);
    assert.match(r.body, /<script src="\/app\.js"/);
    assert.match(r.headers['content-security-policy'], /^default-src 'self'/);
    assert.equal(r.headers['set-cookie'], undefined);
    r = await request(o, '/app.js');
    assert.equal(r.status, 200);

    // A wrong token: 403, and the right one still works afterwards; no cookie either way.
    r = await open('memfs_wrong');
    assert.equal(r.status, 403);
    r = await open(store.token, { 'content-type': 'text/plain' });
    assert.equal(r.status, 415);
    r = await open(store.token);
    assert.equal(r.status, 200);
    assert.equal(r.headers['set-cookie'], undefined);
    const session = r.json.session;
    assert.match(session, /^memfs_/);
    assert.notEqual(session, store.token);
    // The token works once.
    r = await open(store.token);
    assert.equal(r.status, 403);
    assert.match(r.json.error, /already used/);
    // The token is no session.
    r = await request(o, '/api/session', { headers: { 'x-memfs-session': store.token } });
    assert.equal(r.status, 401);

    // With the session's header: the session, and the security headers on every answer.
    const s = { 'x-memfs-session': session };
    r = await request(o, '/api/session', { headers: s });
    assert.equal(r.status, 200);
    assert.equal(r.json.actor, 'alice');
    assert.equal(r.json.history, true);
    assert.equal(r.json.csrf, undefined);
    assert.match(r.json.store, /^file:\/\//);
    assert.match(r.headers['content-security-policy'], /^default-src 'self'/);
    assert.match(r.headers['content-security-policy'], /frame-ancestors 'none'/);
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
    // The secret as a cookie is nothing.
    r = await request(o, '/api/session', { headers: { cookie: `memfs_ui=${session}` } });
    assert.equal(r.status, 401);

    // Another origin: 403, whatever it asks; the server's own origin is fine.
    r = await request(o, '/api/session', { headers: { ...s, origin: 'http://evil.example' } });
    assert.equal(r.status, 403);
    assert.deepEqual(r.json, { error: 'requests from other sites are refused' });
    r = await request(o, '/api/session', { headers: { ...s, origin: o } });
    assert.equal(r.status, 200);
    const body = JSON.stringify({ path: '/memories/evil.md', text: 'x' });
    r = await request(o, '/api/create', {
      method: 'POST', body, headers: { ...s, ...json, origin: 'http://evil.example' },
    });
    assert.equal(r.status, 403);

    // Another host (DNS rebinding): 421.
    r = await request(o, '/api/session', { headers: { ...s, host: `evil.example:${store.port}` } });
    assert.equal(r.status, 421);
    r = await request(o, `/?token=${store.token}`, { headers: { host: `evil.example:${store.port}` } });
    assert.equal(r.status, 421);
    // localhost names the same loopback server.
    r = await request(o, '/api/session', { headers: { ...s, host: `localhost:${store.port}` } });
    assert.equal(r.status, 200);

    // A write without the session's header, or with a wrong one: 401; not JSON: 415.
    r = await request(o, '/api/create', { method: 'POST', body, headers: { ...json, host } });
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, { error: 'no session: open the address memfs ui printed' });
    r = await request(o, '/api/create', { method: 'POST', body, headers: { ...json, 'x-memfs-session': 'memfs_forged' } });
    assert.equal(r.status, 401);
    r = await request(o, '/api/create', { method: 'POST', body, headers: { ...s, 'content-type': 'text/plain' } });
    assert.equal(r.status, 415);
    assert.equal(store.has('/memories/evil.md'), false, 'no refused write reached the store');
    assert.equal(store.log().length, 1);

    // And with everything right, the write is a commit by the session's actor.
    r = await request(o, '/api/create', { method: 'POST', body, headers: { ...s, ...json } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { ok: true, message: 'File created successfully at: /memories/evil.md' });
    assert.equal(store.cat('/memories/evil.md'), 'x');
    newestCommit(store, 'alice', 'create');

    // Unknown routes and bad input.
    r = await request(o, '/api/nothing', { headers: s });
    assert.equal(r.status, 404);
    r = await request(o, '/api/file?path=/memories/none.md', { headers: s });
    assert.equal(r.status, 404);
    r = await request(o, '/api/file?path=/etc/passwd', { headers: s });
    assert.equal(r.status, 400);
  } finally {
    await store.stop();
    store.remove();
  }
});

/** The page another program on another loopback port serves: from the browser that has the
 * viewer open, it tries to read and write through the viewer, every way a page can, and
 * records what each attempt saw in `window.__attack`. */
const attackPage = (viewer) => `<!doctype html><meta charset=utf-8><title>a dev server</title><script>
(async () => {
  const viewer = ${JSON.stringify(viewer)};
  const body = JSON.stringify({ path: '/memories/planted.md', text: 'from another port' });
  const tries = [
    ['read tree', '/api/tree', { credentials: 'include' }],
    ['read session', '/api/session', { credentials: 'include' }],
    ['read file', '/api/file?path=%2Fmemories%2Fnotes.md', { credentials: 'include' }],
    ['read tree (no-cors)', '/api/tree', { credentials: 'include', mode: 'no-cors' }],
    ['read session (no-cors)', '/api/session', { credentials: 'include', mode: 'no-cors' }],
    ['read file (no-cors)', '/api/file?path=%2Fmemories%2Fnotes.md', { credentials: 'include', mode: 'no-cors' }],
    ['create (json)', '/api/create', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body }],
    ['create (no-cors)', '/api/create', { method: 'POST', credentials: 'include', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body }],
  ];
  const seen = [];
  for (const [what, path, opts] of tries) {
    try {
      const r = await fetch(viewer + path, opts);
      seen.push({ what, outcome: r.type === 'opaque' ? 'opaque' : 'status ' + r.status, text: r.type === 'opaque' ? '' : await r.text() });
    } catch (e) {
      seen.push({ what, outcome: 'refused by the browser' });
    }
  }
  // Whatever this origin can see of the viewer's session.
  seen.push({ what: 'storage', outcome: JSON.stringify({ session: sessionStorage.length, local: localStorage.length, cookie: document.cookie }) });
  window.__attack = seen;
})();
</script>`;

uiTest('another loopback port: a page served there, in the same browser, reads and writes nothing', {
  setup: (store) => store.write('agent-1', { command: 'create', path: '/memories/notes.md', file_text: 'hello\n' }),
}, async ({ store, page, context }) => {
  // The viewer's session is open in this browser: its page shows the tree.
  await byPath(page, 'tree-file', '/memories/notes.md').waitFor();
  const commits = store.log().length;
  const viewer = store.origin;

  // Another program on another port of 127.0.0.1 (a dev server, any local program): it serves
  // a page, and keeps the Cookie header of every request the browser sends it.
  const cookies = [];
  const other = http.createServer((req, res) => {
    if (req.headers.cookie) cookies.push(req.headers.cookie);
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(attackPage(viewer));
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('a dev server');
    }
  });
  await new Promise((resolve) => other.listen(0, '127.0.0.1', resolve));
  try {
    const port = other.address().port;
    assert.notEqual(port, store.port);
    // Loaded in the same browser, after the viewer's session was opened.
    const tab = await context.newPage();
    const answers = [];
    tab.on('response', (r) => {
      if (r.url().startsWith(`${viewer}/`)) answers.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
    });
    await tab.goto(`http://127.0.0.1:${port}/hello`); // carrying whatever the browser keeps for the host
    await tab.goto(`http://127.0.0.1:${port}/`);
    await tab.waitForFunction(() => Array.isArray(window.__attack), null, { timeout: 20000 });
    const seen = await tab.evaluate(() => window.__attack);
    await tab.close();

    // In the browser: every attempt the server answered was refused (401 or 403); none read
    // anything; this origin holds nothing of the session.
    for (const a of seen.filter((x) => x.what !== 'storage')) {
      assert.ok(['refused by the browser', 'opaque', 'status 401', 'status 403'].includes(a.outcome), `${a.what}: ${a.outcome} ${a.text || ''}`);
      assert.ok(!/hello|"entries"|"actor"/.test(a.text || ''), `${a.what} read nothing: ${a.text}`);
    }
    assert.equal(seen.find((x) => x.what === 'storage').outcome, JSON.stringify({ session: 0, local: 0, cookie: '' }));
    assert.ok(answers.length >= 4, `the viewer answered the page's requests: ${answers.join(', ')}`);
    for (const a of answers) assert.match(a, / (401|403)$/, `every answer to the other port's page is a refusal: ${answers.join(', ')}`);

    // Outside the browser: the other program replays, as curl would (no Origin), every cookie
    // the browser sent it.
    const cookie = cookies.join('; ');
    for (const p of ['/api/tree', '/api/session', '/api/file?path=/memories/notes.md']) {
      const r = await request(viewer, p, { headers: { cookie } });
      assert.equal(r.status, 401, `${p} with the replayed cookies: ${r.body}`);
    }
    const r = await request(viewer, '/api/create', {
      method: 'POST', body: JSON.stringify({ path: '/memories/planted.md', text: 'replayed' }),
      headers: { cookie, 'content-type': 'application/json', 'x-memfs-csrf': 'none' },
    });
    assert.equal(r.status, 401, `a write with the replayed cookies: ${r.body}`);

    // The store is unchanged, and the viewer's own page still has its session.
    assert.equal(store.has('/memories/planted.md'), false, 'nothing planted');
    assert.equal(store.log().length, commits, 'no commit');
    await page.getByTestId('refresh').click();
    await openFile(page, '/memories/notes.md');
    assert.deepEqual(await fileLines(page), ['hello']);
  } finally {
    other.closeAllConnections();
    await new Promise((resolve) => other.close(resolve));
  }
});

// -----------------------------------------------------------------------------------------------
// Browse, read, search
// -----------------------------------------------------------------------------------------------

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>\n';

uiTest('browse the tree and read a file with line numbers', {
  setup: (store) => {
    fillHistory(store);
    store.write('agent-1', { command: 'create', path: '/memories/x<b>y.md', file_text: HOSTILE });
  },
}, async ({ page, store }) => {
  // The header and the tree.
  assert.equal(await page.getByTestId('actor').textContent(), 'as alice');
  assert.match(await page.getByTestId('store').textContent(), /^file:\/\//);
  const dirs = await page.getByTestId('tree-dir').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')));
  assert.deepEqual(dirs, ['/memories/projects', '/memories/projects/alpha', '/memories/user']);
  const files = await page.getByTestId('tree-file').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')));
  assert.deepEqual(files.sort(), ['/memories/notes.md', '/memories/projects/alpha/plan.md', '/memories/user/preferences.md', '/memories/x<b>y.md'].sort());
  const bytes = files.reduce((n, p) => n + Buffer.byteLength(store.cat(p)), 0);
  assert.equal(await page.getByTestId('tree-summary').textContent(), `4 files, ${bytes} bytes`);

  // Folders close and open.
  const projects = byPath(page, 'tree-dir', '/memories/projects');
  assert.equal(await projects.getAttribute('aria-expanded'), 'true');
  await projects.click();
  assert.equal(await projects.getAttribute('aria-expanded'), 'false');
  assert.equal(await byPath(page, 'tree-file', '/memories/projects/alpha/plan.md').isVisible(), false);
  await projects.click();
  assert.equal(await byPath(page, 'tree-file', '/memories/projects/alpha/plan.md').isVisible(), true);

  // A file, with its lines numbered.
  await openFile(page, '/memories/projects/alpha/plan.md');
  assert.deepEqual(await fileLines(page), ['# Alpha', '\u200b', '- ship the parser (done)', '- write the docs', '- review the API']);
  const numbers = await page.getByTestId('file-line').locator('.ln').allTextContents();
  assert.deepEqual(numbers, ['1', '2', '3', '4', '5']);
  assert.match(await page.getByTestId('file-last-change').textContent(), /^Last changed .+ by agent-1 \(str_replace, @6\)$/);
  assert.equal(await byPath(page, 'tree-file', '/memories/projects/alpha/plan.md').getAttribute('aria-current'), 'page');
  assert.match(page.url(), /#\/file\?path=%2Fmemories%2Fprojects%2Falpha%2Fplan\.md$/);

  // Store text is text: a hostile name and content are shown, never run.
  await openFile(page, '/memories/x<b>y.md');
  assert.deepEqual(await fileLines(page), [HOSTILE.trimEnd()]);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('#view img, #tree img, #view script').count(), 0);

  // A reload keeps the place (the address names the file).
  await page.reload();
  await eventually(async () => assert.equal(await page.getByTestId('file-path').textContent(), '/memories/x<b>y.md'));

  // A missing file is a page saying so.
  await page.goto(`${page.url().split('#')[0]}#/file?path=${encodeURIComponent('/memories/none.md')}`);
  await page.getByTestId('error-view').waitFor();
  assert.match(await page.getByTestId('error-text').textContent(), /none\.md/);
});

uiTest('search file names and contents; results open the file at the line', {
  setup: (store) => {
    fillHistory(store);
    const many = Array.from({ length: 250 }, (_, i) => `needle ${i}`).join('\n');
    store.write('agent-1', { command: 'create', path: '/memories/haystack.md', file_text: `${many}\n` });
  },
}, async ({ page }) => {
  await page.getByTestId('nav-search').click();
  await page.getByTestId('search-input').fill('ALPHA');
  await page.getByTestId('search-submit').click();
  await page.getByTestId('search-names').waitFor();
  assert.deepEqual(await page.getByTestId('search-name').allTextContents(), ['/memories/projects/alpha/plan.md']);
  assert.deepEqual(await page.getByTestId('search-line').allTextContents(), ['/memories/projects/alpha/plan.md:1']);
  assert.match(page.url(), /#\/search\?q=ALPHA$/);

  // Contents, case-insensitive; a result opens the file with that line marked.
  await page.getByTestId('search-input').fill('typescript');
  await page.getByTestId('search-input').press('Enter');
  await eventually(async () => assert.deepEqual(await page.getByTestId('search-line').allTextContents(), ['/memories/user/preferences.md:2']));
  assert.equal(await page.getByTestId('search-lines').locator('mark').first().textContent(), 'TypeScript');
  assert.equal(await page.getByTestId('search-names-empty').isVisible(), true);
  await page.getByTestId('search-line').click();
  await eventually(async () => assert.equal(await page.getByTestId('file-path').textContent(), '/memories/user/preferences.md'));
  const target = page.locator('[data-testid="file-line"].target');
  assert.equal(await target.getAttribute('data-line'), '2');
  assert.equal(await target.locator('.lt').textContent(), 'Uses Rust and TypeScript.');

  // Back returns to the search, with its query.
  await page.goBack();
  await page.getByTestId('search-lines').waitFor();
  assert.equal(await page.getByTestId('search-input').inputValue(), 'typescript');

  // Many matches: at most 200 lines, said so.
  await page.getByTestId('search-input').fill('needle');
  await page.getByTestId('search-submit').click();
  await page.getByTestId('search-truncated').waitFor();
  assert.equal(await page.getByTestId('search-line').count(), 200);

  // Nothing found.
  await page.getByTestId('search-input').fill('zzz-nothing');
  await page.getByTestId('search-submit').click();
  await page.getByTestId('search-lines-empty').waitFor();
  assert.equal(await page.getByTestId('search-names-empty').isVisible(), true);
});

uiTest('an empty store: the page says so, and the first file can be made', {}, async ({ page, store }) => {
  await page.getByTestId('tree-empty').waitFor();
  assert.equal(await page.getByTestId('tree-summary').textContent(), '0 files, 0 bytes');
  assert.equal(await page.getByTestId('stat-files').textContent(), '0');
  await page.getByTestId('nav-history').click();
  await page.getByTestId('timeline').waitFor();
  assert.equal(await page.getByTestId('commit').count(), store.log().length);
  await page.getByTestId('new-file').click();
  await page.getByTestId('new-path').fill('/memories/first.md');
  await page.getByTestId('create').click();
  await expectMessage(page, 'File created successfully at: /memories/first.md', 'ok');
  await page.getByTestId('file-empty').waitFor();
  assert.equal(store.cat('/memories/first.md'), '');
  newestCommit(store, 'alice', 'create');
});

// -----------------------------------------------------------------------------------------------
// History: timelines, diffs, past versions
// -----------------------------------------------------------------------------------------------

uiTest('history: the store timeline, a file timeline, a diff of two versions, a past version', {
  setup: fillHistory,
}, async ({ page, store }) => {
  const log = store.log();
  await page.getByTestId('nav-history').click();
  await page.getByTestId('timeline').waitFor();
  const commits = page.getByTestId('commit');
  assert.equal(await commits.count(), log.length);
  // Newest first, each with time, actor, command and changed paths.
  for (let i = 0; i < log.length; i += 1) {
    const c = commits.nth(i);
    assert.equal(await c.getAttribute('data-generation'), String(log[i].generation));
    assert.equal(await c.getByTestId('commit-actor').textContent(), log[i].actor);
    assert.equal(await c.getByTestId('commit-command').textContent(), log[i].command.command);
    assert.equal(await c.getByTestId('commit-time').getAttribute('datetime'), new Date(log[i].time_ms).toISOString());
    const shown = await c.getByTestId('commit-time').textContent();
    assert.match(shown, /\b20\d\d\b/);
    assert.match(shown, /\d\d:\d\d:\d\d/);
    assert.deepEqual(await c.getByTestId('change-path').allTextContents(), log[i].changes.map((x) => x.path));
  }
  assert.equal(await commits.nth(0).getByTestId('commit-summary').textContent(), 'str_replace /memories/projects/alpha/plan.md');

  // A changed path leads to that file's timeline: only its commits.
  await commits.nth(0).getByTestId('change-path').click();
  await eventually(async () => assert.equal(await page.getByTestId('commit').count(), 3));
  const gens = await page.getByTestId('commit').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-generation'))));
  assert.deepEqual(gens, [6, 4, 2]);
  assert.deepEqual(await page.getByTestId('commit').getByTestId('commit-actor').allTextContents(), ['agent-1', 'agent-2', 'agent-1']);

  // Pick two versions: the diff between them, + and - lines coloured.
  const compare = page.getByTestId('compare');
  assert.equal(await compare.isDisabled(), true);
  await page.locator('[data-testid="commit"][data-generation="2"] [data-testid="compare-select"]').check();
  await page.locator('[data-testid="commit"][data-generation="6"] [data-testid="compare-select"]').check();
  assert.equal(await compare.isDisabled(), false);
  await compare.click();
  await page.getByTestId('compare-result').getByTestId('diff-file').waitFor();
  assert.equal(await page.getByTestId('compare-title').textContent(), 'Changes from @2 to @6');
  const result = page.getByTestId('compare-result');
  const added = await result.locator('[data-testid="diff-line"][data-kind="add"]').allTextContents();
  const removed = await result.locator('[data-testid="diff-line"][data-kind="del"]').allTextContents();
  assert.deepEqual(removed, ['-- ship the parser']);
  assert.deepEqual(await result.locator('[data-testid="diff-line"][data-kind="meta"]').allTextContents(),
    [`--- @2:${'/memories/projects/alpha/plan.md'}`, `+++ @6:${'/memories/projects/alpha/plan.md'}`]);
  assert.deepEqual(added, ['+- ship the parser (done)', '+- review the API']);
  const colour = (kind) => result.locator(`[data-testid="diff-line"][data-kind="${kind}"]`).first().evaluate((e) => getComputedStyle(e).backgroundColor);
  const [addBg, delBg, ctxBg] = [await colour('add'), await colour('del'), await colour('ctx')];
  assert.notEqual(addBg, delBg);
  assert.notEqual(addBg, ctxBg);
  assert.notEqual(delBg, ctxBg);
  // A third pick drops the oldest pick.
  await page.locator('[data-testid="commit"][data-generation="4"] [data-testid="compare-select"]').check();
  assert.equal(await page.locator('[data-testid="commit"][data-generation="2"] [data-testid="compare-select"]').isChecked(), false);
  await compare.click();
  await eventually(async () => assert.equal(await page.getByTestId('compare-title').textContent(), 'Changes from @4 to @6'));

  // One commit's own changes.
  const c4 = page.locator('[data-testid="commit"][data-generation="4"]');
  await c4.getByTestId('show-changes').click();
  await c4.getByTestId('commit-diff').getByTestId('diff-file').waitFor();
  assert.deepEqual(await c4.locator('[data-testid="diff-line"][data-kind="add"]').allTextContents(), ['+- review the API']);

  // A past version of the file.
  await page.locator('[data-testid="commit"][data-generation="2"]').getByTestId('view-version').click();
  await page.getByTestId('past-file-view').waitFor();
  assert.match(await page.getByTestId('past-banner').textContent(), /^As it was at @2 \(.*20\d\d.*, by agent-1\)\. This is a past version/);
  assert.deepEqual(await page.getByTestId('past-file-view').getByTestId('file-line').locator('.lt').allTextContents(),
    ['# Alpha', '\u200b', '- ship the parser', '- write the docs']);
  assert.equal(await page.getByTestId('edit').count(), 0, 'a past version is not editable');
  await page.getByTestId('current-version').click();
  await page.getByTestId('file-view').waitFor();

  // From a file to its timeline.
  await page.getByTestId('file-history').click();
  await eventually(async () => assert.equal(await page.getByTestId('commit').count(), 3));
});

// -----------------------------------------------------------------------------------------------
// Writing: create, edit, rename, delete; the tool's answers shown; the store checked
// -----------------------------------------------------------------------------------------------

uiTest('create a file; an existing path, a sensitive-data warning and a policy refusal are shown', {
  setup: (store) => {
    store.write('agent-1', { command: 'create', path: '/memories/notes.md', file_text: 'hello\n' });
    store.run(['policy', 'set', 'max-file-bytes', '100']);
  },
}, async ({ page, store }) => {
  await page.getByTestId('new-file').click();
  await page.getByTestId('new-view').waitFor();
  assert.equal(await page.getByTestId('new-path').inputValue(), '/memories/');
  await page.getByTestId('new-path').fill('/memories/ideas/today.md');
  await page.getByTestId('new-text').fill('first idea\nsecond idea\n');
  await page.getByTestId('create').click();
  await expectMessage(page, 'File created successfully at: /memories/ideas/today.md', 'ok');
  await eventually(async () => assert.equal(await page.getByTestId('file-path').textContent(), '/memories/ideas/today.md'));
  assert.deepEqual(await fileLines(page), ['first idea', 'second idea']);
  await byPath(page, 'tree-file', '/memories/ideas/today.md').waitFor();
  assert.equal(store.cat('/memories/ideas/today.md'), 'first idea\nsecond idea\n');
  const c = newestCommit(store, 'alice', 'create');
  assert.deepEqual(c.changes, [{ kind: 'created', path: '/memories/ideas/today.md' }]);

  // An existing path: the tool's refusal, as an error; nothing written.
  const before = store.log().length;
  await page.getByTestId('new-file').click();
  await page.getByTestId('new-path').fill('/memories/notes.md');
  await page.getByTestId('new-text').fill('other');
  await page.getByTestId('create').click();
  await expectMessage(page, 'Error: File /memories/notes.md already exists', 'error');
  assert.equal(await page.getByTestId('new-view').isVisible(), true, 'the form stays, with what was typed');
  assert.equal(store.cat('/memories/notes.md'), 'hello\n');
  assert.equal(store.log().length, before);

  // The sensitive-data filter warns (policy `sensitive warn`, the default): written, and said.
  await page.getByTestId('new-path').fill('/memories/deploy.md');
  await page.getByTestId('new-text').fill('deploy key: AKIA2E3MPLZQ7WX4KT5N\n');
  await page.getByTestId('create').click();
  await expectMessage(page,
    'File created successfully at: /memories/deploy.md\n\nWarning: the text written looks like it contains sensitive data '
    + '(1 finding: aws-access-key (line 1)). It was stored as given; memory files should not hold secrets.', 'warn');
  assert.equal(store.cat('/memories/deploy.md'), 'deploy key: AKIA2E3MPLZQ7WX4KT5N\n');
  newestCommit(store, 'alice', 'create');
  // A message can be dismissed.
  await page.getByTestId('message-close').click();
  assert.equal(await page.getByTestId('message').textContent(), '');
  assert.equal(await page.getByTestId('message-close').isVisible(), false);

  // The policy refuses a file over max-file-bytes: an error, nothing written.
  await page.getByTestId('new-file').click();
  await page.getByTestId('new-path').fill('/memories/big.md');
  await page.getByTestId('new-text').fill('x'.repeat(200));
  await page.getByTestId('create').click();
  await expectMessage(page,
    "Cannot write /memories/big.md: the file would be 200 bytes, over this store's limit of 100 bytes per file (max-file-bytes). Nothing was written.",
    'error');
  assert.equal(store.has('/memories/big.md'), false);

  // A path outside /memories: refused.
  await page.getByTestId('new-path').fill('/etc/evil.md');
  await page.getByTestId('new-text').fill('x');
  await page.getByTestId('create').click();
  await eventually(async () => assert.match(await messageText(page), /\/etc\/evil\.md/));
  assert.equal(await page.getByTestId('message').getAttribute('data-kind'), 'error');

  // Cancel leaves the form.
  await page.getByTestId('create-cancel').click();
  await page.getByTestId('new-view').waitFor({ state: 'detached' });
});

uiTest('edit a file: save, cancel, and a policy refusal kept in the editor', {
  setup: (store) => {
    store.write('agent-1', { command: 'create', path: '/memories/notes.md', file_text: 'hello\nworld\n' });
    store.run(['policy', 'set', 'sensitive', 'reject']);
  },
}, async ({ page, store }) => {
  await openFile(page, '/memories/notes.md');
  await page.getByTestId('edit').click();
  const editor = page.getByTestId('editor');
  assert.equal(await editor.inputValue(), 'hello\nworld\n');
  assert.equal(await editor.evaluate((e) => e === document.activeElement), true, 'the editor takes the focus');
  assert.equal(await page.getByTestId('file-view').locator('label[for]').first().textContent(), 'Content of /memories/notes.md');

  // Cancel: nothing written.
  await editor.fill('discarded\n');
  await page.getByTestId('cancel').click();
  assert.deepEqual(await fileLines(page), ['hello', 'world']);
  assert.equal(store.cat('/memories/notes.md'), 'hello\nworld\n');

  // Saving the same text writes nothing.
  await page.getByTestId('edit').click();
  await page.getByTestId('save').click();
  await expectMessage(page, 'Nothing to save: the file already holds this text.', 'ok');
  await eventually(async () => assert.equal(await page.getByTestId('editor').count(), 0));
  assert.equal(store.log().length, 2);

  // Save.
  await page.getByTestId('edit').click();
  await editor.fill('hello\nbrave new world\n');
  await page.getByTestId('save').click();
  await eventually(async () => assert.match(await messageText(page), /^The memory file has been edited\./));
  assert.equal(await page.getByTestId('message').getAttribute('data-kind'), 'ok');
  await eventually(async () => assert.deepEqual(await fileLines(page), ['hello', 'brave new world']));
  assert.equal(await page.getByTestId('editor').count(), 0);
  assert.equal(store.cat('/memories/notes.md'), 'hello\nbrave new world\n');
  newestCommit(store, 'alice', 'str_replace');

  // A refusal by the policy (sensitive = reject): an error; the editor keeps the text.
  const before = store.log().length;
  await page.getByTestId('edit').click();
  await editor.fill('deploy key: AKIA2E3MPLZQ7WX4KT5N\n');
  await page.getByTestId('save').click();
  await expectMessage(page,
    "Cannot write /memories/notes.md: the text looks like it contains sensitive data (1 finding: aws-access-key (line 1)). "
    + "This store's policy rejects it (sensitive = reject), so nothing was written. Remove it and try again.", 'error');
  assert.equal(await editor.inputValue(), 'deploy key: AKIA2E3MPLZQ7WX4KT5N\n');
  assert.equal(store.cat('/memories/notes.md'), 'hello\nbrave new world\n');
  assert.equal(store.log().length, before);
});

uiTest('rename and delete a file (delete confirmed in the page; Escape cancels)', {
  setup: (store) => store.write('agent-1',
    { command: 'create', path: '/memories/a.md', file_text: 'alpha\n' },
    { command: 'create', path: '/memories/keep.md', file_text: 'keep\n' }),
}, async ({ page, store }) => {
  await openFile(page, '/memories/a.md');

  // Rename: a dialog, focus in its field; Escape closes it and gives the focus back.
  await page.getByTestId('rename').focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByTestId('rename-dialog');
  await dialog.waitFor();
  assert.equal(await page.getByTestId('rename-to').evaluate((e) => e === document.activeElement), true);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.equal((await focused(page)).testid, 'rename');

  // A refused rename (the target exists) stays in the dialog, as the tool said it.
  await page.getByTestId('rename').click();
  await page.getByTestId('rename-to').fill('/memories/keep.md');
  await page.getByTestId('rename-confirm').click();
  await eventually(async () => assert.equal(await dialog.getByTestId('dialog-message').textContent(), 'Error: The destination /memories/keep.md already exists'));
  assert.equal(store.cat('/memories/a.md'), 'alpha\n');

  await page.getByTestId('rename-to').fill('/memories/archive/b.md');
  await page.getByTestId('rename-confirm').click();
  await expectMessage(page, 'Successfully renamed /memories/a.md to /memories/archive/b.md', 'ok');
  await eventually(async () => assert.equal(await page.getByTestId('file-path').textContent(), '/memories/archive/b.md'));
  await byPath(page, 'tree-file', '/memories/archive/b.md').waitFor();
  assert.equal(await byPath(page, 'tree-file', '/memories/a.md').count(), 0);
  assert.equal(store.cat('/memories/archive/b.md'), 'alpha\n');
  assert.equal(store.has('/memories/a.md'), false);
  newestCommit(store, 'alice', 'rename');

  // Delete: asks in the page. Cancel and Escape delete nothing.
  await page.getByTestId('delete').click();
  const del = page.getByTestId('delete-dialog');
  await del.waitFor();
  assert.equal((await focused(page)).testid, 'dialog-cancel', 'the safe choice has the focus');
  await del.getByTestId('dialog-cancel').click();
  await del.waitFor({ state: 'detached' });
  await page.getByTestId('delete').click();
  await del.waitFor();
  await page.keyboard.press('Escape');
  await del.waitFor({ state: 'detached' });
  assert.equal((await focused(page)).testid, 'delete');
  assert.equal(store.cat('/memories/archive/b.md'), 'alpha\n');

  await page.getByTestId('delete').click();
  await page.getByTestId('delete-confirm').click();
  await expectMessage(page, 'Successfully deleted /memories/archive/b.md', 'ok');
  await page.getByTestId('overview-view').waitFor();
  await eventually(async () => assert.equal(await byPath(page, 'tree-file', '/memories/archive/b.md').count(), 0));
  assert.equal(store.has('/memories/archive/b.md'), false);
  newestCommit(store, 'alice', 'delete');
  assert.equal(store.cat('/memories/keep.md'), 'keep\n');
});

// -----------------------------------------------------------------------------------------------
// Conflicts: an agent writes while the person edits; never overwritten silently
// -----------------------------------------------------------------------------------------------

uiTest('conflict: an agent changed the file during the edit; reload, then merge, keeping both', {
  setup: (store) => store.write('agent-1', { command: 'create', path: '/memories/shared.md', file_text: 'one\ntwo\nthree\nfour\nfive\n' }),
}, async ({ page, store }) => {
  const p = '/memories/shared.md';
  await openFile(page, p);
  await page.getByTestId('edit').click();
  const editor = page.getByTestId('editor');
  await editor.fill('one (mine)\ntwo\nthree\nfour\nfive\n');

  // The agent writes meanwhile; the save is refused, nothing is overwritten.
  store.write('agent-1', { command: 'str_replace', path: p, old_str: 'five', new_str: 'five (agent)' });
  await page.getByTestId('save').click();
  const conflict = page.getByTestId('conflict');
  await conflict.waitFor();
  assert.equal(await conflict.getAttribute('role'), 'alert');
  assert.equal(await conflict.locator('h2').textContent(), 'This file changed while you were editing it');
  assert.match(await conflict.getByTestId('conflict-text').textContent(), /Nothing was overwritten/);
  assert.equal(await conflict.getByTestId('conflict-detail').textContent(), 'the file changed since you opened it');
  assert.equal(store.cat(p), 'one\ntwo\nthree\nfour\nfive (agent)\n', "the agent's text is kept");
  newestCommit(store, 'agent-1', 'str_replace');
  assert.equal(await editor.inputValue(), 'one (mine)\ntwo\nthree\nfour\nfive\n', "the person's text is still there");

  // Reload: mine discarded, theirs loaded; a save is now against their version.
  await conflict.getByTestId('conflict-reload').click();
  assert.equal(await page.getByTestId('conflict').count(), 0);
  assert.equal(await editor.inputValue(), 'one\ntwo\nthree\nfour\nfive (agent)\n');
  await expectMessage(page, 'Loaded their version; your changes were discarded.', 'ok');
  assert.equal(store.cat(p), 'one\ntwo\nthree\nfour\nfive (agent)\n');
  await editor.fill('one (mine)\ntwo\nthree\nfour\nfive (agent)\n');

  // The agent writes again before this save: a second conflict, then Merge.
  store.write('agent-1', { command: 'str_replace', path: p, old_str: 'three', new_str: 'three (agent)' });
  await page.getByTestId('save').click();
  await page.getByTestId('conflict').waitFor();
  assert.equal(store.cat(p), 'one\ntwo\nthree (agent)\nfour\nfive (agent)\n');
  await page.getByTestId('conflict-merge').click();
  const merge = page.getByTestId('merge');
  await merge.waitFor();
  assert.equal(await merge.getByTestId('merge-theirs').textContent(), 'one\ntwo\nthree (agent)\nfour\nfive (agent)\n');
  assert.equal(await merge.getByTestId('merge-mine').textContent(), 'one (mine)\ntwo\nthree\nfour\nfive (agent)\n');
  const merged = merge.getByTestId('merge-text');
  assert.equal(await merged.evaluate((e) => e === document.activeElement), true);
  // Different lines changed: the merged text starts with both changes.
  assert.equal(await merged.inputValue(), 'one (mine)\ntwo\nthree (agent)\nfour\nfive (agent)\n');
  assert.match(await merge.getByTestId('merge-note').textContent(), /both are in the merged text/);
  await merged.fill('one (mine)\ntwo\nthree (agent)\nfour\nfive (agent)\nsix (merged)\n');
  await merge.getByTestId('merge-save').click();
  await eventually(async () => assert.match(await messageText(page), /^The memory file has been edited\./));
  await eventually(async () => assert.deepEqual(await fileLines(page), ['one (mine)', 'two', 'three (agent)', 'four', 'five (agent)', 'six (merged)']));
  assert.equal(store.cat(p), 'one (mine)\ntwo\nthree (agent)\nfour\nfive (agent)\nsix (merged)\n', 'both changes kept');
  newestCommit(store, 'alice', 'str_replace');
  assert.deepEqual(store.log().map((c) => c.actor), ['alice', 'agent-1', 'agent-1', 'agent-1']);

  // The same lines changed on both sides: both kept between markers, for the person to settle.
  await page.getByTestId('edit').click();
  await editor.fill('one (mine again)\ntwo\nthree (agent)\nfour\nfive (agent)\nsix (merged)\n');
  store.write('agent-1', { command: 'str_replace', path: p, old_str: 'one (mine)', new_str: 'one (agent)' });
  await page.getByTestId('save').click();
  await page.getByTestId('conflict-merge').click();
  assert.equal(await page.getByTestId('merge-text').inputValue(),
    '<<<<<<< yours\none (mine again)\n=======\none (agent)\n>>>>>>> theirs\ntwo\nthree (agent)\nfour\nfive (agent)\nsix (merged)\n');
  assert.match(await page.getByTestId('merge-note').textContent(), /^Both sides changed the same lines in one place/);
  assert.equal(store.cat(p), 'one (agent)\ntwo\nthree (agent)\nfour\nfive (agent)\nsix (merged)\n');
  // Cancel goes back to the editor with the merged text; a save there is against their version.
  await page.getByTestId('merge-text').fill('one (agent, mine again)\ntwo\nthree (agent)\nfour\nfive (agent)\nsix (merged)\n');
  await page.getByTestId('merge-cancel').click();
  assert.equal(await editor.inputValue(), 'one (agent, mine again)\ntwo\nthree (agent)\nfour\nfive (agent)\nsix (merged)\n');
  await page.getByTestId('save').click();
  await eventually(async () => assert.deepEqual((await fileLines(page))[0], 'one (agent, mine again)'));
  assert.equal(store.cat(p), 'one (agent, mine again)\ntwo\nthree (agent)\nfour\nfive (agent)\nsix (merged)\n');
  newestCommit(store, 'alice', 'str_replace');
});

uiTest('conflict: the file was deleted during the edit', {
  setup: (store) => store.write('agent-1', { command: 'create', path: '/memories/gone.md', file_text: 'soon gone\n' }),
}, async ({ page, store }) => {
  await openFile(page, '/memories/gone.md');
  await page.getByTestId('edit').click();
  await page.getByTestId('editor').fill('my text\n');
  store.write('agent-1', { command: 'delete', path: '/memories/gone.md' });
  await page.getByTestId('save').click();
  await page.getByTestId('conflict').waitFor();
  assert.equal(await page.getByTestId('conflict-detail').textContent(), 'the file was deleted or moved since you opened it');
  assert.equal(store.has('/memories/gone.md'), false, 'not written back');
  newestCommit(store, 'agent-1', 'delete');
  // The person may keep the text as a new file at that path.
  await page.getByTestId('conflict-recreate').click();
  await expectMessage(page, 'File created successfully at: /memories/gone.md', 'ok');
  assert.equal(store.cat('/memories/gone.md'), 'my text\n');
  newestCommit(store, 'alice', 'create');
});

// -----------------------------------------------------------------------------------------------
// Restore, undo, purge: a dry run first, then a confirmation
// -----------------------------------------------------------------------------------------------

uiTest('restore a file and the whole tree to a past version, and undo; each previewed first', {
  setup: fillHistory,
}, async ({ page, store }) => {
  const plan = '/memories/projects/alpha/plan.md';
  const before = store.log().length;
  await page.goto(`${store.origin}/#/history?path=${encodeURIComponent(plan)}`);
  await eventually(async () => assert.equal(await page.getByTestId('commit').count(), 3));

  // Restore this file to @2: a dry run listing the change, then the confirmation.
  await page.locator('[data-testid="commit"][data-generation="2"]').getByTestId('restore-file').click();
  const dialog = page.getByTestId('restore-dialog');
  await dialog.getByTestId('preview-changes').waitFor();
  assert.deepEqual(await dialog.getByTestId('change').allTextContents(), [`Mmodified ${plan}`]);
  assert.equal(store.log().length, before, 'a dry run commits nothing');
  await dialog.getByTestId('preview-confirm').click();
  await dialog.waitFor({ state: 'detached' });
  await expectMessage(page, `Restored ${plan} to @2: 1 change, commit @7.`, 'ok');
  assert.equal(store.cat(plan), '# Alpha\n\n- ship the parser\n- write the docs\n');
  const c = newestCommit(store, 'alice', 'restore');
  assert.equal(c.generation, 7);
  assert.equal(store.cat('/memories/notes.md'), 'hello world\n', 'other files untouched');

  // The timeline now has the restore on top.
  await eventually(async () => assert.equal(await page.getByTestId('commit').first().getByTestId('commit-command').textContent(), 'restore'));
  assert.equal(await page.getByTestId('commit').first().getByTestId('commit-actor').textContent(), 'alice');

  // Restoring again to the same place: nothing would change, nothing to confirm.
  await page.locator('[data-testid="commit"][data-generation="2"]').getByTestId('restore-file').click();
  await dialog.getByTestId('preview-changes-empty').waitFor();
  assert.equal(await dialog.getByTestId('preview-confirm').isDisabled(), true);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });

  // Restore everything to @1: notes.md back to hello, the other two files gone.
  await page.getByTestId('nav-history').click();
  await eventually(async () => assert.equal(await page.getByTestId('commit').count(), 7));
  await page.locator('[data-testid="commit"][data-generation="1"]').getByTestId('restore-all').click();
  await dialog.getByTestId('preview-changes').waitFor();
  const listed = await dialog.getByTestId('change').allTextContents();
  assert.deepEqual(listed.sort(), [
    'Mmodified /memories/notes.md',
    `Ddeleted ${plan}`,
    'Ddeleted /memories/user/preferences.md',
  ].sort());
  assert.equal(store.log().length, 7);
  await dialog.getByTestId('preview-confirm').click();
  await expectMessage(page, 'Restored everything to @1: 3 changes, commit @8.', 'ok');
  assert.equal(store.cat('/memories/notes.md'), 'hello\n');
  assert.equal(store.has(plan), false);
  newestCommit(store, 'alice', 'restore');
  await eventually(async () => assert.equal(await byPath(page, 'tree-file', plan).count(), 0));

  // Undo the restore: previewed, then done.
  await page.getByTestId('undo').click();
  const undo = page.getByTestId('undo-dialog');
  await undo.getByTestId('preview-changes').waitFor();
  assert.equal(await undo.getByTestId('change').count(), 3);
  assert.equal(store.log().length, 8);
  await undo.getByTestId('preview-confirm').click();
  await expectMessage(page, 'Undone: 3 changes, commit @9.', 'ok');
  assert.equal(store.cat('/memories/notes.md'), 'hello world\n');
  assert.equal(store.cat(plan), '# Alpha\n\n- ship the parser\n- write the docs\n');
  newestCommit(store, 'alice', 'undo');
  await byPath(page, 'tree-file', plan).waitFor();
});

uiTest('purge a file: a dry run, then the path typed to enable Erase', {
  setup: (store) => {
    store.write('agent-1',
      { command: 'create', path: '/memories/secret.md', file_text: 'the old secret\n' },
      { command: 'create', path: '/memories/keep.md', file_text: 'keep\n' });
    store.write('agent-2', { command: 'str_replace', path: '/memories/secret.md', old_str: 'old', new_str: 'new' });
  },
}, async ({ page, store }) => {
  await openFile(page, '/memories/secret.md');
  await page.getByTestId('purge').click();
  const dialog = page.getByTestId('purge-dialog');
  await dialog.getByTestId('purge-report-list').waitFor();
  const report = dialog.getByTestId('purge-report-list');
  assert.equal(await report.locator('dd[data-key="path"]').textContent(), '/memories/secret.md');
  assert.equal(await report.getAttribute('data-dry-run'), 'true');
  assert.equal(await report.locator('dd[data-key="removed"]').textContent(), '/memories/secret.md');
  assert.equal(await report.locator('dd[data-key="versions"]').textContent(), '2');
  assert.equal(await report.locator('dd[data-key="rewritten"]').textContent(), '3 of 3');
  assert.equal(store.log().length, 3, 'a dry run commits nothing');
  assert.equal(store.cat('/memories/secret.md'), 'the new secret\n');

  const erase = dialog.getByTestId('purge-erase');
  const typed = dialog.getByTestId('purge-confirm-input');
  assert.equal(await typed.evaluate((e) => e === document.activeElement), true);
  assert.equal(await erase.isDisabled(), true);
  await typed.fill('/memories/secret');
  assert.equal(await erase.isDisabled(), true);
  await typed.fill('/memories/secret.md');
  assert.equal(await erase.isDisabled(), false);
  await erase.click();
  await eventually(async () => assert.match(await messageText(page),
    /^Erased \/memories\/secret\.md from the tree and all history: 2 versions, 3 commits rewritten, \d+ stored objects deleted\.$/));
  assert.equal(await page.getByTestId('message').getAttribute('data-kind'), 'ok');
  await dialog.waitFor({ state: 'detached' });
  assert.equal(store.has('/memories/secret.md'), false);
  const log = store.log();
  const c = newestCommit(store, 'alice', 'purge');
  assert.equal(c.generation, 4);
  // No kept commit names the file any more but the purge itself, and no version is readable.
  for (const older of log.slice(1)) {
    assert.equal(JSON.stringify(older).includes('secret'), false, JSON.stringify(older));
  }
  assert.equal(store.run(['show', '@1:/memories/secret.md'], { allowFail: true }).status === 0, false);
  assert.equal(store.cat('/memories/keep.md'), 'keep\n');
  await eventually(async () => assert.equal(await byPath(page, 'tree-file', '/memories/secret.md').count(), 0));

  // A live copy elsewhere (the same content): refused unless the person asks for every copy.
  store.write('agent-1',
    { command: 'create', path: '/memories/token.md', file_text: 'copied text\n' },
    { command: 'create', path: '/memories/elsewhere/copy.md', file_text: 'copied text\n' });
  await page.getByTestId('refresh').click();
  await openFile(page, '/memories/token.md');
  await page.getByTestId('purge').click();
  await eventually(async () => assert.match(await dialog.getByTestId('dialog-message').textContent(), /\/memories\/elsewhere\/copy\.md/));
  await dialog.getByTestId('purge-confirm-input').fill('/memories/token.md');
  assert.equal(await erase.isDisabled(), true, 'no erase without a dry run that passed');
  await dialog.getByTestId('purge-all-copies').check();
  await eventually(async () => assert.equal(await report.locator('dd[data-key="live_copies"]').textContent(), '/memories/elsewhere/copy.md'));
  assert.equal(await dialog.getByTestId('dialog-message').textContent(), '');
  assert.equal(await erase.isDisabled(), false);
  await erase.click();
  await eventually(async () => assert.match(await messageText(page), /^Erased \/memories\/token\.md from the tree and all history: 1 version, /));
  assert.equal(store.has('/memories/token.md'), false);
  assert.equal(store.has('/memories/elsewhere/copy.md'), false);
  newestCommit(store, 'alice', 'purge');
});

// -----------------------------------------------------------------------------------------------
// Overview
// -----------------------------------------------------------------------------------------------

uiTest('overview: files, bytes, commits per day and per actor, policy, key slots, check', {
  setup: (store) => {
    fillHistory(store);
    store.run(['policy', 'set', 'max-files', '500']);
  },
}, async ({ page, store }) => {
  const view = page.getByTestId('overview-view');
  assert.equal(await view.getByTestId('stat-files').textContent(), '3');
  const bytes = ['/memories/notes.md', '/memories/projects/alpha/plan.md', '/memories/user/preferences.md']
    .reduce((n, p) => n + Buffer.byteLength(store.cat(p)), 0);
  assert.equal(await view.getByTestId('stat-bytes').getAttribute('title'), `${bytes} bytes`);
  assert.equal(await view.getByTestId('stat-bytes').textContent(), `${bytes} bytes`);

  // Charts: SVG drawn by the script, one bar per day and per actor.
  const day = view.getByTestId('chart-per-day');
  assert.equal(await day.evaluate((e) => e.tagName), 'svg');
  const dayBars = await day.getByTestId('bar').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
  assert.equal(dayBars.reduce((a, b) => a + b, 0), 7);
  const actors = view.getByTestId('chart-per-actor');
  const actorBars = await actors.getByTestId('bar').evaluateAll((els) => els.map((e) => [e.getAttribute('data-actor'), Number(e.getAttribute('data-value'))]));
  assert.deepEqual(actorBars, [['agent-1', 4], ['agent-2', 2], ['', 1]]);
  assert.match(await actors.getAttribute('aria-label'), /agent-1 4/);

  // The policy, the key slots (labels only), no check yet.
  const policy = await view.getByTestId('policy-row').evaluateAll((els) => els.map((e) => [e.getAttribute('data-key'), e.querySelector('td').textContent]));
  const maxFiles = policy.find(([k]) => k === 'max-files');
  assert.ok(maxFiles, `max-files in ${JSON.stringify(policy)}`);
  assert.equal(maxFiles[1], '500');
  assert.ok((await view.getByTestId('key-slot').count()) >= 1);
  assert.match(await view.getByTestId('last-check').textContent(), /No check has run/);

  // Run check.
  await view.getByTestId('run-check').click();
  const outcome = view.getByTestId('check-outcome');
  await outcome.waitFor();
  assert.match(await outcome.textContent(), /^OK/);
  assert.match(await outcome.textContent(), /7 commits \(@1\.\.@7\).*no problems/);
  await eventually(async () => assert.match(await view.getByTestId('last-check').textContent(), /^OK/));
  // Kept for the session: shown again on a fresh overview.
  await page.reload();
  await page.getByTestId('overview-view').getByTestId('last-check-result').waitFor();
  assert.match(await page.getByTestId('last-check-result').textContent(), /no problems/);
});

// -----------------------------------------------------------------------------------------------
// Keyboard alone, a narrow screen
// -----------------------------------------------------------------------------------------------

uiTest('keyboard only: open a file, edit, save, open its history, a dialog', {
  setup: (store) => store.write('agent-1',
    { command: 'create', path: '/memories/notes.md', file_text: 'hello\n' },
    { command: 'create', path: '/memories/todo.md', file_text: 'a\n' }),
}, async ({ page, store }) => {
  // The first Tab reaches the skip link, which is then visible.
  await page.keyboard.press('Tab');
  assert.equal((await focused(page)).testid, 'skip');
  await eventually(async () => assert.equal(await page.getByTestId('skip').evaluate((e) => e.getBoundingClientRect().top >= 0), true));

  // To the file in the tree, and open it.
  await tabTo(page, (f) => f.path === '/memories/notes.md');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none', 'a visible focus ring');
  await page.keyboard.press('Enter');
  await eventually(async () => assert.equal(await page.getByTestId('file-path').textContent(), '/memories/notes.md'));
  assert.equal((await focused(page)).testid, 'file-path', 'the focus moves to the opened file');

  // Edit with Enter, type, Tab to Save, Enter.
  await tabTo(page, (f) => f.testid === 'edit');
  await page.keyboard.press('Enter');
  await eventually(async () => assert.equal((await focused(page)).testid, 'editor'));
  await page.keyboard.press('Control+End');
  await page.keyboard.type('typed by keyboard\n');
  await tabTo(page, (f) => f.testid === 'save');
  await page.keyboard.press('Enter');
  await eventually(async () => assert.match(await messageText(page), /^The memory file has been edited\./));
  assert.equal(store.cat('/memories/notes.md'), 'hello\ntyped by keyboard\n');
  newestCommit(store, 'alice', 'str_replace');

  // The history link, with Enter; a compare box with Space.
  await eventually(async () => assert.equal(await page.getByTestId('editor').count(), 0));
  await tabTo(page, (f) => f.testid === 'file-history');
  await page.keyboard.press('Enter');
  await eventually(async () => assert.equal(await page.getByTestId('commit').count(), 2));
  await tabTo(page, (f) => f.testid === 'compare-select');
  await page.keyboard.press('Space');
  assert.equal(await page.getByTestId('compare-select').first().isChecked(), true);

  // A dialog: Space opens it, the focus moves in, Escape closes it and the focus comes back.
  await tabTo(page, (f) => f.testid === 'nav-overview', { back: true });
  await page.keyboard.press('Enter');
  await page.getByTestId('overview-view').waitFor();
  await tabTo(page, (f) => f.path === '/memories/todo.md', { back: true });
  await page.keyboard.press('Enter');
  await eventually(async () => assert.equal(await page.getByTestId('file-path').textContent(), '/memories/todo.md'));
  await tabTo(page, (f) => f.testid === 'delete');
  await page.keyboard.press('Space');
  await page.getByTestId('delete-dialog').waitFor();
  assert.equal(await page.evaluate(() => !!document.activeElement.closest('dialog')), true);
  await page.keyboard.press('Escape');
  await page.getByTestId('delete-dialog').waitFor({ state: 'detached' });
  assert.equal((await focused(page)).testid, 'delete');
  // And confirm by keyboard: Tab back to Delete inside the dialog.
  await page.keyboard.press('Enter');
  await page.getByTestId('delete-dialog').waitFor();
  await page.keyboard.press('Shift+Tab');
  assert.equal((await focused(page)).testid, 'delete-confirm');
  await page.keyboard.press('Enter');
  await expectMessage(page, 'Successfully deleted /memories/todo.md', 'ok');
  assert.equal(store.has('/memories/todo.md'), false);
  newestCommit(store, 'alice', 'delete');
});

const LONG = `${'a-very-long-line-without-any-space-'.repeat(12)}end`;

uiTest('narrow screen (360x640): no sideways scrolling, the tree above, the actions visible', {
  viewport: { width: 360, height: 640 },
  setup: (store) => {
    fillHistory(store);
    store.write('agent-1', {
      command: 'create',
      path: '/memories/projects/a-rather-long-folder-name/and-an-even-longer-file-name-for-narrow-screens.md',
      file_text: `${LONG}\nshort\n`,
    });
  },
}, async ({ page }) => {
  const width = () => page.evaluate(() => document.scrollingElement.scrollWidth);
  const inView = async (loc) => {
    const b = await loc.boundingBox();
    assert.ok(b, 'shown');
    assert.ok(b.x >= 0 && b.x + b.width <= 360, `inside the width: ${JSON.stringify(b)}`);
  };
  assert.ok(await width() <= 360, `overview: ${await width()}`);
  await inView(page.getByTestId('nav-history'));
  await inView(page.getByTestId('tree-toggle'));
  await inView(page.getByTestId('new-file'));

  // The tree is above the content.
  const tree = await page.getByTestId('tree').boundingBox();
  const view = await page.getByTestId('view').boundingBox();
  assert.ok(tree.y + tree.height <= view.y, 'the tree is above the content');

  const p = '/memories/projects/a-rather-long-folder-name/and-an-even-longer-file-name-for-narrow-screens.md';
  await openFile(page, p);
  assert.ok(await width() <= 360, `file: ${await width()}`);
  // Opening a file folds the tree away; the toggle opens it again.
  assert.equal(await page.getByTestId('tree-toggle').getAttribute('aria-expanded'), 'false');
  assert.equal(await page.getByTestId('tree').isVisible(), false);
  for (const id of ['edit', 'rename', 'delete', 'file-history']) await inView(page.getByTestId(id));
  await page.getByTestId('tree-toggle').click();
  assert.equal(await page.getByTestId('tree').isVisible(), true);

  await page.getByTestId('edit').click();
  assert.ok(await width() <= 360, `editor: ${await width()}`);
  await inView(page.getByTestId('save'));
  await page.getByTestId('cancel').click();

  await page.getByTestId('file-history').click();
  await page.getByTestId('commit').first().waitFor();
  await page.getByTestId('commit').first().getByTestId('show-changes').click();
  await page.getByTestId('commit').first().getByTestId('diff-file').waitFor();
  assert.ok(await width() <= 360, `history: ${await width()}`);
  await inView(page.getByTestId('commit').first().getByTestId('restore-all'));

  await page.getByTestId('nav-search').click();
  await page.getByTestId('search-input').fill('a-very-long');
  await page.getByTestId('search-submit').click();
  await page.getByTestId('search-line').first().waitFor();
  assert.ok(await width() <= 360, `search: ${await width()}`);

  await page.getByTestId('nav-overview').click();
  await page.getByTestId('overview-view').waitFor();
  assert.ok(await width() <= 360, `overview again: ${await width()}`);
  await inView(page.getByTestId('run-check'));
});

// -----------------------------------------------------------------------------------------------
// The README's screenshots
// -----------------------------------------------------------------------------------------------

uiTest('screenshots: the tree with a file open, and a file timeline with a diff', {
  dir: 'readme',
  setup: (store) => {
    store.write('claude-desktop',
      { command: 'create', path: '/memories/user/preferences.md', file_text: '# Preferences\n\n- Prefers short, direct answers.\n- Writes Rust and TypeScript; tests with Playwright.\n- Time zone: Europe/Paris.\n' },
      { command: 'create', path: '/memories/projects/memfs/decisions.md', file_text: '# Decisions\n\n1. The store is content-addressed and encrypted.\n2. Every change is a commit with an actor.\n' },
      { command: 'create', path: '/memories/projects/memfs/todo.md', file_text: '# To do\n\n- [ ] Browser viewer\n- [ ] Key rotation docs\n' },
      { command: 'create', path: '/memories/projects/website/notes.md', file_text: 'Launch checklist lives in the wiki.\n' });
    store.write('agent-7',
      { command: 'str_replace', path: '/memories/projects/memfs/todo.md', old_str: '- [ ] Browser viewer', new_str: '- [x] Browser viewer (memfs ui)' },
      { command: 'insert', path: '/memories/projects/memfs/decisions.md', insert_line: 4, insert_text: '3. A person edits through memfs ui; agents keep writing.\n' });
    store.write('claude-desktop',
      { command: 'str_replace', path: '/memories/projects/memfs/todo.md', old_str: '- [ ] Key rotation docs', new_str: '- [ ] Key rotation docs\n- [ ] Screenshots in the README' });
  },
}, async ({ page }) => {
  const write = process.env.MEMFS_UI_SCREENSHOTS === '1';
  const dir = write ? path.join(REPO, 'docs') : path.join(REPO, 'target', 'ui-screenshots');
  fs.mkdirSync(dir, { recursive: true });

  await openFile(page, '/memories/projects/memfs/decisions.md');
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(dir, 'ui-tree.png') });

  await page.getByTestId('file-history').click();
  await eventually(async () => assert.equal(await page.getByTestId('commit').count(), 2));
  await page.goto(`${page.url().split('#')[0]}#/history?path=${encodeURIComponent('/memories/projects/memfs/todo.md')}`);
  await eventually(async () => assert.equal(await page.getByTestId('commit').count(), 3));
  const c = page.getByTestId('commit');
  await c.nth(0).getByTestId('compare-select').check();
  await c.nth(2).getByTestId('compare-select').check();
  await page.getByTestId('compare').click();
  await page.getByTestId('compare-result').getByTestId('diff-file').waitFor();
  await page.evaluate(() => { window.scrollTo(0, 0); document.activeElement.blur(); });
  await page.screenshot({ path: path.join(dir, 'ui-timeline.png') });
  for (const f of ['ui-tree.png', 'ui-timeline.png']) assert.ok(fs.statSync(path.join(dir, f)).size > 10000, f);
});
