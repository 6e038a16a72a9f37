#!/usr/bin/env python3
"""The Python package as a user installs it: the `memfs` wheel (built by maturin from
crates/memfs-python) and `anthropic==2.10.0` in a fresh virtualenv, no memfs binary anywhere.

Run by scripts/test-packages.sh, which builds the wheel, makes the virtualenv and runs this
file with its interpreter. Each case on a throwaway store in a temp folder:

1. the SDK's sync tool runner (`client.beta.messages.tool_runner`) with `MemoryTool(store)`,
   and its async one (`AsyncAnthropic`) with `AsyncMemoryTool(store)`, against
   tests/scripted/messages_server.py playing the documentation's example: the answer, every
   tool_result the SDK sent back (memfs's strings, the python-sdk dialect), and the history;
2. all six commands and refusals through `MemoryTool.call`, as the runner calls it (an error is
   the SDK's `ToolError`, rendered by the runner's `tool_error_content`), compared exactly;
3. stores that cannot open: a clear exception of the right kind, never a crash;
4. two tools sharing one store from two threads at once (and two stores on one folder): no
   answer lost, every file there afterwards, every commit in the history;
5. the async tool does not block the event loop: a ticker keeps ticking while it works.

Exit status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import memfs
from anthropic import Anthropic, AsyncAnthropic
from anthropic.lib.tools._tool_dispatch import tool_error_content
from memfs import AsyncMemoryTool, CredentialError, MemfsError, MemoryTool, NoStoreError, Store

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests/scripted/messages_server.py"
FINAL = "Based on your customer service guidelines, I can help you craft a response. Please share the ticket details..."
GUIDELINES = "<guidelines>\n  <tone>Warm, brief, exact.</tone>\n</guidelines>\n"
GUIDELINES_PATH = "/memories/customer_service_guidelines.xml"
HEADER = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:"
GUIDELINES_VIEW = (
    f"Here's the content of {GUIDELINES_PATH} with line numbers:\n"
    "     1\t<guidelines>\n     2\t  <tone>Warm, brief, exact.</tone>\n     3\t</guidelines>\n     4\t"
)
# Cheap Argon2id costs: these stores are thrown away.
KDF = (8, 1, 1)

failures: list[str] = []


def check(what: str, actual: Any, expected: Any) -> None:
    if actual != expected:
        failures.append(what)
        print(f"FAIL {what}\n  expected: {expected!r}\n    actual: {actual!r}", file=sys.stderr)
    else:
        print(f"ok   {what}")


def new_store(work: Path, name: str, seeded: bool) -> tuple[Store, Path, Path]:
    folder = work / name
    folder.mkdir()
    key = folder / "key"
    store = Store.init(folder / "store", key_file=key, actor="python-test")
    if seeded:
        check(
            f"{name}: seed",
            store.call({"command": "create", "path": GUIDELINES_PATH, "file_text": GUIDELINES}),
            (f"File created successfully at: {GUIDELINES_PATH}", False),
        )
    return store, folder / "store", key


class Server:
    """tests/scripted/messages_server.py on 127.0.0.1, recording every request."""

    def __init__(self, work: Path) -> None:
        self.record = Path(tempfile.mkstemp(dir=work, suffix=".jsonl")[1])
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--record", str(self.record)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def stop(self) -> list[dict]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # closing its stdin stops it
        self.proc.wait(timeout=10)
        return [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines()]


def tool_results(requests: list[dict]) -> list[dict]:
    return [
        block
        for r in requests
        for m in (r.get("body") or {}).get("messages", [])
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]


def final_text(message: Any) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


def runner_case(work: Path, mode: str) -> None:
    name = f"{mode} tool runner"
    store, _, _ = new_store(work, f"runner-{mode}", seeded=True)
    server = Server(work)
    kwargs = dict(
        model="claude-sonnet-5-5",
        max_tokens=2048,
        messages=[{"role": "user", "content": "Help me respond to this customer service ticket."}],
    )
    try:
        if mode == "sync":
            client = Anthropic(base_url=server.url, api_key="sk-ant-test-key")
            final = client.beta.messages.tool_runner(tools=[MemoryTool(store)], **kwargs).until_done()
        else:

            async def run() -> Any:
                client = AsyncAnthropic(base_url=server.url, api_key="sk-ant-test-key")
                return await client.beta.messages.tool_runner(tools=[AsyncMemoryTool(store)], **kwargs).until_done()

            final = asyncio.run(run())
    finally:
        requests = server.stop()
    check(f"{name}: answer", final_text(final), FINAL)
    check(f"{name}: requests", len(requests), 3)
    first = (requests[0].get("body") or {}) if requests else {}
    check(f"{name}: tool definition", first.get("tools"), [{"name": "memory", "type": "memory_20250818"}])
    listing = f"{HEADER}\n4K\t/memories\n62B\t{GUIDELINES_PATH}"
    check(
        f"{name}: tool results sent",
        tool_results(requests),
        [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": listing},
            {"type": "tool_result", "tool_use_id": "toolu_02", "content": GUIDELINES_VIEW},
        ],
    )
    commits = store.log()
    check(f"{name}: history", [(c.generation, c.actor, c.command["command"]) for c in commits], [(1, "python-test", "create")])
    store.close()


NOTES = "/memories/notes.md"
MOVED = "/memories/archive/notes.md"
SESSION: list[tuple[dict, tuple[str, bool]]] = [
    ({"command": "create", "path": NOTES, "file_text": "hello\nworld\n"}, (f"File created successfully at: {NOTES}", False)),
    (
        {"command": "str_replace", "path": NOTES, "old_str": "world", "new_str": "memfs"},
        (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            "     1\thello\n     2\tmemfs\n     3\t",
            False,
        ),
    ),
    ({"command": "insert", "path": NOTES, "insert_line": 1, "insert_text": "between"}, (f"The file {NOTES} has been edited.", False)),
    ({"command": "rename", "old_path": NOTES, "new_path": MOVED}, (f"Successfully renamed {NOTES} to {MOVED}", False)),
    (
        {"command": "view", "path": MOVED},
        (f"Here's the content of {MOVED} with line numbers:\n     1\thello\n     2\tbetween\n     3\tmemfs\n     4\t", False),
    ),
    ({"command": "create", "path": MOVED, "file_text": "again"}, (f"File {MOVED} already exists", True)),
    ({"command": "view", "path": "/memories/../etc/passwd"}, ("Path /memories/../etc/passwd would escape /memories directory", True)),
    ({"command": "view"}, ("Invalid input for command `view`: missing required field `path`", True)),
    ({"command": "delete", "path": MOVED}, (f"Successfully deleted {MOVED}", False)),
    ({"command": "view", "path": "/memories"}, (f"{HEADER}\n4K\t/memories\n4K\t/memories/archive/", False)),
]


def commands_case(work: Path) -> None:
    store, _, _ = new_store(work, "commands", seeded=False)
    tool = MemoryTool(store)
    for input, expected in SESSION:
        try:
            answer = (str(tool.call(input)), False)
        except Exception as e:  # what the tool runner does with anything raised
            answer = (str(tool_error_content(e)), True)
        check(f"commands: {json.dumps(input)}", answer, expected)
        # The store itself answers the same.
    check("commands: Store.call", store.call({"command": "view", "path": NOTES}), (f"The path {NOTES} does not exist. Please provide a valid path.", True))
    generations = [c.generation for c in store.log()]
    check("commands: one commit per mutation", generations, [5, 4, 3, 2, 1])
    check("commands: undo", store.undo(), 6)
    check("commands: the undone delete is back", store.call({"command": "view", "path": MOVED})[1], False)
    check("commands: restore", store.restore("@1"), 7)
    check("commands: restored", store.call({"command": "view", "path": NOTES}), (f"Here's the content of {NOTES} with line numbers:\n     1\thello\n     2\tworld\n     3\t", False))
    store.close()
    store.close()  # twice is fine


def broken_case(work: Path) -> None:
    folder = work / "broken"
    folder.mkdir()
    cases = [
        ("no store", lambda: Store.open(folder / "nowhere", key_file=folder / "key"), MemfsError, "key file"),
        ("no store, a key given", lambda: Store.open(folder / "nowhere", passphrase="pw"), NoStoreError, "no memfs store"),
    ]
    Store.init(folder / "store", passphrase="right", kdf=KDF).close()
    cases += [
        ("a wrong passphrase", lambda: Store.open(folder / "store", passphrase="wrong"), CredentialError, "wrong passphrase or key file"),
        ("no credential", lambda: Store.open(folder / "store"), CredentialError, "is encrypted"),
        ("a bad dialect", lambda: Store.open(folder / "store", passphrase="right", dialect="klingon"), ValueError, "unknown dialect"),
        ("a store there already", lambda: Store.init(folder / "store", passphrase="x", kdf=KDF), MemfsError, "already"),
    ]
    for name, open_it, kind, words in cases:
        try:
            open_it()
            check(f"unopenable: {name}", "opened", kind.__name__)
        except kind as e:
            check(f"unopenable: {name}: {kind.__name__} says {words!r}", words in str(e), True)
        except Exception as e:  # noqa: BLE001 - any other kind is the failure
            check(f"unopenable: {name}", type(e).__name__, kind.__name__)
    check("exceptions: kinds", [issubclass(k, MemfsError) for k in (NoStoreError, CredentialError, memfs.StoreError)], [True] * 3)
    # A change whose answer was lost may have landed: a store error, told apart by its class.
    check("exceptions: outcome unknown", issubclass(memfs.OutcomeUnknownError, memfs.StoreError), True)
    # A path from the current folder is a local store folder.
    here = os.getcwd()
    os.chdir(folder)
    try:
        Store.init("relative", key_file="relative.key").close()
        check("a relative path: the store is in the current folder", (folder / "relative" / "log").is_dir(), True)
        with Store.open("./relative", key_file="relative.key") as again:
            check("a relative path opens", again.call({"command": "view", "path": "/memories"})[1], False)
    finally:
        os.chdir(here)


def concurrent_case(work: Path) -> None:
    store, folder, key = new_store(work, "shared", seeded=False)
    other = Store.open(folder, key_file=key, actor="second-store")
    tools = [MemoryTool(store), MemoryTool(store), MemoryTool(other)]
    answers: list[list[str]] = [[] for _ in tools]

    def write(i: int) -> None:
        for n in range(30):
            path = f"/memories/t{i}/f{n}.md"
            answers[i].append(str(tools[i].call({"command": "create", "path": path, "file_text": f"{i}-{n}\n"})))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(tools))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(len(tools)):
        check(f"concurrent: tool {i} answered every create", answers[i], [f"File created successfully at: /memories/t{i}/f{n}.md" for n in range(30)])
    for i in range(len(tools)):
        for n in (0, 29):
            check(f"concurrent: /memories/t{i}/f{n}.md", store.call({"command": "view", "path": f"/memories/t{i}/f{n}.md"})[0].splitlines()[1], f"     1\t{i}-{n}")
    check("concurrent: every commit", len(store.log()), 90)
    store.close()
    other.close()


CREATES = 200


def event_loop_case(work: Path) -> None:
    store, _, _ = new_store(work, "loop", seeded=False)
    tool = AsyncMemoryTool(store)

    async def run() -> tuple[int, int]:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(ticker())
        done = 0
        # A loop that memfs blocked would tick only between calls, a few times in all; one left
        # free ticks about once a millisecond. The check needs the creates to take tens of
        # milliseconds in all, however fast each one is: 200 of them, each 1 ms or less.
        for n in range(CREATES):
            await tool.call({"command": "create", "path": f"/memories/a{n}.md", "file_text": "x" * 10000})
            done += 1
        stop.set()
        await task
        return ticks, done

    started = time.monotonic()
    ticks, done = asyncio.run(run())
    print(f"     ({CREATES} async creates in {time.monotonic() - started:.2f} s; the ticker ticked {ticks} times meanwhile)")
    check("async: every create answered", done, CREATES)
    check("async: the event loop went on while memfs worked", ticks >= 40, True)
    store.close()


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    print(f"memfs {memfs.__version__} from {Path(memfs.__file__).parent}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runner_case(work, "sync")
        runner_case(work, "async")
        commands_case(work)
        broken_case(work)
        concurrent_case(work)
        event_loop_case(work)
    if failures:
        print(f"{len(failures)} failed: {failures}", file=sys.stderr)
        return 1
    print("python package: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
