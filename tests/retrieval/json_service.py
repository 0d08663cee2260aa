"""What the tests' little JSON services share (embedding_service.py, rerank_service.py): a
handler that reads a JSON body and replies JSON, the 503 a service gives while it is "loading",
and a server on 127.0.0.1 and a free port, started and stopped around a `with` block."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol


class Failing(Protocol):
    failures: int | None  # 503 replies still to give first (None: always)


class JSONHandler(BaseHTTPRequestHandler):
    def body(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def still_loading(self, service: Failing) -> bool:
        """Replies 503, counting it down, while the service has failures left to give."""
        if service.failures is not None and service.failures <= 0:
            return False
        if service.failures is not None:
            service.failures -= 1
        self.reply(503, {"error": "loading model"})
        return True

    def reply(self, status: int, payload: object) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:  # quiet
        pass


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that stopped waiting (a timeout under test) is no error of the server's."""


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` served on 127.0.0.1 during the block; yields `http://127.0.0.1:PORT`."""
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
