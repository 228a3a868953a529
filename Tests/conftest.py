"""Fixtures shared by Herald's Python tests (browser and API contract).

* ``herald_server`` starts the already built ``herald`` binary against a fresh
  SQLite database in a temporary directory (so every test session is a first
  run), and stops it with SIGTERM at the end, asserting a clean exit.
* ``seeded_herald`` is a second, separate instance whose admin and app ("Shop")
  are created with the ``herald`` CLI before it starts serving.
* ``herald_cli`` runs a ``herald`` command against a database.

Nothing here builds Swift: set ``HERALD_BIN`` to point at another binary.

With ``HERALD_TEST_ENGINE=postgres`` (and ``HERALD_TEST_POSTGRES_URL`` naming a server whose user may
create databases, as Tools/with-postgres.sh sets), every database path a test names stands for a fresh
PostgreSQL database of its own instead of an SQLite file: the same tests then run Herald on PostgreSQL.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import hashlib
import urllib.parse

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = REPO_ROOT / ".build" / "debug" / "herald"

STARTUP_TIMEOUT = 30  # seconds to wait for the "Herald is running at" line
SHUTDOWN_TIMEOUT = 10  # seconds to wait for exit after SIGTERM

BANNER = re.compile(r"Herald is running at (http://\S+?/?) \(database ")


ENGINE = os.environ.get("HERALD_TEST_ENGINE", "sqlite")
_postgres_databases: dict[Path, str] = {}


def database_arguments(database: Path) -> list[str]:
    """The `--db` (and, on PostgreSQL, `--secret-key`) arguments that put a test's database at `database`."""
    if ENGINE != "postgres":
        return ["--db", str(database)]
    if database not in _postgres_databases:
        admin = os.environ.get("HERALD_TEST_POSTGRES_URL")
        if not admin:
            pytest.fail("HERALD_TEST_ENGINE=postgres needs HERALD_TEST_POSTGRES_URL: run through Tools/with-postgres.sh")
        name = "herald_" + hashlib.sha256(str(database).encode()).hexdigest()[:20]
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", admin, "-c", f"CREATE DATABASE {name}"],
                       check=True, capture_output=True, timeout=30)
        parts = urllib.parse.urlsplit(admin)
        _postgres_databases[database] = urllib.parse.urlunsplit(parts._replace(path="/" + name))
    # Every instance on one PostgreSQL opens push credentials with the same key file.
    return ["--db", _postgres_databases[database], "--secret-key", str(database) + ".key"]


@contextmanager
def database_refusing_writes(server: "HeraldServer") -> Iterator[None]:
    """Makes the server's database refuse every change until the block ends: on SQLite a file-size limit of 0
    on the server process (a full disk); on PostgreSQL the database made read-only and Herald's connections
    ended, so that each new one starts read-only (a standby, or a server out of space, answers alike)."""
    if ENGINE != "postgres":
        subprocess.run(["prlimit", "--pid", str(server.pid), "--fsize=0:"], check=True)
        try:
            yield
        finally:
            subprocess.run(["prlimit", "--pid", str(server.pid), "--fsize=unlimited:"], check=True)
        return
    admin = os.environ["HERALD_TEST_POSTGRES_URL"]
    name = urllib.parse.urlsplit(_postgres_databases[server.database]).path.lstrip("/")

    def administer(statement: str) -> None:
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", admin, "-c", statement], check=True, capture_output=True, timeout=30)
        subprocess.run(["psql", "-q", admin, "-c", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        f"WHERE datname = '{name}' AND application_name = 'herald'"], check=True, capture_output=True, timeout=30)
        time.sleep(0.3)  # the server notices its ended connections and opens new ones at the next request

    administer(f"ALTER DATABASE {name} SET default_transaction_read_only = on")
    try:
        yield
    finally:
        administer(f"ALTER DATABASE {name} RESET default_transaction_read_only")


@dataclass(frozen=True)
class HeraldServer:
    base_url: str  # without a trailing slash, e.g. "http://127.0.0.1:40687"
    database: Path
    log_path: Path
    pid: int  # the server process, for tests that change its limits

    def url(self, path: str = "/") -> str:
        return self.base_url + path


def _herald_binary() -> Path:
    binary = Path(os.environ.get("HERALD_BIN", DEFAULT_BINARY))
    if not binary.is_absolute():
        binary = REPO_ROOT / binary
    if not binary.is_file() or not os.access(binary, os.X_OK):
        pytest.fail(
            f"Herald binary not found or not executable at {binary}; "
            "build it first or set HERALD_BIN"
        )
    return binary


def _pump_stdout(stream, lines: "queue.Queue[str]") -> None:
    """Forward stdout lines to a queue, and keep draining so the pipe never fills."""
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode("utf-8", errors="replace"))
    stream.close()


@contextmanager
def _serve(workdir: Path, database: Path, arguments: tuple[str, ...] = ()) -> Iterator[HeraldServer]:
    """Run `herald serve [ARGUMENTS]` on a free port until the block ends, then stop it with SIGTERM."""
    log_path = workdir / "herald.stderr.log"

    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                str(_herald_binary()),
                "serve",
                *database_arguments(database),
                "--port", "0",
                "--resources", str(REPO_ROOT),
                *arguments,
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=workdir,
        )

    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(
        target=_pump_stdout, args=(process.stdout, lines), daemon=True
    ).start()

    try:
        first_line = lines.get(timeout=STARTUP_TIMEOUT)
    except queue.Empty:
        process.kill()
        process.wait()
        pytest.fail(
            f"Herald printed nothing within {STARTUP_TIMEOUT}s "
            f"(exit code {process.returncode}); stderr: {log_path.read_text()!r}"
        )

    match = BANNER.search(first_line)
    if not match:
        process.kill()
        process.wait()
        pytest.fail(
            f"Unexpected first stdout line from Herald: {first_line!r}; "
            f"stderr: {log_path.read_text()!r}"
        )

    server = HeraldServer(
        base_url=match.group(1).rstrip("/"),
        database=database,
        log_path=log_path,
        pid=process.pid,
    )
    yield server

    process.send_signal(signal.SIGTERM)
    try:
        exit_code = process.wait(timeout=SHUTDOWN_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(
            f"Herald did not exit within {SHUTDOWN_TIMEOUT}s of SIGTERM; "
            f"stderr: {log_path.read_text()!r}"
        )
    assert exit_code == 0, (
        f"Herald exited with code {exit_code} after SIGTERM; "
        f"stderr: {log_path.read_text()!r}"
    )


@pytest.fixture(scope="session")
def herald_server(tmp_path_factory) -> Iterator[HeraldServer]:
    """A brand-new instance: no user yet, so the first visit leads to /setup."""
    workdir = tmp_path_factory.mktemp("herald")
    with _serve(workdir, workdir / "herald.sqlite") as server:
        yield server


@dataclass(frozen=True)
class SeededHerald:
    server: HeraldServer
    admin_email: str
    admin_password: str
    app_name: str

    def url(self, path: str = "/") -> str:
        return self.server.url(path)


def _herald_cli(*arguments: str, database: Path, cwd: Path, stdin: str | None = None) -> str:
    result = subprocess.run(
        [str(_herald_binary()), *arguments, *database_arguments(database), "--resources", str(REPO_ROOT)],
        input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60,
    )
    if result.returncode != 0:
        pytest.fail(
            f"herald {' '.join(arguments)} exited with {result.returncode}; "
            f"stdout: {result.stdout!r}; stderr: {result.stderr!r}"
        )
    return result.stdout


@pytest.fixture(scope="session")
def seeded_herald(tmp_path_factory) -> Iterator[SeededHerald]:
    """Its own fresh instance with an admin and an app "Shop" (iOS, Android), made with the CLI."""
    workdir = tmp_path_factory.mktemp("herald-seeded")
    database = workdir / "herald.sqlite"
    email, password, app = "composer-admin@example.com", "composer-passphrase-1", "Shop"
    _herald_cli("user", "create", "--email", email, "--role", "admin", "--password-stdin",
                database=database, cwd=workdir, stdin=password + "\n")
    _herald_cli("app", "create", "--name", app, "--platform", "ios", "--platform", "android",
                database=database, cwd=workdir)
    with _serve(workdir, database) as server:
        yield SeededHerald(server=server, admin_email=email, admin_password=password, app_name=app)


@pytest.fixture(scope="session")
def refusing_writes():
    """Return a context manager that makes a server's database refuse changes: see ``database_refusing_writes``."""
    return database_refusing_writes


@pytest.fixture(scope="session")
def herald_binary() -> Path:
    """The `herald` binary under test, for tests that run it in ways the fixtures above do not."""
    return _herald_binary()


@pytest.fixture(scope="session")
def herald_cli():
    """Return a function that runs `herald ARGS --db DATABASE` and returns its standard output."""
    return _herald_cli


@contextmanager
def serving(workdir: Path, database: Path, *arguments: str) -> Iterator[HeraldServer]:
    """For tests that need a server of their own, with extra `herald serve` options: see ``_serve``."""
    with _serve(workdir, database, arguments) as server:
        yield server


@pytest.fixture(scope="session")
def herald_serve():
    """Return a context manager that serves a given database (with extra serve options) until the block ends."""
    return serving
