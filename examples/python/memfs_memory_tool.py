"""The Python SDK's memory tool backed by memfs, an encrypted store.

`MemfsMemoryTool` is a `BetaAbstractMemoryTool` (PyPI `anthropic`, tested with 2.10.0): use it
wherever `BetaLocalFilesystemMemoryTool` goes, for example in `client.beta.messages.tool_runner`.
Each instance starts one long-lived `memfs exec` process and sends it one JSON line per command
(the memory tool's input, as the model sent it); memfs answers with one JSON line,
`{"content": ..., "is_error": ...}`. A success returns the content; an error raises the SDK's
`ToolError` with memfs's message, which the tool runner passes to the model verbatim.

    from memfs_memory_tool import MemfsMemoryTool

    with MemfsMemoryTool() as memory:           # the default store, created on first use
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-4-5", max_tokens=2048, tools=[memory], messages=[...])
        print(runner.until_done())

Choosing the store and its key: `store=` (`--store`: a folder as `file:///path`, or `s3://`,
`gs://`, `az://`, `memory://`), `key_file=` (`--key-file`), or the environment memfs reads
(`MEMFS_STORE`, `MEMFS_PASSPHRASE`, `MEMFS_KEY_FILE`). Other global flags go in `memfs_args`
(for example `["--namespace", "alice", "--actor", "agent-1"]`).

The dialect (`--dialect`) is `python-sdk` by default: byte for byte the strings of the SDK's own
`BetaLocalFilesystemMemoryTool` (docs/COMPAT.md lists memfs's safety deviations), so a model
sees what it saw before the switch. `dialect="spec"` gives the documentation page's strings.

Close the tool (`close()`, or use it as a context manager) when done: memfs then records the
last-access days of the files read in the session and exits.
"""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Any, Optional, Sequence

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaFunctionToolResultType, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

__all__ = ["MemfsError", "MemfsMemoryTool"]


class MemfsError(RuntimeError):
    """`memfs exec` could not be started, stopped answering, or answered something that is not
    its protocol. (A refused command is not this: it raises `ToolError`.)"""


class MemfsMemoryTool(BetaAbstractMemoryTool):
    """A memory tool whose files live in a memfs store, through one `memfs exec` process."""

    def __init__(
        self,
        *,
        store: Optional[str] = None,
        key_file: Optional[str] = None,
        dialect: str = "python-sdk",
        memfs: str = "memfs",
        memfs_args: Sequence[str] = (),
        env: Optional[dict[str, str]] = None,
        cache_control: Optional[BetaCacheControlEphemeralParam] = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        argv = [memfs]
        if store is not None:
            argv += ["--store", store]
        if key_file is not None:
            argv += ["--key-file", key_file]
        argv += [*memfs_args, "exec", "--dialect", dialect]
        self._lock = threading.Lock()
        try:
            # stderr is inherited: memfs's own diagnostics reach the user, never the model.
            self._process: Optional[subprocess.Popen[bytes]] = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
            )
        except OSError as e:
            raise MemfsError(f"cannot start {memfs}: {e}") from e

    def _send(self, command: Any) -> str:
        """Sends one command; returns its content, or raises `ToolError` with memfs's message."""
        # Exactly the fields the model sent (the SDK builds the command without validating it,
        # so a missing or mistyped field reaches memfs, which names it).
        line = json.dumps(command.to_dict(mode="json"), ensure_ascii=False) + "\n"
        with self._lock:
            process = self._process
            if process is None or process.stdin is None or process.stdout is None:
                raise MemfsError("this MemfsMemoryTool is closed")
            try:
                process.stdin.write(line.encode("utf-8"))
                process.stdin.flush()
                answer = process.stdout.readline()
            except OSError as e:
                raise MemfsError(f"memfs exec stopped: {e}") from e
        if not answer:
            raise MemfsError(f"memfs exec exited (status {process.poll()}); see its message above")
        try:
            result = json.loads(answer)
            content, is_error = result["content"], result["is_error"]
        except (ValueError, KeyError, TypeError) as e:
            raise MemfsError(f"memfs exec answered {answer[:200]!r}, not a result line") from e
        if is_error:
            raise ToolError(content)
        return str(content)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> BetaFunctionToolResultType:
        return self._send(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> BetaFunctionToolResultType:
        return self._send(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> BetaFunctionToolResultType:
        return self._send(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> BetaFunctionToolResultType:
        return self._send(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> BetaFunctionToolResultType:
        return self._send(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> BetaFunctionToolResultType:
        return self._send(command)

    def close(self) -> None:
        """Ends the `memfs exec` session (it records last-access days, then exits) and waits for
        it. Idempotent; raises `MemfsError` if memfs exited with an error."""
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        status = process.wait()
        if process.stdout is not None:
            process.stdout.close()
        if status != 0:
            raise MemfsError(f"memfs exec exited with status {status}; see its message above")

    def __enter__(self) -> "MemfsMemoryTool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
