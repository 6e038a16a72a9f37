#!/usr/bin/env python3
"""Runs read_store.py on a copy of tests/fixtures/format-1 and checks its exact output, then
that damage and a wrong key are refused. A plain script: exits non-zero on failure.

Run with the Python that has blake3, xxhash and cryptography installed:
    /tmp/fmt-venv/bin/python tests/format_reader/test_read_store.py
"""
import os
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import xxhash

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "format-1")
READER = os.path.join(HERE, "read_store.py")
sys.path.insert(0, HERE)
import read_store  # noqa: E402  (its functions, to seal memfs.keys as a later writer would)

# From tests/fixtures/README.md: one session of the memory tool's commands, 6 commits.
# The README says actor `fixture`; the fixture's commits all record actor `test` (see README.md
# of this folder), so the actor expected here is what the fixture holds.
EXPECTED = """\
@6 test delete /memories/tmp.md
@5 test create /memories/tmp.md
@4 test rename /memories/projects/plan.md -> /memories/projects/roadmap.md
@3 test str_replace /memories/notes.md
@2 test create /memories/projects/plan.md
@1 test create /memories/notes.md
/memories/notes.md 12
alpha
gamma
/memories/projects/roadmap.md 9
step one
"""

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def copy_fixture(tmp):
    dst = os.path.join(tmp, "format-1")
    shutil.copytree(FIXTURE, dst)
    for root, dirs, files in os.walk(dst):  # the modes a real store has
        os.chmod(root, 0o700)
        for f in files:
            os.chmod(os.path.join(root, f), 0o600)
    return os.path.join(dst, "store"), os.path.join(dst, "store.key")


def run(store, key):
    p = subprocess.run([sys.executable, READER, store, key], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def records(seg):
    """(offset, length) of each record of a segment."""
    o, out = 16, []
    while o + 8 <= len(seg) and seg[o:o + 8] != bytes(8):
        (n,) = struct.unpack_from("<I", seg, o)
        out.append((o, n))
        o += n
    return out


def append_put(segp, path, data):
    """Appends a put of `path` to the segment, as FORMAT.md lays a record out."""
    seg = open(segp, "rb").read()
    o, n = records(seg)[-1]
    p = path.encode()
    length = 8 + 1 + 8 + 4 + len(p) + len(data) + 16
    rec = struct.pack("<IIBQI", length, ~length & 0xFFFFFFFF, 1, int(time.time() * 1000), len(p)) + p + data
    rec += xxhash.xxh3_128_digest(rec)[::-1]
    with open(segp, "r+b") as f:
        f.seek(o + n)
        f.write(rec + bytes(64))


def later_keys(raw, key, edit):
    """memfs.keys as a later writer makes it: `edit` applied, the tag made afresh."""
    ks = json.loads(raw)
    edit(ks)
    root = read_store.open_keys(raw, open(key, "rb").read()).root
    body = {k: v for k, v in ks.items() if k != "mac"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ks["mac"] = read_store.keyed(read_store.derive_key(read_store.CTX_KEYSET_AUTH, root), text).hex()
    return json.dumps(ks, indent=2).encode()


def later_fields(ks):
    ks["later"] = {"b": [1, "x"], "a": None}
    ks["slots"]["slots"][0]["later_slot_field"] = "y"
    ks["keyring"]["later_keyring_field"] = 3


def main():
    with tempfile.TemporaryDirectory() as tmp:
        store, key = copy_fixture(tmp)
        segp = os.path.join(store, "log", "0000000000000001")
        before = open(segp, "rb").read()

        rc, out, err = run(store, key)
        check(rc == 0, f"reader exits 0 (stderr: {err.strip()!r})")
        check(out == EXPECTED, "output is exactly the expected history and files")
        if out != EXPECTED:
            print("--- got:\n" + out + "--- expected:\n" + EXPECTED)
        check(open(segp, "rb").read() == before, "the store is not rewritten")

        recs = records(before)
        check(len(recs) == 7, "the segment holds 7 records (memfs.keys, 6 heads)")

        # a byte flipped in a record followed by others: an error, never skipped
        o, n = recs[2]
        bad = bytearray(before)
        bad[o + 40] ^= 1
        open(segp, "wb").write(bad)
        rc, out, err = run(store, key)
        check(rc != 0 and f"corrupt record at offset {o}" in err, "damage before the end is refused")

        # memfs.keys changed and its record checksum forged: its tag fails
        o, n = recs[0]
        bad = bytearray(before)
        i = bad.index(b'"counter": 1', o)
        bad[i + 11] = ord("2")
        bad[o + n - 16:o + n] = xxhash.xxh3_128_digest(bytes(bad[o:o + n - 16]))[::-1]
        open(segp, "wb").write(bad)
        rc, out, err = run(store, key)
        check(rc != 0 and "fail their authentication" in err, "a changed memfs.keys fails its tag")

        # a later writer's fields, sealed with the root: skipped, the store reads the same
        open(segp, "wb").write(before)
        o, n = recs[0]
        raw = before[o + 21 + len("memfs.keys"):o + n - 16]
        check(raw.startswith(b"{"), "the first record is memfs.keys")
        append_put(segp, "memfs.keys", later_keys(raw, key, later_fields))
        rc, out, err = run(store, key)
        check(rc == 0 and out == EXPECTED, f"a later writer's fields are skipped (stderr: {err.strip()!r})")

        # a feature this reader does not know: refused before anything is unlocked
        open(segp, "wb").write(before)
        append_put(segp, "memfs.keys", later_keys(raw, key, lambda ks: ks.update(requires=["zstd-pages"])))
        rc, out, err = run(store, key)
        check(rc != 0 and 'the store requires "zstd-pages", which this memfs does not know' in err,
              "a feature it does not know is refused")

        # a member repeated in one object: refused, whichever copy a parser would keep
        open(segp, "wb").write(before)
        append_put(segp, "memfs.keys", raw.replace(b"{", b'{"version": 2,', 1))
        rc, out, err = run(store, key)
        check(rc != 0 and 'the member "version" is repeated in one object' in err, "a repeated member is refused")

        # a wrong key file opens no slot
        open(segp, "wb").write(before)
        wrong = os.path.join(tmp, "wrong.key")
        with open(wrong, "wb") as f:
            f.write(bytes(32))
        rc, out, err = run(store, wrong)
        check(rc != 0 and "no key-file slot opens" in err, "a wrong key file is refused")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
