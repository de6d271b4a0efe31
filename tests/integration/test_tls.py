"""https endpoints: nginx terminates TLS on 127.0.0.1 in front of the Hub emulator, with a throwaway CA and a
server certificate for IP 127.0.0.1 made here with the openssl CLI. hfget refuses a certificate it cannot
verify (exit 7, saying so), trusts the CA given with --ca-bundle, CURL_CA_BUNDLE, SSL_CERT_FILE or
SSL_CERT_DIR, and honours HTTPS_PROXY / NO_PROXY as curl does."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from harness import KIB, TlsProxy, unused_port, wait_until
from support import HfgetTestCase, files_under
from test_hostile_server import Collector, known_bug

REPO = "tls-org/model"
TOKEN = "hf_TlsTestToken_0a1b2c3d4e5f67890"
OPENSSL = shutil.which("openssl")


def openssl(*args: str, cwd: Path) -> None:
    completed = subprocess.run([OPENSSL, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if completed.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed:\n{completed.stderr}")


def make_pki(directory: Path) -> dict[str, Path]:
    """A CA; a server certificate for IP 127.0.0.1 signed by it; one for 127.0.0.2 only; an expired one for
    127.0.0.1; and a folder of hashed CA links for SSL_CERT_DIR."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=hfget test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=directory)
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=directory)
    for name, ip in (("server", "127.0.0.1"), ("other", "127.0.0.2")):
        (directory / f"{name}.ext").write_text(f"subjectAltName=IP:{ip}\nbasicConstraints=CA:FALSE\n"
                                               "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n")
        openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext", cwd=directory)
    # An expired certificate needs explicit dates, which only `openssl ca` takes.
    (directory / "ca.cnf").write_text("[ ca ]\ndefault_ca = test_ca\n[ test_ca ]\ndatabase = index.txt\n"
                                      "new_certs_dir = .\nserial = serial.txt\ndefault_md = sha256\n"
                                      "policy = policy_any\nunique_subject = no\n[ policy_any ]\n"
                                      "commonName = supplied\n")
    (directory / "index.txt").write_text("")
    (directory / "serial.txt").write_text("1000\n")
    openssl("ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in", "server.csr",
            "-out", "expired.pem", "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
            "-extfile", "server.ext", "-notext", cwd=directory)
    cert_dir = directory / "certs"
    cert_dir.mkdir()
    shutil.copy(directory / "ca.pem", cert_dir / "ca.pem")
    openssl("rehash", str(cert_dir), cwd=directory)
    return {name: directory / f"{name}.pem" for name in ("ca", "server", "other", "expired")} | {
        "key": directory / "server.key", "cert_dir": cert_dir}


@unittest.skipIf(OPENSSL is None, "the openssl CLI is needed to make the test certificates")
class TlsTestBase(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pki_dir = Path(tempfile.mkdtemp(prefix="pki-", dir=cls.workdir))
        cls.pki = make_pki(cls.pki_dir)
        cls.source = cls.make_model("model", shards=2, shard_size=256 * KIB)
        # A small page size, so that the listing follows https Link headers too.
        cls.hub = cls.start_hub({REPO: cls.source}, page_size=4, private={REPO: TOKEN},
                                tls=(cls.pki["server"], cls.pki["key"]))
        cls.commit = cls.hub.commit(REPO, token=TOKEN)

    def extra_proxy(self, cert: Path) -> TlsProxy:
        """Another TLS front for the same emulator, with another certificate."""
        proxy = TlsProxy(Path(tempfile.mkdtemp(prefix="tls-", dir=self.hub.tmp)), cert, self.pki["key"], self.hub.url)
        proxy.start()
        self.addCleanup(proxy.stop)
        return proxy

    def download(self, *extra, endpoint: str | None = None, env: dict | None = None, timeout: float = 90.0):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, "--token", TOKEN, "--retries", "1",
                                     "--endpoint", endpoint or self.hub.https_url, *extra], env=env, timeout=timeout)
        return result, cache

    def assertDownloaded(self, result, cache) -> None:
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)

    def assertCertificateError(self, result, cache) -> str:
        self.assertExit(result, 7)
        errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error:")]
        self.assertEqual(len(errors), 1, result.describe())
        self.assertIn("TLS", errors[0])
        self.assertIn("certificate", errors[0].lower())
        self.assertEqual(files_under(cache), [], "nothing is written when the Hub cannot be trusted")
        self.assertLess(result.elapsed, 30, "a certificate error is not retried for long")
        return errors[0]


class TlsTrustTest(TlsTestBase):
    def test_the_hub_is_really_served_over_tls(self):
        self.assertTrue(self.hub.https_url.startswith("https://127.0.0.1:"))
        result, cache = self.download("--ca-bundle", self.pki["ca"])
        self.assertDownloaded(result, cache)
        tree_pages = [line for line in self.hub.tls_proxy.access_log_text().splitlines() if "/tree/" in line]
        self.assertGreater(len(tree_pages), 1, "the listing and its next pages (https Link headers) went through TLS")

    def test_default_trust_refuses_a_private_ca(self):
        result, cache = self.download()
        self.assertCertificateError(result, cache)
        self.assertIn("--ca-bundle", result.stderr, "the message says how to trust a private CA")

    def test_ca_bundle_flag(self):
        self.assertDownloaded(*self.download("--ca-bundle", self.pki["ca"]))

    def test_curl_ca_bundle_variable(self):
        self.assertDownloaded(*self.download(env={"CURL_CA_BUNDLE": self.pki["ca"]}))

    def test_ssl_cert_file_variable(self):
        self.assertDownloaded(*self.download(env={"SSL_CERT_FILE": self.pki["ca"]}))

    def test_ssl_cert_dir_variable(self):
        self.assertDownloaded(*self.download(env={"SSL_CERT_DIR": self.pki["cert_dir"]}))

    def test_ca_bundle_flag_wins_over_the_variables(self):
        wrong = self.hub.new_dir("wrong") / "empty.pem"
        wrong.write_text("")
        self.assertDownloaded(*self.download("--ca-bundle", self.pki["ca"],
                                             env={"CURL_CA_BUNDLE": wrong, "SSL_CERT_FILE": wrong}))

    def test_verify_online_trusts_the_same_cas_as_download(self):
        # verify --online lists the commit again over TLS: --ca-bundle and CURL_CA_BUNDLE apply there too.
        result, cache = self.download("--ca-bundle", self.pki["ca"])
        self.assertDownloaded(result, cache)
        verify = ["verify", REPO, "--online", "--cache-dir", cache, "--token", TOKEN, "--retries", "0",
                  "--endpoint", self.hub.https_url]
        for name, extra, env in (("flag", ["--ca-bundle", self.pki["ca"]], None),
                                 ("CURL_CA_BUNDLE", [], {"CURL_CA_BUNDLE": self.pki["ca"]})):
            with self.subTest(name):
                checked = self.hub.run_hfget([*verify, *extra], env=env, timeout=60)
                self.assertSucceeded(checked)
        refused = self.hub.run_hfget(verify, timeout=60)
        self.assertExit(refused, 7)
        self.assertIn("TLS", refused.stderr)

    def test_a_missing_ca_bundle_file_is_an_error(self):
        # Checked up front, naming the file (exit 2).
        result, cache = self.download("--ca-bundle", self.hub.tmp / "no-such-ca.pem")
        self.assertNotEqual(result.code, 0, result.describe())
        self.assertIn("no-such-ca.pem", result.stderr, "the message names the file")
        self.assertEqual(files_under(cache), [])

    def test_certificate_for_another_address_is_refused(self):
        proxy = self.extra_proxy(self.pki["other"])    # valid CA, but for 127.0.0.2 only
        result, cache = self.download("--ca-bundle", self.pki["ca"], endpoint=proxy.url)
        self.assertCertificateError(result, cache)

    def test_expired_certificate_is_refused(self):
        proxy = self.extra_proxy(self.pki["expired"])
        result, cache = self.download("--ca-bundle", self.pki["ca"], endpoint=proxy.url)
        self.assertCertificateError(result, cache)

    def test_plain_http_to_the_tls_port_fails_cleanly(self):
        result, cache = self.download(endpoint=self.hub.https_url.replace("https://", "http://"))
        self.assertExit(result, 7)
        self.assertEqual(len([l for l in result.stderr.splitlines() if l.startswith("hfget: error:")]), 1)

    def test_token_not_sent_over_plain_http_after_a_redirect(self):
        # From https://127.0.0.1:A to http://127.0.0.1:B is another origin: the token never goes in cleartext.
        collector = Collector("127.0.0.1")
        self.addCleanup(collector.stop)
        self.hub.set_faults([{"path": "*.safetensors", "kind": "redirect", "target": "resolve", "times": -1,
                              "location": f"{collector.url}/collect?to={{signed_q}}"}])
        self.addCleanup(self.hub.clear_faults)
        result, cache = self.download("--ca-bundle", self.pki["ca"])
        self.assertDownloaded(result, cache)
        self.assertTrue(collector.requests)
        for request in collector.requests:
            self.assertNotIn("authorization", {k.lower() for k in request["headers"]}, "token sent over http")


class ProxyEnvironmentTest(TlsTestBase):
    """HTTPS_PROXY points at a port where nothing listens: only NO_PROXY lets the download through."""

    def proxy_env(self, upper: bool, no_proxy: str | None) -> dict:
        dead_proxy = f"http://127.0.0.1:{unused_port('127.0.0.1')}"
        env = {"NO_PROXY": None, "no_proxy": None, "HTTPS_PROXY": None, "https_proxy": None}
        env["HTTPS_PROXY" if upper else "https_proxy"] = dead_proxy
        env["http_proxy"] = dead_proxy       # the CDN (nginx) is plain http
        if no_proxy is not None:
            env["NO_PROXY" if upper else "no_proxy"] = no_proxy
        return env

    def test_no_proxy_lets_the_download_bypass_a_dead_proxy(self):
        for upper in (True, False):
            with self.subTest(upper=upper):
                result, cache = self.download("--ca-bundle", self.pki["ca"],
                                              env=self.proxy_env(upper, "127.0.0.1,127.0.0.2"))
                self.assertDownloaded(result, cache)

    def test_without_no_proxy_the_dead_proxy_fails_with_7(self):
        for upper in (True, False):
            with self.subTest(upper=upper):
                result, cache = self.download("--ca-bundle", self.pki["ca"], env=self.proxy_env(upper, None))
                self.assertExit(result, 7)
                self.assertEqual(len([l for l in result.stderr.splitlines() if l.startswith("hfget: error:")]), 1)
                self.assertEqual(files_under(cache), [])

    def test_no_proxy_for_the_hub_only_still_uses_the_proxy_for_the_cdn(self):
        # The CDN (127.0.0.2) is not in NO_PROXY, so its requests go to the dead http_proxy and fail.
        result, cache = self.download("--ca-bundle", self.pki["ca"], env=self.proxy_env(True, "127.0.0.1"))
        self.assertExit(result, 7)

    @unittest.skipUnless(shutil.which("tinyproxy"),
                         "no HTTP proxy is installed (tinyproxy; squid is not wired up): the proxied download is "
                         "not tested; nothing is installed for it")
    def test_download_through_a_real_proxy(self):
        work = Path(tempfile.mkdtemp(prefix="tinyproxy-", dir=self.hub.tmp))
        port = unused_port("127.0.0.1")
        log = work / "tinyproxy.log"
        # No ConnectPort line: CONNECT to any port is allowed (the TLS front is on an ephemeral port).
        (work / "tinyproxy.conf").write_text(f"Port {port}\nListen 127.0.0.1\nAllow 127.0.0.1\nTimeout 60\n"
                                             f"LogFile \"{log}\"\nLogLevel Info\nPidFile \"{work / 'pid'}\"\n"
                                             "MaxClients 50\n")
        process = subprocess.Popen([shutil.which("tinyproxy"), "-d", "-c", str(work / "tinyproxy.conf")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

        def stop():
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        self.addCleanup(stop)
        wait_until(lambda: log.exists() and "listening" in log.read_text(errors="replace").lower()
                   or process.poll() is not None, 15, what="tinyproxy to listen")
        time.sleep(0.2)
        proxy = f"http://127.0.0.1:{port}"
        result, cache = self.download("--ca-bundle", self.pki["ca"],
                                      env={"NO_PROXY": None, "no_proxy": None, "HTTPS_PROXY": proxy,
                                           "http_proxy": proxy})
        self.assertDownloaded(result, cache)
        self.assertIn("CONNECT", log.read_text(errors="replace"), "the Hub was reached through the proxy")


if __name__ == "__main__":
    unittest.main()
