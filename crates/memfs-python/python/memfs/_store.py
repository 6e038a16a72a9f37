"""The typed ``Store`` over the native module."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ._memfs import NativeStore

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Commit:
    """One commit of a store's history (``Store.log``)."""

    generation: int
    """Its position: the first commit is 1."""
    id: str
    """Its id, 64 hex digits."""
    parent: Optional[str]
    """The previous commit's id (``None`` for the first)."""
    time_ms: int
    """When it was made, in milliseconds since the Unix epoch (the writer's clock)."""
    actor: str
    """Who made it (``actor=`` of ``Store.open``; may be empty)."""
    command: Dict[str, Any]
    """What it did: the memory-tool command (redacted of what the sensitive-data filter caught),
    or a history or key command."""
    changes: List[Dict[str, Any]] = field(default_factory=list)
    """The files it added, modified, deleted or renamed."""


def _path(value: Optional[PathLike]) -> Optional[str]:
    return None if value is None else os.fspath(value)


class Store:
    """An open memfs store, safe to share between threads; each call releases the GIL.

    Open one with ``Store.open`` (or ``Store.init`` for a new one) and close it with
    ``close()`` or a ``with`` block, which records the last-access days of the files read.
    """

    __slots__ = ("_native", "_closed")

    def __init__(self, native: NativeStore) -> None:
        self._native = native
        self._closed = False

    @classmethod
    def open(
        cls,
        url: PathLike,
        *,
        key_file: Optional[PathLike] = None,
        passphrase: Optional[str] = None,
        age_identity: Optional[PathLike] = None,
        dialect: str = "python-sdk",
        namespace: Optional[str] = None,
        actor: Optional[str] = None,
        options: Optional[Mapping[str, str]] = None,
    ) -> "Store":
        """Opens the store at ``url``: ``/absolute/path`` or ``file:///path`` (an encrypted
        folder), ``s3://bucket/prefix``, ``gs://…``, ``az://…``, or ``memory://`` (in this
        process only, a random key).

        It is unlocked with ``key_file`` or ``passphrase``; with neither, by its key slots kept
        outside memfs (the OS keychain, a cloud KMS with that cloud's usual credentials, or the
        age identity file ``age_identity``). ``dialect`` chooses the answers' strings:
        ``python-sdk`` (those of the SDK's ``BetaLocalFilesystemMemoryTool``), ``spec`` or
        ``typescript-sdk``. ``namespace`` is a tenant's own store under the URL, ``actor``
        is recorded with every change, ``options`` are cloud options such as
        ``{"aws_region": "eu-west-1"}``.

        Raises ``NoStoreError`` if there is no store there, ``CredentialError`` if the
        credential does not open it, ``StoreError`` if it cannot be read.
        """
        native = NativeStore.open(
            os.fspath(url),
            key_file=_path(key_file),
            passphrase=passphrase,
            age_identity=_path(age_identity),
            dialect=dialect,
            namespace=namespace,
            actor=actor,
            options=dict(options) if options else None,
        )
        return cls(native)

    @classmethod
    def init(
        cls,
        url: PathLike,
        *,
        key_file: Optional[PathLike] = None,
        passphrase: Optional[str] = None,
        dialect: str = "python-sdk",
        namespace: Optional[str] = None,
        actor: Optional[str] = None,
        options: Optional[Mapping[str, str]] = None,
        kdf: Optional[Tuple[int, int, int]] = None,
    ) -> "Store":
        """Creates a new store at ``url`` and opens it. Its one key slot opens with
        ``key_file`` (a new random key file is written there, mode 0600, unless one exists) or
        ``passphrase`` (Argon2id; ``kdf`` = (memory KiB, iterations, parallelism), default
        (65536, 3, 4)). More ways in (the keychain, a KMS, age recipients): ``memfs key add``.

        Raises ``StoreError`` if a store exists there already.
        """
        NativeStore.init(
            os.fspath(url),
            key_file=_path(key_file),
            passphrase=passphrase,
            namespace=namespace,
            options=dict(options) if options else None,
            kdf=kdf,
        )
        return cls.open(
            url,
            key_file=key_file,
            passphrase=passphrase,
            dialect=dialect,
            namespace=namespace,
            actor=actor,
            options=options,
        )

    @property
    def dialect(self) -> str:
        """The answers' dialect."""
        return self._native.dialect

    def call(self, input: Any, *, dialect: Optional[str] = None) -> Tuple[str, bool]:
        """Runs one memory-tool call: ``input`` is the tool's input as the model sent it (a
        dict such as ``{"command": "view", "path": "/memories"}``, or its JSON text). Returns
        ``(content, is_error)``: the text the model reads and whether it is an error result.
        A refused command is an answer, not an exception."""
        text = input if isinstance(input, str) else json.dumps(input, ensure_ascii=False)
        return self._native.call(text, dialect)

    def log(self, limit: Optional[int] = None, path: Optional[str] = None) -> List[Commit]:
        """The history, newest first: at most ``limit`` commits, those that changed ``path``
        (a ``/memories/…`` path) if given."""
        commits = []
        for line in self._native.log(limit, path):
            c = json.loads(line)
            command = c.get("command", "{}")
            commits.append(
                Commit(
                    generation=c["generation"],
                    id=c["id"],
                    parent=c.get("parent"),
                    time_ms=c["time_ms"],
                    actor=c.get("actor", ""),
                    command=json.loads(command) if isinstance(command, str) else command,
                    changes=c.get("changes", []),
                )
            )
        return commits

    def undo(self) -> Optional[int]:
        """Undoes the newest commit, as a new commit: its generation, or ``None`` if the
        undone commit changed nothing."""
        return self._native.undo()

    def restore(self, at: str, path: Optional[str] = None) -> Optional[int]:
        """Puts the tree (or ``path``) back as it was at ``at``: a revision (``@3``,
        ``HEAD~2``, a commit id) or a time (``2025-06-01T12:00:00Z``, a date, unix seconds).
        Returns the new commit's generation, or ``None`` if nothing differed."""
        return self._native.restore(at, path)

    def close(self) -> None:
        """Records the last-access days of the files read (a commit, if any were read). Safe
        to call more than once; the store should not be used after."""
        if not self._closed:
            self._closed = True
            self._native.flush()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
