#!/usr/bin/env python3
"""A seeded fault-injecting HTTP/1.1 proxy for the tests, on 127.0.0.1 only:

    python3 scripts/faultproxy.py --upstream http://127.0.0.1:PORT --seed N
        [--listen 127.0.0.1:0] [--rate-reset-before P] [--rate-reset-after P]
        [--rate-truncate P] [--rate-503 P] [--rate-500 P]
        [--latency-ms MAX] [--rate-latency P] [--stats FILE] [--port-file FILE]

It sits between memfs (object_store's HTTP client) and an emulator (moto for S3, Azurite for
Azure blob) and makes the failures real storage services have, at chosen rates, so that the
tests see memfs survive them. For each request on a client connection (several per connection
when the client keeps it alive) it draws one fault, or none, from random.Random(N): the faults
depend only on the seed and the order in which requests arrive.

    reset-before  The client connection is reset (SO_LINGER 0: the client reads ECONNRESET)
                  and the request is not forwarded: it never takes effect.
    reset-after   The request is forwarded whole and the emulator's answer read whole, then
                  the client connection is reset with nothing sent: the request took effect
                  and its answer is lost.
    truncate      As reset-after, but the status line, the headers (unchanged: Content-Length
                  still promises the whole body) and about half the body are sent before the
                  reset. Only for answers with a body of 2 bytes or more; any other answer is
                  sent whole, and counted as no fault.
    503, 500      The proxy answers itself, and the emulator never sees the request: status
                  503 with S3's error body (<Error><Code>SlowDown</Code>...) or 500 with code
                  InternalError; for Azure requests (those with an x-ms-version header) Azure's
                  codes ServerBusy and InternalError, also in the x-ms-error-code header. The
                  connection is kept alive (Connection: keep-alive, a correct Content-Length,
                  no body for a HEAD).
    latency       A random 0 to --latency-ms ms wait before the request is forwarded; then it
                  is forwarded as without a fault.

Rates are probabilities between 0 and 1, summing to at most 1. The five failures default to
0.035 each; latency is off unless --rate-latency is given (--latency-ms defaults to 100).

Everything else is forwarded byte for byte: the request line and headers as received (Host
too, which AWS SigV4 signs), request bodies (Content-Length or chunked; Expect: 100-continue
is forwarded and the emulator's 100 Continue relayed), and answers (Content-Length, chunked,
or until the emulator closes; none for HEAD, 1xx, 204 and 304). Each client connection has one
emulator connection of its own, opened at its first forwarded request and opened again if the
emulator closed it. Requests and answers are held whole in memory on their way through.

It listens on 127.0.0.1 only and forwards only to http://127.0.0.1:PORT or
http://localhost:PORT (anything else: exit status 2 and a message). Once listening it writes
the port to --port-file if given (a whole line, written atomically) and then prints exactly
one line to stdout:

    faultproxy: listening on http://127.0.0.1:PORT

It runs until SIGTERM or SIGINT, then writes its counts to --stats if given (JSON, written
atomically) and exits 0:

    {"seed": N, "requests": TOTAL,
     "faults": {"reset_before": n, "reset_after": n, "truncate": n, "503": n, "500": n,
                "latency": n, "none": n},
     "by_method": {"GET": {"requests": n, "faults": {...as above...}}, ...},
     "upstream_errors": n,
     "sequence": [["GET", "none"], ["PUT", "reset_after"], ...]}

`sequence` is each request's method and fault in the order the requests arrived.
`upstream_errors` counts requests the emulator failed to answer (refused the connection,
closed it mid-answer, sent something that is not HTTP/1.1): the client connection is then
reset. Messages go to stderr. Standard library only; Linux (it reads a socket's unacknowledged
byte count before a truncating reset).
"""

import argparse
import asyncio
import contextlib
import dataclasses
import fcntl
import json
import os
import random
import signal
import socket
import struct
import sys
import termios
import urllib.parse
from pathlib import Path

# The fault kinds, in the order a draw tries them, and their names in the stats.
RESET_BEFORE, RESET_AFTER, TRUNCATE = "reset_before", "reset_after", "truncate"
ERROR_503, ERROR_500, LATENCY, NONE = "503", "500", "latency", "none"
FAULTS = (RESET_BEFORE, RESET_AFTER, TRUNCATE, ERROR_503, ERROR_500, LATENCY)
DEFAULT_RATE = 0.035
DEFAULT_LATENCY_MS = 100.0

LOOPBACK = "127.0.0.1"
UPSTREAM_HOSTS = ("127.0.0.1", "localhost")
# The longest request or response head (start line and headers) this proxy reads.
MAX_HEAD = 1 << 20
# How long a truncated answer may take to reach the client before the reset.
FLUSH_TIMEOUT = 5.0

# How a message's body ends, besides a Content-Length (an int).
CHUNKED, UNTIL_CLOSE = "chunked", "until-close"

# The error answers of this proxy's own: (code, message) by status, for S3 and Azure.
S3_ERRORS = {
    503: ("SlowDown", "Please reduce your request rate."),
    500: ("InternalError", "We encountered an internal error. Please try again."),
}
AZURE_ERRORS = {
    503: ("ServerBusy", "The server is busy."),
    500: ("InternalError", "The server encountered an internal error. Please retry the request."),
}
REASONS = {503: "Slow Down", 500: "Internal Server Error"}


def say(message: str) -> None:
    print(f"faultproxy: {message}", file=sys.stderr, flush=True)


# --- HTTP/1.1 messages -----------------------------------------------------------------------


@dataclasses.dataclass
class Head:
    """A request's or response's start line and headers, with the bytes they came as."""

    raw: bytes
    start: list[str]  # request: method, target, version; response: version, status, reason
    headers: dict[str, str]  # lower-case names; a repeated header's values joined with ", "

    @property
    def method(self) -> str:
        return self.start[0]

    @property
    def status(self) -> int:
        return int(self.start[1])

    @property
    def version(self) -> str:
        """The HTTP version: a response's first word, a request's third (none for HTTP/0.9)."""
        if self.start[0].startswith("HTTP/"):
            return self.start[0]
        return self.start[2] if len(self.start) > 2 else ""

    def has_token(self, name: str, token: str) -> bool:
        """Whether header `name` lists `token` (case-insensitive), as Connection: close does."""
        return token in (t.strip().lower() for t in self.headers.get(name, "").split(","))


@dataclasses.dataclass
class Response:
    head: Head
    body: bytes  # as it came: with its chunked framing, if any
    payload: int  # the body's length without that framing
    framing: int | str


async def read_head(reader: asyncio.StreamReader) -> Head | None:
    """The next message head on `reader`; None if the peer closed before sending one."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if e.partial.strip(b"\r\n"):
            raise
        return None
    # A client may send an empty line between requests (RFC 9112, 2.2); it is not forwarded.
    return parse_head(raw.lstrip(b"\r\n"))


def parse_head(raw: bytes) -> Head:
    lines = raw.decode("latin-1").split("\r\n")
    start = lines[0].split(" ", 2)
    if len(start) < 2 or not lines[0].isprintable():
        raise ValueError(f"not an HTTP/1.1 start line: {lines[0][:100]!r}")
    headers: dict[str, str] = {}
    for line in filter(None, lines[1:]):
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"not a header line: {line[:100]!r}")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return Head(raw, start, headers)


def request_framing(request: Head) -> int | str:
    """How the request's body ends: chunked, or after Content-Length bytes (0 without one)."""
    if "transfer-encoding" in request.headers:
        if not request.has_token("transfer-encoding", "chunked"):
            raise ValueError(f"unsupported Transfer-Encoding {request.headers['transfer-encoding']!r}")
        return CHUNKED
    return content_length(request)


def response_framing(method: str, response: Head) -> int | str:
    """How the response to a `method` request ends (RFC 9112, 6.3)."""
    if method == "HEAD" or response.status in (204, 304) or response.status < 200:
        return 0
    if "transfer-encoding" in response.headers:
        return CHUNKED if response.has_token("transfer-encoding", "chunked") else UNTIL_CLOSE
    if "content-length" in response.headers:
        return content_length(response)
    return UNTIL_CLOSE


def content_length(head: Head) -> int:
    value = head.headers.get("content-length", "0")
    if not value.isdigit():
        raise ValueError(f"bad Content-Length {value!r}")
    return int(value)


def keeps_alive(head: Head) -> bool:
    """Whether the sender of `head` means to keep the connection open after this message."""
    if head.has_token("connection", "close"):
        return False
    return head.version == "HTTP/1.1" or head.has_token("connection", "keep-alive")


async def read_body(reader: asyncio.StreamReader, framing: int | str) -> tuple[bytes, int]:
    """A message body as it comes, and its length without chunked framing."""
    if framing == CHUNKED:
        return await read_chunked(reader)
    if framing == UNTIL_CLOSE:
        body = await reader.read()
        return body, len(body)
    return await reader.readexactly(framing), framing


async def read_chunked(reader: asyncio.StreamReader) -> tuple[bytes, int]:
    """A chunked body, its chunks and trailers as they come, and its length unchunked."""
    parts, payload = [], 0
    while True:
        line = await reader.readuntil(b"\r\n")
        parts.append(line)
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size < 0:
            raise ValueError(f"bad chunk size line {line[:100]!r}")
        if size == 0:
            break
        parts.append(await reader.readexactly(size + 2))
        payload += size
    while True:  # the trailer fields, up to the empty line
        line = await reader.readuntil(b"\r\n")
        parts.append(line)
        if line == b"\r\n":
            return b"".join(parts), payload


def error_response(request: Head, status: int, keep_alive: bool) -> bytes:
    """The proxy's own 503 or 500 answer to `request`, as S3 or Azure (x-ms-version) words it."""
    azure = "x-ms-version" in request.headers
    code, message = (AZURE_ERRORS if azure else S3_ERRORS)[status]
    body = f"<Error><Code>{code}</Code><Message>{message}</Message></Error>"
    if azure:
        body = '<?xml version="1.0" encoding="utf-8"?>' + body
    lines = [f"HTTP/1.1 {status} {REASONS[status]}", "Content-Type: application/xml"]
    lines += [f"Content-Length: {len(body)}", f"Connection: {'keep-alive' if keep_alive else 'close'}"]
    if azure:
        lines.append(f"x-ms-error-code: {code}")
    head = "".join(f"{line}\r\n" for line in lines) + "\r\n"
    return (head if request.method == "HEAD" else head + body).encode()


# --- faults --------------------------------------------------------------------------------


class Faults:
    """The seeded draws, and what each request got, in the order the requests came."""

    def __init__(self, seed: int, rates: dict[str, float], latency_ms: float):
        self.seed = seed
        self.rates = rates
        self.latency_ms = latency_ms
        self.rng = random.Random(seed)
        self.log: list[tuple[str, str]] = []  # (method, fault) per request
        self.upstream_errors = 0

    def draw(self, method: str) -> tuple[int, str, float]:
        """The request's index in the log, its fault, and its delay in seconds (for latency).

        One draw per request picks the fault, and a second the delay, only for latency: the
        sequence of faults depends on the seed and the order of requests alone."""
        roll, fault = self.rng.random(), NONE
        for kind in FAULTS:
            if roll < self.rates[kind]:
                fault = kind
                break
            roll -= self.rates[kind]
        delay = self.rng.uniform(0, self.latency_ms) / 1000 if fault == LATENCY else 0.0
        self.log.append((method, fault))
        return len(self.log) - 1, fault, delay

    def settle(self, index: int, fault: str) -> None:
        """Records that request `index` got `fault` after all (a truncate with no body to cut)."""
        self.log[index] = (self.log[index][0], fault)

    def stats(self) -> dict:
        def counts(faults: list[str]) -> dict[str, int]:
            return {kind: faults.count(kind) for kind in (*FAULTS, NONE)}

        methods = sorted({method for method, _ in self.log})
        by_method = {}
        for method in methods:
            faults = [fault for m, fault in self.log if m == method]
            by_method[method] = {"requests": len(faults), "faults": counts(faults)}
        return {
            "seed": self.seed,
            "requests": len(self.log),
            "faults": counts([fault for _, fault in self.log]),
            "by_method": by_method,
            "upstream_errors": self.upstream_errors,
            "sequence": [list(entry) for entry in self.log],
        }


def reset(writer: asyncio.StreamWriter) -> None:
    """Closes the connection at once with a TCP reset: SO_LINGER 0 makes close() send RST, so
    the peer's next read fails with ECONNRESET instead of seeing an orderly end."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def flushed(writer: asyncio.StreamWriter) -> None:
    """Waits until what was written has left this process and the peer has acknowledged it, so
    that a reset (which discards unsent data) loses none of it; at most FLUSH_TIMEOUT s."""
    writer.transport.set_write_buffer_limits(high=0)  # drain() now waits for an empty buffer
    await writer.drain()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + FLUSH_TIMEOUT
    while unacknowledged(writer) > 0 and loop.time() < deadline:
        await asyncio.sleep(0.002)


def unacknowledged(writer: asyncio.StreamWriter) -> int:
    """Bytes in the socket's send queue the peer has not acknowledged (Linux's SIOCOUTQ)."""
    sock = writer.get_extra_info("socket")
    try:
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]
    except (OSError, AttributeError):
        return 0


# --- proxying ------------------------------------------------------------------------------


class UpstreamError(Exception):
    """The emulator did not answer: refused the connection, closed it, or sent no HTTP/1.1."""


async def upstream(awaitable):
    """`awaitable`'s result, any failure of it raised as an UpstreamError."""
    try:
        return await awaitable
    except (OSError, EOFError, ValueError, asyncio.LimitOverrunError) as e:
        raise UpstreamError(str(e) or type(e).__name__) from e


class Connection:
    """A client connection: its requests, each served with its fault, and the emulator
    connection they go to."""

    def __init__(self, faults: Faults, upstream_port: int, reader, writer):
        self.faults = faults
        self.upstream_port = upstream_port
        self.reader: asyncio.StreamReader = reader
        self.writer: asyncio.StreamWriter = writer
        self.upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def run(self) -> None:
        try:
            while await self.serve_one():
                pass
        except UpstreamError as e:
            self.faults.upstream_errors += 1
            say(f"the upstream did not answer ({e}); resetting the client connection")
            reset(self.writer)
        except (OSError, EOFError, ValueError, asyncio.LimitOverrunError):
            reset(self.writer)  # the client went away, or sent what this proxy cannot read
        except Exception as e:  # a bug here must not stop the other connections
            say(f"unexpected {type(e).__name__}: {e}; resetting the client connection")
            reset(self.writer)
        finally:
            self.close_upstream()
            if not self.writer.is_closing():
                self.writer.close()

    async def serve_one(self) -> bool:
        """Serves the client's next request with its fault; whether the connection stays open."""
        request = await read_head(self.reader)
        if request is None:
            return False
        index, fault, delay = self.faults.draw(request.method)
        if fault == RESET_BEFORE:
            reset(self.writer)
            return False
        if fault in (ERROR_503, ERROR_500):
            return await self.answer_error(request, int(fault))
        if fault == LATENCY:
            await asyncio.sleep(delay)
        response, keep_alive = await self.exchange(request)
        if fault == RESET_AFTER:
            reset(self.writer)
            return False
        if fault == TRUNCATE:
            if response.payload >= 2:
                await self.send_truncated(response)
                return False
            self.faults.settle(index, NONE)
        self.writer.write(response.head.raw + response.body)
        await self.writer.drain()
        return keep_alive

    async def answer_error(self, request: Head, status: int) -> bool:
        """Answers `request` with the proxy's own error, never forwarding it. A request that
        waits for 100 Continue may or may not send its body after this answer, so that
        connection is closed; any other keeps its connection (the body is read and dropped)."""
        keep_alive = keeps_alive(request) and not expects_continue(request)
        if keep_alive:
            await read_body(self.reader, request_framing(request))
        self.writer.write(error_response(request, status, keep_alive))
        await self.writer.drain()
        return keep_alive

    async def send_truncated(self, response: Response) -> None:
        """The status line, the headers and about half the body; then a reset."""
        self.writer.write(response.head.raw + response.body[: len(response.body) // 2])
        await flushed(self.writer)
        reset(self.writer)

    async def exchange(self, request: Head) -> tuple[Response, bool]:
        """Forwards `request` and its body to the emulator and reads its answer whole; whether
        the client connection can stay open after it."""
        framing = request_framing(request)
        _, up_writer = await self.open_upstream()
        refused = None
        if expects_continue(request):
            refused = await self.send_expecting_continue(request, framing)
        else:
            body, _ = await read_body(self.reader, framing)
            up_writer.write(request.raw + body)
            await upstream(up_writer.drain())
        response = await self.read_response(request.method, refused)
        keep_alive = keeps_alive(response.head) and response.framing != UNTIL_CLOSE
        # A protocol switch (101) is not proxied: both connections end after its answer.
        keep_alive = keep_alive and response.head.status != 101
        if not keep_alive:
            self.close_upstream()
        # A refused body may still come from the client: that connection cannot be reused.
        return response, keep_alive and keeps_alive(request) and refused is None

    async def send_expecting_continue(self, request: Head, framing: int | str) -> Head | None:
        """Sends a request that has `Expect: 100-continue`: its head, then its body once the
        emulator says 100 Continue (relayed to the client) or the client sends the body without
        waiting for it. Returns the emulator's final answer's head if it answered before the
        body (refusing it), else None."""
        up_reader, up_writer = self.upstream
        up_writer.write(request.raw)
        await upstream(up_writer.drain())
        body = asyncio.ensure_future(read_body(self.reader, framing))
        try:
            while True:
                reply = asyncio.ensure_future(upstream(read_head(up_reader)))
                await asyncio.wait({body, reply}, return_when=asyncio.FIRST_COMPLETED)
                if not reply.done():  # the body came first; the answer is read after it is sent
                    await cancelled(reply)
                    break
                head = answered(reply.result())
                if not is_interim(head):
                    return head
                self.writer.write(head.raw)  # 100 Continue, or another interim answer
                if head.status == 100:
                    break
            data, _ = await body
        finally:
            await cancelled(body)
        up_writer.write(data)
        await upstream(up_writer.drain())
        return None

    async def read_response(self, method: str, head: Head | None = None) -> Response:
        """The emulator's final answer to a `method` request (after `head`, if already read);
        interim answers (1xx) are relayed to the client as they come."""
        up_reader, _ = self.upstream
        while head is None or is_interim(head):
            if head is not None:
                self.writer.write(head.raw)
            head = answered(await upstream(read_head(up_reader)))
        framing = response_framing(method, head)
        body, payload = await upstream(read_body(up_reader, framing))
        return Response(head, body, payload, framing)

    async def open_upstream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The emulator connection, opened if there is none or the emulator closed it."""
        if self.upstream is not None and (self.upstream[0].at_eof() or self.upstream[1].is_closing()):
            self.close_upstream()
        if self.upstream is None:
            connect = asyncio.open_connection(LOOPBACK, self.upstream_port, limit=MAX_HEAD)
            self.upstream = await upstream(connect)
        return self.upstream

    def close_upstream(self) -> None:
        if self.upstream is not None:
            self.upstream[1].close()
            self.upstream = None


async def cancelled(task: asyncio.Future) -> None:
    """Cancels `task` and waits until it has ended, so that the stream it was reading is free
    for another read (a StreamReader takes one reader at a time)."""
    if task.done():
        if not task.cancelled():
            task.exception()  # retrieved: a failed read that no longer matters is not logged
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def expects_continue(request: Head) -> bool:
    return request.headers.get("expect", "").lower() == "100-continue"


def is_interim(response: Head) -> bool:
    """A 1xx answer, which a final one follows (101 Switching Protocols ends the exchange)."""
    return 100 <= response.status < 200 and response.status != 101


def answered(head: Head | None) -> Head:
    """`head`, checked to be a response's; the emulator closing instead is an UpstreamError."""
    if head is None:
        raise UpstreamError("it closed the connection without answering")
    if not head.start[0].startswith("HTTP/1.") or not head.start[1].isdigit():
        raise UpstreamError(f"not an HTTP/1.1 status line: {head.raw[:100]!r}")
    return head


# --- running -------------------------------------------------------------------------------


def write_atomically(path: Path, text: str) -> None:
    """Writes `text` to `path` through a temporary file, so a reader never sees it half done."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


async def serve(args: argparse.Namespace) -> None:
    """Proxies until SIGTERM or SIGINT; then writes the stats."""
    faults = Faults(args.seed, args.rates, args.latency_ms)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    async def accept(reader, writer):
        try:
            await Connection(faults, args.upstream_port, reader, writer).run()
        except asyncio.CancelledError:
            # At exit, the connections still open are cancelled. The task ends as if it had
            # returned: Python 3.11's start_server logs a traceback for a cancelled one.
            pass

    server = await asyncio.start_server(accept, LOOPBACK, args.listen_port, limit=MAX_HEAD)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        write_atomically(Path(args.port_file), f"{port}\n")
    print(f"faultproxy: listening on http://{LOOPBACK}:{port}", flush=True)
    await stop.wait()
    server.close()
    if args.stats:
        write_atomically(Path(args.stats), json.dumps(faults.stats(), indent=1) + "\n")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="faultproxy.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--upstream", required=True, metavar="URL", help="the emulator: http://127.0.0.1:PORT or http://localhost:PORT")
    parser.add_argument("--seed", type=int, required=True, metavar="N", help="seeds the draws of faults")
    parser.add_argument("--listen", default=f"{LOOPBACK}:0", metavar="ADDRESS", help="127.0.0.1:PORT to listen on (default: a free port)")
    for kind in FAULTS[:5]:
        flag = f"--rate-{kind.replace('_', '-')}"
        rate = dict(type=float, default=DEFAULT_RATE, metavar="P", dest=f"rate_{kind}")
        parser.add_argument(flag, **rate, help=f"the probability of {kind.replace('_', '-')} (default {DEFAULT_RATE})")
    parser.add_argument("--rate-latency", type=float, default=0.0, metavar="P", help="the probability of latency (default 0)")
    longest = f"the longest latency, in ms (default {DEFAULT_LATENCY_MS:g})"
    parser.add_argument("--latency-ms", type=float, default=DEFAULT_LATENCY_MS, metavar="MAX", help=longest)
    parser.add_argument("--stats", metavar="FILE", help="where to write the stats (JSON) on SIGTERM or SIGINT")
    parser.add_argument("--port-file", metavar="FILE", help="where to write the port once listening")
    args = parser.parse_args(argv)
    args.upstream_port = upstream_port(parser, args.upstream)
    args.listen_port = listen_port(parser, args.listen)
    args.rates = {kind: getattr(args, f"rate_{kind}") for kind in FAULTS}
    if not all(0 <= rate <= 1 for rate in args.rates.values()) or sum(args.rates.values()) > 1:
        parser.error(f"the rates must be between 0 and 1 and sum to at most 1: {args.rates}")
    if args.latency_ms < 0:
        parser.error("--latency-ms must not be negative")
    return args


def upstream_port(parser: argparse.ArgumentParser, url: str) -> int:
    """The port of `url`, which must be http://127.0.0.1:PORT or http://localhost:PORT."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or parts.scheme != "http"
        or parts.hostname not in UPSTREAM_HOSTS
        or port is None
        or parts.username is not None
        or parts.path not in ("", "/")
        or parts.query
    ):
        parser.error(
            f"refusing --upstream {url}: this proxy forwards only to a loopback emulator, "
            "http://127.0.0.1:PORT or http://localhost:PORT"
        )
    return port


def listen_port(parser: argparse.ArgumentParser, address: str) -> int:
    """The port of `address`, which must be 127.0.0.1:PORT."""
    host, _, port = address.rpartition(":")
    if host != LOOPBACK or not port.isdigit() or int(port) > 65535:
        parser.error(f"refusing --listen {address}: this proxy listens only on 127.0.0.1:PORT")
    return int(port)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        asyncio.run(serve(args))
    except OSError as e:
        say(f"cannot listen on {args.listen} or write a file: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
