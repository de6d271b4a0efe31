"""Downloads through a real forward proxy: tinyproxy, started here with its own config, log and PID file.

hfget sets no proxy option itself: libcurl reads the environment (http_proxy, HTTPS_PROXY/https_proxy,
ALL_PROXY/all_proxy, NO_PROXY/no_proxy). These tests prove, from the proxy's own log, that the Hub's API
requests and the CDN's byte ranges really go through the proxy (and that the snapshot is byte-correct), that
NO_PROXY bypasses it host by host, that a proxy that is down fails with exit 7 quickly, and that an https
Hub is reached through a CONNECT tunnel. A recording relay between hfget and tinyproxy sees every byte hfget
sends to the proxy, to check where the token goes.

Never uses the system's tinyproxy service or its config: skipped when the tinyproxy binary is absent
(scripts/setup installs it).
"""

from __future__ import annotations

import re
import shutil
import socket
import socketserver
import tempfile
import threading
import unittest
from pathlib import Path

from harness import KIB, ManagedProcess, TlsProxy, unused_port, wait_until
from support import HfgetTestCase, files_under
from test_tls import OPENSSL, make_pki

# Neither the repo name nor the token contains the word "proxy" (the error-message checks look for it).
REPO = "egress-org/model"
TOKEN = "hf_EgressTestToken_9f8e7d6c5b4a3210"
TINYPROXY = shutil.which("tinyproxy") or (Path("/usr/bin/tinyproxy") if Path("/usr/bin/tinyproxy").exists() else None)
# tinyproxy logs one line per request it receives: "Request (file descriptor 5): GET http://h:p/x HTTP/1.1".
_REQUEST_RE = re.compile(r"Request \(file descriptor \d+\): (\S+) (\S+) HTTP/")


class Tinyproxy:
    """tinyproxy in the foreground (-d) on 127.0.0.1, its config, log and PID file in `workdir`.

    tinyproxy cannot bind port 0, so a port that was free a moment ago is taken and the start retried
    if someone else got it first. Stopped by its PID (SIGTERM, bounded wait, SIGKILL).
    """

    def __init__(self, workdir: Path, connect_ports: list[int] | tuple = ()) -> None:
        self.workdir, self.connect_ports = workdir, list(connect_ports)
        self.log = workdir / "tinyproxy.log"
        self.pid_file = workdir / "tinyproxy.pid"
        self.port = 0
        self._process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for attempt in range(5):
            self.port = unused_port("127.0.0.1")
            self.log.unlink(missing_ok=True)
            conf = self.workdir / "tinyproxy.conf"
            # No User/Group: runs as the current user (it warns when that is root). ConnectPort limits
            # CONNECT to the given ports (with no ConnectPort line at all, tinyproxy allows every port).
            conf.write_text("".join([
                f"Port {self.port}\n", "Listen 127.0.0.1\n", "Allow 127.0.0.1\n", "Timeout 30\n",
                "MaxClients 64\n", f'LogFile "{self.log}"\n', "LogLevel Info\n", f'PidFile "{self.pid_file}"\n',
                *(f"ConnectPort {port}\n" for port in self.connect_ports)]))
            self._process = ManagedProcess([str(TINYPROXY), "-d", "-c", str(conf)], f"tinyproxy-{attempt}",
                                           self.workdir)
            try:
                wait_until(lambda: not self._process.running() or "Accepting connections" in self.log_text(),
                           15, what="tinyproxy to listen")
            except TimeoutError:
                self._process.stop()
                raise
            if self._process.running():
                # The process listening is the one started here (not the system's service).
                wait_until(lambda: self.pid_file.exists() and self.pid_file.read_text().strip(), 5,
                           what="tinyproxy's PID file")
                assert int(self.pid_file.read_text().strip()) == self._process.pid, "PID file names another process"
                return
            errors = self.log_text() + self._process.output()
            if not re.search(r"could not create listening|already in use", errors, re.IGNORECASE):
                raise RuntimeError(f"tinyproxy failed to start:\n{errors}")
        raise RuntimeError("tinyproxy: no free port after 5 attempts")

    def stop(self) -> None:
        if self._process:
            self._process.stop()
            self._process = None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def mark(self) -> int:
        """The log's current length: requests() after it are the current test's."""
        return len(self.log_text())

    def requests(self, since: int = 0) -> list[tuple[str, str]]:
        """(method, target) of every request the proxy received after `since`."""
        return _REQUEST_RE.findall(self.log_text()[since:])


class RecordingRelay:
    """A TCP relay on 127.0.0.1 in front of the proxy that records every byte the client sends to it."""

    def __init__(self, upstream_port: int) -> None:
        relay = self
        self.connections: list[bytearray] = []
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                sent = bytearray()
                try:
                    upstream = socket.create_connection(("127.0.0.1", upstream_port), timeout=10)
                except OSError:
                    return
                upstream.settimeout(None)
                with relay._lock:
                    relay.connections.append(sent)
                    relay._sockets += [self.request, upstream]

                def pump(source, target, record):
                    try:
                        while data := source.recv(65536):
                            if record is not None:
                                record += data
                            target.sendall(data)
                    except OSError:
                        pass
                    finally:
                        for sock, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
                            try:
                                sock.shutdown(how)
                            except OSError:
                                pass

                back = threading.Thread(target=pump, args=(upstream, self.request, None), daemon=True)
                back.start()
                pump(self.request, upstream, sent)
                back.join(timeout=60)
                upstream.close()

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for sock in self._sockets:
                try:
                    sock.close()
                except OSError:
                    pass
        self._thread.join(timeout=5)

    def all_bytes(self) -> bytes:
        with self._lock:
            return b"".join(bytes(c) for c in self.connections)

    def request_heads(self) -> list[str]:
        """Every request head sent to the proxy in cleartext: all of a plain-http connection's requests
        (GETs have no body), and only the CONNECT line and headers of a tunnel (the rest is TLS)."""
        heads = []
        with self._lock:
            streams = [bytes(c) for c in self.connections]
        for stream in streams:
            parts = stream.split(b"\r\n\r\n")
            if stream.startswith(b"CONNECT "):
                parts = parts[:1]
            heads += [p.decode("latin-1") for p in parts if re.match(rb"^[A-Z]+ \S+ HTTP/1\.[01]\r\n", p)]
        return heads


@unittest.skipIf(TINYPROXY is None, "tinyproxy is not installed (scripts/setup installs it)")
@unittest.skipIf(OPENSSL is None, "the openssl CLI is needed to make the test certificates")
class ProxyTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pki = make_pki(Path(tempfile.mkdtemp(prefix="pki-", dir=cls.workdir)))
        cls.source = cls.make_model("model", shards=2, shard_size=256 * KIB)
        cls.hub = cls.start_hub({REPO: cls.source}, private={REPO: TOKEN}, tls=(cls.pki["server"], cls.pki["key"]))
        cls.commit = cls.hub.commit(REPO, token=TOKEN)
        cls.hub_hostport = cls.hub.url.removeprefix("http://")
        cls.cdn_hostport = cls.hub.cdn_url.removeprefix("http://")
        cls.tls_hostport = cls.hub.https_url.removeprefix("https://")
        # CONNECT only to the TLS Hub's port, as a real proxy allows only 443.
        cls.proxy = Tinyproxy(cls.workdir / "tinyproxy", connect_ports=[cls.hub.tls_proxy.port])
        cls.proxy.start()
        cls.addClassCleanup(cls.proxy.stop)

    def setUp(self):
        self.since = self.proxy.mark()
        self.hub.reset_logs()

    def relay(self) -> RecordingRelay:
        relay = RecordingRelay(self.proxy.port)
        self.addCleanup(relay.stop)
        return relay

    def download(self, env: dict, *extra, endpoint: str | None = None, timeout: float = 60.0):
        cache = self.hub.new_dir("cache")
        # harness.clean_hfget_env sets NO_PROXY=* and no_proxy=*: every test says what it wants instead.
        base = {name: None for name in ("NO_PROXY", "no_proxy", "http_proxy", "HTTP_PROXY", "https_proxy",
                                        "HTTPS_PROXY", "all_proxy", "ALL_PROXY")}
        result = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, "--token", TOKEN, "--retries", "1",
                                     "--endpoint", endpoint or self.hub.url, *extra], env=base | env, timeout=timeout)
        return result, cache

    def assertDownloaded(self, result, cache) -> None:
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)   # byte-correct against the source

    def proxied(self, hostport: str, scheme: str = "http") -> list[tuple[str, str]]:
        """Requests the proxy forwarded to hostport since the test began."""
        if scheme == "https":
            return [(m, t) for m, t in self.proxy.requests(self.since) if m == "CONNECT" and t == hostport]
        return [(m, t) for m, t in self.proxy.requests(self.since) if t.startswith(f"http://{hostport}/")]

    def assertAllCdnRequestsProxied(self) -> None:
        cdn_paths = {r["path"] for r in self.hub.cdn_requests()}
        self.assertTrue(cdn_paths, "the download fetched from the CDN")
        proxied_paths = {t.removeprefix(f"http://{self.cdn_hostport}").split("?")[0]
                         for _, t in self.proxied(self.cdn_hostport)}
        self.assertLessEqual(cdn_paths, proxied_paths, "every CDN request nginx served came through the proxy")

    # -- plain http ---------------------------------------------------------------------------------

    def test_http_download_goes_through_the_proxy(self):
        relay = self.relay()
        result, cache = self.download({"http_proxy": relay.url})
        self.assertDownloaded(result, cache)
        hub = self.proxied(self.hub_hostport)
        self.assertTrue(any("/api/models/" in t and "/revision/" in t for _, t in hub), "revision lookup proxied")
        self.assertTrue(any("/tree/" in t for _, t in hub), "tree listing proxied")
        self.assertTrue(any("/resolve/" in t for _, t in hub), "resolve requests proxied")
        served = [r for r in self.hub.hub_requests() if not r["path"].startswith("/_emulator")]
        self.assertGreaterEqual(len(hub), len(served), "every Hub request came through the proxy")
        self.assertAllCdnRequestsProxied()
        self.assertEqual(len(self.proxied(self.hub_hostport)) + len(self.proxied(self.cdn_hostport)),
                         len(self.proxy.requests(self.since)), "nothing else went to the proxy")

        # What hfget sent to the proxy: the token only on requests for the Hub (an http Hub through an http
        # proxy is cleartext, as with curl), never to the CDN, never as proxy credentials.
        heads = relay.request_heads()
        self.assertTrue(any(TOKEN in head for head in heads), "the relay sees the Hub requests and their token")
        self.assertTrue(any(f"http://{self.cdn_hostport}/" in head.split("\r\n")[0] for head in heads),
                        "the relay sees the CDN requests")
        for head in heads:
            target = head.split(" ", 2)[1]
            self.assertNotIn("proxy-authorization:", head.lower(), head)
            if TOKEN in head:
                self.assertTrue(target.startswith(f"{self.hub.url}/"), f"token sent with a non-Hub request:\n{head}")
            if target.startswith(f"http://{self.cdn_hostport}/"):
                self.assertNotIn("authorization:", head.lower(), f"token sent to the CDN:\n{head}")
        self.assertNotIn(TOKEN.encode(), b"".join(h.encode("latin-1") for h in heads
                                                  if f"http://{self.cdn_hostport}/" in h.split("\r\n")[0]))
        for request in self.hub.cdn_requests():
            self.assertIsNone(request["authorization"], "the CDN received the token")

    def test_all_proxy_is_used_for_http(self):
        for name in ("ALL_PROXY", "all_proxy"):
            with self.subTest(name):
                since = self.proxy.mark()
                result, cache = self.download({name: self.proxy.url})
                self.assertDownloaded(result, cache)
                targets = [t for _, t in self.proxy.requests(since)]
                self.assertTrue(any(t.startswith(f"{self.hub.url}/") for t in targets), "Hub requests proxied")
                self.assertTrue(any(t.startswith(f"{self.hub.cdn_url}/") for t in targets), "CDN requests proxied")

    # libcurl reads only lower-case http_proxy for http:// URLs (its "httpoxy" guard); huggingface_hub
    # (requests, urllib.request.getproxies) honours HTTP_PROXY, and so does hfget: same environment, same path.
    def test_upper_case_http_proxy_is_honoured_like_huggingface_hub(self):
        result, cache = self.download({"HTTP_PROXY": self.proxy.url})
        self.assertDownloaded(result, cache)
        self.assertTrue(self.proxied(self.hub_hostport), "HTTP_PROXY was ignored: the Hub was reached directly")
        self.assertAllCdnRequestsProxied()

    # -- NO_PROXY ---------------------------------------------------------------------------------------

    def test_no_proxy_covering_both_hosts_bypasses_the_proxy(self):
        for name in ("NO_PROXY", "no_proxy"):
            with self.subTest(name):
                since = self.proxy.mark()
                result, cache = self.download({"http_proxy": self.proxy.url, name: "127.0.0.1,127.0.0.2"})
                self.assertDownloaded(result, cache)
                self.assertEqual(self.proxy.requests(since), [], "NO_PROXY hosts went through the proxy")

    def test_no_proxy_is_decided_host_by_host(self):
        # The Hub (127.0.0.1) bypasses the proxy; the CDN (127.0.0.2) is not listed, so it goes through it.
        result, cache = self.download({"http_proxy": self.proxy.url, "NO_PROXY": "127.0.0.1"})
        self.assertDownloaded(result, cache)
        self.assertEqual(self.proxied(self.hub_hostport), [], "the Hub is in NO_PROXY")
        self.assertAllCdnRequestsProxied()

    # -- a proxy that is down ---------------------------------------------------------------------------

    def dead_proxy_run(self):
        self.dead = f"127.0.0.1:{unused_port('127.0.0.1')}"   # nothing listens there
        result, cache = self.download({"http_proxy": f"http://{self.dead}"}, timeout=60)
        self.assertExit(result, 7)
        errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error:")]
        self.assertEqual(len(errors), 1, result.describe())
        self.assertEqual(files_under(cache), [], "nothing is written when the Hub cannot be reached")
        self.assertLess(result.elapsed, 20, "a refused proxy connection is not retried for long")
        return errors[0]

    def test_dead_proxy_fails_with_7_quickly(self):
        self.dead_proxy_run()

    # The message names the address that refused (libcurl's error buffer), not only the Hub URL it was for,
    # so the user looks at the proxy settings instead of for a Hub outage.
    def test_dead_proxy_error_names_the_proxy(self):
        error = self.dead_proxy_run()
        self.assertTrue(re.search(r"\bproxy\b", error, re.IGNORECASE) or self.dead in error
                        or self.dead.replace(":", " port ") in error,
                        f"the message should name the proxy ({self.dead}): {error}")

    # -- https Hub through a CONNECT tunnel ---------------------------------------------------------------

    def test_tls_hub_through_a_connect_tunnel(self):
        relay = self.relay()
        # HTTPS_PROXY for the https Hub, http_proxy for the (plain http) CDN; both the same proxy.
        result, cache = self.download({"HTTPS_PROXY": relay.url, "http_proxy": relay.url}, "--ca-bundle",
                                      self.pki["ca"], endpoint=self.hub.https_url)
        self.assertDownloaded(result, cache)
        self.assertTrue(self.proxied(self.tls_hostport, "https"), "the https Hub was reached through CONNECT")
        self.assertEqual(self.proxied(self.hub_hostport), [], "no cleartext request to the Hub")
        self.assertTrue(any("/tree/" in line for line in self.hub.tls_proxy.access_log_text().splitlines()))
        self.assertAllCdnRequestsProxied()
        # The token travels inside the tunnel only: the proxy never sees it in cleartext.
        heads = relay.request_heads()
        self.assertIn(f"CONNECT {self.tls_hostport} HTTP/1.1", [h.split("\r\n")[0] for h in heads])
        self.assertNotIn(TOKEN.encode(), relay.all_bytes(), "the token reached the proxy in cleartext")
        for head in heads:
            if head.startswith("CONNECT "):
                self.assertNotIn("authorization", head.lower(), head)

    def connect_refused_run(self):
        # tinyproxy answers 403 to CONNECT for a port not in its ConnectPort list (this TLS front's port).
        other = TlsProxy(Path(tempfile.mkdtemp(prefix="tls-", dir=self.hub.tmp)), self.pki["server"],
                         self.pki["key"], self.hub.url)
        other.start()
        self.addCleanup(other.stop)
        result, cache = self.download({"HTTPS_PROXY": self.proxy.url, "http_proxy": self.proxy.url}, "--ca-bundle",
                                      self.pki["ca"], endpoint=other.url)
        self.assertTrue(self.proxied(other.url.removeprefix("https://"), "https"), "the CONNECT reached the proxy")
        self.assertExit(result, 7)
        errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error:")]
        self.assertEqual(len(errors), 1, result.describe())
        self.assertEqual(files_under(cache), [])
        self.assertLess(result.elapsed, 20)
        return errors[0]

    def test_connect_refused_by_the_proxy_fails_with_7(self):
        self.connect_refused_run()

    # A refused CONNECT is reported as such (CURLINFO_HTTP_CONNECTCODE), not as "Failure when receiving data".
    def test_connect_refused_error_names_the_proxy(self):
        error = self.connect_refused_run()
        self.assertTrue(re.search(r"\bproxy\b|CONNECT|\b403\b", error), f"the message should say the proxy "
                        f"refused the CONNECT (403): {error}")


if __name__ == "__main__":
    unittest.main()
