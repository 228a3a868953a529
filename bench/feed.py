#!/usr/bin/env python3
"""Feed benchmark: Herald's GET /api/v1/feed side by side with nginx serving the same bytes as a static
file with its ETag, in the same run, with wrk -t2 -c64: the 200 path and the 304 path (If-None-Match),
for a feed of 100 campaigns (~40-60 KB) and one of 10. Prints requests/s, the ratio to nginx, and
p50/p99 latency. Run from the repository root:  python3 bench/feed.py [--seconds 10]
Installs wrk and nginx from Debian if missing; builds the release binary if needed."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from common import BINARY, ROOT, cli, ensure_binary, ensure_wrk, feed_campaign, wrk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    options = parser.parse_args()
    ensure_binary()
    ensure_wrk()
    if not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists():
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "nginx"], check=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    workdir = Path(tempfile.mkdtemp(prefix="herald-feed-bench-"))
    workdir.chmod(0o755)  # nginx's workers run as an unprivileged user and must read the copy of the feed
    print(f"machine: {os.cpu_count()} cores; wrk -t2 -c64 -d{options.seconds}s; Herald and nginx on loopback in the same run")
    for count in (100, 10):
        database = workdir / f"feed-{count}.sqlite"
        app = cli("app", "create", "--name", "Bench", "--platform", "ios", database=database).split()[-1]
        key = cli("key", "create", "--app", app, "--scope", "feed:read", "--scope", "campaigns:write", database=database).split()[-1]
        server = subprocess.Popen([str(BINARY), "serve", "--db", str(database), "--port", "0", "--log-level", "error", "--resources", str(ROOT)],
                                  stdout=subprocess.PIPE, text=True)
        base = re.search(r"(http://\S+?)/ ", server.stdout.readline()).group(1)
        nginx_dir = workdir / f"nginx-{count}"
        try:
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
            for index in range(count):
                body = feed_campaign(index, int(app))
                request = urllib.request.Request(f"{base}/api/v1/campaigns", data=json.dumps(body).encode(), headers=headers, method="POST")
                campaign = json.load(urllib.request.urlopen(request))["id"]
                urllib.request.urlopen(urllib.request.Request(f"{base}/api/v1/campaigns/{campaign}/publish", data=b"", headers=headers, method="POST"))
            feed = urllib.request.urlopen(urllib.request.Request(f"{base}/api/v1/feed", headers={"Authorization": f"Bearer {key}"}))
            feed_bytes, etag = feed.read(), feed.headers["ETag"]

            # nginx serves the same bytes as a static file; its own ETag is what If-None-Match must carry.
            (nginx_dir / "html").mkdir(parents=True)
            with socket.socket() as probe:  # a free port for nginx
                probe.bind(("127.0.0.1", 0))
                nginx_port = probe.getsockname()[1]
            (nginx_dir / "html" / "feed.json").write_bytes(feed_bytes)
            (nginx_dir / "nginx.conf").write_text(f"""
worker_processes 2; daemon off; pid {nginx_dir}/nginx.pid; error_log {nginx_dir}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  server {{ listen 127.0.0.1:{nginx_port}; root {nginx_dir}/html; location / {{ default_type application/json; etag on; }} }} }}
""")
            nginx = subprocess.Popen(["/usr/sbin/nginx", "-c", str(nginx_dir / "nginx.conf"), "-p", str(nginx_dir)])
            try:
                nginx_url = f"http://127.0.0.1:{nginx_port}/feed.json"
                for _ in range(50):
                    try:
                        served = urllib.request.urlopen(nginx_url)
                        break
                    except OSError:
                        time.sleep(0.1)
                else:
                    raise SystemExit(f"nginx did not start; see {nginx_dir}/error.log")
                if served.read() != feed_bytes:
                    raise SystemExit("nginx serves other bytes than Herald's feed")
                nginx_etag = served.headers["ETag"]
                print(f"\nfeed of {count} campaigns: {len(feed_bytes) / 1024:.1f} KB")
                for label, herald_headers, nginx_headers in (
                    ("200", {"Authorization": f"Bearer {key}"}, {}),
                    ("304", {"Authorization": f"Bearer {key}", "If-None-Match": etag}, {"If-None-Match": nginx_etag}),
                ):
                    ours = wrk(f"{base}/api/v1/feed", options.seconds, herald_headers)
                    theirs = wrk(nginx_url, options.seconds, nginx_headers)
                    print(f"  {label}: Herald {ours['rps']:>9,.0f} req/s (p50 {ours['p50']:.2f} ms, p99 {ours['p99']:.2f} ms, errors: {ours['errors']})"
                          f" | nginx {theirs['rps']:>9,.0f} req/s (p50 {theirs['p50']:.2f} ms, p99 {theirs['p99']:.2f} ms, errors: {theirs['errors']})"
                          f" | ratio {ours['rps'] / theirs['rps']:.2f}")
            finally:
                nginx.terminate()
                nginx.wait()
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
