"""Servers a web client's world needs, all on loopback: the images campaigns link to (over HTTPS,
under the name img.example, with a certificate made for the run) and the pages of a shop that
uses herald.js (plain HTTP, on ports of their own, so each is an origin of its own).

The browser reaches img.example through Chromium's host-resolver rules and accepts the run's
certificate with --ignore-certificate-errors; see ``web_driver``.
"""

from __future__ import annotations

import http.server
import ssl
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

IMAGE_HOST = "img.example"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextmanager
def _serving(handler: type[http.server.BaseHTTPRequestHandler], context: ssl.SSLContext | None = None) -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def image_server(folder: Path, images: dict[str, bytes]) -> Iterator[int]:
    """HTTPS on a loopback port answering ``/<name>`` with ``images[name]`` and 404 for the rest;
    yields the port. Counts nothing and keeps no state, like a CDN."""
    key, certificate = folder / "image-key.pem", folder / "image-cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={IMAGE_HOST}",
         "-addext", f"subjectAltName=DNS:{IMAGE_HOST}", "-keyout", str(key), "-out", str(certificate)],
        check=True, capture_output=True, timeout=60,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)

    class Images(_Quiet):
        def do_GET(self):  # noqa: N802 - the base class's name
            body = images.get(self.path.lstrip("/").split("?")[0])
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "public, max-age=600")
            self.end_headers()
            self.wfile.write(body)

    with _serving(Images, context) as port:
        yield port


@contextmanager
def page_server(pages: dict[str, Callable[[], str]]) -> Iterator[int]:
    """Plain HTTP on a loopback port answering ``/<name>`` with the HTML ``pages[name]()`` makes."""

    class Pages(_Quiet):
        def do_GET(self):  # noqa: N802
            make = pages.get(self.path.lstrip("/").split("?")[0])
            if make is None:
                self.send_error(404)
                return
            body = make().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with _serving(Pages) as port:
        yield port
