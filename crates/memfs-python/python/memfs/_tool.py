"""The Anthropic SDK's memory tools backed by a memfs store (needs the ``anthropic`` package)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

from anthropic.lib.tools import (
    BetaAbstractMemoryTool,
    BetaAsyncAbstractMemoryTool,
    BetaFunctionToolResultType,
    ToolError,
)
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from ._store import Store

__all__ = ["AsyncMemoryTool", "MemoryTool"]


def _input(command: Any) -> str:
    # Exactly the fields the model sent: the SDK builds the command without validating it, so a
    # missing or mistyped field reaches memfs, which names it in its answer.
    return json.dumps(command.to_dict(mode="json"), ensure_ascii=False)


def _result(answer: "tuple[str, bool]") -> BetaFunctionToolResultType:
    content, is_error = answer
    if is_error:
        # The tool runner gives the model this text as an error result, verbatim.
        raise ToolError(content)
    return content


class MemoryTool(BetaAbstractMemoryTool):
    """The memory tool (``memory_20250818``) with its files in a memfs store: use it wherever
    ``BetaLocalFilesystemMemoryTool`` goes, such as ``client.beta.messages.tool_runner``.

    Answers are the store's dialect (``python-sdk`` by default: the strings of the SDK's own
    tool, so the model sees what it saw before). A refused command raises ``ToolError`` with
    memfs's message, as the SDK's tools do. Calls release the GIL.
    """

    def __init__(self, store: Store, *, cache_control: Optional[BetaCacheControlEphemeralParam] = None) -> None:
        super().__init__(cache_control=cache_control)
        self.store = store

    def _run(self, command: Any) -> BetaFunctionToolResultType:
        return _result(self.store.call(_input(command)))

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> BetaFunctionToolResultType:
        return self._run(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> BetaFunctionToolResultType:
        return self._run(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> BetaFunctionToolResultType:
        return self._run(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> BetaFunctionToolResultType:
        return self._run(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> BetaFunctionToolResultType:
        return self._run(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> BetaFunctionToolResultType:
        return self._run(command)


class AsyncMemoryTool(BetaAsyncAbstractMemoryTool):
    """``MemoryTool`` for the SDK's async clients and tool runners
    (``AsyncAnthropic().beta.messages.tool_runner``). Each call runs in a worker thread with
    the GIL released, so the event loop goes on while memfs reads and writes the store."""

    def __init__(self, store: Store, *, cache_control: Optional[BetaCacheControlEphemeralParam] = None) -> None:
        super().__init__(cache_control=cache_control)
        self.store = store

    async def _run(self, command: Any) -> BetaFunctionToolResultType:
        return _result(await asyncio.to_thread(self.store.call, _input(command)))

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> BetaFunctionToolResultType:
        return await self._run(command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> BetaFunctionToolResultType:
        return await self._run(command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> BetaFunctionToolResultType:
        return await self._run(command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> BetaFunctionToolResultType:
        return await self._run(command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> BetaFunctionToolResultType:
        return await self._run(command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> BetaFunctionToolResultType:
        return await self._run(command)
