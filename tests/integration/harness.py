#!/usr/bin/env python3
"""Start the Hub emulator with nginx as its CDN, and run hfget against them.

Used by the integration tests, scripts/demo and benchmarks:

    with Hub({"org/model": model_dir}) as hub:
        result = hub.run_hfget(["download", "org/model", "--local-dir", target])
        code, stdout, stderr = result

As a script it serves until SIGTERM/SIGINT (for scripts/demo):

    python3 tests/integration/harness.py serve --repo org/model=DIR --ready-file READY.json

Every server gets an ephemeral port, runs in its own process group and is stopped by its PID (SIGTERM,
bounded wait, then SIGKILL); the temp dir is removed. Nothing is left running, even when a test fails.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[2]
EMULATOR = REPO_ROOT / "tests" / "hub" / "hub_emulator.py"
FIXTURES = REPO_ROOT / "tests" / "fixtures"
CDN_HOST = "127.0.0.2"   # another host than the Hub's 127.0.0.1, as the real CDN is (HUB-PROTOCOL §7b)

sys.path.insert(0, str(FIXTURES))
sys.path.insert(0, str(EMULATOR.parent))
from make_model import KIB, MIB, make_model, parse_size  # noqa: E402  (re-exported for tests)
from hub_emulator import RepoFile  # noqa: E402

__all__ = ["Hub", "HfgetResult", "KIB", "MIB", "make_model", "parse_size", "source_files", "http_request",
           "hfget_binary", "sha256_of", "unused_port", "wait_until"]

STOP_TIMEOUT = 5.0       # seconds to wait after SIGTERM before SIGKILL
START_TIMEOUT = 60.0     # seconds to wait for a server to listen (the emulator hashes every file first)
NGINX_LOG_FORMAT = ('$request_method $uri $status $body_bytes_sent "$http_range" "$http_authorization" '
                    '$connection $connection_requests')
_NGINX_LOG_RE = re.compile(r'^(\S+) (\S+) (\d+) (\d+) "(.*)" "(.*)" (\d+) (\d+)$')


# ------------------------------------------------------------------------------------------ helpers

def wait_until(predicate, timeout: float, interval: float = 0.05, what: str = "condition"):
    """Poll predicate() until it returns something truthy; raise TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(interval)


def unused_port(host: str) -> int:
    """A port that was free a moment ago (the caller must retry if someone takes it first)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _accepts_connections(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self):
        return json.loads(self.body)


def http_request(method: str, url: str, headers: dict | None = None, body: bytes | None = None,
                 timeout: float = 10.0) -> Response:
    """One plain HTTP request, no proxies, no redirects followed (tests look at the redirects)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request(method, target or "/", body=body, headers=headers or {})
        response = connection.getresponse()
        return Response(response.status, response.headers, response.read())
    finally:
        connection.close()


def sha256_of(path: str | Path) -> str:
    import hashlib
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def source_files(model_dir: str | Path) -> dict[str, RepoFile]:
    """The oracle's view of a repo directory: path → RepoFile (size, sha256, git sha1, lfs, etag)."""
    root = Path(model_dir)
    return {p.relative_to(root).as_posix(): RepoFile.load(p.relative_to(root).as_posix(), p)
            for p in sorted(root.rglob("*")) if p.is_file()}


def hfget_binary() -> str:
    """The hfget under test: $HFGET_BIN (set by ctest), else build/hfget; skip the test if neither exists."""
    path = os.environ.get("HFGET_BIN") or str(REPO_ROOT / "build" / "hfget")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"hfget binary not found at {path}; set HFGET_BIN")
    return path


class ManagedProcess:
    """A child in its own process group, stopped by PID: SIGTERM, bounded wait, then SIGKILL."""

    def __init__(self, argv: list[str], name: str, log_dir: Path, cwd: str | None = None) -> None:
        self.name = name
        self.stdout_path = log_dir / f"{name}.stdout"
        self.stderr_path = log_dir / f"{name}.stderr"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                                            start_new_session=True)

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        return (self.stdout_path.read_text(errors="replace") + self.stderr_path.read_text(errors="replace"))

    def stop(self) -> None:
        # The group id is the child's own PID (start_new_session), so this reaches nginx's workers too.
        for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT), (signal.SIGKILL, STOP_TIMEOUT)):
            try:
                os.killpg(self.process.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        # A group member (an nginx worker) may outlive its master by a moment; make sure it is gone.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# --------------------------------------------------------------------------------------------- nginx

class Nginx:
    """nginx serving cdn_root on 127.0.0.2 with signed-URL checks, Range, keep-alive and an access log."""

    def __init__(self, workdir: Path, cdn_root: Path, secret: str, limit_rate: str | None = None,
                 workers: int = 1, xorb_root: Path | None = None) -> None:
        self.workdir, self.cdn_root, self.secret = workdir, cdn_root, secret
        # xorb_root: also serve xorb_root/<hash> as /xorbs/default/<hash> (Range, no signature check: the bench's
        # Xet row, so that xorb bodies come from nginx as the bridge's do; see tests/hub/README.md, "Xet").
        self.xorb_root = xorb_root
        self.limit_rate, self.workers = limit_rate, workers
        self.access_log = workdir / "access.log"
        self.port = 0
        self.checks_signatures = False
        self._process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        return f"http://{CDN_HOST}:{self.port}"

    @staticmethod
    def _has_secure_link(nginx: str) -> bool:
        """Whether this nginx build can check signed URLs (Debian's full build can; minimal builds may not)."""
        try:
            build = subprocess.run([nginx, "-V"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return "http_secure_link_module" in build.stderr + build.stdout

    def _config(self, secure_link: bool) -> str:
        temp_paths = "\n".join(f"    {kind}_temp_path {self.workdir / kind};"
                               for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        user = "user root;\n" if os.geteuid() == 0 else ""   # root's temp dirs are not readable by nobody
        # nginx sends a rate-limited body sendfile_max_chunk (2 MiB by default) at a time and then sleeps for as
        # long as that took at the rate: a body's time then goes in steps of 2 MiB, so a 4.25 MB body took twice
        # a 4.19 MB one's (measured at 10m: 0.40 s against 0.20 s), and which of two clients' ranges fell under a
        # step decided a capped comparison. A CDN's per-connection limit is a rate, not steps: 128 KiB sends
        # make nginx's one too (4.25 MB: 0.39 s, 4.19 MB: 0.38 s).
        limit = (f"            limit_rate {self.limit_rate};\n            sendfile_max_chunk 128k;\n"
                 if self.limit_rate else "")
        # The emulator signs URLs in this scheme (hub_emulator.cdn_signature); expired or forged → 403.
        check = (f"""            secure_link $arg_Signature,$arg_Expires;
            secure_link_md5 "$secure_link_expires$uri {self.secret}";
            if ($secure_link = "") {{ return 403; }}
            if ($secure_link = "0") {{ return 403; }}
""" if secure_link else "")
        xorbs = (f"""        location /xorbs/default/ {{
            alias {self.xorb_root}/;
{limit}        }}
""" if self.xorb_root else "")
        return f"""daemon off;
master_process on;
worker_processes {self.workers};
pid {self.workdir / 'nginx.pid'};
error_log {self.workdir / 'error.log'} warn;
{user}events {{ worker_connections 512; }}
http {{
    log_format hfget '{NGINX_LOG_FORMAT}';
    access_log {self.access_log} hfget;
    # When each request ended and how long it took, for the benchmarks' traces (HFGET_BENCH_TRACE).
    log_format timing '$msec $request_time $connection $status $body_bytes_sent $uri "$http_range"';
    access_log {self.workdir / 'timing.log'} timing;
{temp_paths}
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 60s;
    keepalive_requests 10000;
    server {{
        listen {CDN_HOST}:{self.port};
        server_name _;
        root {self.cdn_root};
        location / {{
{check}{limit}        }}
{xorbs}    }}
}}
"""

    def start(self) -> None:
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.checks_signatures = self._has_secure_link(nginx)
        for attempt in range(5):
            self.port = unused_port(CDN_HOST)
            conf = self.workdir / "nginx.conf"
            conf.write_text(self._config(self.checks_signatures))
            self._process = ManagedProcess([nginx, "-p", str(self.workdir), "-e", str(self.workdir / "error.log"),
                                            "-c", str(conf)], f"nginx-{attempt}", self.workdir)
            try:
                wait_until(lambda: not self._process.running() or _accepts_connections(CDN_HOST, self.port),
                           START_TIMEOUT, what="nginx to listen")
            except TimeoutError:
                self._process.stop()
                raise
            if self._process.running():
                return
            errors = (self.workdir / "error.log").read_text(errors="replace") + self._process.output()
            if "Address already in use" not in errors:
                raise RuntimeError(f"nginx failed to start:\n{errors}")
        raise RuntimeError("nginx: no free port after 5 attempts")

    def stop(self) -> None:
        if self._process:
            self._process.stop()

    def requests(self) -> list[dict]:
        if not self.access_log.exists():
            return []
        entries = []
        for line in self.access_log.read_text(errors="replace").splitlines():
            match = _NGINX_LOG_RE.match(line)
            if match:
                method, path, status, sent, byte_range, authorization, connection, number = match.groups()
                entries.append({"method": method, "path": path, "status": int(status), "bytes": int(sent),
                                "range": None if byte_range == "-" else byte_range,
                                "authorization": None if authorization == "-" else authorization,
                                "connection": int(connection), "connection_requests": int(number)})
        return entries

    def reset_log(self) -> None:
        # nginx appends with O_APPEND, so truncating in place is safe while it runs.
        for log in (self.access_log, self.workdir / "timing.log"):
            if log.exists():
                with open(log, "w"):
                    pass

    def timing_log_text(self) -> str:
        log = self.workdir / "timing.log"
        return log.read_text(errors="replace") if log.exists() else ""


class TlsProxy:
    """nginx terminating TLS on 127.0.0.1 in front of an http upstream (the emulator), for test_tls.py.

    Location and Link headers pass through unchanged (proxy_redirect off); the upstream is told the scheme
    (X-Forwarded-Proto) so that the absolute links it makes itself say https.
    """

    def __init__(self, workdir: Path, cert: Path, key: Path, upstream: str, host: str = "127.0.0.1") -> None:
        self.workdir, self.cert, self.key, self.upstream, self.host = workdir, cert, key, upstream, host
        self.access_log = workdir / "access.log"
        self.port = 0
        self._process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    def _config(self) -> str:
        temp_paths = "\n".join(f"    {kind}_temp_path {self.workdir / kind};"
                               for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        user = "user root;\n" if os.geteuid() == 0 else ""
        return f"""daemon off;
master_process on;
worker_processes 1;
pid {self.workdir / 'nginx.pid'};
error_log {self.workdir / 'error.log'} warn;
{user}events {{ worker_connections 256; }}
http {{
    log_format hfget '{NGINX_LOG_FORMAT}';
    access_log {self.access_log} hfget;
{temp_paths}
    server {{
        listen {self.host}:{self.port} ssl;
        server_name _;
        ssl_certificate {self.cert};
        ssl_certificate_key {self.key};
        location / {{
            proxy_pass {self.upstream};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Proto https;
            proxy_redirect off;
            proxy_buffering off;
        }}
    }}
}}
"""

    def start(self) -> None:
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.workdir.mkdir(parents=True, exist_ok=True)
        for attempt in range(5):
            self.port = unused_port(self.host)
            conf = self.workdir / "nginx.conf"
            conf.write_text(self._config())
            self._process = ManagedProcess([nginx, "-p", str(self.workdir), "-e", str(self.workdir / "error.log"),
                                            "-c", str(conf)], f"nginx-tls-{attempt}", self.workdir)
            try:
                wait_until(lambda: not self._process.running() or _accepts_connections(self.host, self.port),
                           START_TIMEOUT, what="the TLS proxy to listen")
            except TimeoutError:
                self._process.stop()
                raise
            if self._process.running():
                return
            errors = (self.workdir / "error.log").read_text(errors="replace") + self._process.output()
            if "Address already in use" not in errors:
                raise RuntimeError(f"nginx (TLS) failed to start:\n{errors}")
        raise RuntimeError("nginx (TLS): no free port after 5 attempts")

    def stop(self) -> None:
        if self._process:
            self._process.stop()
            self._process = None

    def access_log_text(self) -> str:
        return self.access_log.read_text(errors="replace") if self.access_log.exists() else ""


# ----------------------------------------------------------------------------------------------- Hub

XET_WRITER_TOKEN = "hf_xet_writer"   # a Hub token Hub(xet=True) accepts; the JS client wants the hf_ prefix
INTEROP_DIR = REPO_ROOT / "tests" / "interop"
NODE_TIMEOUT = 60.0


@dataclass
class XetUpload:
    repo: str                   # "[TYPE:]org/name" as given
    commit: str                 # the new commit's sha
    xet_hashes: dict[str, str]  # repo path -> xetHash, for every file uploaded through Xet


def xet_upload(hub: "Hub", model_dir: str | Path, repo_id: str, branch: str | None = None,
               token: str = XET_WRITER_TOKEN, timeout: float = NODE_TIMEOUT) -> XetUpload:
    """See Hub.xet_upload. Raises RuntimeError with the node output if the upload fails."""
    node = shutil.which("node")
    if node is None or not (INTEROP_DIR / "node_modules" / "@huggingface" / "hub").is_dir():
        raise unittest.SkipTest("node or tests/interop/node_modules missing: run scripts/setup")
    argv = [node, str(INTEROP_DIR / "upload_files.mjs"), hub.url, repo_id, str(model_dir)]
    argv += [branch] if branch else []
    done = subprocess.run(argv, cwd=INTEROP_DIR, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "HF_TOKEN": token})
    answer = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}
    if done.returncode != 0 or not answer.get("commit"):
        raise RuntimeError(f"xet upload failed ({done.returncode}): {done.stdout}\n{done.stderr[-4000:]}")
    repo_type, _, name = repo_id.rpartition(":")
    listing = hub.api(f"/api/{repo_type or 'model'}s/{name}/tree/{answer['commit']}?recursive=true", token).json()
    hashes = {e["path"]: e["xetHash"] for e in listing if e.get("xetHash")}
    return XetUpload(repo_id, answer["commit"], hashes)


@dataclass
class HfgetResult:
    code: int
    stdout: str
    stderr: str
    home: Path          # the HOME the run used; HF_HOME is home/.cache/huggingface
    elapsed: float

    def __iter__(self) -> Iterator:
        # `code, stdout, stderr = hub.run_hfget(...)`
        return iter((self.code, self.stdout, self.stderr))

    def describe(self) -> str:
        return f"exit {self.code} after {self.elapsed:.1f}s\n--- stdout:\n{self.stdout}\n--- stderr:\n{self.stderr}"


class Hub:
    """Emulator + CDN as a context manager.

    repos: {"[TYPE:]org/name[@branch]": directory}. cdn="nginx" (default) serves LFS bodies from nginx;
    cdn="emulator" uses the emulator's built-in CDN, where faults can be injected on LFS bodies.
    """

    def __init__(self, repos: dict[str, str | Path], *, cdn: str = "nginx", private: dict[str, str] | None = None,
                 gated: dict[str, str | None] | None = None, tokens: list[str] | tuple = (),
                 tags: dict[str, str] | None = None, page_size: int | None = None, limit_rate: str | None = None,
                 body_rate: int | None = None, gzip_text: bool = False, faults: list[dict] | None = None,
                 url_ttl: int | None = None, nginx_workers: int = 1, extra_args: list[str] | tuple = (),
                 tls: tuple[str | Path, str | Path] | None = None, xet: bool = False,
                 xet_token_ttl: int | None = None, xet_repos: list[str] | tuple = (),
                 xet_hide: list[str] | tuple = (), xet_store: str | Path | None = None,
                 xorbs_on_nginx: bool = False) -> None:
        if cdn not in ("nginx", "emulator"):
            raise ValueError("cdn must be 'nginx' or 'emulator'")
        self.repos, self.cdn = dict(repos), cdn
        self._options = dict(private=private or {}, gated=gated or {}, tokens=list(tokens), tags=tags or {},
                             page_size=page_size, body_rate=body_rate, gzip_text=gzip_text, faults=faults,
                             url_ttl=url_ttl, extra_args=list(extra_args))
        # xet=True: the emulator accepts Xet uploads (xet_upload() below) and serves Xet reads; its CAS and
        # presigned-xorb server listen at self.cas_url and self.xorb_url (tests/hub/README.md, "Xet").
        # xet_store: keep the Xet store (xorbs, shards, commits) there instead of in the temp dir; a later Hub
        # given the same directory serves the same repos and commits again.
        self.xet, self.xet_token_ttl, self.xet_store = xet or xet_store is not None, xet_token_ttl, xet_store
        self.xet_repos, self.xet_hide = list(xet_repos), list(xet_hide)
        # xorbs_on_nginx: the presigned xorb URLs point at the CDN's nginx (/xorbs/default/<hash>, Range, no
        # signature check) instead of the emulator's xorb server: for benchmarks, not for fault tests.
        if xorbs_on_nginx and (cdn != "nginx" or not self.xet):
            raise ValueError("xorbs_on_nginx needs cdn='nginx' and xet=True")
        self.xorbs_on_nginx = xorbs_on_nginx
        self.cas_url = self.xorb_url = ""
        self.limit_rate, self.nginx_workers = limit_rate, nginx_workers
        self.tmp: Path | None = None
        self.url = self.cdn_url = ""
        self._nginx: Nginx | None = None
        self._emulator: ManagedProcess | None = None
        # tls=(cert.pem, key.pem): also serve the Hub over https at self.https_url (nginx, see TlsProxy).
        self._tls_files = tls
        self.tls_proxy: TlsProxy | None = None
        self.https_url = ""

    # -- lifecycle --------------------------------------------------------------------------------

    def __enter__(self) -> "Hub":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="hfget-hub-"))
        try:
            self._start_servers()
        except BaseException:
            self.stop()
            raise

    def _start_servers(self) -> None:
        options = self._options
        argv = [sys.executable, str(EMULATOR), "--host", "127.0.0.1", "--port", "0",
                "--ready-file", str(self.tmp / "ready.json"), "--request-log", str(self.tmp / "requests.jsonl")]
        for spec, directory in self.repos.items():
            argv += ["--repo", f"{spec}={directory}"]
        for spec, branch in options["tags"].items():
            argv += ["--tag", f"{spec}={branch}"]
        for spec, token in options["private"].items():
            argv += ["--private", f"{spec}={token}"]
        for spec, token in options["gated"].items():
            argv += ["--gated", f"{spec}={token}" if token else spec]
        for token in options["tokens"]:
            argv += ["--token", token]
        if options["page_size"]:
            argv += ["--page-size", str(options["page_size"])]
        if options["body_rate"]:
            argv += ["--body-rate", str(options["body_rate"])]
        if options["url_ttl"]:
            argv += ["--url-ttl", str(options["url_ttl"])]
        if options["gzip_text"]:
            argv.append("--gzip-text")
        if options["faults"]:
            faults_file = self.tmp / "faults.json"
            faults_file.write_text(json.dumps(options["faults"]))
            argv += ["--faults", str(faults_file)]
        if self.cdn == "nginx":
            secret = secrets.token_hex(16)
            nginx_dir = self.tmp / "nginx"
            nginx_dir.mkdir()
            cdn_root = self.tmp / "cdn"
            cdn_root.mkdir()
            xorb_root = self.tmp / "xorbs" if self.xorbs_on_nginx else None
            self._nginx = Nginx(nginx_dir, cdn_root, secret, self.limit_rate, self.nginx_workers, xorb_root)
            self._nginx.start()
            argv += ["--cdn-url", self._nginx.url, "--cdn-root", str(cdn_root), "--cdn-secret", secret]
            if xorb_root:
                argv += ["--xorb-url", self._nginx.url, "--xorb-root", str(xorb_root)]
        if self.xet:
            argv += ["--xet-store", str(self.xet_store_dir), "--token", XET_WRITER_TOKEN]
            if self.xet_token_ttl is not None:
                argv += ["--xet-token-ttl", str(self.xet_token_ttl)]
            for spec in self.xet_repos:
                argv += ["--xet-repo", spec]
            for spec in self.xet_hide:
                argv += ["--xet-hide", spec]
        argv += options["extra_args"]

        self._emulator = ManagedProcess(argv, "emulator", self.tmp)
        ready_file = self.tmp / "ready.json"
        wait_until(lambda: ready_file.exists() or not self._emulator.running(), START_TIMEOUT,
                   what="the hub emulator to listen")
        if not ready_file.exists():
            raise RuntimeError(f"hub emulator failed to start:\n{self._emulator.output()}")
        ready = json.loads(ready_file.read_text())
        self.url, self.cdn_url = ready["hub"], ready["cdn"]
        self.cas_url, self.xorb_url = ready.get("cas", ""), ready.get("xorbs", "")
        if self._tls_files:
            cert, key = self._tls_files
            self.tls_proxy = TlsProxy(self.tmp / "nginx-tls", Path(cert), Path(key), self.url)
            self.tls_proxy.start()
            self.https_url = self.tls_proxy.url

    def stop(self) -> None:
        for server in (self.tls_proxy, self._emulator, self._nginx):
            if server:
                server.stop()
        self._emulator = self._nginx = self.tls_proxy = None
        if self.tmp and os.environ.get("HFGET_KEEP_TEST_DIRS") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- logs, faults, stats --------------------------------------------------------------------------

    def _control(self, method: str, path: str, payload=None):
        body = json.dumps(payload).encode() if payload is not None else None
        response = http_request(method, self.url + path, {"Content-Type": "application/json"}, body)
        if response.status != 200:
            raise RuntimeError(f"{method} {path} → {response.status}: {response.body!r}")
        return response.json()

    def requests(self) -> list[dict]:
        """The emulator's request log (both of its listeners), oldest first."""
        return self._control("GET", "/_emulator/requests")

    def hub_requests(self) -> list[dict]:
        return [r for r in self.requests() if r["listener"] == "hub"]

    def cdn_requests(self, settle: float = 0.3) -> list[dict]:
        """Requests that reached the CDN, as {method, path, status, bytes, range, authorization, connection}.

        nginx logs a request when it ends (for a killed client: once it notices), so wait until the
        log has been quiet for `settle` seconds (bounded).
        """
        if self._nginx is None:
            return [{"method": r["method"], "path": r["path"], "status": r["status"], "bytes": r["bytes_sent"],
                     "range": r["range"], "authorization": "<present>" if r["has_authorization"] else None,
                     "connection": r["client_port"], "connection_requests": None, "fault": r["fault"]}
                    for r in self.requests() if r["listener"] == "cdn"]
        log = self._nginx.access_log
        size = -1
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            current = log.stat().st_size if log.exists() else 0
            if current == size:
                break
            size = current
            time.sleep(settle)
        return self._nginx.requests()

    def xorb_requests(self, settle: float = 0.3) -> list[dict]:
        """Xorb fetches: the emulator's xorb-server records, or with xorbs_on_nginx nginx's /xorbs/ entries
        (in cdn_requests()'s form, whose list then holds them too)."""
        if self.xorbs_on_nginx:
            return [r for r in self.cdn_requests(settle) if r["path"].startswith("/xorbs/")]
        return [r for r in self.requests() if r["listener"] == "xorb"]

    def cdn_access_log_text(self) -> str:
        """The raw nginx access log ('' with the built-in CDN), for grepping for secrets."""
        if self._nginx and self._nginx.access_log.exists():
            return self._nginx.access_log.read_text(errors="replace")
        return ""

    def reset_logs(self) -> None:
        self._control("POST", "/_emulator/reset-log", {})
        if self._nginx:
            self.cdn_requests()   # let in-flight entries land before truncating
            self._nginx.reset_log()

    def set_faults(self, rules: list[dict]) -> None:
        self._control("POST", "/_emulator/faults", rules)

    def clear_faults(self) -> None:
        self._control("DELETE", "/_emulator/faults")

    def set_tree_pages(self, repo: str, pages: list[dict] | None) -> None:
        """Serve these crafted pages verbatim as repo's tree listing (None: the real listing again).

        See tests/hub/README.md, "Hostile servers", for the page fields (body, repeat, next, ...).
        """
        self._control("POST", "/_emulator/tree-pages", {"repo": repo, "pages": pages})

    def clear_tree_pages(self) -> None:
        self._control("DELETE", "/_emulator/tree-pages")

    def stats(self) -> dict:
        return self._control("GET", "/_emulator/stats")

    def api(self, path: str, token: str | None = None) -> Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return http_request("GET", self.url + path, headers)

    def commit(self, repo_id: str, revision: str = "main", repo_type: str = "model", token: str | None = None) -> str:
        """The commit sha the emulator resolves `revision` to."""
        from urllib.parse import quote
        response = self.api(f"/api/{repo_type}s/{repo_id}/revision/{quote(revision, safe='')}", token)
        if response.status != 200:
            raise RuntimeError(f"revision lookup failed: {response.status} {response.body!r}")
        return response.json()["sha"]

    @property
    def xet_store_dir(self) -> Path:
        """The CAS's store (xorbs/, shards/, commits.jsonl) of a Hub(xet=True)."""
        return Path(self.xet_store) if self.xet_store else self.tmp / "xet"

    def xet_upload(self, model_dir: str | Path, repo_id: str, branch: str | None = None,
                   token: str = "", timeout: float = NODE_TIMEOUT) -> "XetUpload":
        """Upload every file of model_dir into repo_id (created if need be) through the real JS Xet writer
        (tests/interop/upload_files.mjs, @huggingface/hub's uploadFiles); needs Hub(..., xet=True).
        timeout: seconds for the whole upload (the bench's large models need more than the default)."""
        return xet_upload(self, model_dir, repo_id, branch, token or XET_WRITER_TOKEN, timeout)

    # -- running hfget --------------------------------------------------------------------------------

    def new_dir(self, prefix: str = "dir") -> Path:
        """A fresh empty directory inside this hub's temp dir (removed with it)."""
        return Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=self.tmp))

    def hfget_env(self, home: Path, env: dict | None = None) -> dict[str, str]:
        return clean_hfget_env(home, self.url, env)

    def run_hfget(self, args: list[str], *, home: Path | None = None, env: dict | None = None,
                  timeout: float = 120.0, cwd: str | Path | None = None) -> HfgetResult:
        """Run hfget to completion with a clean environment; returns (code, stdout, stderr) plus home."""
        home = home or self.new_dir("home")
        return run_hfget(args, endpoint=self.url, home=home, env=env, timeout=timeout, cwd=cwd)

    def start_hfget(self, args: list[str], *, home: Path | None = None, env: dict | None = None,
                    cwd: str | Path | None = None) -> "RunningHfget":
        """Start hfget in the background (for kill/resume tests); stop it with .kill()/.signal()."""
        home = home or self.new_dir("home")
        return RunningHfget(args, self.hfget_env(home, env), home, cwd)


def clean_hfget_env(home: Path, endpoint: str, env: dict | None = None) -> dict[str, str]:
    """A minimal environment: HOME/HF_HOME in a temp dir, the emulator as endpoint, no proxies, fast retries.

    env entries override; a None value removes a variable.
    """
    result = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "HF_HOME": str(Path(home) / ".cache" / "huggingface"),
        "HF_ENDPOINT": endpoint,
        "NO_PROXY": "*",
        "no_proxy": "*",
        "HFGET_RETRY_BASE_MS": "50",
    }
    # Sanitizer settings pass through so that sanitizer builds report the same way under test.
    result.update({k: v for k, v in os.environ.items() if k.endswith("SAN_OPTIONS")})
    for key, value in (env or {}).items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = str(value)
    return result


def run_hfget(args: list[str], *, endpoint: str, home: Path, env: dict | None = None, timeout: float = 120.0,
              cwd: str | Path | None = None) -> HfgetResult:
    started = time.monotonic()
    try:
        completed = subprocess.run([hfget_binary(), *map(str, args)], env=clean_hfget_env(home, endpoint, env),
                                   stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as expired:   # subprocess.run has already killed the child
        raise AssertionError(f"hfget {' '.join(map(str, args))} did not finish within {timeout}s\n"
                             f"stderr so far:\n{(expired.stderr or b'').decode(errors='replace')}") from None
    return HfgetResult(completed.returncode, completed.stdout.decode(errors="replace"),
                       completed.stderr.decode(errors="replace"), Path(home), time.monotonic() - started)


class RunningHfget:
    """hfget running in the background, its output going to files."""

    def __init__(self, args: list[str], env: dict[str, str], home: Path, cwd) -> None:
        self.home = home
        self._out = tempfile.TemporaryFile()
        self._err = tempfile.TemporaryFile()
        self.started = time.monotonic()
        self.process = subprocess.Popen([hfget_binary(), *map(str, args)], env=env, stdin=subprocess.DEVNULL,
                                        stdout=self._out, stderr=self._err, cwd=cwd)

    def signal(self, sig: int) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def wait(self, timeout: float = 60.0) -> HfgetResult:
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # A hang is rare and hard to reproduce: say where every thread was, and what hfget said last.
            stacks = self._stacks()
            self.kill()
            self.process.wait(timeout=STOP_TIMEOUT)
            self._err.seek(0)
            said = self._err.read().decode(errors="replace")[-3000:]
            raise AssertionError(f"hfget did not exit within {timeout}s\n--- its threads:\n{stacks}\n"
                                 f"--- the end of its stderr:\n{said}") from None
        outputs = []
        for stream in (self._out, self._err):
            stream.seek(0)
            outputs.append(stream.read().decode(errors="replace"))
            stream.close()
        return HfgetResult(code, outputs[0], outputs[1], self.home, time.monotonic() - self.started)

    def _stacks(self) -> str:
        gdb = shutil.which("gdb")
        if not gdb:
            return "(no gdb here)"
        try:
            done = subprocess.run([gdb, "-p", str(self.process.pid), "-batch", "-nx", "-ex", "set print frame-arguments none",
                                   "-ex", "set print address off", "-ex", "thread apply all bt 30"],
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        except (subprocess.TimeoutExpired, OSError) as error:
            return f"(gdb: {error})"
        lines = [line for line in done.stdout.splitlines() if line.startswith(("Thread ", "#"))]
        return "\n".join(lines)[:20000] or done.stderr[-2000:]

    def ensure_stopped(self) -> None:
        """For cleanups: kill the process if a failing test left it running."""
        if self.process.poll() is None:
            self.kill()
            self.process.wait(timeout=STOP_TIMEOUT)


# ---------------------------------------------------------------------------------------------- main

def _serve(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="harness.py serve",
                                     description="Run the Hub emulator with an nginx CDN until SIGTERM/SIGINT.")
    parser.add_argument("--repo", action="append", default=[], metavar="[TYPE:]ORG/NAME[@BRANCH]=DIR")
    parser.add_argument("--xet-upload", action="append", default=[], metavar="[TYPE:]ORG/NAME=DIR",
                        help="enable Xet and upload DIR into the repo through the JS Xet writer once serving")
    parser.add_argument("--private", action="append", default=[], metavar="[TYPE:]ORG/NAME=TOKEN")
    parser.add_argument("--gated", action="append", default=[], metavar="[TYPE:]ORG/NAME[=TOKEN]")
    parser.add_argument("--cdn", choices=("nginx", "emulator"), default="nginx")
    parser.add_argument("--limit-rate", help="nginx limit_rate per connection, e.g. 5m")
    parser.add_argument("--page-size", type=int)
    parser.add_argument("--nginx-workers", type=int, default=1)
    parser.add_argument("--ready-file", help="write {hub, cdn, pid} here once serving")
    parser.add_argument("--max-seconds", type=float, default=3600,
                        help="stop by itself after this long, in case nobody stops it (default 3600)")
    args = parser.parse_args(argv)
    if not args.repo and not args.xet_upload:
        parser.error("give --repo or --xet-upload")

    def split(spec: str) -> tuple[str, str | None]:
        left, _, value = spec.partition("=")
        return left, value or None

    stop = {"requested": False}

    def request_stop(signum, frame):
        stop["requested"] = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    hub = Hub(dict(split(s) for s in args.repo), cdn=args.cdn, private=dict(split(s) for s in args.private),
              gated=dict(split(s) for s in args.gated), page_size=args.page_size, limit_rate=args.limit_rate,
              nginx_workers=args.nginx_workers, xet=bool(args.xet_upload))
    with hub:
        fields = {"hub": hub.url, "cdn": hub.cdn_url, "pid": os.getpid()}
        if args.xet_upload:
            uploads = [hub.xet_upload(directory, repo) for repo, directory in (split(s) for s in args.xet_upload)]
            fields.update(cas=hub.cas_url, xorbs=hub.xorb_url,
                          xet={u.repo: {"commit": u.commit, "xet_hashes": u.xet_hashes} for u in uploads})
        ready = json.dumps(fields)
        if args.ready_file:
            Path(args.ready_file + ".tmp").write_text(ready + "\n")
            os.replace(args.ready_file + ".tmp", args.ready_file)
        print(ready, flush=True)
        deadline = time.monotonic() + args.max_seconds
        while not stop["requested"] and time.monotonic() < deadline:
            time.sleep(0.2)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "serve":
        print("usage: harness.py serve --repo [TYPE:]ORG/NAME[@BRANCH]=DIR ... [--ready-file F]", file=sys.stderr)
        return 2
    return _serve(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
