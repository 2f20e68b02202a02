"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1 (ephemeral port) for tests, benchmarks and
offline demos of the `openai:` adapter: no model behind it, scripted replies.

Each user scripts the replies: a queue of `Reply` (status, body, headers, delay) consumed one per request;
once the queue is empty the server answers 200 with a completion echoing the last user message. It records
every request body and header set, and the peak number of requests in flight. `GET /v1/models` lists
`served` (404 when it is None), counted in `model_lists`, not in `requests`. With `api_key` set, both
routes answer 401 to a request without that bearer key, as a server that checks keys would.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer of the stub server."""

    status: int = 200
    """HTTP status code."""
    body: dict[str, Any] | str | None = None
    """JSON body (dict), raw text, or None for the default echo completion."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (e.g. retry-after)."""
    delay: float = 0.0
    """Seconds to wait before answering (timeouts, concurrency)."""


def echo_completion(request_body: dict[str, Any]) -> dict[str, Any]:
    """A completion that echoes the last user message, with fixed usage numbers."""
    last_user = next(m["content"] for m in reversed(request_body["messages"]) if m["role"] == "user")
    return {
        "id": "cmpl-stub",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": f"echo: {last_user}"},
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    }


def tool_reply(*calls: tuple[str, dict]) -> Reply:
    """A completion that asks for these tool calls (name, arguments)."""
    tool_calls = [
        {"id": f"t{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
    return Reply(
        body={"choices": [{"message": message}], "usage": {"prompt_tokens": 50, "completion_tokens": 9}}
    )


def text_reply(text: str) -> Reply:
    """A completion that answers with this text."""
    message = {"role": "assistant", "content": text}
    return Reply(
        body={"choices": [{"message": message}], "usage": {"prompt_tokens": 60, "completion_tokens": 4}}
    )


class StubServer:
    """The server: bound to an ephemeral port on 127.0.0.1 when made, serving between start() and stop()."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.served: list[str] | None = ["stub-model"]  # what GET /v1/models lists
        self.model_lists = 0  # GET /v1/models requests answered
        self.api_key: str | None = None  # when set, a request without `Bearer <api_key>` is answered 401
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (ending in /v1) of this server."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, one each."""
        self.replies.extend(replies)

    def start(self) -> StubServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port; calling it again does nothing."""
        if self._thread.is_alive():  # shutdown() would wait forever for a loop that never started
            self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return self.replies.popleft() if self.replies else Reply()

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with stub._lock:
                    stub.model_lists += 1
                    served = stub.served
                found = self.path == "/v1/models" and served is not None
                listing = {
                    "object": "list",
                    "data": [{"id": name, "object": "model"} for name in served or ()],
                }
                status = (401 if not self._authorized() else 200) if found else 404
                answer = (
                    listing if status == 200 else {"error": f"no route {self.path}" if found else "bad key"}
                )
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = stub._next_reply(body, {k.lower(): v for k, v in self.headers.items()})
                done = False
                try:
                    if reply.delay:
                        time.sleep(reply.delay)
                    if self.path != "/v1/chat/completions":
                        reply = Reply(404, {"error": f"no route {self.path}"})
                    elif not self._authorized():
                        reply = Reply(401, {"error": "bad key"})
                    payload = reply.body if reply.body is not None else echo_completion(body)
                    data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                    # The request stops counting as in flight before its answer is sent: once the client has
                    # the answer it may start the next request, and that must not count as a third at once.
                    stub._done()
                    done = True
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)
                finally:
                    if not done:
                        stub._done()

            def _authorized(self) -> bool:
                return stub.api_key is None or self.headers.get("authorization") == f"Bearer {stub.api_key}"

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler
