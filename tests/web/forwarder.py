"""A TCP port that refuses connections until ``open()``, then relays them to another port:
a Slack Web API that is unreachable first and answers later, at the same address."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading

from tests.support.redis_server import free_port


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


class Forwarder:
    def __init__(self, target_port: int) -> None:
        self.port = free_port()
        self._target_port = target_port
        self._server: socketserver.ThreadingTCPServer | None = None

    def open(self) -> None:
        target_port = self._target_port

        class Relay(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with socket.create_connection(("127.0.0.1", target_port)) as upstream:
                    back = threading.Thread(target=_pump, args=(upstream, self.request))
                    back.start()
                    _pump(self.request, upstream)
                    back.join(30)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", self.port), Relay)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
