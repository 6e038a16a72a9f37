"""Type stubs of the native module (crates/memfs-python/src)."""

from typing import Dict, List, Optional, Tuple

__version__: str

class MemfsError(Exception): ...
class NoStoreError(MemfsError): ...
class CredentialError(MemfsError): ...
class StoreError(MemfsError): ...

class NativeStore:
    @staticmethod
    def open(
        url: str,
        *,
        key_file: Optional[str] = None,
        passphrase: Optional[str] = None,
        age_identity: Optional[str] = None,
        dialect: str = "python-sdk",
        namespace: Optional[str] = None,
        actor: Optional[str] = None,
        options: Optional[Dict[str, str]] = None,
    ) -> "NativeStore": ...
    @staticmethod
    def init(
        url: str,
        *,
        key_file: Optional[str] = None,
        passphrase: Optional[str] = None,
        namespace: Optional[str] = None,
        options: Optional[Dict[str, str]] = None,
        kdf: Optional[Tuple[int, int, int]] = None,
    ) -> None: ...
    def call(self, input: str, dialect: Optional[str] = None) -> Tuple[str, bool]: ...
    def log(self, limit: Optional[int] = None, path: Optional[str] = None) -> List[str]: ...
    def undo(self) -> Optional[int]: ...
    def restore(self, at: str, path: Optional[str] = None) -> Optional[int]: ...
    def flush(self) -> None: ...
    @property
    def dialect(self) -> str: ...
