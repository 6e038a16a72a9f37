// memfs ui: the page's script (docs/UI.md is the API it talks to).
//
// Plain JavaScript, no framework, no build step. Everything the store holds is untrusted text:
// it reaches the page through textContent and createElement only, never innerHTML. The server
// sends `content-security-policy: default-src 'self'`, so there is no inline script, style or
// event handler anywhere; handlers are attached here.
'use strict';

(() => {
  // ---------------------------------------------------------------------------------------------
  // Small helpers
  // ---------------------------------------------------------------------------------------------

  const $ = (id) => document.getElementById(id);
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const NARROW = window.matchMedia('(max-width: 720px)');
  let uidCounter = 0;
  const uid = (prefix) => `${prefix}-${++uidCounter}`;

  /** Appends children: strings become text nodes, arrays are flattened, null and false skipped. */
  function append(el, children) {
    for (const c of children) {
      if (c == null || c === false) continue;
      if (Array.isArray(c)) append(el, c);
      else if (c instanceof Node) el.append(c);
      else el.append(document.createTextNode(String(c)));
    }
    return el;
  }

  /** Replaces an element's children (as append: null and false are skipped). */
  function put(el, ...children) {
    el.replaceChildren();
    return append(el, children);
  }

  function setAttrs(el, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k === 'class') el.setAttribute('class', v);
      else if (k === 'testid') el.setAttribute('data-testid', v);
      else if (k === 'value' || k === 'checked' || k === 'readOnly') el[k] = v;
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }

  /** Creates an HTML element: h('button', {type: 'button', onclick: f}, 'Save'). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    setAttrs(el, attrs);
    return append(el, children);
  }

  /** Creates an SVG element. */
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG_NS, tag);
    setAttrs(el, attrs);
    return append(el, children);
  }

  const button = (label, attrs) => h('button', { type: 'button', ...attrs }, label);

  function fileHref(path, extra) {
    const q = new URLSearchParams({ path, ...extra });
    return `#/file?${q}`;
  }
  const historyHref = (path) => (path ? `#/history?${new URLSearchParams({ path })}` : '#/history');

  function fmtTime(ms) {
    if (typeof ms !== 'number') return '';
    return new Date(ms).toLocaleString(undefined, {
      year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
  }

  function timeEl(ms, testid) {
    const iso = typeof ms === 'number' ? new Date(ms).toISOString() : '';
    return h('time', { datetime: iso, testid, title: iso }, fmtTime(ms));
  }

  function fmtBytes(n) {
    if (typeof n !== 'number') return '';
    if (n < 1024) return n === 1 ? '1 byte' : `${n} bytes`;
    const units = ['KiB', 'MiB', 'GiB', 'TiB'];
    let v = n / 1024;
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
    return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
  }

  const plural = (n, one, many) => `${n} ${n === 1 ? one : many || `${one}s`}`;

  const STATUS_WORDS = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed' };
  function statusBadge(status) {
    const word = STATUS_WORDS[status] || status;
    return h('span', { class: `status status-${status}`, title: word, testid: 'change-status' },
      h('span', { 'aria-hidden': 'true' }, status),
      h('span', { class: 'visually-hidden' }, word));
  }

  function parentOf(path) {
    const i = path.lastIndexOf('/');
    return i > 0 ? path.slice(0, i) : '/memories';
  }

  // ---------------------------------------------------------------------------------------------
  // The API
  // ---------------------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, data, fallback) {
      let msg = data && typeof data.error === 'string' ? data.error : fallback;
      if (status === 401) {
        msg = `${data && data.error ? data.error : 'No session.'} (An address works once: to open the page again, restart memfs ui.)`;
      }
      super(msg || `The server answered ${status}.`);
      this.status = status;
      this.data = data;
    }
  }

  const state = {
    session: null,
    tree: null,
    collapsed: new Set(), // folders the person closed
    treeSeeded: false,
    treeOpenNarrow: true,
    route: null,
  };

  // The session's secret, traded once for the printed address's token. It lives in this tab's
  // sessionStorage, which belongs to this origin (port included) alone: a cookie would go to
  // every program serving pages on another port of 127.0.0.1.
  const SESSION_KEY = 'memfs-session';
  const SESSION_HEADER = 'x-memfs-session';

  /** GET when body is undefined, else POST with a JSON body; both with the session's header. */
  async function api(path, body) {
    const opts = { credentials: 'omit', headers: { accept: 'application/json' } };
    const secret = sessionStorage.getItem(SESSION_KEY);
    if (secret) opts.headers[SESSION_HEADER] = secret;
    if (body !== undefined) {
      opts.method = 'POST';
      opts.headers['content-type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, opts);
    } catch (e) {
      throw new ApiError(0, null, 'memfs ui did not answer: is it still running?');
    }
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
    if (!res.ok) throw new ApiError(res.status, data, `${res.status} ${res.statusText}`.trim());
    return data;
  }

  const qs = (o) => new URLSearchParams(o).toString();

  // ---------------------------------------------------------------------------------------------
  // Messages: one live region at the top of the content
  // ---------------------------------------------------------------------------------------------

  /** Shows a message: kind is 'ok', 'warn' or 'error'. An empty text clears it. */
  function say(text, kind) {
    const box = $('message');
    const bar = $('message-bar');
    put(box);
    box.removeAttribute('data-kind');
    bar.removeAttribute('data-kind');
    bar.hidden = !text;
    if (!text) return;
    const k = kind || 'ok';
    box.setAttribute('data-kind', k);
    bar.setAttribute('data-kind', k);
    // A label says what kind of message it is (not by colour alone), unless the text says it.
    const label = { ok: 'Done', warn: 'Warning', error: 'Error' }[k];
    box.append(h('p', { class: 'message-body' },
      text.startsWith(label) ? null : h('span', { class: 'message-label' }, `${label}: `),
      h('span', { class: 'message-text', testid: 'message-text' }, text)));
    // The answer to what the person just did: make sure it is on screen.
    bar.scrollIntoView({ block: 'nearest' });
  }

  /** The kind of a tool answer: ok, ok with the sensitive-data filter's note, or refused. */
  function answerKind(answer) {
    if (!answer || !answer.ok) return 'error';
    return /\n\n(Warning|Note):/.test(answer.message || '') ? 'warn' : 'ok';
  }

  function sayError(e) {
    say(e && e.message ? e.message : String(e), 'error');
  }

  // ---------------------------------------------------------------------------------------------
  // Dialogs: <dialog> shown modal (focus moves in, Escape closes), focus goes back on close
  // ---------------------------------------------------------------------------------------------

  function openDialog({ title, testid, wide }) {
    const opener = document.activeElement;
    const titleId = uid('dialog-title');
    const body = h('div', { class: 'dialog-body' });
    const note = h('div', { class: 'dialog-message', testid: 'dialog-message', role: 'alert' });
    const dlg = h('dialog', { class: wide ? 'dialog wide' : 'dialog', testid, 'aria-labelledby': titleId },
      h('h2', { id: titleId, class: 'dialog-title' }, title), body, note);
    document.body.append(dlg);
    const api_ = {
      dlg, body,
      close() { if (dlg.open) dlg.close(); },
      error(text) { put(note, text ? h('p', { class: 'error-text' }, text) : null); },
    };
    dlg.addEventListener('close', () => {
      dlg.remove();
      if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
      else focusContent();
    });
    dlg.showModal();
    return api_;
  }

  function focusContent() {
    const heading = $('view').querySelector('h1');
    (heading || $('content')).focus({ preventScroll: false });
  }

  function changeList(changes, testid) {
    if (!changes || changes.length === 0) {
      return h('p', { class: 'muted', testid: `${testid}-empty` }, 'Nothing would change: it is already so.');
    }
    return h('ul', { class: 'changes', testid },
      changes.map((c) => h('li', { testid: 'change' }, statusBadge(c.status), ' ',
        c.from ? [h('span', { class: 'path' }, c.from), ' → '] : null, h('span', { class: 'path' }, c.path))));
  }

  /**
   * A write that is previewed first: runs `dryRun`, lists its changes, and runs `run` when the
   * person presses the confirm button.
   */
  function previewThenRun({ title, testid, intro, confirmLabel, dryRun, run, done }) {
    const d = openDialog({ title, testid });
    const preview = h('div', { class: 'preview', testid: 'preview', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Checking what would change…'));
    const confirm = button(confirmLabel, { class: 'primary', testid: 'preview-confirm', disabled: true });
    const cancel = button('Cancel', { testid: 'dialog-cancel', onclick: () => d.close() });
    d.body.append(h('p', {}, intro), preview, h('div', { class: 'actions' }, confirm, cancel));
    cancel.focus();
    dryRun().then((r) => {
      put(preview, h('p', {}, 'This would change:'), changeList(r.changes, 'preview-changes'));
      if (r.changes && r.changes.length > 0) {
        confirm.disabled = false;
        confirm.focus();
      }
    }, (e) => {
      put(preview);
      d.error(e.message);
    });
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      try {
        const r = await run();
        d.close();
        await done(r);
      } catch (e) {
        d.error(e.message);
        confirm.disabled = false;
      }
    });
    return d;
  }

  /** A purge report (docs/UI.md) as a list a person reads: what goes, what else is affected. */
  function purgeReport(r, testid) {
    const dl = h('dl', { class: 'report', testid });
    const row = (key, label, value) => {
      const dd = h('dd', { 'data-key': key }, value);
      dl.append(h('dt', {}, label), dd);
    };
    const paths = (list, none) => (list && list.length
      ? h('ul', { class: 'plain' }, list.map((p) => h('li', { class: 'path' }, p))) : none);
    row('path', 'Path', h('span', { class: 'path' }, r.path));
    row('removed', 'Removed from the tree', paths(r.removed, 'nothing (it is not in the tree now)'));
    row('versions', 'Versions erased', String(r.versions ?? 0));
    row('rewritten', 'Commits rewritten', `${r.rewritten ?? 0} of ${r.commits ?? 0}`);
    if (!r.dry_run || r.deleted) row('deleted', 'Stored objects deleted', String(r.deleted ?? 0));
    if (r.live_copies && r.live_copies.length) row('live_copies', 'Live copies elsewhere (erased too)', paths(r.live_copies));
    if (r.history_copies && r.history_copies.length) {
      row('history_copies', 'Other paths in history with the same content (erased too)', paths(r.history_copies));
    }
    row('dry_run', 'Dry run', r.dry_run ? 'yes: nothing erased yet' : 'no');
    dl.setAttribute('data-dry-run', String(Boolean(r.dry_run)));
    return dl;
  }

  // ---------------------------------------------------------------------------------------------
  // The tree
  // ---------------------------------------------------------------------------------------------

  async function loadTree() {
    try {
      state.tree = await api('/api/tree');
    } catch (e) {
      $('tree').setAttribute('data-error', e.message);
      put($('tree'), h('p', { class: 'error-text', testid: 'tree-error' }, e.message));
      return;
    }
    $('tree').removeAttribute('data-error');
    $('tree').setAttribute('data-generation', String(state.tree.generation));
    if (!state.treeSeeded) {
      state.treeSeeded = true;
      // A large tree starts closed; a small one open.
      if (state.tree.entries.length > 200) {
        for (const e of state.tree.entries) if (e.dir) state.collapsed.add(e.path);
      }
    }
    renderTree();
  }

  function currentFilePath() {
    const r = state.route;
    return r && r.name === 'file' ? r.params.get('path') : null;
  }

  function renderTree() {
    const t = state.tree;
    if (!t) return;
    const entries = t.entries || [];
    let files = 0;
    let bytes = 0;
    for (const e of entries) {
      if (!e.dir) { files += 1; bytes += e.bytes ?? e.size ?? 0; }
    }
    $('tree-summary').textContent = `${plural(files, 'file')}, ${fmtBytes(bytes)}`;
    if (entries.length === 0) {
      put($('tree'), h('p', { class: 'muted', testid: 'tree-empty' }, 'No files yet. Create one with “New file”.'));
      return;
    }
    const current = currentFilePath();
    const root = h('ul', { class: 'tree-list' });
    const stack = [root];
    for (const e of entries) {
      const parentUl = stack[e.depth] || root;
      stack.length = e.depth + 1;
      let li;
      if (e.dir) {
        const open = !state.collapsed.has(e.path);
        const sub = h('ul', { class: 'tree-list', hidden: !open });
        const toggle = button([
          h('span', { class: 'twisty', 'aria-hidden': 'true' }, open ? '▾' : '▸'),
          h('span', { class: 'name' }, e.name),
          h('span', { class: 'count' }, ` ${e.files ?? ''}`),
        ], {
          class: 'tree-dir', testid: 'tree-dir', 'data-path': e.path, 'aria-expanded': String(open),
          title: `${e.path}: ${plural(e.files ?? 0, 'file')}, ${fmtBytes(e.bytes ?? 0)}`,
        });
        toggle.addEventListener('click', () => {
          const nowOpen = toggle.getAttribute('aria-expanded') !== 'true';
          toggle.setAttribute('aria-expanded', String(nowOpen));
          toggle.querySelector('.twisty').textContent = nowOpen ? '▾' : '▸';
          sub.hidden = !nowOpen;
          if (nowOpen) state.collapsed.delete(e.path); else state.collapsed.add(e.path);
        });
        li = h('li', { class: 'dir' }, toggle, sub);
        stack[e.depth + 1] = sub;
      } else {
        const link = h('a', {
          href: fileHref(e.path), class: 'tree-file', testid: 'tree-file', 'data-path': e.path,
          title: `${e.path} (${fmtBytes(e.bytes ?? e.size ?? 0)})`,
        }, h('span', { class: 'name' }, e.name));
        if (e.path === current) link.setAttribute('aria-current', 'page');
        li = h('li', { class: 'file' }, link);
      }
      parentUl.append(li);
    }
    put($('tree'), root);
  }

  function markCurrentInTree() {
    const current = currentFilePath();
    for (const a of $('tree').querySelectorAll('a.tree-file')) {
      if (a.getAttribute('data-path') === current) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  }

  /** Opens the folders above a path so its entry shows. */
  function revealInTree(path) {
    let changed = false;
    for (let p = parentOf(path); p !== '/memories' && p.startsWith('/memories/'); p = parentOf(p)) {
      if (state.collapsed.delete(p)) changed = true;
    }
    if (changed) renderTree();
  }

  function setTreeOpen(open) {
    state.treeOpenNarrow = open;
    $('files').classList.toggle('collapsed', !open);
    $('tree-toggle').setAttribute('aria-expanded', String(open));
  }

  // ---------------------------------------------------------------------------------------------
  // Routing: #/overview, #/file?path=&line=&rev=, #/new?dir=, #/search?q=, #/history?path=
  // ---------------------------------------------------------------------------------------------

  let renderSeq = 0;
  let keepMessageOnce = false;
  let focusAfterRender = false;

  function parseHash() {
    const raw = location.hash.slice(1);
    if (raw && !raw.startsWith('/')) return null;
    const [p, q] = (raw || '/overview').split(/\?(.*)/s);
    return { name: p.slice(1) || 'overview', params: new URLSearchParams(q || '') };
  }

  /** Goes to a route; the message on screen stays (it answers what led here). */
  function go(hash) {
    focusAfterRender = true;
    if (location.hash === hash) {
      render();
    } else {
      keepMessageOnce = true;
      location.hash = hash;
    }
  }

  function markNav(name) {
    const section = name === 'file' || name === 'new' ? null : name;
    for (const a of document.querySelectorAll('nav.sections a')) {
      if (a.getAttribute('data-section') === section) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  }

  const views = {};

  async function render() {
    const r = parseHash();
    if (!r) return;
    const seq = ++renderSeq;
    state.route = r;
    if (r.name !== 'new') state.back = location.hash || '#/overview';
    markNav(r.name);
    markCurrentInTree();
    const view = views[r.name] || views.notFound;
    let out;
    try {
      out = await view(r.params);
    } catch (e) {
      out = { node: errorView(e) };
    }
    if (seq !== renderSeq) return;
    put($('view'), out.node);
    document.title = out.title ? `${out.title} · memfs` : 'memfs';
    if (out.after) out.after();
    if (focusAfterRender) {
      focusAfterRender = false;
      const target = out.focus || out.node.querySelector('h1');
      if (target) target.focus();
    }
  }

  function errorView(e) {
    return h('section', { class: 'view', testid: 'error-view' },
      h('h1', { tabindex: '-1' }, e.status === 404 ? 'Not found' : 'Something went wrong'),
      h('p', { class: 'error-text', testid: 'error-text' }, e.message));
  }

  views.notFound = async () => ({ node: errorView({ message: 'There is no such page here.' }), title: 'Not found' });

  // ---------------------------------------------------------------------------------------------
  // A file: its lines, editing, conflicts, rename, delete, purge, a past version
  // ---------------------------------------------------------------------------------------------

  function renderLines(text, target) {
    const lines = text.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    if (text === '') return h('p', { class: 'muted', testid: 'file-empty' }, 'This file is empty.');
    const box = h('div', { class: 'code', testid: 'file-lines', role: 'list', 'aria-label': 'Lines' });
    lines.forEach((line, i) => {
      const n = i + 1;
      box.append(h('div', {
        class: n === target ? 'row target' : 'row', testid: 'file-line', 'data-line': n, id: `L${n}`, role: 'listitem',
      }, h('span', { class: 'ln' }, String(n)), h('span', { class: 'lt' }, line === '' ? '\u200b' : line)));
    });
    return box;
  }

  views.file = async (params) => {
    const path = params.get('path') || '';
    const rev = params.get('rev');
    const line = Number(params.get('line')) || null;
    if (rev) return pastFileView(path, rev, line);
    const history = state.session && state.session.history !== false;
    const [data, log] = await Promise.all([
      api(`/api/file?${qs({ path })}`),
      history ? api(`/api/log?${qs({ path, limit: '1' })}`).catch(() => null) : null,
    ]);
    revealInTree(path);
    if (NARROW.matches) setTreeOpen(false);
    return fileView(data, line, log && log.commits ? log.commits[0] : null);
  };

  function fileView(data, line, last) {
    const path = data.path;
    const titleId = uid('file-title');
    const section = h('section', { class: 'view file-view', testid: 'file-view', 'aria-labelledby': titleId });
    const heading = h('h1', { id: titleId, class: 'path-title', tabindex: '-1', testid: 'file-path' }, path);
    const meta = h('p', { class: 'meta', testid: 'file-meta' }, `${fmtBytes(data.size ?? data.text.length)} · ${plural(lineCount(data.text), 'line')}`);
    const body = h('div', { class: 'file-body' });
    const toolbar = h('div', { class: 'toolbar', role: 'group', 'aria-label': 'File actions' });
    let edit;

    function showLines() {
      put(body, renderLines(data.text, line));
      toolbar.hidden = false;
    }

    edit = button('Edit', { class: 'primary', testid: 'edit', onclick: () => startEdit() });
    toolbar.append(
      edit,
      button('Rename', { testid: 'rename', onclick: () => renameDialog(path) }),
      button('Delete', { testid: 'delete', onclick: () => deleteDialog(path) }),
      state.session && state.session.history !== false
        ? h('a', { class: 'button-link', href: historyHref(path), testid: 'file-history' }, 'History') : null,
      button('Erase from history…', { class: 'danger-quiet', testid: 'purge', onclick: () => purgeDialog(path) }),
    );

    async function startEdit() {
      // Edit the newest text: the version sent back as `base` is the one the edit starts from.
      let fresh;
      try {
        fresh = await api(`/api/file?${qs({ path })}`);
      } catch (e) { sayError(e); return; }
      data = fresh;
      meta.textContent = `${fmtBytes(data.size ?? data.text.length)} · ${plural(lineCount(data.text), 'line')}`;
      toolbar.hidden = true;
      const form = editor({
        path, text: data.text, base: data.version,
        onSaved: () => { go(fileHref(path)); loadTree(); },
        onCancel: () => { showLines(); edit.focus(); },
      });
      put(body, form);
      form.querySelector('textarea').focus();
    }

    showLines();
    const lastChange = last ? h('p', { class: 'meta', testid: 'file-last-change' },
      'Last changed ', timeEl(last.time_ms), ' by ', h('span', { class: 'who' }, last.actor || '(no actor)'),
      ` (${last.command}, @${last.generation})`) : null;
    section.append(heading, meta, lastChange, toolbar, body);
    return {
      node: section,
      title: path,
      after: () => {
        if (line) {
          const row = section.querySelector(`#L${line}`);
          if (row) row.scrollIntoView({ block: 'center' });
        }
      },
    };
  }

  function lineCount(text) {
    if (!text) return 0;
    const n = text.split('\n').length;
    return text.endsWith('\n') ? n - 1 : n;
  }

  /** Splits a text into lines that keep their '\n' (the last one may have none). */
  function splitKeep(text) {
    const out = [];
    let i = 0;
    while (i < text.length) {
      const j = text.indexOf('\n', i);
      if (j < 0) { out.push(text.slice(i)); break; }
      out.push(text.slice(i, j + 1));
      i = j + 1;
    }
    return out;
  }

  /** For each line of `a`, the index of the line of `b` it is matched with (a longest common subsequence), or -1. */
  function matchLines(a, b) {
    const n = a.length;
    const m = b.length;
    const w = m + 1;
    const dp = new Int32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i -= 1) {
      for (let j = m - 1; j >= 0; j -= 1) {
        dp[i * w + j] = a[i] === b[j] ? dp[(i + 1) * w + j + 1] + 1 : Math.max(dp[(i + 1) * w + j], dp[i * w + j + 1]);
      }
    }
    const map = new Array(n).fill(-1);
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[i] === b[j]) { map[i] = j; i += 1; j += 1; } else if (dp[(i + 1) * w + j] >= dp[i * w + j + 1]) i += 1; else j += 1;
    }
    return map;
  }

  /**
   * A three-way merge of whole lines: where only one side changed a stretch of the base, its
   * change is taken; where both changed it differently, both are kept between markers.
   * Null when the texts are too long to compare here.
   */
  function merge3(base, mine, theirs) {
    const B = splitKeep(base);
    const M = splitKeep(mine);
    const T = splitKeep(theirs);
    if ((B.length + 1) * (Math.max(M.length, T.length) + 1) > 4000000) return null;
    const toM = matchLines(B, M);
    const toT = matchLines(B, T);
    const same = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);
    const withEnd = (lines) => (lines.length && !lines[lines.length - 1].endsWith('\n')
      ? [...lines.slice(0, -1), `${lines[lines.length - 1]}\n`] : lines);
    const out = [];
    let conflicts = 0;
    let [i, j, k] = [0, 0, 0];
    const anchors = [];
    for (let b = 0; b < B.length; b += 1) if (toM[b] >= 0 && toT[b] >= 0) anchors.push([b, toM[b], toT[b]]);
    anchors.push([B.length, M.length, T.length]);
    for (const [ab, am, at] of anchors) {
      const cb = B.slice(i, ab);
      const cm = M.slice(j, am);
      const ct = T.slice(k, at);
      if (same(cm, cb)) out.push(...ct);
      else if (same(ct, cb) || same(cm, ct)) out.push(...cm);
      else {
        conflicts += 1;
        out.push('<<<<<<< yours\n', ...withEnd(cm), '=======\n', ...withEnd(ct), '>>>>>>> theirs\n');
      }
      if (ab < B.length) out.push(B[ab]);
      [i, j, k] = [ab + 1, am + 1, at + 1];
    }
    return { text: out.join(''), conflicts };
  }

  /** The editor, with the conflict flow: a 409 never overwrites, it offers Reload and Merge. */
  function editor({ path, text, base, onSaved, onCancel }) {
    // `original` is the text of `base`: what both the person and the other writer started from.
    const ed = { base, original: text };
    const id = uid('editor');
    const form = h('form', { class: 'editor', testid: 'editor-form', novalidate: true });
    const area = h('textarea', { id, class: 'text', testid: 'editor', spellcheck: 'false', rows: '18', value: text });
    const save = h('button', { type: 'submit', class: 'primary', testid: 'save' }, 'Save');
    const cancel = button('Cancel', { testid: 'cancel', onclick: () => onCancel() });
    const conflictBox = h('div', { class: 'conflict-box' });
    const mainPart = h('div', { class: 'editor-main' },
      h('label', { for: id }, 'Content of ', h('span', { class: 'path' }, path)),
      area,
      h('div', { class: 'actions' }, save, cancel));
    form.append(conflictBox, mainPart);

    async function submit(textToSave, againstBase, saveButton) {
      if (textToSave === ed.original && againstBase === ed.base) {
        // Saving the text the file already holds would only make an empty commit.
        say('Nothing to save: the file already holds this text.', 'ok');
        onSaved(null);
        return;
      }
      saveButton.disabled = true;
      try {
        const r = await api('/api/edit', { path, base: againstBase, text: textToSave });
        if (r && r.ok) {
          say(r.message, answerKind(r));
          onSaved(r);
        } else {
          say(r ? r.message : 'The edit was refused.', 'error');
        }
      } catch (e) {
        if (e.status === 409 && e.data) showConflict(e.data, textToSave);
        else sayError(e);
      } finally {
        saveButton.disabled = false;
      }
    }

    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      submit(area.value, ed.base, save);
    });

    function showConflict(conflict, mine) {
      const gone = typeof conflict.current !== 'string';
      const theirs = gone ? '' : conflict.current;
      const headingId = uid('conflict-title');
      const notice = h('div', { class: 'conflict', testid: 'conflict', role: 'alert', 'aria-labelledby': headingId });
      const heading = h('h2', { id: headingId, tabindex: '-1' },
        gone ? 'This file was deleted or moved while you were editing it' : 'This file changed while you were editing it');
      put(conflictBox, notice);
      mainPart.hidden = false;
      say('');

      if (gone) {
        const recreate = button('Save mine as a new file', { class: 'primary', testid: 'conflict-recreate' });
        const discard = button('Discard mine', { testid: 'conflict-discard', onclick: () => go('#/overview') });
        notice.append(heading,
          h('p', { testid: 'conflict-text' },
            'Someone deleted or renamed this file after you opened it. Nothing was written: your text is not saved. ',
            'You can save it as a new file at the same path, or discard it.'),
          h('p', { class: 'muted', testid: 'conflict-detail' }, conflict.error || ''),
          h('div', { class: 'actions' }, recreate, discard));
        recreate.addEventListener('click', async () => {
          recreate.disabled = true;
          try {
            const r = await api('/api/create', { path, text: area.value });
            say(r.message, answerKind(r));
            if (r.ok) onSaved(r);
          } catch (e) {
            sayError(e);
          } finally {
            recreate.disabled = false;
          }
        });
        heading.focus();
        return;
      }

      const reload = button('Reload', { testid: 'conflict-reload' });
      const merge = button('Merge', { class: 'primary', testid: 'conflict-merge' });
      notice.append(
        heading,
        h('p', { testid: 'conflict-text' },
          'Someone saved a new version of this file after you opened it. Nothing was overwritten: your text is not saved yet. ',
          '“Reload” discards your changes and loads their version; “Merge” shows both so you can combine them.'),
        conflict.error ? h('p', { class: 'muted', testid: 'conflict-detail' }, conflict.error) : null,
        h('div', { class: 'actions' }, merge, reload));
      heading.focus();

      reload.addEventListener('click', () => {
        ed.base = conflict.version;
        ed.original = theirs;
        area.value = theirs;
        put(conflictBox);
        mainPart.hidden = false;
        say('Loaded their version; your changes were discarded.', 'ok');
        area.focus();
      });

      merge.addEventListener('click', () => {
        const auto = merge3(ed.original, mine, theirs);
        // From now on the edit is against their version.
        ed.base = conflict.version;
        ed.original = theirs;
        mainPart.hidden = true;
        const mergedId = uid('merged');
        const merged = h('textarea', {
          id: mergedId, class: 'text', testid: 'merge-text', spellcheck: 'false', rows: '14', value: auto ? auto.text : mine,
        });
        const saveMerged = h('button', { type: 'button', class: 'primary', testid: 'merge-save' }, 'Save merged text');
        const back = button('Cancel', { testid: 'merge-cancel' });
        const theirsId = uid('theirs');
        const mineId = uid('mine');
        let note;
        if (!auto) note = 'The texts are too long to combine here: the merged text starts as yours.';
        else if (auto.conflicts === 0) note = 'Your changes and theirs touch different lines: both are in the merged text. Check it, then save.';
        else {
          note = `Both sides changed the same lines in ${auto.conflicts === 1 ? 'one place' : `${auto.conflicts} places`}: `
            + 'the merged text has both versions between <<<<<<< yours, ======= and >>>>>>> theirs. Keep what should stay and remove the markers.';
        }
        const panel = h('div', { class: 'merge', testid: 'merge' },
          h('h2', { tabindex: '-1' }, 'Merge'),
          h('p', {}, 'Their version (now in the store) and yours, side by side.'),
          h('div', { class: 'merge-cols' },
            h('div', { class: 'merge-col' },
              h('h3', { id: theirsId }, 'Theirs (current)'),
              h('pre', { class: 'merge-pre', testid: 'merge-theirs', 'aria-labelledby': theirsId, tabindex: '0' }, theirs)),
            h('div', { class: 'merge-col' },
              h('h3', { id: mineId }, 'Yours (not saved)'),
              h('pre', { class: 'merge-pre', testid: 'merge-mine', 'aria-labelledby': mineId, tabindex: '0' }, mine))),
          h('label', { for: mergedId }, 'Merged text (it replaces theirs when saved)'),
          h('p', { class: 'hint', testid: 'merge-note', id: `${mergedId}-note` }, note),
          merged,
          h('div', { class: 'actions' }, saveMerged, back));
        merged.setAttribute('aria-describedby', `${mergedId}-note`);
        put(conflictBox, panel);
        saveMerged.addEventListener('click', () => submit(merged.value, ed.base, saveMerged));
        back.addEventListener('click', () => {
          // Back to the editor with the merged text, still against their version.
          area.value = merged.value;
          put(conflictBox);
          mainPart.hidden = false;
          area.focus();
        });
        merged.focus();
      });
    }

    return form;
  }

  async function pastFileView(path, rev, line) {
    const data = await api(`/api/show?${qs({ rev, path })}`);
    const titleId = uid('file-title');
    const section = h('section', { class: 'view file-view past', testid: 'past-file-view', 'aria-labelledby': titleId });
    const gen = data.generation;
    section.append(
      h('h1', { id: titleId, class: 'path-title', tabindex: '-1', testid: 'file-path' }, path),
      h('p', { class: 'banner', testid: 'past-banner' },
        `As it was at @${gen}`,
        data.time_ms ? [' (', timeEl(data.time_ms), data.actor ? `, by ${data.actor}` : '', ')'] : null,
        '. This is a past version: it cannot be edited here.'),
      h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Version actions' },
        button('Restore this file to here', {
          class: 'primary', testid: 'restore-file',
          onclick: () => restoreDialog({ at: rev, path, label: `@${gen}` }),
        }),
        h('a', { class: 'button-link', href: fileHref(path), testid: 'current-version' }, 'Current version'),
        h('a', { class: 'button-link', href: historyHref(path), testid: 'file-history' }, 'History')),
      renderLines(data.text, line));
    return { node: section, title: `${path} @${gen}` };
  }

  function renameDialog(path) {
    const d = openDialog({ title: 'Rename', testid: 'rename-dialog' });
    const id = uid('rename-to');
    const input = h('input', { id, type: 'text', testid: 'rename-to', value: path, autocomplete: 'off', spellcheck: 'false' });
    const ok = h('button', { type: 'submit', class: 'primary', testid: 'rename-confirm' }, 'Rename');
    const form = h('form', { class: 'dialog-form' },
      h('p', {}, 'Move ', h('span', { class: 'path' }, path), ' to a new path (under /memories).'),
      h('label', { for: id }, 'New path'), input,
      h('div', { class: 'actions' }, ok, button('Cancel', { testid: 'dialog-cancel', onclick: () => d.close() })));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const to = input.value.trim();
      if (!to || to === path) { d.error('Type a different path.'); return; }
      ok.disabled = true;
      try {
        const r = await api('/api/rename', { from: path, to });
        if (r.ok) {
          d.close();
          say(r.message, answerKind(r));
          await loadTree();
          go(fileHref(to));
        } else {
          d.error(r.message);
        }
      } catch (e) {
        d.error(e.message);
      } finally {
        ok.disabled = false;
      }
    });
    d.body.append(form);
    input.focus();
    input.select();
  }

  function deleteDialog(path) {
    const d = openDialog({ title: 'Delete this file?', testid: 'delete-dialog' });
    const del = button('Delete', { class: 'danger', testid: 'delete-confirm' });
    const cancel = button('Cancel', { testid: 'dialog-cancel', onclick: () => d.close() });
    d.body.append(
      h('p', {}, h('span', { class: 'path' }, path), ' will be removed from the tree. Its versions stay in the history, where it can be restored.'),
      h('div', { class: 'actions' }, del, cancel));
    del.addEventListener('click', async () => {
      del.disabled = true;
      try {
        const r = await api('/api/delete', { path });
        if (r.ok) {
          d.close();
          say(r.message, answerKind(r));
          await loadTree();
          go('#/overview');
        } else {
          d.error(r.message);
          del.disabled = false;
        }
      } catch (e) {
        d.error(e.message);
        del.disabled = false;
      }
    });
    cancel.focus();
  }

  function purgeDialog(path) {
    const d = openDialog({ title: 'Erase from all history', testid: 'purge-dialog', wide: true });
    const allId = uid('purge-all');
    const all = h('input', { id: allId, type: 'checkbox', testid: 'purge-all-copies' });
    const confirmId = uid('purge-confirm');
    const typed = h('input', { id: confirmId, type: 'text', testid: 'purge-confirm-input', autocomplete: 'off', spellcheck: 'false' });
    const report = h('div', { class: 'preview', testid: 'purge-report', 'aria-live': 'polite' });
    const erase = button('Erase', { class: 'danger', testid: 'purge-erase', disabled: true });
    let previewOk = false;
    const update = () => { erase.disabled = !(previewOk && typed.value === path); };

    async function dryRun() {
      previewOk = false;
      update();
      d.error('');
      put(report, h('p', { class: 'muted' }, 'Checking what would be erased…'));
      try {
        const r = await api('/api/purge', { path, all_copies: all.checked, dry_run: true, confirm: '' });
        put(report, h('p', {}, 'This would be erased:'), purgeReport(r, 'purge-report-list'));
        previewOk = true;
      } catch (e) {
        put(report);
        d.error(e.message);
      }
      update();
    }

    d.body.append(
      h('p', {}, 'Purge erases ', h('span', { class: 'path' }, path),
        ' from the tree and every version of it from all history, for good. Unlike Delete, it cannot be undone or restored.'),
      h('div', { class: 'check-row' }, all, h('label', { for: allId }, 'Also erase the live copies elsewhere (the same content, or where it was renamed to)')),
      report,
      h('label', { for: confirmId }, 'To confirm, type the path: ', h('span', { class: 'path' }, path)),
      typed,
      h('div', { class: 'actions' }, erase, button('Cancel', { testid: 'dialog-cancel', onclick: () => d.close() })));
    all.addEventListener('change', dryRun);
    typed.addEventListener('input', update);
    erase.addEventListener('click', async () => {
      erase.disabled = true;
      try {
        const r = await api('/api/purge', { path, all_copies: all.checked, dry_run: false, confirm: typed.value });
        d.close();
        let text = `Erased ${path} from the tree and all history: ${plural(r.versions ?? 0, 'version')}, `
          + `${plural(r.rewritten ?? 0, 'commit')} rewritten, ${plural(r.deleted ?? 0, 'stored object')} deleted.`;
        if (r.remaining) {
          text += ` ${plural(r.remaining, 'content')} of it ${r.remaining === 1 ? 'is' : 'are'} still stored `
            + '(a writer stored it again while the purge ran): run the purge again.';
        }
        say(text, r.remaining ? 'warn' : 'ok');
        await loadTree();
        go('#/overview');
      } catch (e) {
        d.error(e.message);
        update();
      }
    });
    typed.focus();
    dryRun();
  }

  // ---------------------------------------------------------------------------------------------
  // New file
  // ---------------------------------------------------------------------------------------------

  views.new = async (params) => {
    const dir = params.get('dir') || '/memories';
    const pathId = uid('new-path');
    const textId = uid('new-text');
    const pathInput = h('input', { id: pathId, type: 'text', testid: 'new-path', value: `${dir}/`, autocomplete: 'off', spellcheck: 'false' });
    const text = h('textarea', { id: textId, class: 'text', testid: 'new-text', rows: '14', spellcheck: 'false' });
    const create = h('button', { type: 'submit', class: 'primary', testid: 'create' }, 'Create');
    const form = h('form', { class: 'editor', testid: 'new-form', novalidate: true },
      h('label', { for: pathId }, 'Path'), pathInput,
      h('p', { class: 'hint' }, 'Under /memories; folders are made as needed.'),
      h('label', { for: textId }, 'Content'), text,
      h('div', { class: 'actions' }, create, button('Cancel', { testid: 'create-cancel', onclick: () => go(state.back || '#/overview') })));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const path = pathInput.value.trim();
      create.disabled = true;
      try {
        const r = await api('/api/create', { path, text: text.value });
        say(r.message, answerKind(r));
        if (r.ok) {
          await loadTree();
          go(fileHref(path));
        }
      } catch (e) {
        sayError(e);
      } finally {
        create.disabled = false;
      }
    });
    const section = h('section', { class: 'view', testid: 'new-view' }, h('h1', { tabindex: '-1' }, 'New file'), form);
    return { node: section, title: 'New file', focus: pathInput };
  };

  // ---------------------------------------------------------------------------------------------
  // Search
  // ---------------------------------------------------------------------------------------------

  function highlighted(text, q) {
    const out = [];
    if (!q) return [text];
    const lower = text.toLowerCase();
    const ql = q.toLowerCase();
    let i = 0;
    for (;;) {
      const j = lower.indexOf(ql, i);
      if (j < 0 || ql.length === 0) break;
      if (j > i) out.push(text.slice(i, j));
      out.push(h('mark', {}, text.slice(j, j + ql.length)));
      i = j + ql.length;
    }
    out.push(text.slice(i));
    return out;
  }

  views.search = async (params) => {
    const q0 = params.get('q') || '';
    const inputId = uid('search');
    const input = h('input', { id: inputId, type: 'search', testid: 'search-input', value: q0, autocomplete: 'off', spellcheck: 'false' });
    const results = h('div', { class: 'search-results', testid: 'search-results', 'aria-live': 'polite' });
    const form = h('form', { class: 'search-form', role: 'search' },
      h('label', { for: inputId }, 'Search file names and contents'),
      h('div', { class: 'inline' }, input, h('button', { type: 'submit', class: 'primary', testid: 'search-submit' }, 'Search')));
    let seq = 0;

    async function run(q) {
      const mine = ++seq;
      if (!q) { put(results); return; }
      put(results, h('p', { class: 'muted' }, 'Searching…'));
      let r;
      try {
        r = await api(`/api/search?${qs({ q })}`);
      } catch (e) {
        if (mine === seq) put(results, h('p', { class: 'error-text' }, e.message));
        return;
      }
      if (mine !== seq) return;
      const names = r.names || [];
      const lines = r.lines || [];
      put(results,
        h('h2', {}, `File names (${names.length})`),
        names.length === 0 ? h('p', { class: 'muted', testid: 'search-names-empty' }, 'No file name contains it.')
          : h('ul', { class: 'plain', testid: 'search-names' }, names.map((p) => h('li', {},
            h('a', { href: fileHref(p), testid: 'search-name', 'data-path': p }, highlighted(p, q))))),
        h('h2', {}, `Lines (${lines.length}${r.truncated ? '+' : ''})`),
        lines.length === 0 ? h('p', { class: 'muted', testid: 'search-lines-empty' }, 'No line contains it.')
          : h('ul', { class: 'plain hits', testid: 'search-lines' }, lines.map((l) => h('li', {},
            h('a', {
              href: fileHref(l.path, { line: String(l.line) }), testid: 'search-line', 'data-path': l.path, 'data-line': l.line,
            }, `${l.path}:${l.line}`),
            h('code', { class: 'hit' }, highlighted(l.text, q))))),
        r.truncated ? h('p', { class: 'muted', testid: 'search-truncated' }, 'More lines match: only the first ones are shown. Search for something longer.') : null);
    }

    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const q = input.value;
      history.replaceState(null, '', `#/search?${qs({ q })}`);
      run(q);
    });
    const section = h('section', { class: 'view', testid: 'search-view' }, h('h1', { tabindex: '-1' }, 'Search'), form, results);
    if (q0) run(q0);
    return { node: section, title: 'Search', focus: input };
  };

  // ---------------------------------------------------------------------------------------------
  // History: the store's timeline or one file's, diffs, past versions, restore, undo
  // ---------------------------------------------------------------------------------------------

  function patchView(patch) {
    const pre = h('pre', { class: 'patch', testid: 'patch' });
    const lines = (patch || '').split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    let inHunk = false;
    for (const line of lines) {
      let kind = 'ctx';
      // `---` and `+++` head the patch; inside a hunk they are a removed `--…` or an added `++…`.
      if (!inHunk && (line.startsWith('+++') || line.startsWith('---'))) kind = 'meta';
      else if (line.startsWith('@@')) { kind = 'hunk'; inHunk = true; }
      else if (line.startsWith('+')) kind = 'add';
      else if (line.startsWith('-')) kind = 'del';
      else if (line.startsWith('\\')) kind = 'meta';
      pre.append(h('span', { class: `pl pl-${kind}`, testid: 'diff-line', 'data-kind': kind }, line === '' ? ' ' : line));
    }
    return pre;
  }

  function diffView(d, testid) {
    const files = (d && d.files) || [];
    const box = h('div', { class: 'diff', testid: testid || 'diff' });
    if (files.length === 0) {
      box.append(h('p', { class: 'muted', testid: 'diff-empty' }, 'No differences.'));
      return box;
    }
    for (const f of files) {
      box.append(h('section', { class: 'diff-file', testid: 'diff-file', 'data-path': f.path },
        h('h3', { class: 'diff-path' }, statusBadge(f.status), ' ', h('span', { class: 'path' }, f.path)),
        f.patch ? patchView(f.patch) : h('p', { class: 'muted' }, 'No line changes to show.')));
    }
    return box;
  }

  function restoreDialog({ at, path, label }) {
    const whole = !path;
    previewThenRun({
      title: whole ? 'Restore everything' : 'Restore this file',
      testid: 'restore-dialog',
      intro: whole
        ? `Make the whole tree what it was at ${label}, as a new commit. Nothing is lost: the current state stays in the history.`
        : `Make ${path} what it was at ${label}, as a new commit. The current version stays in the history.`,
      confirmLabel: 'Restore',
      dryRun: () => api('/api/restore', whole ? { at, dry_run: true } : { at, path, dry_run: true }),
      run: () => api('/api/restore', whole ? { at, dry_run: false } : { at, path, dry_run: false }),
      done: async (r) => {
        const n = (r.changes || []).length;
        say(r.generation == null ? 'Nothing to restore: it was already so.'
          : `Restored ${whole ? 'everything' : path} to ${label}: ${plural(n, 'change')}, commit @${r.generation}.`, 'ok');
        await loadTree();
        focusAfterRender = true;
        render();
      },
    });
  }

  function undoDialog() {
    previewThenRun({
      title: 'Undo the newest change',
      testid: 'undo-dialog',
      intro: 'Make the tree what it was before the newest commit, as a new commit (which can itself be undone).',
      confirmLabel: 'Undo',
      dryRun: () => api('/api/undo', { dry_run: true }),
      run: () => api('/api/undo', { dry_run: false }),
      done: async (r) => {
        const n = (r.changes || []).length;
        say(r.generation == null ? 'Nothing to undo.' : `Undone: ${plural(n, 'change')}, commit @${r.generation}.`, 'ok');
        await loadTree();
        focusAfterRender = true;
        render();
      },
    });
  }

  views.history = async (params) => {
    const path = params.get('path') || '';
    let limit = Number(params.get('limit')) || 100;
    const titleId = uid('history-title');
    const section = h('section', { class: 'view history-view', testid: 'history-view', 'aria-labelledby': titleId });
    const heading = h('h1', { id: titleId, tabindex: '-1' }, path ? 'History of ' : 'History', path ? h('span', { class: 'path' }, path) : null);
    const compare = button('Compare selected', { class: 'primary', testid: 'compare', disabled: true });
    const compareHint = h('p', { class: 'hint', testid: 'compare-hint', id: uid('compare-hint') }, 'Tick two versions to compare them.');
    compare.setAttribute('aria-describedby', compareHint.id);
    const diffBox = h('div', { class: 'diff-box', testid: 'compare-result', tabindex: '-1' });
    const list = h('ol', { class: 'timeline', testid: 'timeline' });
    const more = button('Show older', { testid: 'show-more', hidden: true });
    const selected = []; // commits picked for comparison, oldest pick first

    const toolbar = h('div', { class: 'toolbar', role: 'group', 'aria-label': 'History actions' },
      compare,
      button('Undo newest change…', { testid: 'undo', onclick: () => undoDialog() }),
      path ? h('a', { class: 'button-link', href: fileHref(path), testid: 'open-file' }, 'Open file') : null,
      path ? button('Erase from history…', { class: 'danger-quiet', testid: 'purge', onclick: () => purgeDialog(path) }) : null);

    section.append(heading, toolbar, compareHint, diffBox, list, more);

    function updateCompare() {
      compare.disabled = selected.length !== 2;
      compareHint.textContent = selected.length === 2
        ? `Compare @${Math.min(selected[0].generation, selected[1].generation)} with @${Math.max(selected[0].generation, selected[1].generation)}.`
        : 'Tick two versions to compare them.';
    }

    compare.addEventListener('click', async () => {
      if (selected.length !== 2) return;
      const [a, b] = [...selected].sort((x, y) => x.generation - y.generation);
      put(diffBox, h('p', { class: 'muted' }, 'Comparing…'));
      try {
        const q = { from: a.id, to: b.id };
        if (path) q.path = path;
        const d = await api(`/api/diff?${qs(q)}`);
        put(diffBox,
          h('h2', { tabindex: '-1', testid: 'compare-title' }, `Changes from @${a.generation} to @${b.generation}`),
          diffView(d, 'diff'));
        diffBox.querySelector('h2').focus();
      } catch (e) {
        put(diffBox, h('p', { class: 'error-text', testid: 'diff-error' }, e.message));
      }
    });

    function commitItem(c) {
      const checkId = uid('cmp');
      const check = h('input', { type: 'checkbox', id: checkId, testid: 'compare-select' });
      check.addEventListener('change', () => {
        const i = selected.indexOf(c);
        if (check.checked && i < 0) {
          selected.push(c);
          while (selected.length > 2) {
            const dropped = selected.shift();
            const box = list.querySelector(`li[data-id="${CSS.escape(dropped.id)}"] input[type=checkbox]`);
            if (box) box.checked = false;
          }
        } else if (!check.checked && i >= 0) {
          selected.splice(i, 1);
        }
        updateCompare();
      });
      const changes = c.changes || [];
      const inlineDiff = h('div', { class: 'inline-diff', testid: 'commit-diff' });
      const here = path ? changes.find((x) => x.path === path) : null;
      const actions = h('div', { class: 'commit-actions' });
      if (c.generation > 1) {
        const show = button('Show changes', { testid: 'show-changes', 'aria-expanded': 'false' });
        show.addEventListener('click', async () => {
          if (show.getAttribute('aria-expanded') === 'true') {
            put(inlineDiff);
            show.setAttribute('aria-expanded', 'false');
            return;
          }
          try {
            const q = { from: `@${c.generation - 1}`, to: c.id };
            if (path) q.path = path;
            const d = await api(`/api/diff?${qs(q)}`);
            put(inlineDiff, diffView(d, 'diff'));
            show.setAttribute('aria-expanded', 'true');
          } catch (e) {
            put(inlineDiff, h('p', { class: 'error-text' }, e.message));
          }
        });
        actions.append(show);
      }
      if (path && !(here && here.status === 'D')) {
        actions.append(h('a', { class: 'button-link', href: fileHref(path, { rev: c.id }), testid: 'view-version' }, 'View this version'));
      }
      if (path) {
        actions.append(button('Restore this file to here', {
          testid: 'restore-file', onclick: () => restoreDialog({ at: c.id, path, label: `@${c.generation}` }),
        }));
      }
      actions.append(button('Restore everything to here', {
        testid: 'restore-all', onclick: () => restoreDialog({ at: c.id, label: `@${c.generation}` }),
      }));

      return h('li', { class: 'commit', testid: 'commit', 'data-id': c.id, 'data-generation': c.generation },
        h('div', { class: 'commit-head' },
          h('span', { class: 'check' }, check, h('label', { for: checkId, class: 'visually-hidden' }, `Select @${c.generation} to compare`)),
          h('span', { class: 'gen', testid: 'commit-generation' }, `@${c.generation}`),
          timeEl(c.time_ms, 'commit-time'),
          h('span', { class: 'actor', testid: 'commit-actor' }, c.actor || '(no actor)'),
          h('span', { class: 'command', testid: 'commit-command' }, c.command || '')),
        c.summary ? h('p', { class: 'summary', testid: 'commit-summary' }, c.summary) : null,
        changes.length ? h('ul', { class: 'changes', testid: 'commit-changes' }, changes.map((x) => h('li', { testid: 'change' },
          statusBadge(x.status), ' ',
          x.from ? [h('span', { class: 'path' }, x.from), ' → '] : null,
          h('a', { href: historyHref(x.path), class: 'path', testid: 'change-path', title: `History of ${x.path}` }, x.path)))) : null,
        actions,
        inlineDiff);
    }

    async function load() {
      const q = { limit: String(limit) };
      if (path) q.path = path;
      const r = await api(`/api/log?${qs(q)}`);
      const commits = r.commits || [];
      put(list, ...commits.map(commitItem));
      if (commits.length === 0) put(list, h('li', { class: 'muted', testid: 'timeline-empty' }, path ? 'No commit changed this path.' : 'No commits yet.'));
      more.hidden = commits.length < limit;
      selected.length = 0;
      updateCompare();
    }
    more.addEventListener('click', async () => {
      limit *= 2;
      try { await load(); } catch (e) { sayError(e); }
    });
    await load();
    return { node: section, title: path ? `History of ${path}` : 'History' };
  };

  // ---------------------------------------------------------------------------------------------
  // Overview: totals, charts (SVG drawn here), policy, key slots, check
  // ---------------------------------------------------------------------------------------------

  /** Fills the days up to the last with zero: the last 14 to 60 days. */
  function filledDays(perDay) {
    const byDay = new Map((perDay || []).map((d) => [d.day, d.commits]));
    const days = [...byDay.keys()].sort();
    if (days.length === 0) return [];
    const out = [];
    const last = Date.parse(`${days[days.length - 1]}T00:00:00Z`);
    // At least two weeks (a single day is not a chart), at most 60 days.
    let t = Math.max(Math.min(Date.parse(`${days[0]}T00:00:00Z`), last - 13 * 86400000), last - 59 * 86400000);
    if (Number.isNaN(t) || Number.isNaN(last)) return (perDay || []).map((d) => ({ day: d.day, commits: d.commits }));
    for (; t <= last; t += 86400000) {
      const day = new Date(t).toISOString().slice(0, 10);
      out.push({ day, commits: byDay.get(day) || 0 });
    }
    return out;
  }

  function dataTable(caption, cols, rows) {
    return h('details', { class: 'as-table' },
      h('summary', {}, 'Show as a table'),
      h('table', {},
        h('caption', { class: 'visually-hidden' }, caption),
        h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, rows.map((r) => h('tr', {}, r.map((v) => h('td', {}, String(v))))))));
  }

  function dayChart(perDay) {
    const data = filledDays(perDay);
    if (data.length === 0) return h('p', { class: 'muted', testid: 'chart-per-day' }, 'No commits yet.');
    const max = Math.max(1, ...data.map((d) => d.commits));
    const total = data.reduce((a, d) => a + d.commits, 0);
    const H = 120;
    const top = 18;
    const slot = 100 / data.length;
    const svg = s('svg', {
      class: 'chart', width: '100%', height: String(H + top + 22), role: 'img', testid: 'chart-per-day',
      'aria-label': `Commits per day: ${total} in all from ${data[0].day} to ${data[data.length - 1].day}, at most ${max} in a day.`,
    });
    svg.append(s('line', { x1: '0', x2: '100%', y1: String(top + H), y2: String(top + H), class: 'axis' }));
    svg.append(s('text', { x: '0', y: '12', class: 'chart-label' }, `${max}`));
    data.forEach((d, i) => {
      const bh = Math.round((d.commits / max) * H);
      const rect = s('rect', {
        x: `${(i * slot + slot * 0.1).toFixed(3)}%`, width: `${(slot * 0.8).toFixed(3)}%`,
        y: String(top + H - bh), height: String(Math.max(bh, d.commits ? 1 : 0)), class: 'bar', testid: 'bar', 'data-day': d.day, 'data-value': d.commits,
      }, s('title', {}, `${d.day}: ${plural(d.commits, 'commit')}`));
      svg.append(rect);
    });
    svg.append(s('text', { x: '0', y: String(top + H + 16), class: 'chart-label' }, data[0].day));
    if (data.length > 1) svg.append(s('text', { x: '100%', y: String(top + H + 16), class: 'chart-label', 'text-anchor': 'end' }, data[data.length - 1].day));
    return h('div', { class: 'chart-box' }, svg,
      dataTable('Commits per day', ['Day', 'Commits'], (perDay || []).map((d) => [d.day, d.commits])));
  }

  function actorChart(perActor) {
    const data = [...(perActor || [])].sort((a, b) => b.commits - a.commits);
    if (data.length === 0) return h('p', { class: 'muted', testid: 'chart-per-actor' }, 'No commits yet.');
    const max = Math.max(1, ...data.map((d) => d.commits));
    const row = 34;
    const svg = s('svg', {
      class: 'chart', width: '100%', height: String(data.length * row), role: 'img', testid: 'chart-per-actor',
      'aria-label': `Commits per actor: ${data.map((d) => `${d.actor || 'no actor'} ${d.commits}`).join(', ')}.`,
    });
    data.forEach((d, i) => {
      const y = i * row;
      svg.append(s('text', { x: '0', y: String(y + 13), class: 'chart-label' }, `${d.actor || '(no actor)'}: ${d.commits}`));
      svg.append(s('rect', {
        x: '0', y: String(y + 17), height: '12', width: `${Math.max(0.5, (d.commits / max) * 100).toFixed(3)}%`,
        class: 'bar', testid: 'bar', 'data-actor': d.actor, 'data-value': d.commits,
      }, s('title', {}, `${d.actor || '(no actor)'}: ${plural(d.commits, 'commit')}`)));
    });
    return h('div', { class: 'chart-box' }, svg,
      dataTable('Commits per actor', ['Actor', 'Commits'], data.map((d) => [d.actor || '(no actor)', d.commits])));
  }

  function checkResult(r, testid) {
    const problems = r.problems || [];
    return h('div', { class: r.ok ? 'check ok' : 'check bad', testid },
      h('p', {}, h('strong', {}, r.ok ? 'OK' : 'Problems found'),
        r.time_ms ? [' · ', timeEl(r.time_ms)] : null, r.summary ? ` · ${r.summary}` : null),
      problems.length ? h('ul', { testid: 'check-problems' }, problems.map((p) => h('li', {}, p))) : null);
  }

  views.overview = async () => {
    const st = await api('/api/stats');
    const titleId = uid('overview-title');
    const section = h('section', { class: 'view overview', testid: 'overview-view', 'aria-labelledby': titleId });
    const lastCheck = h('div', { testid: 'last-check' },
      st.last_check ? checkResult(st.last_check, 'last-check-result') : h('p', { class: 'muted' }, 'No check has run in this session.'));
    const readId = uid('read-data');
    const readData = h('input', { type: 'checkbox', id: readId, testid: 'check-read-data' });
    const run = button('Run check', { class: 'primary', testid: 'run-check' });
    const result = h('div', { testid: 'check-result', 'aria-live': 'polite' });
    run.addEventListener('click', async () => {
      run.disabled = true;
      put(result, h('p', { class: 'muted' }, 'Checking…'));
      try {
        const r = await api('/api/check', { read_data: readData.checked });
        put(result);
        put(lastCheck, checkResult({ ...r, time_ms: r.time_ms || Date.now() }, 'check-outcome'));
      } catch (e) {
        put(result, h('p', { class: 'error-text' }, e.message));
      } finally {
        run.disabled = false;
      }
    });

    const policy = st.policy || [];
    const slots = st.key_slots || [];
    section.append(
      h('h1', { id: titleId, tabindex: '-1' }, 'Overview'),
      h('dl', { class: 'totals' },
        h('div', {}, h('dt', {}, 'Files'), h('dd', { testid: 'stat-files' }, String(st.files))),
        h('div', {}, h('dt', {}, 'Size'), h('dd', { testid: 'stat-bytes', title: `${st.bytes} bytes` }, fmtBytes(st.bytes))),
        h('div', {}, h('dt', {}, 'Commits'), h('dd', { testid: 'stat-generation' }, String(st.generation ?? 0)))),
      h('div', { class: 'charts' },
        h('section', { class: 'panel' }, h('h2', {}, 'Commits per day'), dayChart(st.per_day)),
        h('section', { class: 'panel' }, h('h2', {}, 'Commits per actor'), actorChart(st.per_actor))),
      h('section', { class: 'panel' }, h('h2', {}, 'Policy'),
        policy.length === 0 ? h('p', { class: 'muted' }, 'The defaults.')
          : h('table', { class: 'kv', testid: 'policy-table' },
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Setting'), h('th', { scope: 'col' }, 'Value'))),
            h('tbody', {}, policy.map((p) => h('tr', { testid: 'policy-row', 'data-key': p.key },
              h('th', { scope: 'row' }, p.key), h('td', {}, String(p.value))))))),
      h('section', { class: 'panel' }, h('h2', {}, 'Key slots'),
        slots.length === 0 ? h('p', { class: 'muted', testid: 'key-slots' }, 'None listed.')
          : h('ul', { class: 'plain', testid: 'key-slots' }, slots.map((k) => h('li', { testid: 'key-slot' },
            h('span', { class: 'slot-label' }, k.label || '(no label)'), ' ', h('span', { class: 'muted' }, `(${k.kind})`))))),
      h('section', { class: 'panel' }, h('h2', {}, 'Check'),
        h('p', {}, 'Verify every object reachable from the newest commit.'),
        lastCheck,
        h('div', { class: 'check-row' }, readData, h('label', { for: readId }, 'Also read and verify every object’s data (slower)')),
        h('div', { class: 'actions' }, run),
        result));
    return { node: section, title: 'Overview' };
  };

  // ---------------------------------------------------------------------------------------------
  // Start
  // ---------------------------------------------------------------------------------------------

  async function start() {
    $('tree-toggle').addEventListener('click', () => setTreeOpen(!state.treeOpenNarrow));
    $('new-file').addEventListener('click', () => {
      const p = currentFilePath();
      go(`#/new?${qs({ dir: p ? parentOf(p) : '/memories' })}`);
    });
    $('message-close').addEventListener('click', () => {
      say('');
      focusContent();
    });
    $('refresh').addEventListener('click', async () => {
      await loadTree();
      // An open editor keeps what the person typed: only the tree is read again.
      if (!$('view').querySelector('[data-testid="editor-form"], [data-testid="new-form"]')) render();
    });
    // Back to the window: agents may have written meanwhile.
    window.addEventListener('focus', () => { if (state.session) loadTree(); });
    document.querySelector('a.skip').addEventListener('click', (ev) => {
      ev.preventDefault();
      focusContent();
    });
    window.addEventListener('hashchange', () => {
      if (!keepMessageOnce) say('');
      keepMessageOnce = false;
      if (parseHash()) focusAfterRender = true;
      render();
    });
    NARROW.addEventListener('change', () => setTreeOpen(NARROW.matches ? state.treeOpenNarrow : true));

    try {
      await openSession();
      state.session = await api('/api/session');
    } catch (e) {
      put($('view'), errorView(e));
      put($('tree'));
      return;
    }
    $('store').textContent = state.session.store || '';
    $('actor').textContent = state.session.actor ? `as ${state.session.actor}` : '';
    if (state.session.history === false) {
      const nav = document.querySelector('[data-testid="nav-history"]');
      if (nav) nav.closest('li').hidden = true;
    }
    if (NARROW.matches && parseHash() && parseHash().name === 'file') setTreeOpen(false);
    await Promise.all([loadTree(), render()]);
  }

  /** The printed address's token, taken out of the address at once (so that a reload or the
   * history does not hold it), then traded for the session's secret. */
  async function openSession() {
    const params = new URLSearchParams(window.location.search);
    const token = params.get('token');
    if (token === null) return;
    window.history.replaceState(null, '', `/${window.location.hash}`);
    try {
      const opened = await api('/api/session', { token });
      sessionStorage.setItem(SESSION_KEY, opened.session);
    } catch (e) {
      // The address opened again in a tab that has its session already: go on with it.
      if (!sessionStorage.getItem(SESSION_KEY)) throw e;
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
