#!/usr/bin/env python3
"""Independent reader of a memfs store, on-storage format 1, written from docs/FORMAT.md alone.

Usage: read_store.py STORE_FOLDER KEY_FILE

Prints the history (newest first: `@GEN ACTOR COMMAND-NAME PATHS`) and then each file at the
head (`PATH SIZE`, then its content). Every id, tag and checksum is verified; any failure
raises ReadError and the script exits with status 1.

Needs only the standard library, blake3, xxhash and cryptography.
"""
import hmac
import json
import os
import struct
import sys

import xxhash
from blake3 import blake3
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


class ReadError(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise ReadError(msg)


# ---------------------------------------------------------------- primitives

CTX_ROOT_CHECK = "memfs v7 2026-11-26 root key check"
CTX_KEYSET_AUTH = "memfs v7 2026-11-26 key set authentication key"
CTX_EPOCH_WRAP = "memfs v7 2026-11-26 epoch key wrapping key"
CTX_ADDRESS_WRAP = "memfs v7 2026-11-26 address key wrapping key"
CTX_ROOT_TO_SLOT = "memfs v7 2026-11-26 root wrapped to a slot"
CTX_ROOT_SIGNING = "memfs v7 2026-11-26 root signing key"
CTX_SLOT_CONFIRM = "memfs v7 2026-11-26 slot root confirmation key"
CTX_KEYFILE_KEK = "memfs v1 2026-11-21 key file key-encryption key"
CTX_DATA_KEY = "memfs v7 2026-11-26 object data key"


def derive_key(context, material):
    return blake3(material, derive_key_context=context).digest()


def keyed(key, data):
    return blake3(data, key=key).digest()


def raw_public(key):
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def gcm_open(key, nonce, ciphertext, aad, what):
    try:
        return AESGCM(key).decrypt(nonce, ciphertext, aad)
    except InvalidTag:
        raise ReadError(f"{what}: fails to open (AES-256-GCM tag)")


def be32(n):
    return struct.pack(">I", n)


def unhex(s, nbytes, what):
    need(isinstance(s, str) and s == s.lower(), f"{what}: not lowercase hex")
    try:
        b = bytes.fromhex(s)
    except ValueError:
        raise ReadError(f"{what}: not hex")
    need(nbytes is None or len(b) == nbytes, f"{what}: {len(b)} bytes, expected {nbytes}")
    return b


class Reader:
    """A cursor over a binary plaintext: varints, strings, fixed-size fields."""

    def __init__(self, data, what):
        self.d, self.o, self.what = data, 0, what

    def byte(self):
        need(self.o < len(self.d), f"{self.what}: truncated")
        b = self.d[self.o]
        self.o += 1
        return b

    def take(self, n):
        need(self.o + n <= len(self.d), f"{self.what}: truncated")
        b = self.d[self.o:self.o + n]
        self.o += n
        return b

    def varint(self):
        # unsigned LEB128: seven bits a byte, low first, high bit on every byte but the last
        n, shift = 0, 0
        while True:
            b = self.byte()
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7
            need(shift < 64, f"{self.what}: varint too long")

    def skip_extensions(self):
        # a later writer's fields: count >= 1, then number (increasing), length, bytes
        n = self.varint()
        need(n >= 1, f"{self.what}: an empty list of extensions")
        last = -1
        for _ in range(n):
            num = self.varint()
            need(num > last, f"{self.what}: extensions out of order")
            last = num
            self.take(self.varint())

    def string(self):
        b = self.take(self.varint())
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            raise ReadError(f"{self.what}: string is not UTF-8")

    def end(self):
        need(self.o == len(self.d), f"{self.what}: trailing bytes")


# ---------------------------------------------------------------- 1. the log

LOG_MAGIC = b"memfslog"
OP_PUT, OP_DELETE, OP_PUT_COPIED = 1, 2, 3  # FORMAT.md, "The local folder"
OP_OBJECT_PATH = 0x80  # bit 7: the path is 32 id bytes


def read_log(store):
    """Returns {path: data} of the live records, latest record per path winning."""
    logdir = os.path.join(store, "log")
    names = sorted(n for n in os.listdir(logdir)
                   if len(n) == 16 and all(c in "0123456789abcdef" for c in n))
    need(names, f"{logdir}: no segments")
    objects = {}
    for name in names:
        path = os.path.join(logdir, name)
        with open(path, "rb") as f:
            seg = f.read()
        need(len(seg) >= 16 and seg[:8] == LOG_MAGIC, f"{path}: not a memfs log segment")
        # header layout guessed: version u32 LE at 8, flags u32 LE at 12
        version, flags = struct.unpack_from("<II", seg, 8)
        need(version == 2, f"unsupported log format version {version} (this build reads 2)")
        need(flags & ~1 == 0, f"{path}: unknown segment flags {flags:#x}")
        if flags & 1:  # compacted: supersedes every lower-numbered segment
            objects = {}
        o = 16
        while o < len(seg):
            if len(seg) - o < 8:
                break  # a torn length: a write in progress
            if seg[o:o + 8] == bytes(8):
                need(not any(seg[o:]), f"{path}: corrupt record at offset {o}: zeros followed by more data")
                break
            length, inv = struct.unpack_from("<II", seg, o)
            last = o + length >= len(seg) or not any(seg[o + length:])
            ok = inv == length ^ 0xFFFFFFFF and length >= 8 + 1 + 8 + 4 + 16 and o + length <= len(seg)
            if ok:
                rec = seg[o:o + length]
                ok = xxhash.xxh3_128_digest(rec[:-16])[::-1] == rec[-16:]  # stored little-endian
            if not ok:
                need(last, f"{path}: corrupt record at offset {o}: a damaged record followed by more data")
                break  # a write in progress: ignored by a reader
            op = rec[8]
            p = 9 + 8  # op, write time (u64 LE, ms)
            (plen,) = struct.unpack_from("<I", rec, p)
            p += 4
            kind = op & 0x7F
            need(kind in (OP_PUT, OP_DELETE, OP_PUT_COPIED) and op & ~(OP_OBJECT_PATH | 0x03) == 0,
                 f"{path}: record at {o}: unknown op {op:#x}")
            if kind == OP_PUT_COPIED:
                p += 16  # original segment and offset (guessed u64 + u64)
            rpath = rec[p:p + plen]
            p += plen
            if op & OP_OBJECT_PATH:
                need(plen == 32, f"{path}: record at {o}: object path of {plen} bytes")
                h = rpath.hex()
                key = f"objects/{h[:2]}/{h}"
            else:
                key = rpath.decode("utf-8")
                need(not key.startswith("objects/"), f"{path}: record at {o}: object path spelled out")
            data = rec[p:-16]
            if kind == OP_DELETE:
                objects.pop(key, None)
            else:
                objects[key] = data
            o += length
    return objects


# ---------------------------------------------------------------- 2. memfs.keys

SLOT_KINDS = {"passphrase": 1, "key-file": 2, "keychain": 3, "aws-kms": 4, "gcp-kms": 5,
              "azure-key-vault": 6, "age": 7}


class Keys:
    pass


def unique_members(pairs):
    names = [k for k, _ in pairs]
    for k in names:
        need(names.count(k) == 1, f'the member "{k}" is repeated in one object')
    return dict(pairs)


def open_keys(raw, key_file):
    try:
        ks = json.loads(raw, object_pairs_hook=unique_members)
    except ValueError:
        raise ReadError("memfs.keys: not JSON")
    need(ks.get("format") == "memfs", "memfs.keys: not a memfs key set")
    v = ks.get("version")
    need(v == 1, f"the store uses format version {v}, and this memfs reads format version 1 only")
    # fields this reader does not know are skipped (a later writer's); features are not
    requires = ks.get("requires", [])
    need(isinstance(requires, list), "memfs.keys: requires is not a list")
    need(not requires, "the store requires " + ", ".join(json.dumps(f) for f in requires)
         + ", which this memfs does not know: a later memfs reads it")
    sid_hex = ks["store_id"]
    need(isinstance(sid_hex, str) and len(sid_hex) == 32
         and all(c in "0123456789abcdef" for c in sid_hex),
         "its store id is not 32 lowercase hex digits")
    sid = bytes.fromhex(sid_hex)
    slots = ks["slots"]
    need(slots["version"] == 2, "memfs.keys: slot set version is not 2")
    need(1 <= len(slots["slots"]) <= 16, "memfs.keys: 1 to 16 slots")
    roots = slots["roots"]
    need(1 <= len(roots) <= 4096, "memfs.keys: 1 to 4096 roots")

    # key file: 32 raw bytes (or 64 hex digits)
    kf = key_file.strip() if len(key_file) != 32 else key_file
    if len(kf) == 64:
        kf = bytes.fromhex(kf.decode())
    need(len(kf) == 32, "key file: not 32 bytes")
    kek = derive_key(CTX_KEYFILE_KEK, kf)

    root = secret = slot = None
    for s in slots["slots"]:
        if s.get("kind") != "key-file":
            continue
        aad = b"memfs keyslot v2" + sid + bytes([SLOT_KINDS["key-file"]]) + be32(s["id"])
        try:
            secret = AESGCM(kek).decrypt(unhex(s["nonce"], 12, "slot nonce"),
                                         unhex(s["wrapped"], 48, "slot wrapped"), aad)
        except InvalidTag:
            continue
        slot = s
        break
    need(slot is not None, "no key-file slot opens with this key file")
    x = X25519PrivateKey.from_private_bytes(secret)
    public = raw_public(x)
    need(public == unhex(slot["public"], 32, "slot public"), "slot: public key does not match its secret")
    wr = unhex(slot["root"], 92, "slot root")
    eph, nonce, ct = wr[:32], wr[32:44], wr[44:]
    shared = x.exchange(X25519PublicKey.from_public_bytes(eph))
    need(any(shared), "slot: all-zero X25519 shared secret")
    wk = derive_key(CTX_ROOT_TO_SLOT, shared + eph + public)
    root = gcm_open(wk, nonce, ct, b"memfs root" + sid + be32(slot["id"]), "root wrapped to slot")

    # tag of memfs.keys, checked before the keyring is used
    body = {k: v for k, v in ks.items() if k != "mac"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    mac = keyed(derive_key(CTX_KEYSET_AUTH, root), text)
    need(hmac.compare_digest(mac, unhex(ks["mac"], 32, "mac")),
         "object memfs.keys is corrupt: the key slots fail their authentication: "
         "memfs.keys was changed by someone without the store's key")
    need(derive_key(CTX_ROOT_CHECK, root) == unhex(slots["key_check"], 32, "key_check"),
         "memfs.keys: key_check does not match the root")

    # the chain of roots: the root must be the last; the slot's tag must confirm it or an
    # earlier one from which every later link is vouched for by its predecessor.
    pubs = [unhex(r["public"], 32, "root public") for r in roots]
    mine = raw_public(Ed25519PrivateKey.from_private_bytes(derive_key(CTX_ROOT_SIGNING, root)))
    need(mine == pubs[-1], "the root this slot gives is not the chain's last")
    vouched_from = len(pubs) - 1  # lowest index from which every later link is signed
    for i in range(len(pubs) - 1, 0, -1):
        vouch = roots[i].get("vouch")
        if vouch is None:
            break
        try:
            Ed25519PublicKey.from_public_bytes(pubs[i - 1]).verify(
                unhex(vouch, 64, "vouch"), b"memfs root vouch" + sid + be32(i) + pubs[i])
        except InvalidSignature:
            break
        vouched_from = i - 1
    ck = derive_key(CTX_SLOT_CONFIRM, secret)
    tag = unhex(slot["tag"], 32, "slot tag")
    need(any(hmac.compare_digest(keyed(ck, b"memfs root tag" + sid + be32(slot["id"]) + pubs[j]), tag)
             for j in range(vouched_from, len(pubs))),
         "the key slots name a root key that this slot never confirmed")

    ring = ks["keyring"]
    a = unhex(ring["address"], 92, "keyring address")
    addr = gcm_open(derive_key(CTX_ADDRESS_WRAP, root), a[:12], a[12:],
                    b"memfs address keys" + sid, "address keys")
    k = Keys()
    k.store_id_hex, k.store_id, k.root = sid_hex, sid, root
    k.blob_key, k.tree_key = addr[:32], addr[32:]
    k.counter = ring["counter"]
    k.epochs = {}
    prev = -1
    need(1 <= len(ring["epochs"]) <= 4096, "keyring: 1 to 4096 epochs")
    for e in ring["epochs"]:
        n = e["epoch"]
        need(n > prev, "keyring: epochs not increasing")
        prev = n
        w = unhex(e["key"], 60, "epoch key")
        k.epochs[n] = gcm_open(derive_key(CTX_EPOCH_WRAP, root), w[:12], w[12:],
                               b"memfs epoch key" + sid + be32(n), f"epoch key {n}")
    return k


# ---------------------------------------------------------------- 3. sealed objects

KIND_BLOB, KIND_DIR, KIND_COMMIT, KIND_HEAD, KIND_POLICY = 1, 2, 3, 4, 5


def unseal(keys, sealed, kind, oid, what):
    need(len(sealed) >= 24 + 16 and sealed[:3] == b"MFS", f"{what}: not a sealed object")
    need(sealed[3] == 2, f"object {what} is sealed in envelope version {sealed[3]}, "
                         "and this memfs reads envelope version 2 only")
    (epoch,) = struct.unpack_from(">I", sealed, 4)
    need(epoch in keys.epochs, f"{what}: epoch {epoch} not in the keyring")
    dkey = derive_key(CTX_DATA_KEY, keys.epochs[epoch] + sealed[8:24])
    aad = b"memfs object" + bytes([2, kind]) + oid
    return gcm_open(dkey, bytes(12), sealed[24:], aad, what)


HEAD_INLINE_KINDS = {1: "commit", 2: "policy", 3: "dir", 4: "blob"}


def decode_head(pt, keys):
    r = Reader(pt, "head")
    need(r.byte() == 0x01, "head: not a head")
    flags = r.byte()
    need(flags & ~0x83 == 0, "head: unknown flag bits")
    h = {}
    if flags & 1:
        h["store_id"] = r.string()
        need(h["store_id"] == keys.store_id_hex, "the head belongs to another store")
    if flags & 2:
        h["keys"] = r.varint()
        need(h["keys"] <= keys.counter,
             f"rollback detected: memfs.keys is at change {keys.counter}, "
             f"older than change {h['keys']} that the head names")
    h["generation"] = r.varint()
    h["commit"] = r.take(32)
    n = r.varint()
    need(n <= 256 and n <= h["generation"],
         "head: it names more recent commits than there are generations before it")
    h["recent"] = [r.take(32) for _ in range(n)]
    inline = {}
    for _ in range(r.varint()):
        kb = r.byte()
        need(kb & 0x7F in HEAD_INLINE_KINDS, "Corrupt { object: \"head\" }: unknown inline kind")
        kind = HEAD_INLINE_KINDS[kb & 0x7F]
        plain = r.take(r.varint())
        oid = keyed(keys.blob_key if kind == "blob" else keys.tree_key, plain)
        inline[oid] = (kind, plain, bool(kb & 0x80))
    if flags & 0x80:
        r.skip_extensions()
    r.end()
    h["inline"] = inline
    return h


# ---------------------------------------------------------------- 4. plaintexts

CHANGE_KINDS = {1: "created", 2: "modified", 3: "deleted", 4: "renamed"}


def decode_commit(pt):
    r = Reader(pt, "commit")
    need(r.byte() == 0x03, "commit: not a commit")
    flags = r.byte()
    need(flags & ~0x87 == 0, "commit: unknown flag bits")
    c = {"parent": r.take(32) if flags & 1 else None, "tree": r.take(32)}
    c["generation"], c["time_ms"] = r.varint(), r.varint()
    c["actor"], c["command"] = r.string(), r.string()
    changes = []
    for _ in range(r.varint()):
        k = r.byte()
        need(k in CHANGE_KINDS, f"commit: unknown change kind {k}")
        if k == 4:
            changes.append(("renamed", r.string(), r.string()))
        else:
            changes.append((CHANGE_KINDS[k], r.string()))
    c["changes"] = changes
    c["files"], c["bytes"] = r.varint(), r.varint()
    c["policy"] = r.take(32) if flags & 2 else None
    c["replaced"] = []
    if flags & 4:
        n = r.varint()
        need(n >= 1, "commit: empty replaced list")
        c["replaced"] = [(r.varint(), r.take(32)) for _ in range(n)]
    if flags & 0x80:
        r.skip_extensions()
    r.end()
    return c


def decode_page(pt):
    r = Reader(pt, "directory page")
    tag = r.byte()
    if tag == 0x03:
        entries = []
        for _ in range(r.varint()):
            k = r.byte()
            need(k in (0, 1), f"leaf: unknown entry kind {k}")
            name = r.string()
            oid = r.take(32)
            a, b = r.varint(), r.varint()
            entries.append(("file" if k == 0 else "dir", name, oid, a, b))
        r.end()
        names = [e[1].encode() for e in entries]
        need(all(x < y for x, y in zip(names, names[1:])), "leaf: names not increasing")
        return ("leaf", entries)
    if tag == 0x05:
        height = r.varint()
        need(height >= 1, "index: height 0")
        count = r.varint()
        need(count >= 1, "index: no pages")
        pages, prev_low = [], b""
        for i in range(count):
            oid = r.take(32)
            leaves = r.varint() if height > 1 else 1
            need(leaves >= 1, "index: page with no leaves")
            low = None
            if i > 0:
                shared, rest = r.varint(), r.varint()
                need(shared <= len(prev_low), "index: low shares more than the previous low")
                low = prev_low[:shared] + r.take(rest)
                need(i == 1 or low > prev_low, "index: lows not increasing")
                prev_low = low
            pages.append((oid, leaves, low))
        r.end()
        return ("index", height, pages)
    raise ReadError(f"directory page: unknown tag {tag:#x}")


class Store:
    def __init__(self, folder, key_file):
        self.log = read_log(folder)
        need("memfs.keys" in self.log, "no memfs.keys")
        self.keys = open_keys(self.log["memfs.keys"], key_file)
        self.head = None
        if "head" in self.log:
            pt = unseal(self.keys, self.log["head"], KIND_HEAD, bytes(32), "head")
            self.head = decode_head(pt, self.keys)

    def get(self, oid, kind):
        """The verified plaintext of object `oid` of `kind` ("blob", "dir", "commit", "policy")."""
        if self.head and oid in self.head["inline"]:
            k, plain, _ = self.head["inline"][oid]
            need(k == kind, f"object {oid.hex()}: carried as {k}, wanted {kind}")
            return plain
        h = oid.hex()
        sealed = self.log.get(f"objects/{h[:2]}/{h}")
        need(sealed is not None, f"object {h} is missing")
        env = {"blob": KIND_BLOB, "dir": KIND_DIR, "commit": KIND_COMMIT, "policy": KIND_POLICY}[kind]
        pt = unseal(self.keys, sealed, env, oid, h)
        expect = keyed(self.keys.blob_key if kind == "blob" else self.keys.tree_key, pt)
        need(hmac.compare_digest(expect, oid), f"object {h}: content does not match its id")
        return pt

    def commit(self, oid):
        c = decode_commit(self.get(oid, "commit"))
        if c["policy"] is not None:
            pol = json.loads(self.get(c["policy"], "policy"))
            need(isinstance(pol, dict), "policy: not an object")
        return c

    def history(self):
        out = []
        if self.head is None:
            return out
        oid, gen = self.head["commit"], self.head["generation"]
        while oid is not None:
            c = self.commit(oid)
            need(c["generation"] == gen, f"commit {oid.hex()}: generation {c['generation']}, expected {gen}")
            out.append((oid, c))
            oid, gen = c["parent"], gen - 1
        need(gen == 0, "history: the first commit is not at generation 1")
        # recent[i] is the commit at generation generation - 1 - i
        for i, rid in enumerate(self.head["recent"]):
            need(rid == out[i + 1][0], f"head: recent[{i}] is not the commit its parents lead to")
        return out

    def directory(self, oid):
        """All entries of a directory (its top page `oid`), in name order."""
        entries, level, height = [], [(oid, None, None)], None
        while True:  # breadth-first, level by level
            decoded = [(decode_page(self.get(p, "dir")), lo, hi) for p, lo, hi in level]
            kinds = {d[0][0] for d in decoded}
            need(len(kinds) == 1, "directory: pages of one level of different kinds")
            if "leaf" in kinds:
                need(height in (None, 1), "directory: a leaf below an index page of height > 1")
                for (_, ents), lo, hi in decoded:
                    for e in ents:
                        n = e[1].encode()
                        need(lo is None or n >= lo, "directory: name below its page's low")
                        need(hi is None or n < hi, "directory: name at or past the next page's low")
                    entries.extend(ents)
                names = [e[1].encode() for e in entries]
                need(all(x < y for x, y in zip(names, names[1:])), "directory: names not increasing across leaves")
                return entries
            hs = {d[0][1] for d in decoded}
            need(len(hs) == 1, "directory: index pages of one level at different heights")
            h = hs.pop()
            need(height is None or h == height - 1, "directory: index page at the wrong height")
            height = h
            nxt = []
            for (_, _, pages), lo, hi in decoded:
                for i, (pid, _leaves, low) in enumerate(pages):
                    plo = lo if i == 0 else low
                    phi = pages[i + 1][2] if i + 1 < len(pages) else hi
                    if i > 0:
                        need(lo is None or low > lo, "index: low not above its page's bound")
                        need(hi is None or low < hi, "index: low not below its page's bound")
                    nxt.append((pid, plo, phi))
            level = nxt

    def files(self, tree, prefix="/memories"):
        """[(path, size, content)] under the tree, depth-first in name order; checks totals."""
        out = []
        total_files = total_bytes = 0
        for kind, name, oid, a, b in self.directory(tree):
            path = f"{prefix}/{name}"
            if kind == "file":
                content = self.get(oid, "blob")
                need(len(content) == a, f"{path}: size {a} recorded, content is {len(content)} bytes")
                out.append((path, a, content))
                total_files, total_bytes = total_files + 1, total_bytes + a
            else:
                sub, f, by = self.files(oid, path)
                need((f, by) == (a, b), f"{path}: totals {a} files, {b} bytes recorded; {f}, {by} found")
                out.extend(sub)
                total_files, total_bytes = total_files + f, total_bytes + by
        return out, total_files, total_bytes


def command_name(text):
    try:
        return json.loads(text).get("command", "?")
    except (ValueError, AttributeError):
        return "?"


def render(folder, key_file):
    st = Store(folder, key_file)
    lines = []
    hist = st.history()
    for oid, c in hist:
        paths = []
        for ch in c["changes"]:
            paths.append(f"{ch[1]} -> {ch[2]}" if ch[0] == "renamed" else ch[1])
        lines.append(" ".join([f"@{c['generation']}", c["actor"], command_name(c["command"])] + paths))
    if hist:
        head_commit = hist[0][1]
        files, nf, nb = st.files(head_commit["tree"])
        need((nf, nb) == (head_commit["files"], head_commit["bytes"]),
             "head commit: tree totals do not match")
        for path, size, content in files:
            lines.append(f"{path} {size}")
            text = content.decode("utf-8", errors="replace")
            lines.append(text[:-1] if text.endswith("\n") else text)
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) != 3:
        print("usage: read_store.py STORE_FOLDER KEY_FILE", file=sys.stderr)
        return 2
    with open(argv[2], "rb") as f:
        key_file = f.read()
    try:
        sys.stdout.write(render(argv[1], key_file))
    except ReadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
