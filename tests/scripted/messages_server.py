#!/usr/bin/env python3
"""A scripted Messages API server: plays the memory-tool documentation's example conversation.

Python 3.11 standard library only. It lets `memfs agent`, `memfs::agent::run` and the official
SDKs' tool runners be tested without the network and without an API key, with every request
they send recorded so that tests can check it exactly.

Usage:

    python3 tests/scripted/messages_server.py --record FILE [--port N] [--scenario docs-example]

It binds 127.0.0.1 (port 0, the default, picks a free port), prints exactly one line
`http://127.0.0.1:PORT` on stdout, then serves until SIGTERM or SIGINT, or until its stdin
closes when stdin is a pipe or a socket (so a parent that dies, or closes the pipe, stops it;
started with stdin on a terminal or /dev/null it ignores stdin).

`POST /v1/messages` (any query string, such as the `?beta=true` SDKs append, is ignored) appends
one JSON line to FILE, flushed per request:

    {"method": "POST", "path": "/v1/messages?beta=true",
     "headers": {"anthropic-version": ..., "anthropic-beta": ..., "x-api-key": ...,
                 "content-type": ...},
     "body": <the parsed JSON body, or null when it is not JSON>}

(`headers` holds only those four, lower-cased, and only the ones sent.) Every other request is
recorded the same way too, so a test sees exactly what reached the server.

The reply is a complete, non-streaming Messages object, chosen by the number of assistant
messages already in the request's `messages` (stateless: several clients can share one server);
a request continuing a message thread (`"thread": {"type": "continue", "previous_message_id":
"msg_scripted_NN"}`, as the SDKs' tool runners send by default) counts the NN replies before it
too. The key is accepted as `x-api-key` or `Authorization: Bearer` (the SDKs' way).
Scenario `docs-example`, the example of the memory tool's documentation page:

    0 -> text "I'll help you respond to ... previous context." and tool_use `toolu_01`
         {"command": "view", "path": "/memories"}, stop_reason "tool_use"
    1 -> tool_use `toolu_02` {"command": "view", "path": "/memories/customer_service_guidelines.xml"},
         stop_reason "tool_use"
    2 -> text "Based on your customer service guidelines, ...", stop_reason "end_turn"

Scenario `overloaded-once` plays the same conversation, but answers the first request of each
turn (the first one seen with that number of assistant messages) with 529 `overloaded_error` and
`retry-after-ms: 10`, as the API does when it is overloaded: a client that retries gets the
same conversation with every request twice. Scenario `overloaded` answers every request so.

With `--redirect-to URL`, every request is recorded and answered `307 Temporary Redirect` with
`Location: URL` followed by the request's path (a hostile or compromised endpoint sending the
client elsewhere), whatever the scenario.

Errors are Anthropic-style JSON, `{"type": "error", "error": {"type": ..., "message": ...}}`:
404 `not_found_error` for another path or method; 401 `authentication_error` without
`x-api-key`; 400 `invalid_request_error` without `anthropic-version`, for a body that is not a JSON
object with a string `model`, an integer `max_tokens` and a list `messages`, for
`"stream": true` (streaming is not scripted) and past the end of the script.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORDED_HEADERS = ("anthropic-version", "anthropic-beta", "x-api-key", "content-type")


def docs_example(turn: int) -> tuple[list[dict], str] | None:
    """The reply (content blocks, stop_reason) after `turn` assistant messages, or None."""
    if turn == 0:
        return (
            [
                {
                    "type": "text",
                    "text": "I'll help you respond to the customer service ticket. "
                    "Let me check my memory for any previous context.",
                },
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "memory",
                    "input": {"command": "view", "path": "/memories"},
                },
            ],
            "tool_use",
        )
    if turn == 1:
        return (
            [
                {
                    "type": "tool_use",
                    "id": "toolu_02",
                    "name": "memory",
                    "input": {
                        "command": "view",
                        "path": "/memories/customer_service_guidelines.xml",
                    },
                }
            ],
            "tool_use",
        )
    if turn == 2:
        return (
            [
                {
                    "type": "text",
                    "text": "Based on your customer service guidelines, I can help you craft "
                    "a response. Please share the ticket details...",
                }
            ],
            "end_turn",
        )
    return None


SCENARIOS = {"docs-example": docs_example, "overloaded-once": docs_example, "overloaded": docs_example}


class Recorder:
    """Appends one JSON line per request to the record file, under a lock."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def record(self, entry: dict) -> None:
        line = json.dumps(entry, ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()


def make_handler(recorder: Recorder, scenario_name: str, redirect_to: str | None = None):
    scenario = SCENARIOS[scenario_name]
    overloaded_turns: set[int] = set()
    overloaded_lock = threading.Lock()

    def overloaded(turn: int) -> bool:
        if scenario_name == "overloaded":
            return True
        if scenario_name != "overloaded-once":
            return False
        with overloaded_lock:
            if turn in overloaded_turns:
                return False
            overloaded_turns.add(turn)
            return True

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "memfs-scripted-messages/1"

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
            # stdout is reserved for the URL line; keep stderr quiet too.
            pass

        def read_body(self) -> bytes:
            if self.headers.get("transfer-encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        # Trailers, up to the empty line.
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("content-length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def send_json(self, status: int, value: dict, extra_headers: dict | None = None) -> None:
            data = json.dumps(value).encode("utf-8")
            self.send_response(status)
            for name, header in (extra_headers or {}).items():
                self.send_header(name, header)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", "req_scripted")
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

        def send_error_json(self, status: int, kind: str, message: str) -> None:
            self.send_json(status, {"type": "error", "error": {"type": kind, "message": message}})

        def handle_any(self) -> None:
            raw = self.read_body()
            try:
                body = json.loads(raw.decode("utf-8")) if raw else None
            except (UnicodeDecodeError, json.JSONDecodeError):
                body = None
                bad_json = True
            else:
                bad_json = False
            headers = {
                name: self.headers[name] for name in RECORDED_HEADERS if name in self.headers
            }
            recorder.record(
                {"method": self.command, "path": self.path, "headers": headers, "body": body}
            )

            if redirect_to is not None:
                self.send_response(307)
                self.send_header("location", redirect_to + self.path)
                self.send_header("content-length", "0")
                self.end_headers()
                self.wfile.flush()
                return
            route = self.path.split("?", 1)[0]
            if self.command != "POST" or route != "/v1/messages":
                self.send_error_json(
                    404, "not_found_error", f"{self.command} {route}: no such endpoint"
                )
                return
            # The API takes the key as `x-api-key` or as `Authorization: Bearer KEY` (what the
            # official SDKs' clients send).
            bearer = self.headers.get("authorization", "").startswith("Bearer ")
            if "x-api-key" not in self.headers and not bearer:
                self.send_error_json(401, "authentication_error", "x-api-key header is required")
                return
            if "anthropic-version" not in self.headers:
                self.send_error_json(
                    400, "invalid_request_error", "anthropic-version: header is required"
                )
                return
            if bad_json or not isinstance(body, dict):
                self.send_error_json(
                    400, "invalid_request_error", "the request body is not a JSON object"
                )
                return
            if body.get("stream") is True:
                self.send_error_json(
                    400,
                    "invalid_request_error",
                    "stream: streaming is not scripted by this server; send \"stream\": false",
                )
                return
            model = body.get("model")
            messages = body.get("messages")
            max_tokens = body.get("max_tokens")
            if not isinstance(model, str):
                self.send_error_json(400, "invalid_request_error", "model: Field required")
                return
            if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
                self.send_error_json(400, "invalid_request_error", "max_tokens: Field required")
                return
            if not isinstance(messages, list):
                self.send_error_json(400, "invalid_request_error", "messages: Field required")
                return
            turn = sum(
                1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
            )
            # A message thread (beta `message-threads-2026-08-12`, on by default in the SDKs'
            # tool runners) sends only the new messages and names the reply it continues: that
            # reply's number counts the assistant messages before them.
            thread = body.get("thread")
            if isinstance(thread, dict) and thread.get("type") == "continue":
                previous = str(thread.get("previous_message_id", ""))
                prefix = "msg_scripted_"
                if previous.startswith(prefix) and previous[len(prefix):].isdigit():
                    turn += int(previous[len(prefix):])
            if overloaded(turn):
                self.send_json(
                    529,
                    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                    {"retry-after-ms": "10"},
                )
                return
            reply = scenario(turn)
            if reply is None:
                self.send_error_json(
                    400,
                    "invalid_request_error",
                    f"the scripted conversation has no reply after {turn} assistant messages",
                )
                return
            content, stop_reason = reply
            message = {
                "id": f"msg_scripted_{turn + 1:02d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": {"input_tokens": 100 * (turn + 1), "output_tokens": 20 * (turn + 1)},
            }
            if "context_management" in body:
                message["context_management"] = {"applied_edits": []}
            self.send_json(200, message)

        do_POST = handle_any
        do_GET = handle_any
        do_PUT = handle_any
        do_DELETE = handle_any
        do_PATCH = handle_any

    return Handler


def stdin_is_watchable() -> bool:
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Scripted Messages API server playing the memory-tool documentation example."
    )
    parser.add_argument("--record", required=True, help="append one JSON line per request here")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument(
        "--scenario", default="docs-example", choices=sorted(SCENARIOS), help="the script to play"
    )
    parser.add_argument(
        "--redirect-to", default=None, help="answer every request 307 to this URL + its path"
    )
    args = parser.parse_args()

    recorder = Recorder(args.record)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(recorder, args.scenario, args.redirect_to))
    server.daemon_threads = True

    stop = threading.Event()

    def request_stop(*_args) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)

    if stdin_is_watchable():

        def watch_stdin() -> None:
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            stop.set()

        threading.Thread(target=watch_stdin, daemon=True).start()

    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    while not stop.wait(0.2):
        pass
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
