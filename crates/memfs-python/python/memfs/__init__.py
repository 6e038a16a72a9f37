"""memfs: the encrypted, content-addressed store behind Claude's memory tool, in Python.

``Store`` opens (or creates) a store: a local folder, ``s3://``, ``gs://``, ``az://`` or
``memory://``, encrypted on the client. ``MemoryTool`` and ``AsyncMemoryTool`` are the
Anthropic SDK's memory tools (``BetaAbstractMemoryTool``, ``BetaAsyncAbstractMemoryTool``)
backed by a store; give either to ``client.beta.messages.tool_runner``::

    import anthropic
    from memfs import MemoryTool, Store

    store = Store.open("/home/me/memories", key_file="/home/me/.memfs.key")
    runner = anthropic.Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=2048, tools=[MemoryTool(store)],
        messages=[{"role": "user", "content": "Remember that I prefer tea."}])
    print(runner.until_done())

Errors: ``MemfsError`` and its kinds ``NoStoreError``, ``CredentialError`` and ``StoreError``
(with ``OutcomeUnknownError``: a change whose answer was lost may have landed).
"""

from ._memfs import CredentialError, MemfsError, NoStoreError, OutcomeUnknownError, StoreError, __version__
from ._store import Commit, Store

__all__ = [
    "AsyncMemoryTool",
    "Commit",
    "CredentialError",
    "MemfsError",
    "MemoryTool",
    "NoStoreError",
    "OutcomeUnknownError",
    "Store",
    "StoreError",
    "__version__",
]


def __getattr__(name: str) -> object:
    # The tools need the `anthropic` package; importing memfs alone does not.
    if name in ("MemoryTool", "AsyncMemoryTool"):
        from . import _tool

        return getattr(_tool, name)
    raise AttributeError(f"module 'memfs' has no attribute {name!r}")
