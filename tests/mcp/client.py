"""`memfs mcp` driven by the official MCP Python SDK (PyPI `mcp`), as a real client would.

For each transport (stdio: `mcp.client.stdio.stdio_client`; streamable HTTP on 127.0.0.1:
`mcp.client.streamable_http.streamable_http_client`), on a fresh store made by `memfs init`
with a new key file in a temporary folder:

- initialize: serverInfo is memfs at the binary's version, with the tools capability;
- tools/list: exactly one tool, `memory`, whose schema requires `command` (the six commands);
- every step of tests/mcp/script.json, in order, one at a time: the exact text of the one text
  block and the exact isError (failures are results, not protocol errors);
- a call of another tool: a JSON-RPC error -32602;
- nothing but JSON-RPC arrives from the server, and it writes nothing on stderr;
- stdio: a second process on the same store reads what the first wrote;
- stdio on a store that cannot open (a missing key file, a wrong key): initialize and
  tools/list succeed, every call is a result with isError and memfs's message (also on stderr);
- HTTP: `memfs mcp --http --tokens FILE` with a token from `memfs serve --new-token`; a request
  without it gets 401, the SDK's client sends it as `Authorization: Bearer TOKEN`; the server
  stops on SIGTERM, exit status 0, stdout empty.

    scripts/test-mcp.sh                      # builds memfs, makes the venv, runs this
    "$PY" tests/mcp/client.py --memfs target/debug/memfs [--transport stdio|http|both]

Prints `N passed, N failed` last; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

REPO = Path(__file__).resolve().parents[2]
SCRIPT = json.loads((REPO / "tests" / "mcp" / "script.json").read_text(encoding="utf-8"))
COMMANDS = ["view", "create", "str_replace", "insert", "delete", "rename"]
TIMEOUT = 60  # seconds for one whole scenario

# Variables the binary reads, removed so that only the flags below choose the store.
MEMFS_VARS = ["MEMFS_STORE", "MEMFS_KEY_FILE", "MEMFS_PASSPHRASE", "MEMFS_DIALECT", "MEMFS_ACTOR", "MEMFS_NAMESPACE"]


class Failure(Exception):
    pass


def check(what: str, actual: Any, expected: Any) -> None:
    if actual != expected:
        raise Failure(f"{what}:\n  expected: {expected!r}\n    actual: {actual!r}")


def clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MEMFS_VARS}
    # Platform directories inside the temporary folder: nothing is read or written elsewhere.
    for var, sub in [("HOME", "home"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state")]:
        env[var] = str(tmp / sub)
    return env


def new_store(memfs: str, tmp: Path, name: str) -> list[str]:
    """`--store file://… --key-file …` of a store made by `memfs init`."""
    store = ["--store", f"file://{tmp / name}", "--key-file", str(tmp / f"{name}.key")]
    done = subprocess.run([memfs, *store, "init"], env=clean_env(tmp), capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise Failure(f"memfs init failed ({done.returncode}): {done.stderr}")
    return store


def binary_version(memfs: str) -> str:
    out = subprocess.run([memfs, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.fullmatch(r"memfs (\S+)\n", out)
    if not match:
        raise Failure(f"unexpected `memfs --version` output {out!r}")
    return match.group(1)


class Conversation:
    """A ClientSession that records anything from the server that is not a valid message."""

    def __init__(self) -> None:
        self.bad: list[str] = []

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.bad.append(repr(message))

    def session(self, read: Any, write: Any) -> ClientSession:
        return ClientSession(read, write, message_handler=self.on_message)


async def converse(session: ClientSession, version: str) -> None:
    """initialize, tools/list, the script, another tool."""
    init = await session.initialize()
    check("serverInfo.name", init.server_info.name, "memfs")
    check("serverInfo.version", init.server_info.version, version)
    check("capabilities.tools present", init.capabilities.tools is not None, True)
    if not (init.instructions or "").startswith("IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY BEFORE DOING ANYTHING ELSE.\n"):
        raise Failure(f"instructions: {init.instructions!r}")

    tools = (await session.list_tools()).tools
    check("tool names", [t.name for t in tools], ["memory"])
    schema = tools[0].input_schema
    check("schema type", schema.get("type"), "object")
    check("schema required", schema.get("required"), ["command"])
    check("command enum", schema["properties"]["command"]["enum"], COMMANDS)
    check(
        "schema fields",
        sorted(schema["properties"]),
        sorted(["command", "path", "view_range", "file_text", "old_str", "new_str", "insert_line", "insert_text", "old_path", "new_path"]),
    )

    for n, step in enumerate(SCRIPT):
        result = await session.call_tool("memory", step["arguments"])
        what = f"step {n} {json.dumps(step['arguments'])}"
        check(f"{what}: content types", [c.type for c in result.content], ["text"])
        check(f"{what}: text", result.content[0].text, step["text"])
        check(f"{what}: isError", result.is_error, step["isError"])

    try:
        await session.call_tool("shell", {"command": "view", "path": "/memories"})
    except MCPError as e:
        check("unknown tool: code", e.code, -32602)
        check("unknown tool: message", e.message, "Unknown tool: shell. This server has one tool: memory")
    else:
        raise Failure("a call of another tool was answered, not refused")


async def stdio_scenario(memfs: str, tmp: Path, version: str) -> None:
    store = new_store(memfs, tmp, "stdio-store")
    errlog_path = tmp / "stdio-stderr.txt"
    params = StdioServerParameters(command=memfs, args=[*store, "mcp"], env=clean_env(tmp))
    talk = Conversation()
    with errlog_path.open("w") as errlog:
        with anyio.fail_after(TIMEOUT):
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with talk.session(read, write) as session:
                    await converse(session, version)
    check("non-protocol output from the server", talk.bad, [])
    check("server stderr", errlog_path.read_text(), "")

    # A second process on the same store sees what the first wrote.
    talk = Conversation()
    with errlog_path.open("w") as errlog:
        with anyio.fail_after(TIMEOUT):
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with talk.session(read, write) as session:
                    await session.initialize()
                    result = await session.call_tool("memory", {"command": "view", "path": "/memories/other.md"})
                    check("second session: text", result.content[0].text,
                          "Here's the content of /memories/other.md with line numbers:\n     1\tkeep: yes\n     2\t")
                    check("second session: isError", result.is_error, False)
    check("non-protocol output from the second server", talk.bad, [])
    check("second server stderr", errlog_path.read_text(), "")


async def unavailable_scenario(memfs: str, tmp: Path, version: str) -> None:
    """stdio on a store that cannot open (a missing key file, a wrong key): the handshake and
    tools/list succeed, every call is a result with isError and memfs's message, which is on
    the server's stderr too."""
    store = new_store(memfs, tmp, "locked-store")
    other = new_store(memfs, tmp, "other-store")
    missing = str(tmp / "no-such-key")
    url = store[1]
    cases = [
        ([store[0], url, "--key-file", missing],
         f"memfs: reading key file {missing}: key file {missing}: No such file or directory (os error 2)"),
        ([store[0], url, "--key-file", other[3]], f"memfs: store {url}: wrong passphrase or key file"),
    ]
    for n, (flags, message) in enumerate(cases):
        errlog_path = tmp / f"unavailable-{n}-stderr.txt"
        params = StdioServerParameters(command=memfs, args=[*flags, "mcp"], env=clean_env(tmp))
        talk = Conversation()
        with errlog_path.open("w") as errlog:
            with anyio.fail_after(TIMEOUT):
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with talk.session(read, write) as session:
                        init = await session.initialize()
                        check("serverInfo.name", init.server_info.name, "memfs")
                        check("tool names", [t.name for t in (await session.list_tools()).tools], ["memory"])
                        for _ in range(2):
                            result = await session.call_tool("memory", {"command": "view", "path": "/memories"})
                            check("content types", [c.type for c in result.content], ["text"])
                            check("text", result.content[0].text, message)
                            check("isError", result.is_error, True)
        check("non-protocol output from the server", talk.bad, [])
        check("server stderr", errlog_path.read_text(), message + "\n")


async def http_scenario(memfs: str, tmp: Path, version: str) -> None:
    store = new_store(memfs, tmp, "http-store")
    # A bearer token, made by memfs, in a tokens file only its owner can read.
    line = subprocess.run(
        [memfs, "serve", "--new-token", "me"], env=clean_env(tmp), capture_output=True, text=True, check=True
    ).stdout
    token = line.split()[1]
    tokens = tmp / "tokens"
    tokens.write_text(line)
    tokens.chmod(0o600)
    proc = subprocess.Popen(
        [memfs, *store, "mcp", "--http", "127.0.0.1:0", "--tokens", str(tokens)],
        env=clean_env(tmp), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stderr is not None and proc.stdout is not None
        first = await anyio.to_thread.run_sync(proc.stderr.readline)
        match = re.fullmatch(r"memfs: MCP over streamable HTTP at (http://127\.0\.0\.1:\d+/mcp) \(bearer tokens\)\n", first)
        if not match:
            raise Failure(f"unexpected first stderr line {first!r}")
        url = match.group(1)
        # Without the token: 401 before MCP is reached.
        async with create_mcp_http_client() as anonymous:
            refused = await anonymous.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            check("status without a token", refused.status_code, 401)
        talk = Conversation()
        with anyio.fail_after(TIMEOUT):
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            async with client, streamable_http_client(url, http_client=client) as (read, write):
                async with talk.session(read, write) as session:
                    await converse(session, version)
        check("non-protocol messages from the server", talk.bad, [])
        proc.send_signal(signal.SIGTERM)
        stdout, rest = await anyio.to_thread.run_sync(lambda: proc.communicate(timeout=30))
        check("exit status after SIGTERM", proc.returncode, 0)
        check("stdout", stdout, "")
        check("stderr after the address", rest, "memfs: stopping\n")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memfs", default=str(REPO / "target" / "debug" / "memfs"), help="path to the memfs binary")
    ap.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    args = ap.parse_args()
    memfs = os.path.abspath(args.memfs)
    if not os.access(memfs, os.X_OK):
        sys.exit(f"client.py: {memfs} is not executable; run `cargo build -p memfs-cli`")
    version = binary_version(memfs)

    scenarios: list[tuple[str, Callable[[str, Path, str], Awaitable[None]]]] = []
    if args.transport in ("stdio", "both"):
        scenarios.append(("stdio", stdio_scenario))
        scenarios.append(("stdio, a store that cannot open", unavailable_scenario))
    if args.transport in ("http", "both"):
        scenarios.append(("streamable HTTP", http_scenario))
    passed = failed = 0
    for name, scenario in scenarios:
        with tempfile.TemporaryDirectory(prefix="memfs-mcp-") as tmp:
            try:
                anyio.run(scenario, memfs, Path(tmp), version)
            except Exception:  # a failure of this scenario, reported in full; the others still run
                failed += 1
                print(f"FAIL {name}:\n{traceback.format_exc()}", file=sys.stderr)
            else:
                passed += 1
                print(f"ok   {name}" + ("" if scenario is unavailable_scenario else f": {len(SCRIPT)} script steps, exact"))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
