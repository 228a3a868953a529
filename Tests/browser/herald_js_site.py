"""A loopback web site for testing herald.js in Chromium without the Herald server.

It serves Clients/web/herald.js wrapped exactly as Herald serves it (``/herald.js``, a classic script
that sets ``globalThis.Herald``; ``/herald.mjs``, an ES module), the conformance runner, the test pages
in ``herald_js_pages/``, and images drawn here (``/img/<name>.png``, ``?delay=<seconds>`` to answer
late, ``/img/missing.png`` is a 404). ``/csp/<page>`` serves a page under a Content-Security-Policy that
forbids blob: workers, as a strict site would.
"""

from __future__ import annotations

import math
import struct
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

REPO_ROOT = Path(__file__).resolve().parents[2]
CLIENT_SOURCE = REPO_ROOT / "Clients" / "web" / "herald.js"
RUNNER = REPO_ROOT / "Tests" / "conformance" / "runner.js"
PAGES = Path(__file__).resolve().parent / "herald_js_pages"

CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
STRICT_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'"


def classic_script(source: str) -> str:
    """The classic-script wrapping Herald serves at /sdk/v1/herald.js."""
    return "(function () {\n" + source + "\nglobalThis.Herald = Herald;\n})();"


def module_script(source: str) -> str:
    """The ES-module wrapping Herald serves at /sdk/v1/herald.mjs."""
    return source + "\nexport { Herald };\nexport default Herald;"


def png(width: int, height: int, pixel) -> bytes:
    """A truecolor PNG whose pixel (x, y) is `pixel(x, y)` -> (r, g, b)."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows.extend(pixel(x, y))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + chunk(b"IEND", b"")


def _picture(width: int, height: int, top: tuple[int, int, int], bottom: tuple[int, int, int]) -> bytes:
    """A sky-like gradient with a sun and hills: something a person can tell apart in a screenshot."""
    sun_x, sun_y, sun_r = width * 0.7, height * 0.35, min(width, height) * 0.14

    def pixel(x: int, y: int) -> tuple[int, int, int]:
        hill = height * (0.72 + 0.08 * math.sin(x / width * math.pi * 2.2))
        if y > hill:
            return (46, 125, 50) if y > hill + height * 0.05 else (67, 160, 71)
        if (x - sun_x) ** 2 + (y - sun_y) ** 2 < sun_r**2:
            return (255, 202, 40)
        t = y / height
        return tuple(round(a + (b - a) * t) for a, b in zip(top, bottom))

    return png(width, height, pixel)


IMAGES = {
    "portrait": lambda: _picture(480, 320, (25, 118, 210), (144, 202, 249)),
    "landscape": lambda: _picture(400, 400, (123, 31, 162), (243, 229, 245)),
    "square": lambda: _picture(360, 450, (230, 81, 0), (255, 224, 178)),
    "icon": lambda: _picture(112, 112, (0, 121, 107), (178, 223, 219)),
    "wide": lambda: _picture(600, 400, (55, 71, 79), (207, 216, 220)),
}


class _Handler(BaseHTTPRequestHandler):
    images: dict[str, bytes] = {}

    def log_message(self, format, *args):  # noqa: A002 - the base class names it so
        pass

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store" if not content_type.startswith("image/") else "max-age=3600")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        path = url.path
        query = parse_qs(url.query)
        if path == "/herald.js":
            return self._send(200, classic_script(CLIENT_SOURCE.read_text()).encode(), "text/javascript; charset=utf-8")
        if path == "/herald.mjs":
            return self._send(200, module_script(CLIENT_SOURCE.read_text()).encode(), "text/javascript; charset=utf-8")
        if path == "/runner.js":
            return self._send(200, RUNNER.read_bytes(), "text/javascript; charset=utf-8")
        if path.startswith("/img/"):
            name = path[len("/img/") :].removesuffix(".png")
            if name not in self.images:
                return self._send(404, b"no such image", "text/plain")
            delay = float(query.get("delay", ["0"])[0])
            time.sleep(min(delay, 10.0))
            return self._send(200, self.images[name], "image/png")
        policy = None
        if path.startswith("/csp/"):
            policy = STRICT_POLICY
            path = path[len("/csp") :]
        page = PAGES / path.lstrip("/")
        if path.count("/") == 1 and page.is_file():
            content_type = CONTENT_TYPES.get(page.suffix, "application/octet-stream")
            return self._send(200, page.read_bytes(), content_type, {"Content-Security-Policy": policy} if policy else None)
        return self._send(404, b"not found", "text/plain")


class HeraldJsSite:
    """The site on a free loopback port, in a thread, until `stop()`."""

    def __init__(self) -> None:
        _Handler.images = {name: draw() for name, draw in IMAGES.items()}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        host, port = self.server.server_address[:2]
        self.base_url = f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
