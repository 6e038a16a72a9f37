#!/usr/bin/env python3
"""Find module cycles in the workspace's crates: module A uses module B and B uses A.

Usage:
    python3 scripts/module-cycles.py             # every crate under crates/, and fuzz/
    python3 scripts/module-cycles.py DIR...      # these crate folders only (each has src/)
    python3 scripts/module-cycles.py --self-test # check the checker on fixture text
    python3 scripts/module-cycles.py --edges DIR # list every edge of these crates (to see why)

Prints one line per cycle, `crate: a -> b -> a`, and exits 1 if there is any (0 if none,
2 on a usage error or a failed self-test). Python 3.11, standard library only.

What counts as "module A uses module B" (the rules the house style means by "no cycles"):
- A path that names an item of B from inside A, in a `use` or anywhere in the code:
  `use crate::b::X`, `crate::b::f()`, `super::b::X`, `self::b::X`, `super::X` (the parent),
  `use b::X` in a `use` where `b` is a child of A. The path is followed down the module tree as
  far as it names modules; if the next name is one that module itself imports (`pub use
  c::X`, or a private `use` a child reaches with `super::X`), the edge goes to where the name
  comes from, so `crate::Error` re-exported by lib.rs from `error.rs` is a use of `error`.
- A child using its parent (or any ancestor) counts: `super::Thing` in `a/b.rs` is an edge
  `a::b -> a`.
- A parent declaring a child (`mod b;`) is not a use, and neither is a parent (or ancestor)
  naming its own descendants' items: a module's children are its implementation, the parent is
  their facade (lib.rs re-exports, `encrypted.rs` calling `gc::run`). Counting those would make
  every child that uses a type of its parent a "cycle"; what the rule forbids is two peers
  (or a child and some other module's subtree) that need each other.
- Test code is left out: a module or item under `#[cfg(test)]` (or `#[cfg(all(test, ...))]`)
  may use anything. `#[cfg(any(test, ...))]` code is built without tests too, so it counts.
- Comments (including doc comments and their intra-doc links), string and char literals, and
  `$crate` paths inside `macro_rules!` are not uses.

Each cycle printed is a shortest cycle through one edge that lies on a cycle; every such edge
is shown in at least one line, the same cycle once.
"""

from __future__ import annotations

import re
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

# ---------------------------------------------------------------------------------------------
# Lexing: Rust source to a list of tokens with comments and literals removed.

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RAW_STRING = re.compile(r'b?r(#*)"')


def tokens(text: str) -> list[str]:
    """Identifiers, `::`, and single punctuation characters; no comments, strings or chars."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif (m := _RAW_STRING.match(text, i)) and (i == 0 or not _ident_char(text[i - 1])):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            i = n if j < 0 else j + len(end)
            out.append('"')
        elif c == '"' or (c == "b" and text.startswith('b"', i) and (i == 0 or not _ident_char(text[i - 1]))):
            i += 2 if c == "b" else 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('"')
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a, 'static).
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:])
            if m:
                i += m.end()
                out.append('"')
            else:
                m = _IDENT.match(text, i + 1)
                i = m.end() if m else i + 1
        elif c == "b" and text.startswith("b'", i) and (i == 0 or not _ident_char(text[i - 1])):
            m = re.match(r"b'(\\(x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:])
            i += m.end() if m else 2
            out.append('"')
        elif m := _IDENT.match(text, i):
            out.append(m.group())
            i = m.end()
        elif c.isdigit():
            m = re.match(r"[0-9][0-9A-Za-z_.]*", text[i:])
            i += m.end()
            out.append("0")
        elif text.startswith("::", i):
            out.append("::")
            i += 2
        else:
            out.append(c)
            i += 1
    return out


def _ident_char(c: str) -> bool:
    return c.isalnum() or c == "_"


# ---------------------------------------------------------------------------------------------
# The module tree and what each module names.


@dataclass
class Module:
    path: tuple[str, ...]  # () is the crate root
    children: set[str] = field(default_factory=set)
    # Names this module binds with `use`: name -> absolute path tuple (already resolved start).
    imports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Paths (absolute tuples) this module names.
    refs: list[tuple[str, ...]] = field(default_factory=list)


class Crate:
    def __init__(self, name: str):
        self.name = name
        self.modules: dict[tuple[str, ...], Module] = {}

    def module(self, path: tuple[str, ...]) -> Module:
        if path not in self.modules:
            self.modules[path] = Module(path)
        return self.modules[path]


def _skip_group(toks: list[str], i: int) -> int:
    """toks[i] opens a (), [] or {} group; return the index after its close."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[toks[i]]]
    i += 1
    while i < len(toks) and stack:
        t = toks[i]
        if t in pairs:
            stack.append(pairs[t])
        elif t == stack[-1]:
            stack.pop()
        i += 1
    return i


def _skip_item(toks: list[str], i: int) -> int:
    """Skip one item starting at toks[i] (after its attributes): to its `;` or its body's `}`."""
    while i < len(toks):
        t = toks[i]
        if t == ";":
            return i + 1
        if t == "{":
            return _skip_group(toks, i)
        if t in "([":
            i = _skip_group(toks, i)
            continue
        i += 1
    return i


def _is_test_cfg(attr: list[str]) -> bool:
    """`#[cfg(test)]` or `#[cfg(all(test, ...))]`; attr is the tokens inside `#[...]`."""
    if attr[:2] != ["cfg", "("]:
        return False
    inner = attr[2:-1]
    if inner == ["test"]:
        return True
    return inner[:2] == ["all", "("] and "test" in inner and "not" not in inner


def _parse_use_tree(toks: list[str], i: int, prefix: list[str]) -> tuple[int, list[tuple[list[str], str | None]]]:
    """Parse a use tree from toks[i]; return (index after it, [(path, bound name or None)])."""
    out: list[tuple[list[str], str | None]] = []
    path = list(prefix)
    while i < len(toks):
        t = toks[i]
        if t == "{":
            i += 1
            while i < len(toks) and toks[i] != "}":
                i, sub = _parse_use_tree(toks, i, path)
                out.extend(sub)
                if i < len(toks) and toks[i] == ",":
                    i += 1
            return i + 1, out
        if t == "*":
            out.append((path, None))
            return i + 1, out
        if t == "::":
            i += 1
            continue
        if _IDENT.fullmatch(t) or t == "$":
            if t == "$":  # $crate in a macro: not a use of this module's
                i += 1
                continue
            path.append(t)
            i += 1
            if i + 1 < len(toks) and toks[i] == "as":
                out.append((path, toks[i + 1]))
                return i + 2, out
            if i < len(toks) and toks[i] == "::":
                continue
            name = path[-1] if path[-1] != "self" else (path[-2] if len(path) > 1 else None)
            if path[-1] == "self":
                path = path[:-1]
            out.append((path, name))
            return i, out
        return i, out
    return i, out


def _absolute(segs: list[str], here: tuple[str, ...], crate: Crate, in_use: bool) -> tuple[str, ...] | None:
    """An in-crate path as an absolute tuple, or None if it points outside the crate."""
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        return tuple(segs[1:])
    if head in ("self", "super"):
        base = list(here)
        k = 0
        while k < len(segs) and segs[k] in ("self", "super"):
            if segs[k] == "super":
                if not base:
                    return None
                base.pop()
            k += 1
        return tuple(base) + tuple(segs[k:])
    if in_use and head in crate.module(here).children:
        return here + tuple(segs)
    return None


class Disk:
    """Child module files on disk: `a.rs` with `mod b;` has `a/b.rs` (or `a/b/mod.rs`)."""

    def child(self, folder: Path, name: str) -> tuple[str, Path] | None:
        for file in (folder / f"{name}.rs", folder / name / "mod.rs"):
            if file.is_file():
                return file.read_text(encoding="utf-8"), folder / name
        return None


class Fixture:
    """Child module files from a dict {"a.rs": text, "a/b.rs": text}, for the self-test."""

    def __init__(self, files: dict[str, str]):
        self.files = files

    def child(self, folder: str, name: str) -> tuple[str, str] | None:
        key = f"{folder}/{name}" if folder else name
        text = self.files.get(f"{key}.rs")
        return None if text is None else (text, key)


def parse_file(crate: Crate, source, text: str, here: tuple[str, ...], child_dir) -> None:
    """Read one file's tokens into the crate's modules; follow `mod x;` into child files."""
    toks = tokens(text)
    _parse_items(crate, source, toks, 0, len(toks), here, child_dir)


def _parse_items(crate: Crate, source, toks: list[str], i: int, end: int, here: tuple[str, ...], child_dir) -> None:
    mod = crate.module(here)
    uses: list[tuple[list[str], str | None]] = []  # resolved at the end: a `mod` may come later
    while i < end:
        t = toks[i]
        # Attributes: note #[cfg(test)] and #[path = "..."], then look at the item.
        if t == "#" and i + 1 < end and toks[i + 1] in ("[", "!"):
            j = i + 1 if toks[i + 1] == "[" else i + 2
            if j < end and toks[j] == "[":
                close = _skip_group(toks, j)
                attr = toks[j + 1 : close - 1]
                if _is_test_cfg(attr) and toks[i + 1] == "[":
                    k = close
                    while k < end and toks[k] == "#":  # further attributes of the same item
                        k = _skip_group(toks, k + 1)
                    i = _skip_item(toks, k)
                    continue
                # Paths inside attributes (#[from] crate::X is in the field, not here) are rare;
                # only `#[path]` matters and files here do not use it.
                i = close
                continue
        if t == "macro_rules" and i + 1 < end and toks[i + 1] == "!":
            # A macro body names `$crate` paths resolved where the macro is used: skip it.
            i = _skip_item(toks, i + 2)
            continue
        if t == "pub" and i + 1 < end and toks[i + 1] == "(":
            i = _skip_group(toks, i + 1)  # pub(crate), pub(super), pub(in path): visibility only
            continue
        if t == "mod" and i + 2 < end and _IDENT.fullmatch(toks[i + 1]):
            name = toks[i + 1]
            if toks[i + 2] == ";":
                mod.children.add(name)
                found = source.child(child_dir, name)
                if found is not None:
                    parse_file(crate, source, found[0], here + (name,), found[1])
                i += 3
                continue
            if toks[i + 2] == "{":
                mod.children.add(name)
                close = _skip_group(toks, i + 2)
                sub_dir = child_dir / name if isinstance(child_dir, Path) else f"{child_dir}/{name}".lstrip("/")
                _parse_items(crate, source, toks, i + 3, close - 1, here + (name,), sub_dir)
                i = close
                continue
        if t == "use":
            k, tree = _parse_use_tree(toks, i + 1, [])
            uses.extend(tree)
            i = k
            continue
        if t in ("crate", "self", "super") and i + 1 < end and toks[i + 1] == "::" and not (i > 0 and toks[i - 1] in ("::", "$")):
            segs = [t]
            k = i + 1
            while k + 1 < end and toks[k] == "::" and _IDENT.fullmatch(toks[k + 1]):
                segs.append(toks[k + 1])
                k += 2
            absolute = _absolute(segs, here, crate, in_use=False)
            if absolute is not None:
                mod.refs.append(absolute)
            i = k
            continue
        i += 1
    for segs, name in uses:
        absolute = _absolute(segs, here, crate, in_use=True)
        if absolute is None:
            continue
        mod.refs.append(absolute)
        if name is not None:
            mod.imports[name] = absolute


# ---------------------------------------------------------------------------------------------
# From paths to module edges.


def resolve(crate: Crate, path: tuple[str, ...], seen: frozenset = frozenset()) -> tuple[str, ...] | None:
    """The module an absolute path's item lives in (following `use` re-exports)."""
    here: tuple[str, ...] = ()
    k = 0
    while k < len(path) and path[k] in crate.module(here).children:
        here = here + (path[k],)
        k += 1
    if k < len(path):
        name = path[k]
        target = crate.module(here).imports.get(name)
        key = (here, name)
        if target is not None and key not in seen:
            deeper = resolve(crate, target + path[k + 1 :], seen | {key})
            if deeper is not None:
                return deeper
    return here


def edges(crate: Crate) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in crate.modules}
    for user, mod in crate.modules.items():
        for ref in mod.refs:
            target = resolve(crate, ref)
            if target is None or target == user:
                continue
            if target[: len(user)] == user:
                continue  # a module naming its own descendants: not an edge (see the docstring)
            graph[user].add(target)
            # Seen from their common parent, the user's subtree uses the target's: a::x -> b::y
            # is also a -> b, so a ring through a child and its parent's peer is found.
            common = 0
            while common < min(len(user), len(target)) and user[common] == target[common]:
                common += 1
            if common < len(target):
                graph[user[: common + 1]].add(target[: common + 1])
    return graph


def cycles(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    """A shortest cycle through each edge that lies on a cycle, each cycle once."""
    found: list[list[tuple[str, ...]]] = []
    keys: set[tuple] = set()
    for u in sorted(graph):
        for v in sorted(graph[u]):
            back = _shortest(graph, v, u)
            if back is None:
                continue
            cycle = [u] + back  # u -> v ... -> u
            ring = cycle[:-1]
            start = ring.index(min(ring))
            canon = tuple(ring[start:] + ring[:start])
            if canon not in keys:
                keys.add(canon)
                found.append(list(canon) + [canon[0]])
    return sorted(found, key=lambda c: (len(c), c))


def _shortest(graph, start, goal):
    prev = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            out = []
            while node is not None:
                out.append(node)
                node = prev[node]
            return out[::-1]
        for nxt in sorted(graph.get(node, ())):
            if nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    return None


def _name(path: tuple[str, ...]) -> str:
    return "::".join(path) if path else "crate"


# ---------------------------------------------------------------------------------------------
# Crates on disk.


def load_crate(folder: Path) -> list[Crate]:
    """The library and binary roots of a crate folder (src/lib.rs, src/main.rs)."""
    out = []
    name = folder.name
    for root in ("lib.rs", "main.rs"):
        file = folder / "src" / root
        if file.is_file():
            crate = Crate(name if root == "lib.rs" else f"{name} (bin)")
            parse_file(crate, Disk(), file.read_text(encoding="utf-8"), (), folder / "src")
            out.append(crate)
    return out


def report(crates: list[Crate]) -> list[str]:
    lines = []
    for crate in crates:
        for cycle in cycles(edges(crate)):
            lines.append(f"{crate.name}: " + " -> ".join(_name(m) for m in cycle))
    return lines


# ---------------------------------------------------------------------------------------------
# Self-test: fixture crates in memory, with the cycles they must (and must not) show.


def _fixture(files: dict[str, str]) -> Crate:
    crate = Crate("fixture")
    parse_file(crate, Fixture(files), files["lib.rs"], (), "")
    return crate


SELF_TESTS: list[tuple[str, dict[str, str], list[str]]] = [
    (
        "two peers through use and a re-export at the root",
        {
            "lib.rs": "mod error; mod slot; pub use error::Error; pub use slot::Slot;",
            "error.rs": "use crate::slot::SlotId; pub enum Error { NoSlot(SlotId) }",
            "slot.rs": "pub struct SlotId; fn f() -> Result<(), crate::Error> { Ok(()) }",
        },
        ["fixture: error -> slot -> error"],
    ),
    (
        "a full path in code, and super:: between siblings",
        {
            "lib.rs": "mod access; mod exec;",
            "access.rs": "fn f(r: &dyn super::exec::Resolver) {}",
            "exec.rs": "fn g() { let a = crate::access::Access::new(); }",
        },
        ["fixture: access -> exec -> access"],
    ),
    (
        "a child using its parent and the parent calling the child is no cycle",
        {
            "lib.rs": "mod encrypted;",
            "encrypted.rs": "mod gc; pub struct Repo; fn f() { gc::run(); self::gc::run(); }",
            "encrypted/gc.rs": "use super::Repo; pub fn run() {}",
        },
        [],
    ),
    (
        "a child using a sibling that uses the child's parent",
        {
            "lib.rs": "mod a; mod b;",
            "a.rs": "mod inner; pub struct A;",
            "a/inner.rs": "use crate::b::B;",
            "b.rs": "pub struct B(crate::a::A);",
        },
        ["fixture: a -> b -> a"],
    ),
    (
        "test modules, comments, strings and doc links are not uses",
        {
            "lib.rs": "mod x; mod y;",
            "x.rs": 'use crate::y::Y; /// See [`crate::x::X`].\npub struct X;',
            "y.rs": (
                "pub struct Y; // crate::x::X\n"
                "/* crate::x::X */ const S: &str = \"crate::x::X\"; const R: &str = r#\"crate::x::X\"#;\n"
                "fn f<'a>(c: char) -> bool { c == '\"' }\n"
                "#[cfg(test)]\nmod tests { use crate::x::X; }\n"
                "#[cfg(test)]\nfn helper() { crate::x::X; }\n"
                "#[cfg(all(test, feature = \"slow\"))]\nuse crate::x::X;\n"
            ),
        },
        [],
    ),
    (
        "code built outside tests (cfg(any(test, ..))) counts, and use groups with self",
        {
            "lib.rs": "mod x; mod y;",
            "x.rs": "use crate::{y::{self, Y}, x as _};",
            "y.rs": "#[cfg(any(test, feature = \"fuzzing\"))]\npub fn f() -> crate::x::X { todo!() }",
        },
        ["fixture: x -> y -> x"],
    ),
    (
        "a re-export written before the `mod` it names",
        {
            "lib.rs": "pub use error::Error; mod error; mod slot;",
            "error.rs": "use crate::slot::SlotId; pub struct Error;",
            "slot.rs": "pub struct SlotId; fn f() -> crate::Error { todo!() }",
        },
        ["fixture: error -> slot -> error"],
    ),
    (
        "a three-module ring is printed once",
        {
            "lib.rs": "mod a; mod b; mod c;",
            "a.rs": "use crate::b::B;",
            "b.rs": "use crate::c::C;",
            "c.rs": "use crate::a::A;",
        },
        ["fixture: a -> b -> c -> a"],
    ),
]


def self_test() -> int:
    failed = 0
    for title, files, want in SELF_TESTS:
        got = report([_fixture(files)])
        if got != want:
            failed += 1
            print(f"self-test FAILED: {title}\n  want: {want}\n  got:  {got}")
    if failed:
        return 2
    print(f"self-test: {len(SELF_TESTS)} fixtures give the cycles they should")
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--self-test"]:
        return self_test()
    if argv[:1] == ["--edges"] and len(argv) > 1:
        for crate in (c for f in argv[1:] for c in load_crate(Path(f))):
            for user, targets in sorted(edges(crate).items()):
                for target in sorted(targets):
                    print(f"{crate.name}: {_name(user)} -> {_name(target)}")
        return 0
    if any(a.startswith("-") for a in argv):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if argv:
        folders = [Path(a) for a in argv]
    else:
        repo = Path(__file__).resolve().parent.parent
        folders = sorted(p for p in (repo / "crates").iterdir() if (p / "src").is_dir())
        if (repo / "fuzz" / "src").is_dir():
            folders.append(repo / "fuzz")
    crates = [c for f in folders for c in load_crate(f)]
    if not crates:
        print("no crate found (a folder with src/lib.rs or src/main.rs)", file=sys.stderr)
        return 2
    lines = report(crates)
    for line in lines:
        print(line)
    if lines:
        print(f"{len(lines)} module cycles in {len({l.split(':')[0] for l in lines})} crates")
        return 1
    print(f"no module cycles in {len(crates)} crates")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
