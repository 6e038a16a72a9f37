#!/usr/bin/env python3
"""Benchmark: memfs on an encrypted local folder against the Python SDK's plain
`BetaLocalFilesystemMemoryTool` (PyPI `anthropic==2.10.0`), side by side in one run.

One deterministic (seeded) 1,000-command session, a realistic mix of memory-tool calls
(about 15% create, 35% view of a file, 10% view of a directory, 20% str_replace, 10% insert,
5% rename, 5% delete) over nested directories with memory files of 0.2 to 8 KB, is run:

  (a) through the SDK tool in this Python process, on a fresh temp directory: only the 1,000
      `tool.call(...)` calls are timed;
  (b) through ONE `memfs exec --dialect python-sdk` process on a fresh encrypted local folder
      store (`file:///…`, made by `memfs init` beforehand, untimed). Each line is written and
      its answer read before the next line; the time runs from the first session line sent to
      the last answer read. Process start plus store open (key-slot unlock included) is timed
      separately, as the time to the answer of one probe line (`view /memories` of the empty
      store) sent right after the process is spawned.

Every answer is compared, `(content, is_error)`, with the SDK's (a `ToolError` is
`is_error: true` with its content, as the SDK's tool runner sends it); the session is built so
that it triggers none of the documented deviations of docs/COMPAT.md (plain names, at most 25
entries per directory so ext4 directories stay 4096 bytes, no hidden names, no renames into
themselves or onto existing paths). Any difference is printed and the run exits 1. After the
session the whole final state is compared too (every directory and file viewed through both).

Both times, the mean latency per command and the ratio SDK time / memfs time (>1 means memfs
is faster) are printed for each run, then the minimum and median over the runs, a breakdown per
command kind, and (unless --no-floor) the floor of the pipe protocol: the same lines echoed by
`cat`, which is what any out-of-process tool pays for the round trips alone. Before each side
the page cache is flushed (`os.sync()`, untimed) and the order of the two sides alternates
between runs. Both sides are dominated by fsync and file-creation latency, so on a shared
machine another process's writes move the figures a lot: `--wait-idle SECONDS` waits before each
run for an idle CPU.

Durability is not the same on both sides: the SDK fsyncs the file it writes on create,
str_replace and insert, but never a directory, and nothing on rename and delete, so a power
loss can take back an acknowledged create, rename or delete. memfs makes every commit durable
before it answers: the local folder is an append-only log (docs/FORMAT.md); a commit appends
its new objects (content, directory pages, commit), then its head, and `fdatasync`s the log
once, which makes all of them durable. One sync per mutating command, rename and delete
included, against the SDK's one or none.

Run (from the repository root):

    scripts/bench-vs-sdk.sh                 # builds memfs --release, makes the venv, runs this
    "$PY" tests/bench/vs_sdk.py --memfs target/release/memfs --runs 3 --seed 1

Temp directories go to --tmpdir (default: the system temp dir); it must be on ext4 (or a file
system whose small directories have st_size 4096) for the SDK's directory sizes to match.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

REPO = Path(__file__).resolve().parents[2]

try:
    from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
    from anthropic.lib.tools._beta_functions import ToolError
except ImportError:  # pragma: no cover - environment problem, not a result
    venv_python = Path(os.environ.get("MEMFS_VENV", REPO / ".venv-sdk")) / "bin" / "python"
    if venv_python.exists() and Path(sys.prefix).resolve() != venv_python.parent.parent.resolve():
        os.execv(str(venv_python), [str(venv_python), __file__, *sys.argv[1:]])
    sys.exit("vs_sdk.py: cannot import anthropic==2.10.0; run scripts/python-env.sh first "
             "and use the python it prints")

import anthropic  # noqa: E402 - after the venv check above

if anthropic.__version__ != "2.10.0":
    sys.exit(f"vs_sdk.py: the reference is anthropic==2.10.0, found {anthropic.__version__}")

Result = Tuple[str, bool]

PASSPHRASE = "memfs benchmark passphrase (not a secret)"
MAX_ENTRIES = 25  # per directory: ext4 keeps such a directory in one 4096-byte block (D14)

# ---------------------------------------------------------------------------------------------
# The session: realistic memory files and a model of the tree to keep every command meaningful
# ---------------------------------------------------------------------------------------------

PEOPLE = ["alice-nguyen", "bob-okafor", "carmen-diaz", "dmitri-volkov", "emma-schulz", "farid-haddad",
          "grace-kim", "hiro-tanaka", "ines-moreau", "jonas-berg", "kavya-rao", "liam-walsh",
          "maria-rossi", "noah-cohen", "olga-petrova", "priya-shah", "quentin-blanc", "rosa-lopez"]
PROJECTS = ["billing-v2", "search-relevance", "mobile-onboarding", "data-pipeline", "auth-migration",
            "pricing-page", "ml-ranking", "infra-costs", "support-bot", "docs-revamp"]
SYSTEMS = ["postgres-main", "kafka", "redis-cache", "k8s-prod", "ci-runners", "cdn", "search-cluster",
           "payments-gateway"]
TOPICS = ["schema change", "rollout plan", "on-call handover", "latency regression", "API contract",
          "budget review", "hiring loop", "incident follow-up", "feature flag cleanup", "release notes",
          "customer escalation", "capacity planning", "security review", "test flakiness",
          "dependency upgrade", "migration window", "cost anomaly", "dashboard", "SLA breach",
          "design review"]
VERBS = ["prefers", "asked for", "decided", "agreed to", "confirmed", "rejected", "postponed",
         "owns", "reviewed", "flagged", "proposed", "measured", "documented", "escalated"]
OBJECTS = ["weekly summaries on Fridays", "terse answers with code first", "the blue-green rollout",
           "moving the cron job to 02:00 UTC", "a rollback plan before merge", "metric names in snake_case",
           "the p99 budget of 250 ms", "postgres 16 for the new cluster", "the retry limit of 5",
           "Slack over email for urgent issues", "two reviewers on schema changes",
           "dark mode screenshots in PRs", "the vendor contract renewal", "tabs over spaces in Go",
           "pinning the base image digest", "feature flags for every UI change",
           "the read replica for analytics", "a 14-day log retention", "batch size 512 for training",
           "the new on-call rotation", "an RFC before the API change", "UTC in every timestamp"]
STATUSES = ["open", "in progress", "blocked", "done", "won't fix", "needs review"]
KEYS = ["owner", "status", "priority", "due", "ticket", "region", "version", "budget", "channel", "eta"]
WORDS = ("the a of to and in for on with by from that this we it was is are be as at or not but "
         "deploy cache query index shard replica latency error budget review retry queue worker "
         "metric alert dashboard owner customer release branch merge commit pipeline token quota "
         "timeout config schema table column migration rollout canary traffic region cluster").split()
SLUGS = ["kickoff", "retro", "sync", "deep-dive", "postmortem", "planning", "standup-notes", "review",
         "brainstorm", "handover", "one-on-one", "triage"]


class Session:
    """Builds the command list, keeping a model of the tree (files -> text, directories)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.files: Dict[str, str] = {}  # "projects/x/overview.md" -> content
        self.dirs: Set[str] = set()  # "projects", "projects/x"
        self.uid = 0
        self.kinds: List[str] = []

    # -- text ---------------------------------------------------------------------------------
    def token(self) -> str:
        self.uid += 1
        return f"{self.r.choice(['INC', 'TKT', 'PR', 'OPS', 'MEM'])}-{1000 + self.uid * 7 + self.r.randrange(7)}"

    def date(self) -> str:
        return f"2025-{self.r.randint(1, 12):02d}-{self.r.randint(1, 28):02d}"

    def sentence(self) -> str:
        n = self.r.randint(6, 18)
        words = [self.r.choice(WORDS) for _ in range(n)]
        return " ".join(words).capitalize() + "."

    def bullet(self) -> str:
        k = self.r.random()
        if k < 0.35:
            return f"- {self.date()}: {self.r.choice(PEOPLE)} {self.r.choice(VERBS)} {self.r.choice(OBJECTS)} ({self.token()})"
        if k < 0.55:
            return f"- **{self.r.choice(KEYS)}**: {self.r.choice(STATUSES)} ({self.token()})"
        if k < 0.7:
            return f"- [{self.r.choice([' ', 'x'])}] {self.r.choice(TOPICS)}: {self.sentence()} ({self.token()})"
        if k < 0.8:
            return f"  - note {self.token()}: {self.sentence()}"
        if k < 0.85:
            return f"| {self.token()} | {self.r.choice(STATUSES)} | {self.r.randint(1, 99)} ms | {self.r.choice(PEOPLE)} |"
        return f"{self.sentence()} {self.sentence()} ({self.token()})"

    def document(self, title: str) -> str:
        # Sizes between 0.2 and 8 KB, skewed small, as memory files are.
        target = int(200 * (8192 / 200) ** (self.r.random() ** 1.6))
        out = [f"# {title}", "", f"_Last updated {self.date()}; see {self.token()}._", ""]
        size = sum(len(x) + 1 for x in out)
        while size < target:
            if self.r.random() < 0.15:
                block = ["", f"## {self.r.choice(TOPICS).capitalize()} ({self.token()})", ""]
            else:
                block = [self.bullet()]
            out.extend(block)
            size += sum(len(x) + 1 for x in block)
        text = "\n".join(out)
        if self.r.random() < 0.05:  # a few with non-ASCII text (two-byte and four-byte UTF-8)
            text += f"\n- café with {self.r.choice(PEOPLE)} in Zürich ✓ 🎯 ({self.token()})"
        return text + "\n"

    # -- tree ---------------------------------------------------------------------------------
    def entries(self, d: str) -> int:
        pre = d + "/" if d else ""
        return sum(1 for p in (*self.files, *self.dirs) if p.startswith(pre) and "/" not in p[len(pre):])

    def fits(self, path: str) -> bool:
        """`path` is new, its parents are (or can be) directories, and none gets too full."""
        if path in self.files or path in self.dirs:
            return False
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in self.files:
                return False
        parent = "/".join(parts[:-1])
        # A new directory chain adds one entry to the first existing ancestor.
        p = parent
        while p and p not in self.dirs:
            p = "/".join(p.split("/")[:-1])
        return self.entries(p) < MAX_ENTRIES

    def add_dirs(self, path: str) -> None:
        parts = path.split("/")
        for i in range(1, len(parts)):
            self.dirs.add("/".join(parts[:i]))

    def new_file_path(self) -> Tuple[str, str]:
        for _ in range(100):
            k = self.r.random()
            if k < 0.2:
                who = self.r.choice(PEOPLE)
                path, title = f"people/{who}.md", f"{who.replace('-', ' ').title()}"
            elif k < 0.45:
                p = self.r.choice(PROJECTS)
                sub = self.r.choice(["overview.md", "decisions/", "notes/", "meetings/"])
                if sub.endswith("/"):
                    path = f"projects/{p}/{sub}{self.date()}-{self.r.choice(SLUGS)}.md"
                else:
                    path = f"projects/{p}/{sub}"
                title = f"{p} {sub.rstrip('/')}"
            elif k < 0.6:
                s = self.r.choice(SYSTEMS)
                if self.r.random() < 0.4:
                    path, title = f"systems/{s}/runbook.md", f"{s} runbook"
                else:
                    t = self.token()
                    path, title = f"systems/{s}/incidents/{t.lower()}.md", f"{s} incident {t}"
            elif k < 0.8:
                d = self.date()
                path = f"sessions/{d[:7]}/{d[8:]}-{self.r.choice(SLUGS)}.md"
                title = f"Session {d}"
            elif k < 0.9:
                name = self.r.choice(["preferences", "profile", "style-guide", "tools", "glossary", "contacts"])
                path, title = f"user/{name}.md", name.replace("-", " ").title()
            else:
                name = self.r.choice(["index", "todo", "open-questions", "lessons-learned", "reading-list"])
                path, title = f"{name}.md", name.replace("-", " ").title()
            if self.fits(path):
                return path, title
        raise RuntimeError("no room for a new file")

    # -- commands -----------------------------------------------------------------------------
    def create(self) -> Dict[str, Any]:
        path, title = self.new_file_path()
        text = self.document(title)
        self.files[path] = text
        self.add_dirs(path)
        return {"command": "create", "path": f"/memories/{path}", "file_text": text}

    def any_file(self) -> str:
        return self.r.choice(sorted(self.files))

    def view_file(self) -> Dict[str, Any]:
        path = self.any_file()
        cmd: Dict[str, Any] = {"command": "view", "path": f"/memories/{path}"}
        if self.r.random() < 0.25:
            n = len(self.files[path].split("\n"))
            a = self.r.randint(1, max(1, n - 1))
            b = -1 if self.r.random() < 0.3 else self.r.randint(a, min(n, a + 40))
            cmd["view_range"] = [a, b]
        return cmd

    def view_dir(self) -> Dict[str, Any]:
        if not self.dirs or self.r.random() < 0.4:
            return {"command": "view", "path": "/memories"}
        return {"command": "view", "path": f"/memories/{self.r.choice(sorted(self.dirs))}"}

    def str_replace(self) -> Dict[str, Any]:
        for _ in range(50):
            path = self.any_file()
            text = self.files[path]
            lines = [ln for ln in text.split("\n") if len(ln) >= 12 and text.count(ln) == 1]
            if not lines:
                continue
            old = self.r.choice(lines)
            k = self.r.random()
            if k < 0.4:
                new = old + f" (updated {self.date()})"
            elif k < 0.6:
                new = old.replace("[ ]", "[x]") if "[ ]" in old else old + " [done]"
            elif k < 0.75:
                new = f"{old}\n{self.bullet()}"
            elif k < 0.9:
                new = self.bullet()
            else:
                i = text.index(old)
                j = text.find("\n", i + len(old) + 1)
                if j > 0 and text.count(text[i:j]) == 1:
                    old = text[i:j]  # two lines
                new = self.bullet()
            self.files[path] = text.replace(old, new)
            return {"command": "str_replace", "path": f"/memories/{path}", "old_str": old, "new_str": new}
        return self.view_file()

    def insert(self) -> Dict[str, Any]:
        path = self.any_file()
        text = self.files[path]
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        at = len(lines) if self.r.random() < 0.5 else self.r.randint(0, len(lines))
        body = "\n".join(self.bullet() for _ in range(self.r.randint(1, 3)))
        lines.insert(at, body)
        text = "\n".join(lines)
        self.files[path] = text if text.endswith("\n") else text + "\n"  # as the SDK does
        return {"command": "insert", "path": f"/memories/{path}", "insert_line": at, "insert_text": body + "\n"}

    def rename(self) -> Dict[str, Any]:
        if self.dirs and self.r.random() < 0.2:
            src = self.r.choice(sorted(d for d in self.dirs if "/" in d) or sorted(self.dirs))
            for _ in range(20):
                dst = f"archive/{src.replace('/', '-')}-{self.r.randint(1, 999)}"
                if self.fits(dst) and not dst.startswith(src + "/"):
                    break
            else:
                return self.view_dir()
            moved_f = {p: t for p, t in self.files.items() if p.startswith(src + "/")}
            moved_d = {d for d in self.dirs if d == src or d.startswith(src + "/")}
            for p in moved_f:
                del self.files[p]
            self.dirs -= moved_d
            for p, t in moved_f.items():
                self.files[dst + p[len(src):]] = t
            for d in moved_d:
                self.dirs.add(dst + d[len(src):])
            self.add_dirs(dst + "/x")
        else:
            src = self.any_file()
            for _ in range(20):
                base = src.rsplit("/", 1)
                stem = base[-1][:-3]
                if self.r.random() < 0.5:
                    dst = f"archive/{self.date()[:7]}/{stem}.md"
                else:
                    parent = base[0] + "/" if len(base) == 2 else ""
                    dst = f"{parent}{stem}-{self.r.choice(['old', 'v2', 'draft', 'final', 'backup'])}.md"
                if self.fits(dst):
                    break
            else:
                return self.view_file()
            self.files[dst] = self.files.pop(src)
            self.add_dirs(dst)
        return {"command": "rename", "old_path": f"/memories/{src}", "new_path": f"/memories/{dst}"}

    def delete(self) -> Dict[str, Any]:
        small = [d for d in sorted(self.dirs) if "/" in d
                 and 0 < sum(1 for p in self.files if p.startswith(d + "/")) <= 4]
        if small and self.r.random() < 0.15:
            d = self.r.choice(small)
            self.files = {p: t for p, t in self.files.items() if not p.startswith(d + "/")}
            self.dirs = {x for x in self.dirs if x != d and not x.startswith(d + "/")}
            return {"command": "delete", "path": f"/memories/{d}"}
        path = self.any_file()
        del self.files[path]
        return {"command": "delete", "path": f"/memories/{path}"}

    def build(self, n: int) -> List[Dict[str, Any]]:
        mix = [("create", 0.15), ("view_file", 0.35), ("view_dir", 0.10), ("str_replace", 0.20),
               ("insert", 0.10), ("rename", 0.05), ("delete", 0.05)]
        plan = [k for k, w in mix for _ in range(round(w * n))]
        plan = plan[:n] + ["view_file"] * (n - len(plan))
        # Start with a few creates so every later command has something to act on.
        first = ["create"] * 10
        rest = list(plan)
        for _ in first:
            rest.remove("create")
        self.r.shuffle(rest)
        cmds = []
        for kind in first + rest:
            if kind in ("view_file", "str_replace", "insert", "rename", "delete") and len(self.files) < 3:
                kind = "create"
            cmd = getattr(self, kind)()
            cmds.append(cmd)
            self.kinds.append(kind_of(cmd))
        return cmds


def kind_of(cmd: Dict[str, Any]) -> str:
    c = cmd["command"]
    if c == "view":
        return "view dir" if not cmd["path"].endswith(".md") else "view file"
    return c


# ---------------------------------------------------------------------------------------------
# The two sides
# ---------------------------------------------------------------------------------------------


def sdk_call(tool: Any, inp: Dict[str, Any]) -> Result:
    # What the SDK's tool runner sends back.
    try:
        return (tool.call(inp), False)
    except ToolError as e:
        return (e.content, True)  # type: ignore[return-value]
    except Exception as e:  # noqa: BLE001 - the runner catches everything
        return (repr(e), True)


def run_sdk(cmds: List[Dict[str, Any]], tmp: Path) -> Tuple[float, List[Result], List[int], Any, Path]:
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="bench-sdk-", dir=tmp)))
    tool = BetaLocalFilesystemMemoryTool(base_path=str(base))
    answers: List[Result] = []
    lat: List[int] = []
    clock = time.perf_counter_ns
    t0 = clock()
    for inp in cmds:
        c0 = clock()
        answers.append(sdk_call(tool, inp))
        lat.append(clock() - c0)
    total = (clock() - t0) / 1e9
    return total, answers, lat, tool, base


def memfs_env(tmp: Path) -> Dict[str, str]:
    env = dict(os.environ)
    env["MEMFS_PASSPHRASE"] = PASSPHRASE
    env["MEMFS_ACTOR"] = "bench"
    # Keep the rollback watermark and any default-store lookups inside the run's temp dir.
    for var in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        env[var] = str(tmp / var.lower())
    for var in ("MEMFS_STORE", "MEMFS_KEY_FILE", "MEMFS_DIALECT"):
        env.pop(var, None)
    return env


class MemfsProc:
    def __init__(self, binary: str, store: Path, env: Dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [binary, "--store", f"file://{store}", "exec", "--dialect", "python-sdk"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
        )

    def roundtrip(self, line: bytes) -> bytes:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        if not out:
            raise RuntimeError(f"memfs exited (status {self.proc.poll()}) on {line[:200]!r}")
        return out

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def encode(inp: Any) -> bytes:
    return json.dumps(inp, ensure_ascii=True).encode() + b"\n"


def decode(out: bytes) -> Result:
    v = json.loads(out)
    return (v["content"], v["is_error"])


PROBE = {"command": "view", "path": "/memories"}


def run_memfs(binary: str, cmds: List[Dict[str, Any]], tmp: Path) -> Dict[str, Any]:
    store = Path(os.path.realpath(tempfile.mkdtemp(prefix="bench-memfs-", dir=tmp))) / "store"
    env = memfs_env(tmp)
    subprocess.run(
        [binary, "--store", f"file://{store}", "init",
         "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"],
        env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    os.sync()
    lines = [encode(c) for c in cmds]  # encoded before the clock starts, as the SDK gets dicts
    clock = time.perf_counter_ns
    s0 = clock()
    m = MemfsProc(binary, store, env)
    probe = decode(m.roundtrip(encode(PROBE)))
    startup = (clock() - s0) / 1e9
    raw: List[bytes] = []
    lat: List[int] = []
    t0 = clock()
    for line in lines:
        c0 = clock()
        raw.append(m.roundtrip(line))
        lat.append(clock() - c0)
    total = (clock() - t0) / 1e9
    return {"time": total, "startup": startup, "probe": probe, "answers": [decode(r) for r in raw],
            "lat": lat, "proc": m, "store": store}


def pipe_floor(lines: List[bytes]) -> float:
    """The same round trips through `cat`: what the pipe protocol costs by itself."""
    p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert p.stdin and p.stdout
    p.stdin.write(b"{}\n")
    p.stdin.flush()
    p.stdout.readline()
    t0 = time.perf_counter_ns()
    for line in lines:
        p.stdin.write(line)
        p.stdin.flush()
        p.stdout.readline()
    total = (time.perf_counter_ns() - t0) / 1e9
    p.stdin.close()
    p.wait()
    return total


def cpu_idle(seconds: float = 1.0) -> Optional[float]:
    """The fraction of CPU time idle over `seconds` (iowait counts as busy; Linux /proc/stat),
    or None elsewhere."""
    def sample() -> Tuple[int, int]:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[3], sum(v)  # idle, total
    try:
        i0, t0 = sample()
        time.sleep(seconds)
        i1, t1 = sample()
    except OSError:
        return None
    return (i1 - i0) / max(1, t1 - t0)


def wait_idle(limit: float) -> str:
    """Waits up to `limit` seconds for the CPU to be 95% idle; says what it found."""
    start = time.monotonic()
    idle = cpu_idle()
    while idle is not None and idle < 0.95 and time.monotonic() - start < limit:
        idle = cpu_idle()
    return "unknown" if idle is None else f"CPU {idle:.0%} idle"


def final_state_views(base: Path) -> List[Dict[str, Any]]:
    """A view of every directory and file the SDK holds after the session."""
    root = base / "memories"
    views = [{"command": "view", "path": "/memories"}]
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        rel = os.path.relpath(dirpath, root)
        pre = "/memories" if rel == "." else f"/memories/{rel}"
        for d in sorted(dirnames):
            views.append({"command": "view", "path": f"{pre}/{d}"})
        for f in sorted(filenames):
            views.append({"command": "view", "path": f"{pre}/{f}"})
    return views


def tree_bytes(path: Path) -> Tuple[int, int]:
    n = size = 0
    for dirpath, _, filenames in os.walk(path):
        for f in filenames:
            n += 1
            size += os.path.getsize(os.path.join(dirpath, f))
    return n, size


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def show_diff(i: int, inp: Any, sdk: Result, mem: Result) -> None:
    print(f"\nDIFFERENT ANSWER at command {i}: {json.dumps(inp, ensure_ascii=False)[:400]}", file=sys.stderr)
    print(f"  SDK  : is_error={sdk[1]} {sdk[0][:800]!r}", file=sys.stderr)
    print(f"  memfs: is_error={mem[1]} {mem[0][:800]!r}", file=sys.stderr)


def fmt_ms(s: float) -> str:
    return f"{s * 1e3:9.1f} ms"


def fmt_us(ns: float) -> str:
    return f"{ns / 1e3:8.1f} µs"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memfs", default=str(REPO / "target" / "release" / "memfs"), help="the memfs binary")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--commands", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tmpdir", default=None, help="where the temp directories go (ext4)")
    ap.add_argument("--no-floor", action="store_true", help="skip the pipe round-trip floor (cat)")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ap.add_argument("--keep", action="store_true", help="keep the temp directories")
    ap.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS",
                    help="before each run, wait up to SECONDS for the CPU to be 95%% idle (shared machines)")
    args = ap.parse_args()

    binary = os.path.realpath(args.memfs)
    if not os.access(binary, os.X_OK):
        sys.exit(f"vs_sdk.py: no memfs binary at {binary}; build it with cargo build --release -p memfs-cli")

    session = Session(args.seed)
    cmds = session.build(args.commands)
    kinds = session.kinds
    lines = [encode(c) for c in cmds]
    mix = Counter(kinds)
    sizes = [len(c["file_text"].encode()) for c in cmds if c["command"] == "create"]
    print(f"memfs vs anthropic=={anthropic.__version__} BetaLocalFilesystemMemoryTool: "
          f"{len(cmds)} commands, seed {args.seed}, {args.runs} runs")
    print(f"  memfs: {binary}")
    print("  mix: " + ", ".join(f"{k} {mix[k]}" for k in
                                ["create", "view file", "view dir", "str_replace", "insert", "rename", "delete"]))
    print(f"  created files: {len(sizes)}, {min(sizes)}..{max(sizes)} bytes (median {int(statistics.median(sizes))}); "
          f"input lines: {sum(map(len, lines)) / 1024:.0f} KiB; files at the end: {len(session.files)} "
          f"in {len(session.dirs)} directories")
    print()

    results: List[Dict[str, Any]] = []
    failures = 0
    top = Path(tempfile.mkdtemp(prefix="memfs-bench-", dir=args.tmpdir))
    try:
        for run in range(1, args.runs + 1):
            tmp = top / f"run{run}"
            tmp.mkdir()
            load = wait_idle(args.wait_idle) if args.wait_idle else None
            # Each side starts with no dirty data of the other's (os.sync, untimed); the order
            # alternates between runs.
            for side in (("sdk", "memfs") if run % 2 else ("memfs", "sdk")):
                os.sync()
                if side == "sdk":
                    sdk_time, sdk_answers, sdk_lat, tool, sdk_base = run_sdk(cmds, tmp)
                else:
                    mem = run_memfs(binary, cmds, tmp)

            # Every answer must be the SDK's.
            diffs = [i for i, (a, b) in enumerate(zip(sdk_answers, mem["answers"])) if a != b]
            probe_sdk = ("Here're the files and directories up to 2 levels deep in /memories, "
                         "excluding hidden items:\n4K\t/memories")
            if mem["probe"] != (probe_sdk, False):
                print(f"probe answer differs: {mem['probe']!r}", file=sys.stderr)
                failures += 1
            for i in diffs[:5]:
                show_diff(i, cmds[i], sdk_answers[i], mem["answers"][i])
            # And the final state, every directory and file, viewed through both (untimed).
            views = final_state_views(sdk_base)
            state_diffs = 0
            for v in views:
                a, b = sdk_call(tool, v), decode(mem["proc"].roundtrip(encode(v)))
                if a != b:
                    state_diffs += 1
                    if state_diffs <= 3:
                        show_diff(-1, v, a, b)
            mem["proc"].close()
            failures += len(diffs) + state_diffs
            errors = sum(1 for a in sdk_answers if a[1])
            floor = None if args.no_floor else pipe_floor(lines)
            objects, obj_bytes = tree_bytes(mem["store"] / "log")
            sdk_files, sdk_bytes = tree_bytes(sdk_base / "memories")

            r = {
                "run": run,
                "sdk_s": sdk_time,
                "memfs_s": mem["time"],
                "ratio": sdk_time / mem["time"],
                "memfs_startup_s": mem["startup"],
                "pipe_floor_s": floor,
                "identical": len(cmds) - len(diffs),
                "state_views": len(views),
                "state_diffs": state_diffs,
                "error_answers": errors,
                "sdk_lat": sdk_lat,
                "memfs_lat": mem["lat"],
                "objects": objects,
                "object_bytes": obj_bytes,
                "sdk_files": sdk_files,
                "sdk_bytes": sdk_bytes,
            }
            results.append(r)
            n = len(cmds)
            print(f"run {run}: SDK {fmt_ms(sdk_time)} ({fmt_us(sdk_time * 1e9 / n)}/cmd)   "
                  f"memfs {fmt_ms(mem['time'])} ({fmt_us(mem['time'] * 1e9 / n)}/cmd)   "
                  f"ratio SDK/memfs {r['ratio']:.2f}" + (f"   (machine before the run: {load})" if load else ""))
            print(f"       memfs process start + store open: {fmt_ms(mem['startup'])}"
                  + (f";  pipe floor (same lines through cat): {fmt_ms(floor)}" if floor is not None else ""))
            print(f"       answers identical: {r['identical']}/{n} ({errors} error answers, as the SDK gives them); "
                  f"final state: {len(views) - state_diffs}/{len(views)} views identical")
            print(f"       storage: memfs {objects} log segment(s), {obj_bytes / 1024:.0f} KiB (encrypted, all history); "
                  f"SDK {sdk_files} files, {sdk_bytes / 1024:.0f} KiB")
            if not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(top, ignore_errors=True)
        else:
            print(f"(kept {top})")

    n = len(cmds)
    print()
    print(f"summary over {len(results)} runs ({n} commands each)")
    print(f"  {'':28}{'min':>14}{'median':>14}")

    def row(label: str, vals: List[float], unit: str = "ms") -> None:
        if unit == "ms":
            print(f"  {label:28}{min(vals) * 1e3:11.1f} ms{statistics.median(vals) * 1e3:11.1f} ms")
        elif unit == "us":
            print(f"  {label:28}{min(vals) * 1e6:11.1f} µs{statistics.median(vals) * 1e6:11.1f} µs")
        else:
            print(f"  {label:28}{min(vals):14.2f}{statistics.median(vals):14.2f}")

    row("SDK (plaintext) total", [r["sdk_s"] for r in results])
    row("memfs (encrypted) total", [r["memfs_s"] for r in results])
    row("SDK per command", [r["sdk_s"] / n for r in results], "us")
    row("memfs per command", [r["memfs_s"] / n for r in results], "us")
    row("ratio SDK/memfs (>1: memfs)", [r["ratio"] for r in results], "x")
    row("memfs start + open", [r["memfs_startup_s"] for r in results])
    if results[0]["pipe_floor_s"] is not None:
        row("pipe floor (cat)", [r["pipe_floor_s"] for r in results])

    print()
    print("mean latency per command kind (median over runs)")
    print(f"  {'kind':12}{'count':>6}{'SDK':>12}{'memfs':>12}{'SDK/memfs':>11}")
    by_kind: Dict[str, List[int]] = defaultdict(list)
    for i, k in enumerate(kinds):
        by_kind[k].append(i)
    per_kind = {}
    for k in ["create", "view file", "view dir", "str_replace", "insert", "rename", "delete"]:
        idx = by_kind.get(k, [])
        if not idx:
            continue
        s = statistics.median(statistics.fmean(r["sdk_lat"][i] for i in idx) for r in results)
        m = statistics.median(statistics.fmean(r["memfs_lat"][i] for i in idx) for r in results)
        per_kind[k] = {"count": len(idx), "sdk_us": s / 1e3, "memfs_us": m / 1e3}
        print(f"  {k:12}{len(idx):6}{s / 1e3:9.1f} µs{m / 1e3:9.1f} µs{s / m:11.2f}")

    if args.json:
        slim = [{k: v for k, v in r.items() if not k.endswith("_lat")} for r in results]
        Path(args.json).write_text(json.dumps({"commands": n, "seed": args.seed, "runs": slim,
                                               "per_kind": per_kind}, indent=2))

    if failures:
        print(f"\nFAILED: {failures} answers differ from the SDK's", file=sys.stderr)
        return 1
    print("\nall answers identical to the SDK's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
