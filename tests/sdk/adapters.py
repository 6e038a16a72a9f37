#!/usr/bin/env python3
"""The SDK adapters of examples/ with their real SDKs: `MemfsMemoryTool` (Python,
`anthropic==2.10.0`) and `memfsMemoryTool` (TypeScript, `@anthropic-ai/sdk` as pinned in
examples/typescript/package-lock.json).

Run by scripts/test-sdk-adapters.sh, which installs both SDKs; by hand:

    PY=$(scripts/python-env.sh); (cd examples/typescript && npm ci)
    "$PY" tests/sdk/adapters.py --memfs target/debug/memfs

For each adapter, on a throwaway encrypted store (`memfs init --key-file`, in a temp folder):

1. its agent script (run_agent.py / run-agent.ts) runs the SDK's tool runner against
   tests/scripted/messages_server.py, which plays the memory-tool documentation's example
   (view /memories, view /memories/customer_service_guidelines.xml, answer). Checked exactly: the
   answer printed, the tool definition sent, every tool_result block the SDK sent back (memfs's
   strings, in the adapter's dialect), and the store afterwards, through `memfs exec` and
   `memfs log`. Once with the guidelines file in the store (imported with `memfs import`), once
   without it, where the second view fails: the SDK must send memfs's error text verbatim with
   `is_error: true` (the adapter raises the SDK's `ToolError`).
2. all six commands, and refusals, go through the adapter as the runner calls it (Python:
   `tool.call(input)` and the runner's `tool_error_content`; TypeScript: the SDK's
   `runRunnableTool`), each answer compared exactly.

Everything listens on 127.0.0.1; every process started is stopped. Exit status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "python"))

from anthropic.lib.tools._tool_dispatch import tool_error_content  # noqa: E402

from memfs_memory_tool import MemfsError, MemfsMemoryTool  # noqa: E402

FINAL = "Based on your customer service guidelines, I can help you craft a response. Please share the ticket details..."
GUIDELINES = "<guidelines>\n  <tone>Warm, brief, exact.</tone>\n</guidelines>\n"
GUIDELINES_PATH = "/memories/customer_service_guidelines.xml"
HEADERS = {
    "python-sdk": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:",
    "spec": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and "
    "node_modules:",
}
ROOT_SIZE = {"python-sdk": "4K", "spec": "4.0K"}
GUIDELINES_VIEW = (
    f"Here's the content of {GUIDELINES_PATH} with line numbers:\n"
    "     1\t<guidelines>\n     2\t  <tone>Warm, brief, exact.</tone>\n     3\t</guidelines>\n     4\t"
)
MISSING = f"The path {GUIDELINES_PATH} does not exist. Please provide a valid path."

failures: list[str] = []


def check(what: str, actual: Any, expected: Any) -> None:
    if actual != expected:
        failures.append(what)
        print(f"FAIL {what}\n  expected: {expected!r}\n    actual: {actual!r}", file=sys.stderr)
    else:
        print(f"ok   {what}")


class Env:
    """A temp home for every process, and the memfs binary."""

    def __init__(self, memfs: str, work: Path) -> None:
        self.memfs = memfs
        self.work = work
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMFS_", "ANTHROPIC_"))}
        for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "HOME"):
            self.env[var] = str(work / var.lower())

    def run(self, args: list[str], stdin: str = "") -> str:
        out = subprocess.run([self.memfs, *args], input=stdin, capture_output=True, text=True, env=self.env)
        if out.returncode != 0:
            raise SystemExit(f"memfs {args} failed ({out.returncode}): {out.stderr}")
        return out.stdout

    def store(self, name: str, seeded: bool) -> list[str]:
        """A new store; returns the flags that open it."""
        folder = self.work / name
        flags = ["--store", f"file://{folder}/store", "--key-file", str(folder / "key")]
        folder.mkdir()
        self.run([*flags[:2], "init", "--key-file", flags[3]])
        if seeded:
            seed = folder / "memories"
            seed.mkdir()
            (seed / "customer_service_guidelines.xml").write_text(GUIDELINES, encoding="utf-8")
            self.run([*flags, "import", str(seed)])
        return flags

    def exec(self, flags: list[str], inputs: list[dict]) -> list[dict]:
        lines = "".join(json.dumps(i) + "\n" for i in inputs)
        return [json.loads(line) for line in self.run([*flags, "exec", "--dialect", "spec"], lines).splitlines()]


def run_agent(
    env: Env, adapter: str, flags: list[str], server: str, extra_env: dict[str, str] | None = None
) -> tuple[list[dict], str, str]:
    """Runs the adapter's agent against a fresh scripted server: (requests, stdout, stderr)."""
    record = Path(tempfile.mkstemp(dir=env.work, suffix=".jsonl")[1])
    proc = subprocess.Popen(
        [sys.executable, server, "--record", str(record)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        agent_env = {**env.env, **(extra_env or {}), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test-key"}
        memfs_flags = [*flags, "--memfs", env.memfs]
        if adapter == "python":
            argv = [sys.executable, str(REPO / "examples/python/run_agent.py"), *memfs_flags]
            cwd = REPO
        else:
            cwd = REPO / "examples/typescript"
            argv = [str(cwd / "node_modules/.bin/tsx"), "run-agent.ts", *memfs_flags]
        out = subprocess.run(argv, cwd=cwd, env=agent_env, capture_output=True, text=True, timeout=120)
    finally:
        # Closing its stdin stops the server.
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
    requests = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    return requests, out.stdout, out.stderr


def tool_results(requests: list[dict]) -> list[dict]:
    return [
        block
        for r in requests
        for m in (r.get("body") or {}).get("messages", [])
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]


def agent_case(env: Env, adapter: str, dialect: str, seeded: bool, server: str) -> None:
    name = f"{adapter} agent ({'guidelines stored' if seeded else 'empty store'})"
    flags = env.store(f"{adapter}-{'seeded' if seeded else 'empty'}", seeded)
    requests, stdout, stderr = run_agent(env, adapter, flags, server)
    check(f"{name}: answer printed", stdout, FINAL + "\n")
    check(f"{name}: nothing on stderr", stderr, "")
    check(f"{name}: requests", [(r["method"], r["path"].split("?")[0]) for r in requests], [("POST", "/v1/messages")] * 3)
    first = (requests[0].get("body") or {}) if requests else {}
    check(f"{name}: tool definition", first.get("tools"), [{"name": "memory", "type": "memory_20250818"}])
    listing = f"{HEADERS[dialect]}\n{ROOT_SIZE[dialect]}\t/memories"
    if seeded:
        listing += "\n62B\t" + GUIDELINES_PATH
        second = {"type": "tool_result", "tool_use_id": "toolu_02", "content": GUIDELINES_VIEW}
    else:
        second = {"type": "tool_result", "tool_use_id": "toolu_02", "content": MISSING, "is_error": True}
    check(
        f"{name}: tool results sent",
        tool_results(requests),
        [{"type": "tool_result", "tool_use_id": "toolu_01", "content": listing}, second],
    )
    # The store afterwards: as before (views write nothing; the import was today, so no
    # last-access day changed).
    view = env.exec(flags, [{"command": "view", "path": GUIDELINES_PATH}])
    expected_view = (
        {"content": GUIDELINES_VIEW, "is_error": False} if seeded else {"content": MISSING, "is_error": True}
    )
    check(f"{name}: store afterwards", view, [expected_view])
    commits = [json.loads(line) for line in env.run([*flags, "log", "--json"]).splitlines()]
    check(
        f"{name}: history afterwards",
        [c["command"] for c in commits],
        [{"command": "import", "files": 1, "from": "memories"}] if seeded else [],
    )


# All six commands and refusals, through each adapter as its runner calls it.
SESSION: list[tuple[dict, dict[str, tuple[str, bool]]]] = []


def step(input: dict, both: tuple[str, bool] | None = None, **per_dialect: tuple[str, bool]) -> None:
    answers = {"spec": both, "python-sdk": both} if both else {k.replace("_", "-"): v for k, v in per_dialect.items()}
    SESSION.append((input, answers))  # type: ignore[arg-type]


NOTES = "/memories/notes.md"
MOVED = "/memories/archive/notes.md"
step({"command": "create", "path": NOTES, "file_text": "hello\nworld\n"}, (f"File created successfully at: {NOTES}", False))
step(
    {"command": "str_replace", "path": NOTES, "old_str": "world", "new_str": "memfs"},
    (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\thello\n     2\tmemfs\n     3\t",
        False,
    ),
)
step({"command": "insert", "path": NOTES, "insert_line": 1, "insert_text": "between"}, (f"The file {NOTES} has been edited.", False))
step({"command": "rename", "old_path": NOTES, "new_path": MOVED}, (f"Successfully renamed {NOTES} to {MOVED}", False))
step(
    {"command": "view", "path": MOVED},
    (f"Here's the content of {MOVED} with line numbers:\n     1\thello\n     2\tbetween\n     3\tmemfs\n     4\t", False),
)
step(
    {"command": "create", "path": MOVED, "file_text": "again"},
    spec=(f"Error: File {MOVED} already exists", True),
    python_sdk=(f"File {MOVED} already exists", True),
)
step(
    {"command": "view", "path": "/memories/../etc/passwd"},
    ("Path /memories/../etc/passwd would escape /memories directory", True),
)
step({"command": "view"}, ("Invalid input for command `view`: missing required field `path`", True))
step({"command": "delete", "path": MOVED}, (f"Successfully deleted {MOVED}", False))
step(
    {"command": "view", "path": "/memories"},
    spec=(f"{HEADERS['spec']}\n4.0K\t/memories\n4.0K\t/memories/archive/", False),
    python_sdk=(f"{HEADERS['python-sdk']}\n4K\t/memories\n4K\t/memories/archive/", False),
)


def python_session(env: Env, flags: list[str], dialect: str) -> list[tuple[str, bool]]:
    with MemfsMemoryTool(store=flags[1], key_file=flags[3], dialect=dialect, memfs=env.memfs, env=env.env) as tool:
        answers = []
        for input, _ in SESSION:
            try:
                answers.append((str(tool.call(input)), False))
            except Exception as e:  # what the tool runner does with anything raised
                answers.append((str(tool_error_content(e)), True))
    return answers


def typescript_session(env: Env, flags: list[str], dialect: str) -> list[tuple[str, bool]]:
    cwd = REPO / "examples/typescript"
    argv = [str(cwd / "node_modules/.bin/tsx"), "test/run-commands.ts", *flags, "--dialect", dialect, "--memfs", env.memfs]
    lines = "".join(json.dumps(i) + "\n" for i, _ in SESSION)
    out = subprocess.run(argv, cwd=cwd, env=env.env, input=lines, capture_output=True, text=True, timeout=120)
    check(f"typescript commands ({dialect}): exit status and stderr", (out.returncode, out.stderr), (0, ""))
    return [(a["content"], a["is_error"]) for a in map(json.loads, out.stdout.splitlines())]


def session_case(env: Env, adapter: str, dialect: str) -> None:
    flags = env.store(f"{adapter}-{dialect}-commands", seeded=False)
    run = python_session if adapter == "python" else typescript_session
    answers = run(env, flags, dialect)
    expected = [a[dialect] for _, a in SESSION]
    for i, (input, _) in enumerate(SESSION):
        check(f"{adapter} commands ({dialect}): {json.dumps(input)}", answers[i] if i < len(answers) else None, expected[i])
    check(f"{adapter} commands ({dialect}): answer count", len(answers), len(SESSION))


def broken_stores(env: Env) -> list[tuple[str, list[str], dict[str, str], str]]:
    """Stores that cannot open: (name, flags, extra environment, memfs's message)."""
    flags = env.store("broken-keyfile", seeded=False)
    missing = str(env.work / "broken-keyfile" / "no-such-key")
    folder = env.work / "broken-passphrase"
    folder.mkdir()
    url = f"file://{folder}/store"
    out = subprocess.run(
        [env.memfs, "--store", url, "init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"],
        capture_output=True, text=True, env={**env.env, "MEMFS_PASSPHRASE": "correct horse"},
    )
    if out.returncode != 0:
        raise SystemExit(f"memfs init failed: {out.stderr}")
    return [
        (
            "missing key file",
            [flags[0], flags[1], "--key-file", missing],
            {},
            f"memfs: reading key file {missing}: key file {missing}: No such file or directory (os error 2)",
        ),
        ("wrong passphrase", ["--store", url], {"MEMFS_PASSPHRASE": "wrong horse"}, f"memfs: store {url}: wrong passphrase or key file"),
    ]


def store_failure_case(env: Env, server: str, name: str, flags: list[str], extra: dict[str, str], said: str) -> None:
    """A store that cannot open: one clear error with memfs's message, at start and at every
    call, never a broken pipe; close() twice is quiet. Through each adapter and its agent."""
    error = f"memfs exec stopped (exit status 1): {said}"
    store, key_file = flags[1], (flags[3] if len(flags) > 3 else None)
    run_env = {**env.env, **extra}

    # Python, at start: the constructor raises.
    try:
        MemfsMemoryTool(store=store, key_file=key_file, memfs=env.memfs, env=run_env)
        started = "no error"
    except MemfsError as e:
        started = f"{type(e).__name__}: {e}"
    check(f"python, {name}: at start", started, f"MemfsError: {error}")
    # Python, at the first call (start not checked): what the tool runner gives the model.
    tool = MemfsMemoryTool(store=store, key_file=key_file, memfs=env.memfs, env=run_env, check_start=False)
    answers = []
    for _ in range(2):
        try:
            answers.append(str(tool.call({"command": "view", "path": "/memories"})))
        except Exception as e:  # what the tool runner does with anything raised
            answers.append(str(tool_error_content(e)))
    check(f"python, {name}: what the model reads, twice", answers, [error, error])
    try:
        tool.close()
        tool.close()
        closed = "quiet"
    except Exception as e:
        closed = repr(e)
    check(f"python, {name}: close() twice", closed, "quiet")

    # TypeScript: ready() rejects; the runner's calls carry the message; close() twice.
    cwd = REPO / "examples/typescript"
    argv = [str(cwd / "node_modules/.bin/tsx"), "test/store-failure.ts", "--store", store, "--memfs", env.memfs]
    if key_file is not None:
        argv += ["--key-file", key_file]
    out = subprocess.run(argv, cwd=cwd, env=run_env, capture_output=True, text=True, timeout=120)
    check(f"typescript, {name}: exit status", out.returncode, 0)
    check(
        f"typescript, {name}: ready(), two calls through the runner, close() twice",
        [json.loads(line) for line in out.stdout.splitlines()],
        [
            {"ready": f"MemfsError: {error}"},
            {"content": error, "is_error": True},
            {"content": error, "is_error": True},
            {"closed": 2},
        ],
    )
    # memfs's own words reach the user's stderr, once per process (two processes).
    check(f"typescript, {name}: stderr", out.stderr, f"{said}\n" * 2)

    # The agent scripts: they stop before any request, saying why.
    for adapter, script in (("python", "run_agent.py"), ("typescript", "run-agent.ts")):
        requests, stdout, stderr = run_agent(env, adapter, flags, server, extra)
        check(f"{adapter} agent, {name}: no request", requests, [])
        check(f"{adapter} agent, {name}: stdout", stdout, "")
        check(f"{adapter} agent, {name}: stderr", stderr, f"{said}\n{script}: {error}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description="The SDK adapters of examples/ with their real SDKs.")
    parser.add_argument("--memfs", default=str(REPO / "target/debug/memfs"), help="the memfs binary")
    parser.add_argument("--server", default=str(REPO / "tests/scripted/messages_server.py"), help="the scripted server")
    args = parser.parse_args()
    memfs = str(Path(args.memfs).resolve())
    work = Path(tempfile.mkdtemp(prefix="memfs-sdk-"))
    try:
        env = Env(memfs, work)
        for adapter, dialect in (("python", "python-sdk"), ("typescript", "spec")):
            for seeded in (True, False):
                agent_case(env, adapter, dialect, seeded, args.server)
        for adapter in ("python", "typescript"):
            for dialect in ("python-sdk", "spec"):
                session_case(env, adapter, dialect)
        for name, flags, extra, said in broken_stores(env):
            store_failure_case(env, args.server, name, flags, extra, said)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"\n{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("\nall SDK adapter checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
