#!/usr/bin/env python3
"""Feed benchmark: Herald's GET /api/v1/feed beside a tuned nginx serving the same bytes, with the same
response headers (ETag, Cache-Control, Vary, Content-Type), as a static file from its open-file cache.
Herald runs as shipped (the default `info` log level, its request log written to a file). For each feed
size (`--campaigns`, default 10, 100 and 1000) and each connection count (`--connections`, default 64
and 1000), the 200 path and the 304 path (If-None-Match) are measured in interleaved rounds (`--rounds`,
the order of the two servers alternating), each a wrk run of `--seconds`. Each run reports requests/s,
the server's CPU per request (Herald's process; nginx's master and workers, from /proc), bytes on the
wire per answer (wrk's total read over its requests, headers included), and p50/p99 latency; the summary
is the median of the rounds and Herald ÷ nginx. With `--gzip` every request accepts gzip: Herald sends
its gzipped variant (compressed once per change), nginx the same gzipped bytes by gzip_static.

wrk's connections all come from 127.0.0.1, so Herald runs with `--max-connections-per-address 0`
(as behind a proxy); its other limits are the shipped ones.
Run from the repository root:  python3 bench/feed.py [--seconds 10] [--rounds 3]
Installs wrk and nginx from Debian if missing; builds the release binary if needed."""

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
import urllib.request
from pathlib import Path

from common import Server, cli, cpu_seconds, ensure_binary, ensure_wrk, feed_campaign, percentile, wrk


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


def measured(url: str, seconds: int, headers: dict[str, str], connections: int, cpu) -> dict:
    before = cpu()
    result = wrk(url, seconds, headers, connections=connections)
    used = cpu() - before
    result["cpu_us"] = used / max(1, result["rps"] * seconds) * 1e6
    return result


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
                        help="requests accept gzip: Herald's gzipped variant beside nginx sending the same bytes with gzip_static")
    options = parser.parse_args()
    # wrk, Herald and nginx inherit it: 1000 connections need more descriptors than the usual soft 1024.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ensure_binary()
    ensure_wrk()
    ensure_nginx()
    workdir = Path(tempfile.mkdtemp(prefix="herald-feed-bench-"))
    workdir.chmod(0o755)  # nginx's workers run as an unprivileged user and must read the copy of the feed
    print(f"machine: {os.cpu_count()} cores; wrk -t2 -d{options.seconds}s; {options.rounds} interleaved rounds; "
          "Herald as shipped (info log to a file) beside tuned nginx, both on loopback")
    rows = []
    for count in options.campaigns:
        server, key = feed_for(workdir, count)
        nginx = None
        try:
            with urllib.request.urlopen(urllib.request.Request(f"{server.base}/api/v1/feed", headers={"Authorization": f"Bearer {key}"})) as feed:
                body, etag = feed.read(), feed.headers["ETag"]
            encoding = {"Accept-Encoding": "gzip"} if options.gzip else {}
            gzipped = None
            if options.gzip:
                with urllib.request.urlopen(urllib.request.Request(f"{server.base}/api/v1/feed", headers={"Authorization": f"Bearer {key}", **encoding})) as feed:
                    gzipped, etag, coding = feed.read(), feed.headers["ETag"], feed.headers["Content-Encoding"]
                if coding != "gzip" or gzip.decompress(gzipped) != body:
                    raise SystemExit("Herald's gzipped feed is not gzip or does not inflate to its feed")
            nginx = Nginx(workdir / f"nginx-{count}", body, etag, gzipped)
            print(f"\nfeed of {count} campaigns: {len(body) / 1024:.1f} KB" + (f", gzipped {len(gzipped) / 1024:.1f} KB" if gzipped else ""))
            for connections in options.connections:
                for path, extra in (("200", dict(encoding)), ("304", {"If-None-Match": etag, **encoding})):
                    runs = {"Herald": [], "nginx": []}
                    for round_index in range(options.rounds):
                        sides = [("Herald", f"{server.base}/api/v1/feed", {"Authorization": f"Bearer {key}", **extra}, lambda: cpu_seconds(server.pid)),
                                 ("nginx", nginx.url, dict(extra), nginx.cpu_seconds)]
                        for name, url, headers, cpu in (sides if round_index % 2 == 0 else sides[::-1]):
                            result = measured(url, options.seconds, headers, connections, cpu)
                            if result["failed"]:
                                raise SystemExit(f"{name}, {count} campaigns, {path}, -c{connections}: {result['errors']}")
                            runs[name].append(result)
                    summary = {name: {field: percentile([run[field] for run in results], 0.5) for field in ("rps", "cpu_us", "p50", "p99", "bytes")}
                               for name, results in runs.items()}
                    ours, theirs = summary["Herald"], summary["nginx"]
                    rows.append((count, path, connections, ours, theirs))
                    print(f"  {path} -c{connections:<5} Herald {ours['rps']:>9,.0f} req/s {ours['cpu_us']:>6.1f} µs CPU/req "
                          f"{ours['bytes']:,.0f} B/answer | nginx {theirs['bytes']:,.0f} B/answer | "
                          f"p50 {ours['p50']:.2f} p99 {ours['p99']:.2f} ms | nginx {theirs['rps']:>9,.0f} req/s {theirs['cpu_us']:>6.1f} µs CPU/req "
                          f"p50 {theirs['p50']:.2f} p99 {theirs['p99']:.2f} ms | CPU/req Herald ÷ nginx {ours['cpu_us'] / theirs['cpu_us']:.2f}, "
                          f"req/s {ours['rps'] / theirs['rps']:.2f} (rounds, Herald req/s: "
                          + ", ".join(f"{run['rps']:,.0f}" for run in runs["Herald"]) + ")")
        finally:
            if nginx:
                nginx.stop()
            server.stop()

    print("\n| campaigns | path | connections | bytes/answer Herald / nginx | Herald req/s | Herald µs CPU/req | Herald p50 / p99 ms "
          "| nginx req/s | nginx µs CPU/req | nginx p50 / p99 ms | CPU/req ÷ | req/s ÷ |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for count, path, connections, ours, theirs in rows:
        print(f"| {count} | {path} | {connections} | {ours['bytes']:,.0f} / {theirs['bytes']:,.0f} | {ours['rps']:,.0f} | {ours['cpu_us']:.1f} | "
              f"{ours['p50']:.2f} / {ours['p99']:.2f} | "
              f"{theirs['rps']:,.0f} | {theirs['cpu_us']:.1f} | {theirs['p50']:.2f} / {theirs['p99']:.2f} | "
              f"{ours['cpu_us'] / theirs['cpu_us']:.2f} | {ours['rps'] / theirs['rps']:.2f} |")


if __name__ == "__main__":
    main()
