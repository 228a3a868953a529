"""`make install` and `make deb` as an operator uses them: the installed binary serves the console from
any folder (its resources found beside it, in share/herald), prints its version, has a manual page,
completions that load in bash, and a hardened systemd unit; the Debian package holds the same tree and
runs unpacked. Builds the release binary (the same `make build` that `make run` uses)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
VERSION = (REPO_ROOT / "VERSION").read_text().strip()
BANNER = re.compile(r"Herald is running at (http://\S+?)/ \(database ")


def make(*arguments: str) -> None:
    # Minutes on a cold machine: the release build, the manual writer.
    result = subprocess.run(["make", "--no-print-directory", *arguments], cwd=REPO_ROOT, capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def clean_environment() -> dict[str, str]:
    """No HERALD_* from the test run, and a PATH without the toolchain: the binary must stand alone."""
    return {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}


def serves_console(binary: Path, state: Path) -> None:
    """Starts `binary serve` in `/` on a fresh database, checks a page and a static file, stops it."""
    process = subprocess.Popen([str(binary), "serve", "--db", str(state / "herald.sqlite"), "--port", "0"], cwd="/",
                               env=clean_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = BANNER.search(line)
        assert match, f"no banner: {line!r} {process.stderr.read() if process.poll() is not None else ''}"
        base = match.group(1)
        with urllib.request.urlopen(base + "/setup", timeout=10) as answer:
            page = answer.read().decode()
            assert answer.status == 200 and "<form" in page
        stylesheet = re.search(r'href="(/public/[^"]+\.css)"', page)
        assert stylesheet, page[:500]
        with urllib.request.urlopen(base + stylesheet.group(1), timeout=10) as answer:
            assert answer.status == 200 and len(answer.read()) > 1000
        with urllib.request.urlopen(base + "/sdk/v1/herald.js", timeout=10) as answer:
            assert answer.status == 200, "the web client is installed too"
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0


def check_version(binary: Path) -> None:
    result = subprocess.run([str(binary), "--version"], env=clean_environment(), capture_output=True, text=True, check=True)
    assert re.fullmatch(rf"herald {re.escape(VERSION)} \(commit ([0-9a-f]{{40}}|unknown)\)\n", result.stdout), result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    prefix = tmp_path_factory.mktemp("prefix")
    make("install", f"PREFIX={prefix}")
    return prefix


def check_stripped(binary: Path) -> None:
    sections = subprocess.run(["readelf", "--section-headers", "--wide", str(binary)], capture_output=True, text=True, check=True).stdout
    for section in (".symtab", ".debug_info", ".debug_line"):
        assert f" {section} " not in sections, f"{binary} still has {section}"
    built = (REPO_ROOT / ".build" / "release" / "herald").stat().st_size
    assert binary.stat().st_size < built * 0.75, (binary.stat().st_size, built)


def test_the_installed_binary_serves_the_console_from_any_folder(installed, tmp_path):
    binary = installed / "bin" / "herald"
    check_version(binary)
    check_stripped(binary)
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    assert "libswiftCore" not in ldd and "libFoundation" not in ldd, "the Swift runtime is linked in: " + ldd
    for folder in ("Templates", "Public", "Locales", "migrations", "Clients/web"):
        assert (installed / "share" / "herald" / folder).is_dir(), folder
    serves_console(binary, tmp_path)


def test_the_manual_page_reads(installed):
    page = installed / "share" / "man" / "man1" / "herald.1.gz"
    result = subprocess.run(["man", "-l", "-P", "cat", str(page)], env={**clean_environment(), "MANWIDTH": "100"},
                            capture_output=True, text=True, check=True)
    text = result.stdout
    assert "herald" in text and "serve" in text and "--config" in text and "HERALD_DB" in text, text[:800]


def test_completions_load_in_bash_and_complete_subcommands(installed):
    script = installed / "share" / "bash-completion" / "completions" / "herald"
    result = subprocess.run(
        ["bash", "-c", f'source "{script}" && complete -p herald && COMP_WORDS=(herald con) && COMP_CWORD=1 && COMP_LINE="herald con" '
                       f'&& COMP_POINT=10 && $(complete -p herald | sed -E "s/.*-F ([^ ]+).*/\\1/") herald con herald && echo "${{COMPREPLY[@]}}"'],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "config" in result.stdout.split("\n")[-2].split(), result.stdout
    assert (installed / "share" / "zsh" / "site-functions" / "_herald").read_text().startswith("#compdef herald")
    assert "complete -c 'herald'" in (installed / "share" / "fish" / "vendor_completions.d" / "herald.fish").read_text()


def test_the_systemd_unit_is_hardened_and_points_at_the_binary(installed):
    unit = (installed / "lib" / "systemd" / "system" / "herald.service").read_text()
    assert f"ExecStart={installed}/bin/herald serve" in unit
    for line in ("DynamicUser=yes", "ProtectSystem=strict", "StateDirectory=herald", "Restart=on-failure", "NoNewPrivileges=yes",
                 "EnvironmentFile=-/etc/herald/herald.conf"):
        assert line in unit.splitlines(), line
    if shutil.which("systemd-analyze"):
        # It also reads the unit's Documentation= page: the installed one.
        result = subprocess.run(["systemd-analyze", "verify", str(installed / "lib" / "systemd" / "system" / "herald.service")],
                                capture_output=True, text=True, env={**os.environ, "MANPATH": str(installed / "share" / "man")})
        problems = [line for line in result.stderr.splitlines() if "herald.service" in line]
        assert not problems, result.stderr


def test_the_debian_package_holds_the_same_and_runs_unpacked(tmp_path):
    make("deb")
    package = REPO_ROOT / ".build" / f"herald_{VERSION}_{subprocess.run(['dpkg', '--print-architecture'], capture_output=True, text=True).stdout.strip()}.deb"
    assert package.is_file()
    info = subprocess.run(["dpkg-deb", "--info", str(package)], capture_output=True, text=True, check=True).stdout
    assert f"Version: {VERSION}" in info
    depends = re.search(r"Depends: (.*)", info).group(1)
    for needed in ("libmicrohttpd12", "libsqlite3-0", "libc6"):
        assert needed in depends, depends
    contents = subprocess.run(["dpkg-deb", "--contents", str(package)], capture_output=True, text=True, check=True).stdout
    for path in ("./usr/bin/herald", "./usr/share/herald/Templates/", "./usr/share/man/man1/herald.1.gz",
                 "./usr/lib/systemd/system/herald.service", "./etc/herald/herald.conf"):
        assert path in contents, path
    conffiles = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(package)], capture_output=True, check=True).stdout
    assert b"/etc/herald/herald.conf" in conffiles

    unpacked = tmp_path / "unpacked"
    subprocess.run(["dpkg-deb", "-x", str(package), str(unpacked)], check=True)
    binary = unpacked / "usr" / "bin" / "herald"
    check_version(binary)
    check_stripped(binary)
    # The shipped configuration file is all comments: it checks, and changes nothing.
    check = subprocess.run([str(binary), "config", "check", "--config", str(unpacked / "etc" / "herald" / "herald.conf")],
                           env=clean_environment(), cwd="/", capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert "# configuration file" not in check.stdout.split("\n", 1)[1]
    state = tmp_path / "state"
    state.mkdir()
    serves_console(binary, state)


def test_the_build_says_what_it_does_and_keeps_the_compiler_quiet(installed):
    """`make run`'s build on a built tree: a line saying what and how long, its end, no compiler output."""
    result = subprocess.run(["make", "--no-print-directory", "build"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Building Herald (release) (a minute or two after a change; the output goes to .build/logs/release.log"), lines
    assert re.fullmatch(r"  done in \d+( min \d+)? s", lines[-1]), lines
    assert len(lines) <= 4, lines
    assert "Compiling" not in result.stdout + result.stderr


def test_a_failing_step_shows_its_errors_and_where_the_rest_is(tmp_path):
    noisy = "for i in $(seq 1 400); do echo \"[$i/400] Compiling file$i.swift\"; done; " \
            "echo 'Sources/A.swift:3:7: error: cannot find x in scope'; exit 3"
    log = tmp_path / "build.log"
    result = subprocess.run([str(REPO_ROOT / "Tools" / "quietly.sh"), str(log), "Building it", "a moment", "sh", "-c", noisy],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 3
    assert "error: cannot find x in scope" in result.stdout
    assert f"The whole output: {log}" in result.stdout
    assert result.stdout.count("Compiling") <= 2, result.stdout
    assert len(log.read_text().splitlines()) == 401
