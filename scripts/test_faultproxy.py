#!/usr/bin/env python3
"""Tests of scripts/faultproxy.py that need no emulator: `python3 scripts/test_faultproxy.py`.

An HTTP/1.1 server of the tests' own, in this process on 127.0.0.1, stands for the emulator: it
counts the requests it gets and echoes their bodies. The proxy runs as a subprocess, each fault
kind forced in turn (its rate 1, the others 0), and a raw-socket client checks what it does
byte for byte. Standard library only; a few seconds.
"""

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

PROXY = Path(__file__).resolve().parent / "faultproxy.py"
FAULTS = ("reset-before", "reset-after", "truncate", "503", "500", "latency")
S3_ERROR = "<Error><Code>{}</Code><Message>{}</Message></Error>"
TIMEOUT = 5.0


# --- the stand-in emulator -------------------------------------------------------------------


class Upstream:
    """An HTTP/1.1 server on its own thread: keeps connections alive, counts requests, answers
    with the request's body (or a text naming the request) in a Content-Length body; with a
    chunked body at /chunked, with 204 at /nothing, and 100 Continue to `Expect: 100-continue`.
    At /eof its answer ends when it closes the connection; at /hangup it closes the connection
    after a Content-Length answer without saying so, as a server whose idle timeout ran out."""

    def __init__(self):
        self.count = 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self.run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait()

    def run(self, ready: threading.Event) -> None:
        self.server = self.loop.run_until_complete(asyncio.start_server(self.handle, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.count += 1
                method, target, headers = parse_request(head)
                if headers.get("expect") == "100-continue":
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = await read_request_body(reader, headers)
                writer.write(answer(method, target, body))
                await writer.drain()
                if target in ("/eof", "/hangup"):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def parse_request(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ")
    headers = {}
    for line in filter(None, lines[1:]):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip().lower()
    return method, target, headers


async def read_request_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding") != "chunked":
        return await reader.readexactly(int(headers.get("content-length", "0")))
    body = b""
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        body += (await reader.readexactly(size + 2))[:-2]
    await reader.readuntil(b"\r\n")  # no trailers: the empty line
    return body


def answer(method: str, target: str, body: bytes) -> bytes:
    payload = body or f"reply to {method} {target}".encode()
    if target == "/eof":
        return b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + payload
    if target == "/nothing":
        return b"HTTP/1.1 204 No Content\r\nX-Kind: none\r\n\r\n"
    if target == "/chunked":
        chunks = [payload[i : i + 5] for i in range(0, len(payload), 5)]
        framed = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
        return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + framed
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(payload)
    return head if method == "HEAD" else head + payload


# --- a raw client ----------------------------------------------------------------------------


class Client:
    """An HTTP/1.1 connection that returns answers as the bytes they came as."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.buffer = b""
        self.received = 0  # bytes, in all

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the connection was closed")
        self.buffer += data
        self.received += len(data)

    def take_until(self, end: bytes) -> bytes:
        while end not in self.buffer:
            self.fill()
        i = self.buffer.index(end) + len(end)
        data, self.buffer = self.buffer[:i], self.buffer[i:]
        return data

    def take(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self.fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def response(self, method: str = "GET") -> tuple[int, bytes]:
        """The next answer's status and bytes (an interim 1xx is an answer of its own)."""
        head = self.take_until(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        headers = head.lower()
        if method == "HEAD" or status in (204, 304) or status < 200:
            return status, head
        if b"transfer-encoding: chunked" in headers:
            body = b""
            while (line := self.take_until(b"\r\n")) != b"0\r\n":
                body += line + self.take(int(line, 16) + 2)
            return status, head + body + line + self.take_until(b"\r\n")
        if b"content-length: " not in headers:  # the body ends with the connection
            body, ending = self.rest()
            if not isinstance(ending, EOFError):
                raise ending
            return status, head + body
        length = int(headers.split(b"content-length: ")[1].split(b"\r\n")[0])
        return status, head + self.take(length)

    def rest(self) -> tuple[bytes, Exception]:
        """Everything until the connection ends, and how it ended (EOFError: orderly close)."""
        try:
            while True:
                self.fill()
        except (OSError, EOFError) as e:
            return self.buffer, e


def exchange(port: int, requests: list[tuple[str, bytes]]) -> list[bytes]:
    """The answers to `requests` ((method, bytes) each), sent on one connection."""
    client = Client(port)
    try:
        answers = []
        for method, request in requests:
            client.send(request)
            answers.append(client.response(method)[1])
        return answers
    finally:
        client.close()


def request(method: str, target: str, body: bytes = b"", extra: str = "") -> bytes:
    head = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}"
    if body:
        head += f"Content-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


# --- the proxy -------------------------------------------------------------------------------


class Proxy:
    """faultproxy.py as a subprocess, on a free port, with its stats file and its stderr in a
    log (`messages` once stopped)."""

    def __init__(self, upstream_port: int, rates: dict[str, float], seed: int = 1, latency_ms: float = 0):
        """`rates` by the faults' names in the stats ({"503": 1}); the ones not given are 0."""
        self.dir = tempfile.TemporaryDirectory(prefix="faultproxy-test.")
        self.stats_file = Path(self.dir.name) / "stats.json"
        self.port_file = Path(self.dir.name) / "port"
        self.log = Path(self.dir.name) / "stderr.log"
        cmd = [sys.executable, str(PROXY), "--upstream", f"http://127.0.0.1:{upstream_port}", "--seed", str(seed)]
        cmd += ["--stats", str(self.stats_file), "--port-file", str(self.port_file)]
        for kind in FAULTS:
            cmd += [f"--rate-{kind}", str(rates.get(kind.replace("-", "_"), 0))]
        if latency_ms:
            cmd += ["--latency-ms", str(latency_ms)]
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
        line = self.process.stdout.readline()
        prefix = "faultproxy: listening on http://127.0.0.1:"
        assert line.startswith(prefix), f"the proxy's first line: {line!r}; stderr: {self.log.read_text()}"
        self.port = int(line[len(prefix) :])

    def stop(self) -> dict:
        """SIGTERMs the proxy; its stats."""
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=TIMEOUT)
        self.messages = self.log.read_text()
        assert self.process.stdout.read() == "", "the proxy printed more than its one line"
        self.process.stdout.close()
        assert status == 0, f"the proxy exited with {status}; stderr: {self.messages}"
        try:
            return json.loads(self.stats_file.read_text())
        finally:
            self.dir.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
            self.process.stdout.close()
            self.dir.cleanup()


# --- the tests -------------------------------------------------------------------------------


class FaultProxyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = Upstream()

    @classmethod
    def tearDownClass(cls):
        cls.upstream.stop()

    def setUp(self):
        self.upstream.count = 0

    def proxy(self, rates: dict[str, float] | None = None, **kwargs) -> Proxy:
        return Proxy(self.upstream.port, rates or {}, **kwargs)

    def assertFaults(self, stats: dict, requests: int, faults: dict[str, int]) -> None:
        expected = {"reset_before": 0, "reset_after": 0, "truncate": 0, "503": 0, "500": 0, "latency": 0, "none": 0}
        expected.update(faults)
        self.assertEqual(stats["requests"], requests)
        self.assertEqual(stats["faults"], expected)
        self.assertEqual(stats["upstream_errors"], 0)

    def test_reset_before_forwards_nothing(self):
        with self.proxy({"reset_before": 1}) as proxy:
            client = Client(proxy.port)
            client.send(request("PUT", "/bucket/key", b"a body"))
            data, ending = client.rest()
            client.close()
            self.assertEqual((data, type(ending)), (b"", ConnectionResetError))
            self.assertEqual(self.upstream.count, 0)
            self.assertFaults(proxy.stop(), 1, {"reset_before": 1})

    def test_reset_after_forwards_and_answers_nothing(self):
        with self.proxy({"reset_after": 1}) as proxy:
            client = Client(proxy.port)
            client.send(request("PUT", "/bucket/key", b"a body"))
            data, ending = client.rest()
            client.close()
            self.assertEqual((data, type(ending)), (b"", ConnectionResetError))
            self.assertEqual(self.upstream.count, 1)
            stats = proxy.stop()
            self.assertFaults(stats, 1, {"reset_after": 1})
            self.assertEqual(stats["by_method"]["PUT"]["faults"]["reset_after"], 1)

    def test_truncate_sends_half_the_body_then_resets(self):
        with self.proxy({"truncate": 1}) as proxy:
            body = bytes(range(256)) * 40
            client = Client(proxy.port)
            client.send(request("PUT", "/bucket/key", body))
            data, ending = client.rest()
            client.close()
            self.assertIs(type(ending), ConnectionResetError)
            head, _, received = data.partition(b"\r\n\r\n")
            self.assertEqual(head, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10240")
            self.assertEqual(received, body[:5120])
            self.assertEqual(self.upstream.count, 1)
            self.assertFaults(proxy.stop(), 1, {"truncate": 1})

    def test_truncate_leaves_answers_without_a_body_whole(self):
        with self.proxy({"truncate": 1}) as proxy:
            answers = exchange(proxy.port, [("HEAD", request("HEAD", "/a")), ("GET", request("GET", "/nothing"))])
            self.assertEqual(answers, [answer("HEAD", "/a", b""), answer("GET", "/nothing", b"")])
            self.assertFaults(proxy.stop(), 2, {"none": 2})

    def test_503_and_500_are_the_proxys_own(self):
        for status, rate, code, message in [
            (503, "503", "SlowDown", "Please reduce your request rate."),
            (500, "500", "InternalError", "We encountered an internal error. Please try again."),
        ]:
            with self.subTest(status=status), self.proxy({rate: 1}) as proxy:
                body = S3_ERROR.format(code, message).encode()
                reason = {503: b"Slow Down", 500: b"Internal Server Error"}[status]
                head = b"HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\n" % (status, reason)
                head += b"Content-Length: %d\r\nConnection: keep-alive\r\n\r\n" % len(body)
                # Kept alive: a PUT (its body read and dropped), a HEAD (no body), a GET.
                requests = [("PUT", request("PUT", "/b/k", b"xyz")), ("HEAD", request("HEAD", "/b/k"))]
                requests.append(("GET", request("GET", "/b/k")))
                self.assertEqual(exchange(proxy.port, requests), [head + body, head, head + body])
                self.assertEqual(self.upstream.count, 0)
                self.assertFaults(proxy.stop(), 3, {rate: 3})

    def test_azure_requests_get_azures_error(self):
        with self.proxy({"503": 1}) as proxy:
            (data,) = exchange(proxy.port, [("GET", request("GET", "/c/b", extra="x-ms-version: 2021-08-06\r\n"))])
            self.assertIn(b"\r\nx-ms-error-code: ServerBusy\r\n", data)
            self.assertTrue(data.endswith(b"<Error><Code>ServerBusy</Code><Message>The server is busy.</Message></Error>"))
            proxy.stop()

    def test_without_faults_answers_are_byte_identical(self):
        chunked_put = b"PUT /chunked HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        chunked_put += b"3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\n\r\n"
        requests = [
            ("GET", request("GET", "/bucket/a")),
            ("PUT", request("PUT", "/bucket/b", b"some bytes\r\n\r\n")),
            ("GET", request("GET", "/chunked")),
            ("HEAD", request("HEAD", "/bucket/a")),
            ("GET", request("GET", "/nothing")),
            ("PUT", chunked_put),
            ("GET", request("GET", "/bucket/c", extra="Authorization: AWS4-HMAC-SHA256 x\r\n")),
        ]
        direct = exchange(self.upstream.port, requests)
        self.assertEqual(direct[5], answer("PUT", "/chunked", b"abcdefg"))
        with self.proxy() as proxy:
            self.assertEqual(exchange(proxy.port, requests), direct)
            self.assertEqual(self.upstream.count, 2 * len(requests))
            stats = proxy.stop()
            self.assertFaults(stats, len(requests), {"none": len(requests)})
            by_method = {method: counts["requests"] for method, counts in stats["by_method"].items()}
            self.assertEqual(by_method, {"GET": 4, "HEAD": 1, "PUT": 2})

    def test_upstream_closing(self):
        with self.proxy() as proxy:
            # A body that ends with the connection: the client's connection ends after it too.
            (data,) = exchange(proxy.port, [("GET", request("GET", "/eof"))])
            self.assertEqual(data, answer("GET", "/eof", b""))
            # A connection the upstream closed after its answer: the next request opens another.
            requests = [("GET", request("GET", "/hangup")), ("GET", request("GET", "/a")), ("GET", request("GET", "/b"))]
            self.assertEqual(exchange(proxy.port, requests), [answer("GET", t, b"") for t in ("/hangup", "/a", "/b")])
            self.assertEqual(self.upstream.count, 4)
            self.assertFaults(proxy.stop(), 4, {"none": 4})

    def test_upstream_down_resets_the_client(self):
        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))
            port = unused.getsockname()[1]
        with Proxy(port, {}) as proxy:
            client = Client(proxy.port)
            client.send(request("GET", "/a"))
            data, ending = client.rest()
            client.close()
            self.assertEqual((data, type(ending)), (b"", ConnectionResetError))
            stats = proxy.stop()
            self.assertEqual((stats["requests"], stats["upstream_errors"]), (1, 1))
            self.assertIn("faultproxy: the upstream did not answer", proxy.messages)

    def test_expect_100_continue_is_relayed(self):
        with self.proxy() as proxy:
            client = Client(proxy.port)
            client.send(request("PUT", "/b/k", extra="Expect: 100-continue\r\nContent-Length: 5\r\n"))
            self.assertEqual(client.response(), (100, b"HTTP/1.1 100 Continue\r\n\r\n"))
            client.send(b"hello")
            self.assertEqual(client.response(), (200, answer("PUT", "/b/k", b"hello")))
            # A client that sends the body without waiting gets the same.
            client.send(request("PUT", "/b/k", extra="Expect: 100-continue\r\nContent-Length: 5\r\n") + b"world")
            self.assertEqual(client.response()[0], 100)
            self.assertEqual(client.response(), (200, answer("PUT", "/b/k", b"world")))
            client.close()
            self.assertFaults(proxy.stop(), 2, {"none": 2})

    def test_latency_delays_and_forwards(self):
        with self.proxy({"latency": 1}, latency_ms=50) as proxy:
            start = time.monotonic()
            requests = [("GET", request("GET", f"/k{i}")) for i in range(5)]
            self.assertEqual(exchange(proxy.port, requests), [answer("GET", f"/k{i}", b"") for i in range(5)])
            self.assertLess(time.monotonic() - start, 2)
            self.assertFaults(proxy.stop(), 5, {"latency": 5})

    def test_same_seed_same_faults(self):
        def run(seed: int) -> list:
            rates = dict.fromkeys(["reset_before", "reset_after", "truncate", "503", "500", "latency"], 0.1)
            with self.proxy(rates, seed=seed, latency_ms=5) as proxy:
                seen = [self.outcome(proxy.port, f"/key{i}") for i in range(50)]
                sequence = proxy.stop()["sequence"]
            faults = [fault for _, fault in sequence]
            self.assertEqual(seen, [SEEN[f] for f in faults], "what the client saw is what the stats say")
            self.assertEqual(len(set(faults)), 7, "every fault drawn at these rates, and none")
            return sequence

        first = run(7)
        self.assertEqual(run(7), first)
        self.assertNotEqual(run(8), first)

    def outcome(self, port: int, target: str) -> str:
        """How a GET of `target` on a new connection ended: "reset", "truncated" or the status."""
        client = Client(port)
        try:
            client.send(request("GET", target))
            return str(client.response()[0])
        except ConnectionResetError:
            return "truncated" if client.received else "reset"
        finally:
            client.close()

    def test_stops_quietly_with_connections_open(self):
        with self.proxy() as proxy:
            idle, midway = Client(proxy.port), Client(proxy.port)
            idle.send(request("GET", "/a"))
            idle.response()
            midway.send(b"PUT /b HTTP/1.1\r\nContent-Length: 10\r\n\r\nhalf")
            time.sleep(0.1)
            stats = proxy.stop()
            idle.close()
            midway.close()
            self.assertEqual(proxy.messages, "")
            self.assertFaults(stats, 2, {"none": 2})

    def test_port_file(self):
        with self.proxy() as proxy:
            self.assertEqual(proxy.port_file.read_text(), f"{proxy.port}\n")
            proxy.stop()

    def test_refuses_what_is_not_loopback(self):
        port = self.upstream.port
        for args in [
            ["--upstream", "http://example.com:80"],
            ["--upstream", f"http://10.0.0.1:{port}"],
            ["--upstream", f"https://127.0.0.1:{port}"],
            ["--upstream", "http://127.0.0.1"],
            ["--upstream", f"http://127.0.0.1:{port}", "--listen", "0.0.0.0:0"],
        ]:
            with self.subTest(args=args):
                run = subprocess.run([sys.executable, str(PROXY), "--seed", "1", *args], capture_output=True, text=True)
                self.assertEqual(run.returncode, 2)
                self.assertEqual(run.stdout, "")
                self.assertRegex(run.stderr, r"error: refusing --(upstream|listen) .*only")

    def test_refuses_rates_over_1(self):
        cmd = [sys.executable, str(PROXY), "--seed", "1", "--upstream", "http://localhost:1", "--rate-503", "1"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("sum to at most 1", run.stderr)


# What a client sees of each fault, by its name in the stats (FaultProxyTest.outcome).
SEEN = {
    "reset_before": "reset",
    "reset_after": "reset",
    "truncate": "truncated",
    "503": "503",
    "500": "500",
    "latency": "200",
    "none": "200",
}

if __name__ == "__main__":
    unittest.main()
