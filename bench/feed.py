#!/usr/bin/env python3
"""Feed benchmark: Herald's GET /api/v1/feed beside two references serving the same bytes: a C program on
the same libmicrohttpd (bench/reference/mhd_feed.c: Herald's header block, a response made per request
over a dup() of an in-memory file, the 304 framed as Herald frames it), the floor of Herald's library; and
a tuned nginx with Herald's feed headers (ETag, Cache-Control, Vary, Content-Type), serving a static file
from its open-file cache. Herald runs as shipped (the default `info` log level, its request log written
to a file). For each feed size (`--campaigns`, default 10, 100 and 1000) and each connection count
(`--connections`, default 64 and 1000), the 200 path and the 304 path (If-None-Match) are measured in
interleaved rounds (`--rounds`, the order of the three servers reversed every other round), each a wrk
run of `--seconds`. Each run reports requests/s, the server's CPU per request (Herald's and the C
program's process; nginx's master and workers, from /proc), bytes on the wire per answer (wrk's total
read over its requests, headers included), and p50/p99 latency; the summary is the median of the rounds,
Herald ÷ C reference and Herald ÷ nginx. With `--gzip` every request accepts gzip: Herald sends its
gzipped variant (compressed once per change), the C program the same gzipped bytes, nginx the same by
gzip_static. Herald's 304 carries `Connection: close` (libmicrohttpd 0.9.75 writes a 304 without
Content-Length only so), as the C program's does, so wrk opens a new connection for each of their 304s;
nginx keeps its connections.

wrk's connections all come from 127.0.0.1, so Herald runs with `--max-connections-per-address 0`
(as behind a proxy); its other limits are the shipped ones.
Run from the repository root:  python3 bench/feed.py [--seconds 10] [--rounds 3]
Installs wrk and nginx from Debian if missing (the C program needs libmicrohttpd-dev); builds the release binary if needed."""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from common import Server, cli, compile_reference, cpu_seconds, ensure_binary, ensure_wrk, feed_campaign, percentile, wrk


def ensure_nginx() -> None:
    if not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists():
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "nginx"], check=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


class Nginx:
    """nginx tuned for one small static file: two workers (one a core), sendfile with tcp_nopush, the
    file's descriptor and metadata kept open (open_file_cache), no access log, long keep-alive, and
    Herald's feed headers, so both answers carry the same header block."""

    def __init__(self, folder: Path, body: bytes, etag: str, gzipped: bytes | None = None):
        (folder / "html").mkdir(parents=True)
        (folder / "html" / "feed.json").write_bytes(body)
        # With `--gzip`, Herald's gzipped bytes beside it, sent by gzip_static as they are (no compression per request).
        if gzipped:
            (folder / "html" / "feed.json.gz").write_bytes(gzipped)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        # nginx's own ETag comes from the file's time and size; Herald's is given to it as the header to send,
        # and `etag off` keeps nginx from adding its own beside it. If-None-Match is matched by a map, as
        # nginx's static module would match its own tag.
        (folder / "nginx.conf").write_text(f"""
worker_processes 2; worker_rlimit_nofile 8192; daemon off; pid {folder}/nginx.pid; error_log {folder}/error.log;
events {{ worker_connections 4096; multi_accept on; }}
http {{
  access_log off; sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 1000000; keepalive_timeout 60s;
  open_file_cache max=16 inactive=60s; open_file_cache_valid 3600s; open_file_cache_errors on;
  server_tokens off; etag off;
  map $http_if_none_match $not_modified {{ default 0; '{etag}' 1; }}
  server {{
    listen 127.0.0.1:{port} backlog=4096; root {folder}/html;
    location = /feed.json {{
      default_type application/json;
      add_header ETag '{etag}' always; add_header Cache-Control "public, max-age=0, s-maxage=10" always;
      add_header Vary "Authorization, X-Installation-Id, Accept-Encoding, Origin" always;{" gzip_static on;" if gzipped else ""}
      if ($not_modified) {{ return 304; }}
    }}
  }}
}}
""")
        self.process = subprocess.Popen(["/usr/sbin/nginx", "-c", str(folder / "nginx.conf"), "-p", str(folder)])
        self.url = f"http://127.0.0.1:{port}/feed.json"
        for _ in range(50):
            try:
                with urllib.request.urlopen(self.url) as served:
                    if served.read() != body:
                        raise SystemExit("nginx serves other bytes than Herald's feed")
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"nginx did not start; see {folder}/error.log")

    def cpu_seconds(self) -> float:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        return sum(cpu_seconds(pid) for pid in [self.process.pid, *map(int, children)])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


class MhdReference:
    """bench/reference/mhd_feed.c serving `body` with the header block Herald sent: the fields of Herald's
    304 on every answer, those only its 200 carries (Content-Type, Content-Encoding) on a 200. The fields
    each answer makes for itself (Date, Content-Length, Connection, X-Request-Id) and the ETag, given on
    its own, are left out. Checked to answer with Herald's bytes and the same header names."""

    # Made by the server for each answer, not copied from Herald's.
    OWN_FIELDS = {"date", "content-length", "connection", "x-request-id", "etag"}

    def __init__(self, program: Path, folder: Path, body: bytes, etag: str, herald_ok: list[tuple[str, str]],
                 herald_not_modified: list[tuple[str, str]], encoding: dict[str, str]):
        folder.mkdir(parents=True)
        (folder / "feed.json").write_bytes(body)
        every = [(name, value) for name, value in herald_not_modified if name.lower() not in self.OWN_FIELDS]
        ok_only = [(name, value) for name, value in herald_ok if name.lower() not in self.OWN_FIELDS and (name, value) not in every]
        arguments = [item for name, value in every for item in ("-h", f"{name}: {value}")]
        arguments += [item for name, value in ok_only for item in ("-b", f"{name}: {value}")]
        self.process = subprocess.Popen([str(program), *arguments, str(folder / "feed.json"), etag], stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.process.stdout.readline().split()[1]}/feed.json"
        ok, not_modified = answers(self.url, {}, etag, encoding)
        if ok[2] != body:
            raise SystemExit("the C reference serves other bytes than Herald's feed")
        for path, ours, theirs in (("200", herald_ok, ok[1]), ("304", herald_not_modified, not_modified[1])):
            if sorted(name.lower() for name, _ in ours) != sorted(name.lower() for name, _ in theirs):
                raise SystemExit(f"the C reference's {path} has other header fields than Herald's: {theirs} beside {ours}")

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


def answers(url: str, headers: dict[str, str], etag: str, encoding: dict[str, str]) -> tuple[tuple, tuple]:
    """The 200 and the 304 (for If-None-Match: `etag`) of `url`, each as status, header fields and body."""
    def get(extra: dict[str, str]) -> tuple:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers={**headers, **encoding, **extra})) as served:
                return served.status, served.headers.items(), served.read()
        except urllib.error.HTTPError as answer:
            return answer.code, answer.headers.items(), answer.read()
    ok, not_modified = get({}), get({"If-None-Match": etag})
    if ok[0] != 200 or not_modified[0] != 304:
        raise SystemExit(f"{url} answered {ok[0]} and, for its own ETag, {not_modified[0]}")
    return ok, not_modified


def measured(url: str, seconds: int, headers: dict[str, str], connections: int, cpu) -> dict:
    before = cpu()
    result = wrk(url, seconds, headers, connections=connections)
    used = cpu() - before
    result["cpu_us"] = used / max(1, result["rps"] * seconds) * 1e6
    return result


def figures(result: dict) -> str:
    """One run's (or the medians') figures on one line."""
    return (f"{result['rps']:>9,.0f} req/s {result['cpu_us']:>6.1f} µs CPU/req {result['bytes']:>7,.0f} B/answer "
            f"p50 {result['p50']:.2f} p99 {result['p99']:.2f} ms")


def feed_for(workdir: Path, count: int) -> tuple[Server, str]:
    """A database with `count` published campaigns in one app, served as shipped; returns the server and a feed key."""
    database = workdir / f"feed-{count}.sqlite"
    app = cli("app", "create", "--name", "Bench", "--platform", "ios", database=database).split()[-1]
    key = cli("key", "create", "--app", app, "--scope", "feed:read", "--scope", "campaigns:write", database=database).split()[-1]
    server = Server(database, workdir / f"herald-{count}.log", extra=["--max-connections-per-address", "0"])
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    for index in range(count):
        body = feed_campaign(index, int(app))
        request = urllib.request.Request(f"{server.base}/api/v1/campaigns", data=json.dumps(body).encode(), headers=headers, method="POST")
        campaign = json.load(urllib.request.urlopen(request))["id"]
        urllib.request.urlopen(urllib.request.Request(f"{server.base}/api/v1/campaigns/{campaign}/publish", data=b"", headers=headers, method="POST"))
    return server, key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--campaigns", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--connections", type=int, nargs="+", default=[64, 1000])
    parser.add_argument("--gzip", action="store_true",
                        help="requests accept gzip: Herald's gzipped variant beside the C program and nginx (gzip_static) sending the same bytes")
    options = parser.parse_args()
    # wrk, Herald and nginx inherit it: 1000 connections need more descriptors than the usual soft 1024.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ensure_binary()
    ensure_wrk()
    ensure_nginx()
    workdir = Path(tempfile.mkdtemp(prefix="herald-feed-bench-"))
    workdir.chmod(0o755)  # nginx's workers run as an unprivileged user and must read the copy of the feed
    program = compile_reference("mhd_feed", workdir, "-lmicrohttpd")
    print(f"machine: {os.cpu_count()} cores; wrk -t2 -d{options.seconds}s; {options.rounds} interleaved rounds; "
          "Herald as shipped (info log to a file) beside a C program on libmicrohttpd and tuned nginx, all on loopback")
    rows = []
    for count in options.campaigns:
        server, key = feed_for(workdir, count)
        nginx = reference = None
        try:
            feed_url, authorization = f"{server.base}/api/v1/feed", {"Authorization": f"Bearer {key}"}
            with urllib.request.urlopen(urllib.request.Request(feed_url, headers=authorization)) as feed:
                body, etag = feed.read(), feed.headers["ETag"]
            encoding = {"Accept-Encoding": "gzip"} if options.gzip else {}
            gzipped = None
            if options.gzip:
                with urllib.request.urlopen(urllib.request.Request(feed_url, headers={**authorization, **encoding})) as feed:
                    gzipped, etag, coding = feed.read(), feed.headers["ETag"], feed.headers["Content-Encoding"]
                if coding != "gzip" or gzip.decompress(gzipped) != body:
                    raise SystemExit("Herald's gzipped feed is not gzip or does not inflate to its feed")
            ok, not_modified = answers(feed_url, authorization, etag, encoding)
            reference = MhdReference(program, workdir / f"mhd-{count}", ok[2], etag, ok[1], not_modified[1], encoding)
            nginx = Nginx(workdir / f"nginx-{count}", body, etag, gzipped)
            print(f"\nfeed of {count} campaigns: {len(body) / 1024:.1f} KB" + (f", gzipped {len(gzipped) / 1024:.1f} KB" if gzipped else ""))
            for connections in options.connections:
                for path, extra in (("200", dict(encoding)), ("304", {"If-None-Match": etag, **encoding})):
                    sides = [("Herald", feed_url, {**authorization, **extra}, lambda: cpu_seconds(server.pid)),
                             ("C reference", reference.url, dict(extra), reference.cpu_seconds),
                             ("nginx", nginx.url, dict(extra), nginx.cpu_seconds)]
                    runs = {name: [] for name, *_ in sides}
                    for round_index in range(options.rounds):
                        for name, url, headers, cpu in (sides if round_index % 2 == 0 else sides[::-1]):
                            result = measured(url, options.seconds, headers, connections, cpu)
                            if result["failed"]:
                                raise SystemExit(f"{name}, {count} campaigns, {path}, -c{connections}: {result['errors']}")
                            runs[name].append(result)
                            print(f"  {path} -c{connections:<5} round {round_index + 1} {name:<11} {figures(result)}", flush=True)
                    summary = {name: {field: percentile([run[field] for run in results], 0.5) for field in ("rps", "cpu_us", "p50", "p99", "bytes")}
                               for name, results in runs.items()}
                    rows.append((count, path, connections, summary))
                    ours = summary["Herald"]
                    print(f"  {path} -c{connections:<5} medians: " + " | ".join(f"{name} {figures(median)}" for name, median in summary.items()))
                    print(f"  {path} -c{connections:<5} Herald ÷ C reference: CPU/req {ours['cpu_us'] / summary['C reference']['cpu_us']:.2f}, "
                          f"req/s {ours['rps'] / summary['C reference']['rps']:.2f}; Herald ÷ nginx: CPU/req "
                          f"{ours['cpu_us'] / summary['nginx']['cpu_us']:.2f}, req/s {ours['rps'] / summary['nginx']['rps']:.2f}")
        finally:
            for side in (nginx, reference):
                if side:
                    side.stop()
            server.stop()

    print("\n| campaigns | path | connections | bytes/answer Herald / C / nginx | Herald req/s | Herald µs CPU/req | Herald p50 / p99 ms "
          "| C req/s | C µs CPU/req | nginx req/s | nginx µs CPU/req | CPU/req Herald ÷ C | CPU/req Herald ÷ nginx | req/s Herald ÷ C | req/s Herald ÷ nginx |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for count, path, connections, summary in rows:
        ours, floor, theirs = summary["Herald"], summary["C reference"], summary["nginx"]
        print(f"| {count} | {path} | {connections} | {ours['bytes']:,.0f} / {floor['bytes']:,.0f} / {theirs['bytes']:,.0f} | {ours['rps']:,.0f} | "
              f"{ours['cpu_us']:.1f} | {ours['p50']:.2f} / {ours['p99']:.2f} | {floor['rps']:,.0f} | {floor['cpu_us']:.1f} | "
              f"{theirs['rps']:,.0f} | {theirs['cpu_us']:.1f} | {ours['cpu_us'] / floor['cpu_us']:.2f} | {ours['cpu_us'] / theirs['cpu_us']:.2f} | "
              f"{ours['rps'] / floor['rps']:.2f} | {ours['rps'] / theirs['rps']:.2f} |")

if __name__ == "__main__":
    main()
