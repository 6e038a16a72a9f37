#!/usr/bin/env python3
"""Differential test: `memfs exec --dialect python-sdk` against the Python SDK's
`BetaLocalFilesystemMemoryTool` (PyPI `anthropic==2.10.0`), the dialect's oracle.

Random, seeded sessions of adversarial commands are sent to both. Each answer is compared
exactly, as `(content, is_error)`. The SDK side is what its tool runner sends: the return value
with `is_error` false, a `ToolError`'s content with `is_error` true, or `repr(exc)` with
`is_error` true for any other exception.

A difference is accepted only when a narrow classifier recognises it as one of the documented
safety deviations of `docs/COMPAT.md` (each identified by the input and both answers).
Everything else is UNEXPLAINED: printed in full, and the run exits 1. Where memfs refuses a
command that the SDK (partly) carried out, the SDK's directory is restored to its snapshot from
before the command, so both sides keep the same state. A failed command that the SDK answered
like memfs but that still changed the SDK's directory is a deviation too ("no half-applied
failure"). Every `--check-every` commands the whole state is compared by viewing every
directory and every file (hidden ones included) through both; those views are comparisons too.

Setup and run (from the repository root):

    PY=$(scripts/python-env.sh)
    cargo build -p memfs-cli
    "$PY" tests/differential/differential.py --memfs target/debug/memfs --seed 1 --sessions 20 --commands 150

Temp directories must be on ext4 for the SDK's directory sizes to be 4096 (deviation D14 is
recognised either way, by stat-ing the directory the SDK listed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

REPO = Path(__file__).resolve().parents[2]

try:
    from anthropic.lib.tools._beta_builtin_memory_tool import (
        BetaLocalFilesystemMemoryTool,
        _format_file_size,
    )
    from anthropic.lib.tools._beta_functions import ToolError
except ImportError:  # pragma: no cover - environment problem, not a test result
    # Not in the venv: re-run under the one scripts/python-env.sh makes, if it is there.
    venv_python = Path(os.environ.get("MEMFS_VENV", REPO / ".venv-sdk")) / "bin" / "python"
    if venv_python.exists() and Path(sys.prefix).resolve() != venv_python.parent.parent.resolve():
        os.execv(str(venv_python), [str(venv_python), __file__, *sys.argv[1:]])
    sys.exit("differential.py: cannot import anthropic==2.10.0; run scripts/python-env.sh first "
             "and use the python it prints")

import anthropic  # noqa: E402 - after the venv check above

if anthropic.__version__ != "2.10.0":
    sys.exit(f"differential.py: the oracle is anthropic==2.10.0, found {anthropic.__version__}")

Result = Tuple[str, bool]

# ---------------------------------------------------------------------------------------------
# The two implementations
# ---------------------------------------------------------------------------------------------


class Sdk:
    """The oracle: one `BetaLocalFilesystemMemoryTool` over a fresh temp directory."""

    def __init__(self) -> None:
        self.base = Path(os.path.realpath(tempfile.mkdtemp(prefix="memfs-diff-")))
        self.tool = BetaLocalFilesystemMemoryTool(base_path=str(self.base))
        self.root = self.base / "memories"

    def call(self, inp: Any) -> Result:
        # What the SDK's tool runner sends back (`_run_tool`).
        try:
            return (self.tool.call(inp), False)
        except ToolError as e:
            return (e.content, True)  # type: ignore[return-value]
        except Exception as e:  # noqa: BLE001 - the runner catches everything
            return (repr(e), True)

    # A snapshot is (files: rel -> bytes, dirs: set of rel); "" is the root, not listed.
    def snapshot(self) -> Tuple[Dict[str, bytes], Set[str]]:
        files: Dict[str, bytes] = {}
        dirs: Set[str] = set()

        def walk(d: Path, rel: str) -> None:
            with os.scandir(d) as it:
                for e in it:
                    r = f"{rel}/{e.name}" if rel else e.name
                    if e.is_dir(follow_symlinks=False):
                        dirs.add(r)
                        walk(Path(e.path), r)
                    elif e.is_file(follow_symlinks=False):
                        with open(e.path, "rb") as f:
                            files[r] = f.read()
                    else:  # nothing else is ever created
                        raise RuntimeError(f"unexpected file type at {e.path}")

        walk(self.root, "")
        return files, dirs

    def restore(self, snap: Tuple[Dict[str, bytes], Set[str]]) -> None:
        files, dirs = snap
        shutil.rmtree(self.root)
        self.root.mkdir(mode=0o700)
        for d in sorted(dirs, key=lambda r: r.count("/")):
            (self.root / d).mkdir(mode=0o700)
        for rel, data in files.items():
            (self.root / rel).write_bytes(data)

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


class Memfs:
    """One `memfs exec --dialect python-sdk --store memory://` process."""

    def __init__(self, binary: str) -> None:
        self.proc = subprocess.Popen(
            [binary, "exec", "--dialect", "python-sdk", "--store", "memory://"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def send_line(self, line: str) -> Result:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        if not out:
            raise RuntimeError(f"memfs exited (status {self.proc.poll()}) on input line {line[:300]!r}")
        v = json.loads(out)
        return (v["content"], v["is_error"])

    def call(self, inp: Any) -> Result:
        # ensure_ascii: every non-ASCII character (and a lone surrogate, D15) travels as \u escapes.
        return self.send_line(json.dumps(inp, ensure_ascii=True))

    def close(self) -> None:
        assert self.proc.stdin
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass  # it had exited; the session already reported it
        self.proc.wait(timeout=30)


# ---------------------------------------------------------------------------------------------
# memfs's own rules, ported, to predict its refusal messages (crates/memfs-core/src/{command,
# path,render}.rs). Used only by the classifier.
# ---------------------------------------------------------------------------------------------

COMMANDS = "view, create, str_replace, insert, delete, rename"
I64 = (-(2**63), 2**63)


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


def _json(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _short_json(v: Any) -> str:
    s = _json(v)
    return s[:80] + "…" if len(s) > 80 else s


def _as_integer(v: Any) -> Optional[int]:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if I64[0] <= v < I64[1] else None
    if isinstance(v, float) and v == int(v) and I64[0] <= v < I64[1]:
        return int(v)
    return None


def predicted_input_error(inp: Any) -> Optional[str]:
    """memfs's `InputError` message for this input, or None when it parses (`Command::from_input`)."""
    if not isinstance(inp, dict):
        return f"Invalid input: expected a JSON object with a `command` field, got {_kind(inp)}"
    cmd = inp.get("command")
    if cmd is None:
        return "Invalid input: missing required field `command` (one of: " + COMMANDS + ")"
    if not isinstance(cmd, str):
        return f"Unknown command: {_short_json(cmd)}. Valid commands are: {COMMANDS}"

    def get(f: str) -> Any:
        return inp.get(f)

    def missing(f: str) -> str:
        return f"Invalid input for command `{cmd}`: missing required field `{f}`"

    def wrong(f: str, expected: str, v: Any) -> str:
        return f"Invalid input for command `{cmd}`: field `{f}` must be {expected}, got {_short_json(v)}"

    def string(f: str, optional: bool = False) -> Optional[str]:
        v = get(f)
        if v is None:
            return None if optional else missing(f)
        return None if isinstance(v, str) else wrong(f, "a string", v)

    def integer(f: str) -> Optional[str]:
        v = get(f)
        if v is None:
            return missing(f)
        return None if _as_integer(v) is not None else wrong(f, "an integer", v)

    def view_range() -> Optional[str]:
        v = get("view_range")
        expected = "an array of two integers [start_line, end_line]"
        if v is None:
            return None
        if not isinstance(v, list) or any(_as_integer(i) is None for i in v):
            return wrong("view_range", expected, v)
        return None

    checks: Dict[str, List[Callable[[], Optional[str]]]] = {
        "view": [lambda: string("path"), view_range],
        "create": [lambda: string("path"), lambda: string("file_text")],
        "str_replace": [lambda: string("path"), lambda: string("old_str"), lambda: string("new_str", True)],
        "insert": [lambda: string("path"), lambda: integer("insert_line"), lambda: string("insert_text")],
        "delete": [lambda: string("path")],
        "rename": [lambda: string("old_path"), lambda: string("new_path")],
    }
    if cmd not in checks:
        short = cmd[:80] + "…" if len(cmd) > 80 else cmd
        return f"Unknown command: {short}. Valid commands are: {COMMANDS}"
    for check in checks[cmd]:
        err = check()
        if err is not None:
            return err
    return None


def _is_control(c: str) -> bool:
    return unicodedata.category(c) == "Cc"


def _encoded_traversal(name: str) -> bool:
    current = name
    for _ in range(3):
        decoded = urllib.parse.unquote(current, errors="replace")
        if decoded == current:
            return False
        if (
            decoded in (".", "..")
            or "/" in decoded
            or "\\" in decoded
            or any(_is_control(c) for c in decoded)
        ):
            return True
        current = decoded
    return False


def path_error(path: str) -> Optional[Tuple[str, str]]:
    """(kind, memfs message) for a path memfs refuses (`MemoryPath::parse`), else None.
    For kind "control" the message is a regex (the path is Rust-`escape_debug`ged)."""
    n = len(path.encode("utf-8", "surrogatepass"))
    if n > 4096:
        return ("path-too-long", f"Invalid path: it is {n} bytes long, the limit is 4096 bytes")
    if not path.startswith("/memories"):
        return ("not-under-root", f"Path must start with /memories, got: {path}")
    if any(_is_control(c) for c in path):
        return ("control", r"Invalid path .*: control characters are not allowed in memory paths")
    if "\\" in path:
        return ("backslash", f"Invalid path {path}: backslashes are not allowed in memory paths")
    rest = path[len("/memories"):]
    if rest and not rest.startswith("/"):
        return (
            "sibling",
            f"Path {path} is outside the /memories directory: it must be /memories or start with /memories/",
        )
    comps: List[str] = []
    for part in rest.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not comps:
                return ("escapes", f"Path {path} would escape /memories directory")
            comps.pop()
            continue
        if len(part.encode("utf-8", "surrogatepass")) > 255:
            return (
                "name-too-long",
                f"Invalid path {path}: a file or directory name is longer than 255 bytes",
            )
        if _encoded_traversal(part):
            return ("encoded", f"Invalid path {path}: percent-encoded traversal sequences are not allowed")
        comps.append(part)
    return None


def components(path: str) -> List[str]:
    """Lexical normalisation of a valid memory path (memfs's and, inside the root, the SDK's)."""
    comps: List[str] = []
    for part in path[len("/memories"):].split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            comps.pop()
        else:
            comps.append(part)
    return comps


# ---------------------------------------------------------------------------------------------
# The classifier
# ---------------------------------------------------------------------------------------------

# Answers the SDK gives when it treats a path as an ordinary one (success or its own ToolError).
SDK_NORMAL_PATTERNS = [
    ("ok: directory listing", r"^Here're the files and directories up to 2 levels deep in .*, excluding hidden items:\n"),
    ("ok: file view", r"^Here's the content of .* with line numbers:\n"),
    ("ok: created", r"^File created successfully at: "),
    ("ok: replaced", r"^The memory file has been edited\. Here is the snippet"),
    ("ok: inserted", r"^The file .* has been edited\.$"),
    ("ok: deleted", r"^Successfully deleted "),
    ("ok: renamed", r"^Successfully renamed "),
    ("error: does not exist", r"^The path .* does not exist"),
    ("error: not a file", r"^The path .* is not a file\.$"),
    ("error: file already exists", r"^File .* already exists$"),
    ("error: destination exists", r"^The destination .* already exists$"),
    ("error: old_str not found", r"^No replacement was performed, old_str "),
    ("error: old_str not unique", r"^No replacement was performed\. Multiple occurrences"),
    ("error: insert_line out of range", r"^Invalid `insert_line` parameter: "),
    ("error: not under /memories", r"^Path must start with /memories, got: "),
    ("error: would escape", r"^Path .* would escape /memories directory$"),
    ("error: root delete/rename", r"^Cannot (delete|rename) the /memories directory itself$"),
]
SDK_NORMAL = [re.compile(p, re.S) for _, p in SDK_NORMAL_PATTERNS]
NOT_A_DIR = ("NotADirectoryError(20, 'Not a directory')", True)
EINVAL = ("OSError(22, 'Invalid argument')", True)
TOO_LONG = ("OSError(36, 'File name too long')", True)
NUL = ("ValueError('embedded null byte')", True)


def sdk_normal(r: Result) -> bool:
    return any(p.search(r[0]) for p in SDK_NORMAL)


def outcome(r: Result) -> str:
    """A short name for an SDK answer, for the coverage table."""
    for (name, _), regex in zip(SDK_NORMAL_PATTERNS, SDK_NORMAL):
        if regex.search(r[0]):
            return name
    return "repr: " + r[0].split("(", 1)[0]


PATH_FIELDS = {
    "view": ["path"],
    "create": ["path"],
    "str_replace": ["path"],
    "insert": ["path"],
    "delete": ["path"],
    "rename": ["old_path", "new_path"],
}

PATH_CLASSES = {
    "sibling": "D1 /memoriesfoo sibling of the root refused",
    "escapes": "D2 `..` above /memories refused even if it comes back",
    "backslash": "D3 backslash in path refused",
    "encoded": "D4 percent-encoded traversal refused",
    "control": "D5 control character in path refused",
    "name-too-long": "D6 name > 255 / path > 4096 bytes refused",
    "path-too-long": "D6 name > 255 / path > 4096 bytes refused",
}


def _has_lone_surrogate(v: Any) -> bool:
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(v, dict):
        return any(_has_lone_surrogate(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_lone_surrogate(x) for x in v)
    return False


def _has_big_int(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return not (I64[0] <= v < I64[1])
    if isinstance(v, dict):
        return any(_has_big_int(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_big_int(x) for x in v)
    return False


def _first_file_prefix(comps: List[str], files: Dict[str, bytes]) -> Optional[str]:
    """The first proper prefix of `comps` that is a file, as a relative path."""
    for i in range(1, len(comps)):
        rel = "/".join(comps[:i])
        if rel in files:
            return rel
    return None


def expected_refusal(inp: Any) -> Optional[Callable[[Result], bool]]:
    """For an input memfs must refuse whatever the tree holds (malformed input, a refused path),
    a check of memfs's answer; None otherwise. Catches memfs answering like the SDK where a
    safety deviation should apply (for example accepting `/memoriesfoo`)."""
    if _has_lone_surrogate(inp):
        return lambda m: m[1] and m[0].startswith("Invalid JSON input line: ")
    if _has_big_int(inp):
        return lambda m: m[1] and " must be " in m[0]
    expected = predicted_input_error(inp)
    if expected is None and inp["command"] == "str_replace" and inp.get("new_str") is None:
        expected = "Invalid input for command `str_replace`: missing required field `new_str`"
    if expected is not None:
        return lambda m: m == (expected, True)
    for field in PATH_FIELDS[inp["command"]]:
        err = path_error(inp[field])
        if err is not None:
            kind, msg = err
            if kind == "control":
                return lambda m: m[1] and re.fullmatch(msg, m[0]) is not None
            return lambda m: m == (msg, True)
    return None


VIEW_MAX_CHARS = 16_000
_CUT_FILE = re.compile(
    r"(?s)(.*)\n\(Cut at 16000 characters: lines (\d+)-(\d+) of (\d+)-(\d+) shown\."
    r"(?: To see the next part, view this file with view_range \[(\d+), (\d+)\]\.)?\)"
)
_CUT_DIR = re.compile(
    r"(?s)(.*)\n\(Cut at 16000 characters: entries (\d+)-(\d+) of (\d+)-(\d+) shown\. "
    r"To see the next part, view this directory with view_range \[(\d+), (\d+)\]\.\)"
)
LISTING_HEAD = "Here're the files and directories up to 2 levels deep in "


def _classify_cut_view(sdk: str, mem: str) -> Optional[str]:
    """D17 when `mem` is `sdk` cut on a line boundary within the limit with the exact note."""
    if len(mem) > VIEW_MAX_CHARS:
        return None
    m = _CUT_FILE.fullmatch(mem)
    if m:
        shown, first, last, first_asked, last_asked = m.group(1), *map(int, m.group(2, 3, 4, 5))
        sdk_lines = sdk.split("\n")
        # The header plus lines first..last, exactly as the SDK numbers them.
        if shown.split("\n") != sdk_lines[: 1 + last - first + 1] or first != first_asked:
            return None
        if len(sdk_lines) - 1 != last_asked - first + 1 or last >= last_asked:
            return None
        if m.group(6) is None or (int(m.group(6)), int(m.group(7))) != (last + 1, last_asked):
            return None
        return "D17 view longer than 16,000 characters cut with a note naming the next view_range"
    return None


def _classify_cut_matches(old_str: str, sdk: str, mem: str) -> Optional[str]:
    """D17 when `mem` is the SDK's match list cut within the limit: the first lines, then
    `… and {n} more` for the rest."""
    head = f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: "
    tail = ". Please ensure it is unique"
    if len(mem) > VIEW_MAX_CHARS or not all(t.startswith(head) and t.endswith(tail) for t in (sdk, mem)):
        return None
    sdk_lines = sdk[len(head) : -len(tail)].split(", ")
    listed, _, more = mem[len(head) : -len(tail)].rpartition(", … and ")
    if not listed or not more.endswith(" more") or not more[: -len(" more")].isdigit():
        return None
    listed_lines = listed.split(", ")
    if listed_lines != sdk_lines[: len(listed_lines)] or len(listed_lines) + int(more[:-5]) != len(sdk_lines):
        return None
    return "D17 str_replace match list longer than 16,000 characters cut with a count of the rest"


def _two(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2


def _classify_listing(inp: Any, sdk: str, mem: str, side: Sdk) -> Optional[str]:
    """D17 for a directory view: memfs lists the entries `view_range` selects (all without
    one; the SDK ignores it), cut on a row within 16,000 characters with the exact note."""
    lines = sdk.split("\n")
    head, rows = lines[:2], lines[2:]
    vr = inp.get("view_range")
    ranged = _two(vr)
    first = 1
    if ranged:
        a, b = _as_integer(vr[0]), _as_integer(vr[1])
        if a is None or b is None:
            return None
        start = min(max(1, a) - 1, len(rows))
        rows = rows[start : len(rows) if b == -1 else b]
        first = start + 1
    expected = "\n".join(head + rows)
    shown = mem
    if len(expected) > VIEW_MAX_CHARS and rows:
        m = _CUT_DIR.fullmatch(mem)
        if m is None or len(mem) > VIEW_MAX_CHARS:
            return None
        shown = m.group(1)
        f, last, f2, last_asked, a2, b2 = map(int, m.group(2, 3, 4, 5, 6, 7))
        if (f, f2, last_asked, a2, b2) != (first, first, first + len(rows) - 1, last + 1, last_asked):
            return None
        if not first <= last < last_asked:
            return None
        expected = "\n".join(head + rows[: last - first + 1])
    if shown != expected and not _only_dir_sizes_differ(inp["path"], expected, shown, side):
        return None
    if ranged and shown.count("\n") != sdk.count("\n"):
        return "D17 view_range on a directory selects listing entries"
    if ranged:
        return None  # every entry selected: D14 at most, below
    return "D17 view longer than 16,000 characters cut with a note naming the next view_range"


def classify(inp: Any, sdk: Result, mem: Result, pre: Any, sdk_side: Sdk) -> Optional[str]:
    """The deviation class of a difference, or None when it is unexplained."""
    # D15: a lone surrogate cannot be encoded as UTF-8; memfs refuses the JSON line.
    if _has_lone_surrogate(inp):
        if mem[1] and mem[0].startswith("Invalid JSON input line: ") and sdk[1] and (
            sdk[0].startswith("UnicodeEncodeError(") or sdk_normal(sdk)
        ):
            return "D15 lone surrogate refused as invalid JSON"
        return None
    # D16: integers beyond 64 bits (serde reads them as floats).
    if _has_big_int(inp):
        if mem[1] and re.fullmatch(
            r"Invalid input for command `(insert|view)`: field `(insert_line|view_range)` must be (an integer|"
            r"an array of two integers \[start_line, end_line\]), got .*",
            mem[0],
        ):
            return "D16 integer beyond 64 bits refused"
        return None

    # D17: a view longer than the policy's view-max-chars (16,000 by default) is cut after the
    # last whole line that fits and ends with a note; what it shows is the SDK's answer's start.
    # D17: so is a listing, by entries; `view_range` on a directory selects them.
    if isinstance(inp, dict) and inp.get("command") == "view" and not sdk[1] and not mem[1] \
            and sdk[0].startswith(LISTING_HEAD) and mem[0].startswith(LISTING_HEAD) \
            and (len(sdk[0]) > VIEW_MAX_CHARS or _two(inp.get("view_range"))):
        listing = _classify_listing(inp, sdk[0], mem[0], sdk_side)
        if listing is not None:
            return listing
    if isinstance(inp, dict) and inp.get("command") == "view" and not sdk[1] and not mem[1] \
            and len(sdk[0]) > VIEW_MAX_CHARS:
        return _classify_cut_view(sdk[0], mem[0])

    # D17: so is an error: a match list keeps the lines that fit and counts the rest.
    if isinstance(inp, dict) and inp.get("command") == "str_replace" and sdk[1] and mem[1] \
            and len(sdk[0]) > VIEW_MAX_CHARS and isinstance(inp.get("old_str"), str):
        return _classify_cut_matches(inp["old_str"], sdk[0], mem[0])

    # D10: malformed input; memfs names the field, the SDK coerces or leaks a repr.
    expected = predicted_input_error(inp)
    if expected is not None:
        # The SDK validates nothing: it coerces ("1", true and 1.0 become ints) and carries on,
        # or fails with a repr from wherever the bad value is first used.
        sdk_ok = sdk_normal(sdk) or re.match(r"(AttributeError|TypeError|NotImplementedError)\(", sdk[0]) is not None
        if mem == (expected, True) and sdk_ok:
            return "D10 malformed input refused with a field-naming error"
        return None

    cmd = inp["command"]
    # D12 (python-sdk dialect): str_replace without new_str. The SDK fails later, with a repr
    # (TypeError) on a unique match or one of its own errors before that.
    if cmd == "str_replace" and inp.get("new_str") is None:
        sdk_ok = sdk[1] and (sdk == ("TypeError('replace() argument 2 must be str, not None')", True) or sdk_normal(sdk))
        if mem == ("Invalid input for command `str_replace`: missing required field `new_str`", True) and sdk_ok:
            return "D12 str_replace without new_str refused"
        return None

    # D1-D6: path refusals, in memfs's field order.
    for field in PATH_FIELDS[cmd]:
        err = path_error(inp[field])
        if err is None:
            continue
        kind, msg = err
        if kind not in PATH_CLASSES:
            return None  # memfs and the SDK give the same message for these
        ok_mem = mem[1] and (re.fullmatch(msg, mem[0]) is not None if kind == "control" else mem[0] == msg)
        if not ok_mem:
            return None
        if kind == "control" and "\x00" in inp[field]:
            ok_sdk = sdk == NUL or sdk_normal(sdk)
        elif kind in ("name-too-long", "path-too-long"):
            ok_sdk = sdk == TOO_LONG or sdk_normal(sdk)
        else:
            ok_sdk = sdk_normal(sdk)
        return PATH_CLASSES[kind] if ok_sdk else None

    files, dirs = pre if pre is not None else ({}, set())

    # D7: a parent of the create/rename destination is a file.
    if cmd in ("create", "rename"):
        target = inp["path"] if cmd == "create" else inp["new_path"]
        comps = components(target)
        prefix = _first_file_prefix(comps, files)
        if prefix is not None:
            msg = f"The path {target} is not valid: /memories/{prefix} is a file, not a directory"
            if mem == (msg, True) and sdk == NOT_A_DIR:
                return "D7 parent component is a file (create/rename destination)"
            return None

    if cmd == "rename":
        old, new = components(inp["old_path"]), components(inp["new_path"])
        old_rel = "/".join(old)
        into_itself = len(new) > len(old) and new[: len(old)] == old
        # D8: a directory into its own subtree (the SDK creates the parents, then EINVAL).
        if into_itself and old_rel in dirs:
            msg = (
                f"Cannot rename {inp['old_path']} to {inp['new_path']}: a directory cannot be moved into itself"
            )
            if mem == (msg, True) and sdk == EINVAL:
                return "D8 rename of a directory into itself refused"
            return None
        # D8+D9: a missing source with the destination below it: the SDK's mkdir of the
        # destination's parents creates the source, then the rename fails with EINVAL.
        if into_itself and old_rel not in files:
            if mem == (f"The path {inp['old_path']} does not exist", True) and sdk == EINVAL:
                return "D8+D9 rename of a missing source into itself (SDK creates it, then EINVAL)"
            return None
        # D11: the source path runs through a file.
        if _first_file_prefix(old, files) is not None:
            if mem == (f"The path {inp['old_path']} does not exist", True) and sdk == NOT_A_DIR:
                return "D11 rename source through a file"
            return None

    # D14: directory sizes, fixed at 4096 in memfs, the host's st_size in the SDK.
    if cmd == "view" and not sdk[1] and not mem[1] and _only_dir_sizes_differ(inp["path"], sdk[0], mem[0], sdk_side):
        return "D14 directory size fixed at 4096"
    return None


def _only_dir_sizes_differ(path: str, sdk: str, mem: str, side: Sdk) -> bool:
    head = "Here're the files and directories up to 2 levels deep in "
    if not (sdk.startswith(head) and mem.startswith(head)):
        return False
    s_lines, m_lines = sdk.split("\n"), mem.split("\n")
    if len(s_lines) != len(m_lines) or s_lines[0] != m_lines[0]:
        return False
    listed = side.tool._validate_path(path)  # pure: resolves, creates nothing
    for i, (s, m) in enumerate(zip(s_lines[1:], m_lines[1:])):
        if s == m:
            continue
        s_size, s_rest = s.split("\t", 1)
        m_size, m_rest = m.split("\t", 1)
        if s_rest != m_rest or m_size != "4K":
            return False
        if i == 0:
            target = listed  # the listed directory's own row
        elif s_rest.endswith("/"):
            target = listed / s_rest[len(path) + 1 : -1]
        else:
            return False  # a file row: sizes must agree
        if not target.is_dir() or _format_file_size(os.stat(target).st_size) != s_size:
            return False
    return True


def classify_drift(inp: Any, pre: Any, post: Any) -> Optional[str]:
    """Both answered the same error, but the SDK's directory changed."""
    if isinstance(inp, dict) and inp.get("command") == "rename" and pre[0] == post[0]:
        added = post[1] - pre[1]
        if pre[1] <= post[1] and added:
            return "D9 failed rename leaves no created parent dirs"
    return None


# ---------------------------------------------------------------------------------------------
# The generator
# ---------------------------------------------------------------------------------------------

FILE_NAMES = [
    "a.txt", "b.md", "notes.md", "todo", "c", "日記.md", "emoji😀.txt", "sp ace.txt", "100%.md",
    "x%41y.txt", "...", "-dash", "UPPER.TXT", "a.txt.bak", "ünï", "z", "MiXed.Md", "trail ",
    " ", "a.", "~tilde", "#hash",
]
DIR_NAMES = ["sub", "docs", "deep", "node_modules", "日本", "d d", "x.y", "proj", "a"]
HIDDEN_NAMES = [".hidden", ".cfg.md", ".git"]
ROOT_SPELLINGS = ["/memories", "/memories/", "/memories/.", "/memories//", "/memories/x/..", "/memories/./"]
MAX_ENTRIES = 25  # per directory, so ext4 directories stay one 4096-byte block
MAX_DEPTH = 4  # directory levels below /memories

FRAGMENTS = [
    "hello world", "dup", "dup dup", "tab\there", "lone\rcr", "é", "日本語テキスト", "emoji 😀 🎉",
    "$1 $& $$", "\\1 \\n \\g<0>", "TODO: x", "key = value", "   indented", "trailing  ", "",
    "\u2028sep", "\x0b\x0c", "nul\x00in", "ﬁ ligature", "a\u0301 combining", "`backticks`",
    "{\"json\": 1}", "x", "dup\r", "Ω≈ç√", "\U0001f468\u200d\U0001f469\u200d\U0001f467 family",
]


class Gen:
    def __init__(self, rng: random.Random) -> None:
        self.r = rng
        self.files: Dict[str, bytes] = {}
        self.dirs: Set[str] = set()

    def observe(self, snap: Tuple[Dict[str, bytes], Set[str]]) -> None:
        self.files, self.dirs = snap

    # -- text -----------------------------------------------------------------------------
    def line(self) -> str:
        return " ".join(self.r.choice(FRAGMENTS) for _ in range(self.r.randint(1, 3)))

    def content(self) -> str:
        r = self.r.random()
        if r < 0.08:
            return ""
        if r < 0.12:
            return self.r.choice(["\n", "\n\n\n", "\r\n", "\r", "\t", " "])
        if r < 0.14:
            return "\n".join(f"line {i} dup" for i in range(self.r.randint(200, 2500))) + "\n"
        if r < 0.16:
            return "long " * self.r.randint(500, 3000) + self.r.choice(["", "\n"])
        lines = [self.line() for _ in range(self.r.randint(1, 8))]
        sep = "\r\n" if self.r.random() < 0.2 else "\n"
        s = sep.join(lines)
        if self.r.random() < 0.6:
            s += sep
        return s

    def old_str(self, content: str) -> str:
        r = self.r.random()
        if content and r < 0.45:
            i = self.r.randrange(len(content))
            return content[i : i + self.r.randint(1, min(40, len(content) - i))]
        if content and r < 0.55:
            lines = [l for l in content.split("\n") if l]
            if lines:
                return self.r.choice(lines)
        if r < 0.62:
            return "dup"
        if r < 0.68:
            return ""
        if content and r < 0.75 and "\n" in content:
            i = content.index("\n", self.r.randrange(content.index("\n") + 1))
            return content[max(0, i - self.r.randint(0, 10)) : i + self.r.randint(1, 10)]
        if r < 0.82:
            return self.r.choice(["\r\n", "\r", "\t", "\n", "😀"])
        return "not-present-ZZ"

    def new_str(self) -> str:
        return self.r.choice(
            [self.line(), self.line(), "", "$1", "$0 $& \\1", "multi\nline\nnew", "x\r\ny", self.content(), "😀\n"]
        )

    def insert_text(self) -> str:
        return self.r.choice(
            [self.line(), self.line(), "", "ends\n", "ends\n\n\n", "\n", "cr\r", "two\nlines", "crlf\r\n", self.content()]
        )

    # -- tree -----------------------------------------------------------------------------
    def entries(self, d: str) -> int:
        pre = d + "/" if d else ""
        return sum(
            1 for p in (*self.files, *self.dirs) if p.startswith(pre) and "/" not in p[len(pre):]
        )

    def any_file(self) -> Optional[str]:
        return self.r.choice(sorted(self.files)) if self.files else None

    def any_dir(self) -> Optional[str]:
        return self.r.choice(sorted(self.dirs)) if self.dirs else None

    def dir_or_root(self) -> str:
        return self.any_dir() if self.dirs and self.r.random() < 0.6 else ""

    def name(self, for_dir: bool = False) -> str:
        r = self.r.random()
        if r < 0.08:
            return self.r.choice(HIDDEN_NAMES)
        if r < 0.09:
            return "L" * self.r.randint(100, 200)
        if r < 0.095:
            return "é" * 127 + "x"  # exactly 255 bytes
        return self.r.choice(DIR_NAMES if for_dir else FILE_NAMES)

    def new_path(self, nested: bool = False) -> str:
        """A path for something new (it may exist already when its directory is full)."""
        for _ in range(20):
            parent = self.dir_or_root()
            depth = parent.count("/") + 1 if parent else 0
            if depth < MAX_DEPTH and self.entries(parent) < MAX_ENTRIES and (nested or self.r.random() < 0.2):
                for _ in range(self.r.randint(1, MAX_DEPTH - depth)):
                    child = self.name(for_dir=True)
                    cand = f"{parent}/{child}" if parent else child
                    if cand in self.files:
                        break
                    parent = cand
                    if cand not in self.dirs:
                        break  # a new directory: its children are new too
            if parent in self.files:
                continue
            if parent in self.dirs or parent == "":
                if self.entries(parent) >= MAX_ENTRIES:
                    continue
            name = self.name()
            return f"{parent}/{name}" if parent else name
        return self.any_file() or "a.txt"

    def missing(self) -> str:
        parent = self.dir_or_root()
        name = self.r.choice(["missing.txt", "nope", "gone/deeper.md"])
        return f"{parent}/{name}" if parent else name

    def through_file(self) -> str:
        f = self.any_file()
        if f is None:
            return self.missing()
        return f + "/" + self.r.choice(["x", "x/y.txt", ".", "sub/"])

    def spell(self, rel: str) -> str:
        """A spelling of /memories/<rel>: plain, `//`, `/./`, `x/..`, trailing slash."""
        if rel == "":
            return self.r.choice(ROOT_SPELLINGS)
        comps = rel.split("/")
        r = self.r.random()
        if r < 0.6:
            return "/memories/" + rel
        i = self.r.randint(0, len(comps) - 1)
        if r < 0.68:
            return "/memories/" + "/".join(comps[:i] + [""] + comps[i:])
        if r < 0.76:
            return "/memories/" + "/".join(comps[:i] + ["."] + comps[i:])
        if r < 0.84:
            x = self.r.choice([*FILE_NAMES[:4], *DIR_NAMES[:3], *(sorted(self.files)[:3])])
            return "/memories/" + "/".join(comps[:i] + [x, ".."] + comps[i:])
        if r < 0.9:
            return "/memories/" + rel + "/"
        if r < 0.93:
            return "/memories/" + rel + self.r.choice(["/.", "/./", "/x/..", "/sub/../"])
        return "/memories//" + "//".join(comps)

    # -- commands -------------------------------------------------------------------------
    def command(self, unsafe_rate: float) -> Any:
        if self.r.random() < unsafe_rate:
            return self.unsafe()
        op = self.r.choices(
            ["view", "create", "str_replace", "insert", "delete", "rename"], [25, 22, 15, 12, 8, 12]
        )[0]
        return getattr(self, "gen_" + op)()

    def view_range(self, n: int) -> Any:
        return self.r.choice(
            [[0, 1], [-5, 2], [3, 1], [2, -1], [2, -2], [10, 20], [], [2], [1, 2, 3], None, [1, n], [n, -1],
             [1, 1], [n + 1, n + 5], [-1, -1], [2, 0], [1.0, 2], [-(10**18), 10**18], [-(2**63), 2**63 - 1],
             [-0.0, 3]]
        )

    def gen_view(self) -> Any:
        r = self.r.random()
        if r < 0.4 and self.files:
            rel = self.any_file()
        elif r < 0.7:
            rel = self.dir_or_root()
        elif r < 0.85:
            rel = self.missing()
        elif r < 0.95:
            rel = self.through_file()
        else:
            rel = ""
        inp: Dict[str, Any] = {"command": "view", "path": self.spell(rel)}
        if self.r.random() < 0.5:
            n = self.files.get(rel, b"").count(b"\n") + 1
            inp["view_range"] = self.view_range(n)
        return inp

    def gen_create(self) -> Any:
        r = self.r.random()
        if r < 0.7:
            rel = self.new_path()
        elif r < 0.8:
            rel = self.any_file() or self.new_path()
        elif r < 0.85:
            rel = self.any_dir() or ""
        elif r < 0.9:
            rel = ""
        else:
            rel = self.new_path(nested=True)
        return {"command": "create", "path": self.spell(rel), "file_text": self.content()}

    def edit_target(self) -> str:
        r = self.r.random()
        if r < 0.82 and self.files:
            return self.any_file()  # type: ignore[return-value]
        if r < 0.9:
            return self.missing()
        if r < 0.95:
            return self.dir_or_root()
        return self.through_file()

    def gen_str_replace(self) -> Any:
        rel = self.edit_target()
        content = self.files.get(rel, b"").decode("utf-8", "replace")
        return {"command": "str_replace", "path": self.spell(rel), "old_str": self.old_str(content),
                "new_str": self.new_str()}

    def gen_insert(self) -> Any:
        rel = self.edit_target()
        content = self.files.get(rel, b"").decode("utf-8", "replace")
        lines = content.split("\n")
        if lines[-1] == "":
            lines.pop()
        n = len(lines)
        line = self.r.choice([0, 0, n, n, n + 1, -1, self.r.randint(0, max(n, 0)), 10**6, 1, 2**62, -(2**63), -0.0,
                              float(n)])
        return {"command": "insert", "path": self.spell(rel), "insert_line": line,
                "insert_text": self.insert_text()}

    def gen_delete(self) -> Any:
        r = self.r.random()
        if r < 0.55 and self.files:
            rel = self.any_file()
        elif r < 0.7 and self.dirs:
            rel = self.any_dir()
        elif r < 0.9:
            rel = self.r.choice([self.missing(), self.through_file()])
        else:
            rel = ""
        return {"command": "delete", "path": self.spell(rel)}

    def gen_rename(self) -> Any:
        r = self.r.random()
        if r < 0.55 and self.files:
            old = self.any_file()
        elif r < 0.8 and self.dirs:
            old = self.any_dir()
        elif r < 0.9:
            old = self.missing()
        elif r < 0.95:
            old = ""
        else:
            old = self.through_file()
        assert old is not None
        r = self.r.random()
        if r < 0.45:
            new = self.new_path()
        elif r < 0.65:
            new = self.new_path(nested=True)
        elif r < 0.8:
            new = self.r.choice([x for x in (self.any_file(), self.any_dir()) if x] or [""])
        elif r < 0.85:
            new = ""
        elif r < 0.95 and old:
            new = old + "/" + self.r.choice(["x", "sub/y.md", "a/b/c"])
        else:
            new = self.through_file()
        return {"command": "rename", "old_path": self.spell(old), "new_path": self.spell(new)}

    # -- unsafe and malformed inputs ------------------------------------------------------
    def with_path(self, path: str) -> Any:
        """Some command on an unsafe path."""
        op = self.r.choice(["view", "create", "create", "str_replace", "insert", "delete", "rename_old", "rename_new"])
        if op == "view":
            return {"command": "view", "path": path}
        if op == "create":
            return {"command": "create", "path": path, "file_text": self.content()}
        if op == "str_replace":
            return {"command": "str_replace", "path": path, "old_str": "dup", "new_str": "x"}
        if op == "insert":
            return {"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"}
        if op == "delete":
            return {"command": "delete", "path": path}
        other = self.spell(self.r.choice([self.any_file() or "a.txt", self.new_path()]))
        if op == "rename_old":
            return {"command": "rename", "old_path": path, "new_path": other}
        return {"command": "rename", "old_path": other, "new_path": path}

    def under_dir(self, name: str) -> str:
        d = self.dir_or_root()
        return f"/memories/{d}/{name}" if d else f"/memories/{name}"

    def unsafe(self) -> Any:
        kind = self.r.choice(["D0", "D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9", "D10", "D10", "D10",
                              "D11", "D12", "D15", "D16"])
        r = self.r
        if kind == "D0":  # outside /memories: no deviation, both refuse alike
            return self.with_path(r.choice(["/etc/passwd", "memories/a.txt", "", "/Memories/a", "/", " /memories",
                                             "/tmp/../memories/a.txt", "//memories/a"]))
        if kind == "D1":
            return self.with_path("/memories" + r.choice(["foo/x.txt", "foo", "_bak/a.txt", "..", ".txt", "a.txt"]))
        if kind == "D2":
            rel = self.any_file() or self.new_path()
            return self.with_path(r.choice([
                f"/memories/../memories/{rel}", f"/memories/sub/../../memories/{rel}", "/memories/../memories",
                f"/memories/{rel}/../../../memories/x",
            ]))
        if kind == "D3":
            return self.with_path(r.choice([self.under_dir("a\\b.txt"), "/memories/..\\x.txt", "/memories\\x",
                                             self.under_dir("trailing\\")]))
        if kind == "D4":
            return self.with_path(self.under_dir(r.choice(
                ["%2e%2e/x", "a%2fb", "a%5cb.txt", "%252e%252e", "%00.txt", "%2E%2E%2Fetc", "%2e", "x%0a"])))
        if kind == "D5":
            return self.with_path(self.under_dir(r.choice(["a\x00b", "a\nb.txt", "t\tab", "del\x7f", "nel\u0085",
                                                            "cr\r"])))
        if kind == "D6":
            if r.random() < 0.5:
                return self.with_path(self.under_dir(r.choice(["n" * 256, "é" * 128, "x" * 300 + ".md"])))
            return self.with_path("/memories" + "/abcdefgh" * r.randint(455, 470))
        if kind == "D7":
            f = self.any_file()
            if f is None:
                return self.gen_create()
            dest = "/memories/" + f + r.choice(["/x.txt", "/sub/y.txt", "/"])
            if dest.endswith("/"):
                dest += "z"
            if r.random() < 0.5:
                return {"command": "create", "path": dest, "file_text": "t"}
            src = self.spell(self.any_file() or "a.txt")
            return {"command": "rename", "old_path": src, "new_path": dest}
        if kind == "D8":
            d = self.any_dir() or self.r.choice(DIR_NAMES)
            return {"command": "rename", "old_path": self.spell(d),
                    "new_path": "/memories/" + d + r.choice(["/x", "/sub/y", "/a/b/c"])}
        if kind == "D9":
            return {"command": "rename", "old_path": "/memories/" + self.missing(),
                    "new_path": "/memories/" + r.choice(["n1/n2/x.txt", "n1/x", "nn/a/b/c.md"])}
        if kind == "D10":
            f = self.spell(self.any_file() or "a.txt")
            return r.choice([
                {"command": "view"},
                {"command": "view", "path": 5},
                {"command": "view", "path": f, "view_range": ["1", 2]},
                {"command": "view", "path": f, "view_range": [1.5, 2]},
                {"command": "view", "path": f, "view_range": "12"},
                {"command": "view", "path": f, "view_range": [True, 2]},
                {"command": "view", "path": f, "view_range": [1.0, 2.0]},
                {"command": "create", "path": self.spell(self.new_path())},
                {"command": "create", "path": self.spell(self.new_path()), "file_text": 5},
                {"command": "create", "path": self.spell(self.new_path()), "file_text": None},
                {"command": "insert", "path": f, "insert_line": "1", "insert_text": "x"},
                {"command": "insert", "path": f, "insert_line": True, "insert_text": "x"},
                {"command": "insert", "path": f, "insert_line": False, "insert_text": "x"},
                {"command": "insert", "path": f, "insert_line": 1.5, "insert_text": "x"},
                {"command": "insert", "path": f, "insert_line": 1.0, "insert_text": "float"},
                {"command": "insert", "path": f, "insert_text": "x"},
                {"command": "insert", "path": f, "insert_line": 0},
                {"command": "str_replace", "path": f, "old_str": 5, "new_str": "q"},
                {"command": "str_replace", "path": f, "new_str": "q"},
                {"command": "delete"},
                {"command": "delete", "path": [f]},
                {"command": "rename", "old_path": f},
                {"command": "rename", "new_path": f},
                {"command": "undo", "path": f},
                {"command": "View", "path": "/memories"},
                {"command": 5},
                {"command": None, "path": "/memories"},
                {"command": True},
                {"path": "/memories"},
                [1],
                "view",
                None,
                7,
                {"command": "view", "path": "/memories", "extra": "ignored"},
            ])
        if kind == "D11":
            return {"command": "rename", "old_path": "/memories/" + self.through_file(),
                    "new_path": self.spell(self.new_path())}
        if kind == "D12":
            f = self.any_file() or "a.txt"
            content = self.files.get(f, b"").decode("utf-8", "replace")
            inp = {"command": "str_replace", "path": self.spell(f), "old_str": self.old_str(content)}
            if r.random() < 0.3:
                inp["new_str"] = None
            return inp
        if kind == "D15":
            if r.random() < 0.5:
                return {"command": "create", "path": self.spell(self.new_path()), "file_text": "lone \ud800 surrogate"}
            f = self.any_file() or "a.txt"
            return {"command": "insert", "path": self.spell(f), "insert_line": 0, "insert_text": "\udc00"}
        # D16
        f = self.spell(self.any_file() or "a.txt")
        return r.choice([
            {"command": "insert", "path": f, "insert_line": 10**20, "insert_text": "x"},
            {"command": "insert", "path": f, "insert_line": -(10**20), "insert_text": "x"},
            {"command": "view", "path": f, "view_range": [1, 10**20]},
        ])


# ---------------------------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------------------------


class Stats:
    def __init__(self) -> None:
        self.sessions = 0
        self.random_commands = 0
        self.check_views = 0
        self.identical = 0
        self.classes: Counter[str] = Counter()
        self.unexplained = 0
        self.restores = 0
        self.coverage: Counter[Tuple[str, str]] = Counter()  # (command, SDK outcome), random commands

    @property
    def compared(self) -> int:
        return self.random_commands + self.check_views


def show(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


class Session:
    def __init__(self, args: argparse.Namespace, index: int, stats: Stats) -> None:
        self.args = args
        self.index = index
        self.stats = stats
        self.rng = random.Random(f"{args.seed}/{index}")
        self.gen = Gen(self.rng)
        self.sdk = Sdk()
        self.mem = Memfs(args.memfs)
        self.broken = False
        self.log: List[str] = []  # the inputs so far, to replay a failure

    def report(self, what: str, inp: Any, sdk: Result, mem: Result) -> None:
        self.stats.unexplained += 1
        print(f"\n=== UNEXPLAINED {what} (session {self.index}, command #{len(self.log)}) ===", file=sys.stderr)
        print(f"input: {show(inp)}", file=sys.stderr)
        print(f"sdk:   is_error={sdk[1]} content={show(sdk[0])}", file=sys.stderr)
        print(f"memfs: is_error={mem[1]} content={show(mem[0])}", file=sys.stderr)
        if self.args.verbose:
            print("session inputs so far:", file=sys.stderr)
            for line in self.log:
                print("  " + line, file=sys.stderr)

    def step(self, inp: Any, checking: bool = False) -> None:
        """Send one input to both sides, compare, classify, resynchronise."""
        self.log.append(show(inp))
        mutating = not (isinstance(inp, dict) and inp.get("command") == "view")
        pre = self.sdk.snapshot() if mutating else None
        sdk = self.sdk.call(inp)
        mem = self.mem.call(inp)
        refusal = expected_refusal(inp)
        if refusal is not None and not refusal(mem):
            self.report("memfs answer where it must refuse (deviation not applied)", inp, sdk, mem)
            self.broken = True
            return
        if not checking:
            cmd = inp.get("command") if isinstance(inp, dict) else None
            self.stats.coverage[(cmd if isinstance(cmd, str) else repr(cmd)[:20], outcome(sdk))] += 1
        if sdk == mem:
            self.stats.identical += 1
            if pre is not None and sdk[1]:
                post = self.sdk.snapshot()
                if post != pre:
                    cls = classify_drift(inp, pre, post)
                    if cls is None:
                        self.report("state change by a failed SDK command", inp, sdk, mem)
                        print(f"added dirs: {sorted(post[1] - pre[1])}; files changed: "
                              f"{sorted(set(pre[0].items()) ^ set(post[0].items()))[:10]}", file=sys.stderr)
                    else:
                        # An identical answer, but a deviation in effect: counted as such.
                        self.stats.identical -= 1
                        self.stats.classes[cls] += 1
                    self.sdk.restore(pre)
                    self.stats.restores += 1
            return
        cls = classify(inp, sdk, mem, pre, self.sdk)
        if cls is None:
            self.report("difference", inp, sdk, mem)
            if not mem[1] or pre is None:
                self.broken = True  # states may differ now: stop this session
        else:
            self.stats.classes[cls] += 1
        if mem[1] and pre is not None and self.sdk.snapshot() != pre:
            # memfs refused and changed nothing: undo whatever the SDK did.
            self.sdk.restore(pre)
            self.stats.restores += 1

    def check_state(self, probe_hidden: bool = False) -> None:
        """View every directory and every file through both sides."""
        files, dirs = self.sdk.snapshot()
        paths = ["/memories"] + [f"/memories/{d}" for d in sorted(dirs)] + [f"/memories/{f}" for f in sorted(files)]
        if probe_hidden:  # a hidden file memfs has and the SDK lacks would not show in any listing
            for d in ["", *sorted(dirs)]:
                for h in HIDDEN_NAMES:
                    rel = f"{d}/{h}" if d else h
                    if rel not in files and rel not in dirs:
                        paths.append(f"/memories/{rel}")
        for p in paths:
            if self.broken:
                return
            self.stats.check_views += 1
            self.step({"command": "view", "path": p}, checking=True)

    def run(self) -> None:
        try:
            for i in range(self.args.commands):
                if self.broken:
                    return
                self.gen.observe(self.sdk.snapshot())
                inp = self.gen.command(self.args.unsafe_rate)
                self.stats.random_commands += 1
                self.step(inp)
                if (i + 1) % self.args.check_every == 0:
                    self.check_state()
            self.check_state(probe_hidden=True)
        except RuntimeError as e:  # memfs died: an unexplained failure, and the end of this session
            self.stats.unexplained += 1
            self.broken = True
            print(f"\n=== UNEXPLAINED memfs failure (session {self.index}) ===\n{e}", file=sys.stderr)
        finally:
            self.mem.close()
            self.sdk.close()
            self.stats.sessions += 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--commands", type=int, default=150, help="random commands per session")
    ap.add_argument("--memfs", default=str(REPO / "target" / "debug" / "memfs"), help="path to the memfs binary")
    ap.add_argument("--check-every", type=int, default=20, help="compare full states every N commands")
    ap.add_argument("--unsafe-rate", type=float, default=0.1, help="fraction of unsafe/malformed inputs")
    ap.add_argument("--only-session", type=int, default=None, help="run just this session index (to replay)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print a failing session's inputs")
    ap.add_argument("--coverage", action="store_true", help="print how often each SDK answer came up")
    args = ap.parse_args()
    if not os.access(args.memfs, os.X_OK):
        sys.exit(f"differential.py: {args.memfs} is not executable; run `cargo build -p memfs-cli`")

    stats = Stats()
    started = time.monotonic()
    indices = [args.only_session] if args.only_session is not None else range(args.sessions)
    for i in indices:
        Session(args, i, stats).run()
    elapsed = time.monotonic() - started

    requested = len(indices) * args.commands
    print(f"differential: seed {args.seed}, {stats.sessions} sessions x {args.commands} commands, {elapsed:.1f}s")
    print(f"  commands compared: {stats.compared} ({stats.random_commands} random + {stats.check_views} state-check views)")
    print(f"  identical:         {stats.identical}")
    print(f"  deviations:        {sum(stats.classes.values())} (SDK directory restored {stats.restores} times)")
    for cls in sorted(stats.classes, key=lambda c: (int(re.match(r"D(\d+)", c).group(1)), c)):  # type: ignore[union-attr]
        print(f"    {stats.classes[cls]:6d}  {cls}")
    print(f"  unexplained:       {stats.unexplained}")
    if args.coverage:
        print("  SDK answers to the random commands:")
        for (cmd, what), n in sorted(stats.coverage.items()):
            print(f"    {n:6d}  {cmd:12} {what}")
    if stats.unexplained or stats.random_commands < requested:
        if stats.random_commands < requested:
            print(f"  only {stats.random_commands} of {requested} random commands ran", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
