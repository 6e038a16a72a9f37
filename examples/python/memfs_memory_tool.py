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

The constructor waits until memfs has opened the store: a store that cannot open (a missing key
file, a wrong passphrase) raises `MemfsError` with memfs's own message. With
`check_start=False` it does not wait, and the first call raises that error instead (a
`ToolError`, so a tool runner gives the model its text), as does every later one. memfs's
stderr is passed on to this process's.

Close the tool (`close()`, or use it as a context manager) when done: memfs then records the
last-access days of the files read in the session and exits. `close()` may be called any number
of times and does not raise a failure already raised.
"""

from __future__ import annotations

import json
import subprocess
import sys
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


class MemfsError(ToolError, RuntimeError):
    """`memfs exec` could not be started, could not open the store, stopped, or answered
    something that is not its protocol. The message carries memfs's own (what it printed on
    stderr), so a tool runner gives the model that text (it is a `ToolError`), and a caller
    catching `RuntimeError` still sees it. A refused command is a plain `ToolError`."""


# At most this much of memfs's stderr is kept for an error message (its end: the last words).
_STDERR_KEPT = 4000


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
        check_start: bool = True,
    ) -> None:
        super().__init__(cache_control=cache_control)
        argv = [memfs]
        if store is not None:
            argv += ["--store", store]
        if key_file is not None:
            argv += ["--key-file", key_file]
        argv += [*memfs_args, "exec", "--dialect", dialect]
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen[bytes]] = None
        # Set once memfs has stopped and the caller was told why: every later call raises it.
        self._failure: Optional[MemfsError] = None
        self._stderr: list[str] = []
        try:
            self._process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
            )
        except OSError as e:
            raise MemfsError(f"cannot start {memfs}: {e}") from e
        # memfs's stderr is passed on to this process's (its diagnostics reach the user, never the
        # model) and kept, to say why if memfs stops.
        self._stderr_thread = threading.Thread(target=self._relay_stderr, name="memfs-stderr", daemon=True)
        self._stderr_thread.start()
        if check_start:
            # `memfs exec` opens the store before it reads a line, and answers `{}` with an error
            # without touching the store: an answer means the store is open; none, that memfs
            # stopped, and why is on its stderr.
            try:
                self._exchange(b"{}\n")
            except MemfsError:
                self.close()
                raise

    def _relay_stderr(self) -> None:
        process = self._process
        assert process is not None and process.stderr is not None
        for raw in iter(process.stderr.readline, b""):
            line = raw.decode("utf-8", errors="replace")
            if sys.stderr is not None:  # None under pythonw
                sys.stderr.write(line)
                sys.stderr.flush()
            self._stderr.append(line)
            while sum(map(len, self._stderr)) > _STDERR_KEPT and len(self._stderr) > 1:
                self._stderr.pop(0)

    def _stopped(self, process: subprocess.Popen[bytes]) -> MemfsError:
        """The error of a `memfs exec` that stopped: its status and what it said on stderr."""
        status = process.wait()
        self._stderr_thread.join()  # ends with memfs's stderr: every word of it is kept
        said = "".join(self._stderr).strip()
        if said:
            return MemfsError(f"memfs exec stopped (exit status {status}): {said}")
        return MemfsError(f"memfs exec stopped (exit status {status}) without a message")

    def _exchange(self, line: bytes) -> bytes:
        """Writes one line and reads memfs's answer line; raises `MemfsError` (with memfs's
        message) if memfs has stopped."""
        with self._lock:
            if self._failure is not None:
                raise self._failure
            process = self._process
            if process is None or process.stdin is None or process.stdout is None:
                raise MemfsError("this MemfsMemoryTool is closed")
            try:
                process.stdin.write(line)
                process.stdin.flush()
                answer = process.stdout.readline()
            except OSError:
                # A broken pipe: memfs has exited; its own words say why.
                answer = b""
            if not answer:
                self._failure = self._stopped(process)
                raise self._failure
            return answer

    def _send(self, command: Any) -> str:
        """Sends one command; returns its content, or raises `ToolError` with memfs's message."""
        # Exactly the fields the model sent (the SDK builds the command without validating it,
        # so a missing or mistyped field reaches memfs, which names it).
        line = json.dumps(command.to_dict(mode="json"), ensure_ascii=False) + "\n"
        answer = self._exchange(line.encode("utf-8"))
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
        it. Idempotent, and quiet about a failure already raised to the caller; raises
        `MemfsError` (once) if memfs exited with an error the caller has not seen yet."""
        with self._lock:
            process, self._process = self._process, None
            told = self._failure is not None
        if process is None:
            return
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass  # memfs has exited already: nothing left to flush to it.
        failure = self._stopped(process)
        if process.stdout is not None:
            process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
        if process.returncode != 0 and not told:
            raise failure

    def __enter__(self) -> "MemfsMemoryTool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
