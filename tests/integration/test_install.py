"""Putting hfget on another machine (issue 20): the binary needs only libraries every current distribution
ships (the NEEDED list and the highest GLIBC_ symbol version are pinned here, so a new dependency cannot raise
them unnoticed), `cmake --install` lays out binary, man page, completion and docs, the man page carries every
command and flag of --help, bash completion offers commands, flags and cached repo ids, `--version` and `env`
say what a bug report needs and never a token, and the .deb holds the same files, installs, runs and removes
cleanly (installing needs root; the rest does not)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import hfget_binary

SOURCE_DIR = Path(__file__).resolve().parents[2]
COMPLETION = SOURCE_DIR / "share" / "completion" / "hfget.bash"

# docs/install.md: "What the binary needs". glibc's own libraries, libcurl (OpenSSL flavour), OpenSSL 3, lz4.
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2",
                  "libcurl.so.4", "libssl.so.3", "libcrypto.so.3", "liblz4.so.1"}
# The oldest glibc it runs on: 2.36 (Debian 12; Ubuntu 24.04 has 2.39), docs/install.md: the static libstdc++
# of GCC 12 calls arc4random (2.36), its unwinder _dl_find_object (2.35).
GLIBC_CEILING = (2, 36)
TOKEN = "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0123"


def run(argv: list, env: dict | None = None, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, env=env, **kwargs)


def needed_libraries(binary: str) -> list[str]:
    dynamic = run(["readelf", "-d", binary]).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)


def is_sanitizer_build(binary: str) -> bool:
    return any(re.match(r"lib(a|t|ub)san", name) for name in needed_libraries(binary))


def build_dir_of(binary: str) -> Path:
    return Path(os.environ.get("HFGET_BUILD_DIR") or Path(binary).resolve().parent)


def plain_env(home: Path, **extra: str) -> dict:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(home),
           "HF_HOME": str(home / "hf")}
    env.update(extra)
    return env


def unroff(page: str) -> str:
    return page.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        self.binary = hfget_binary()
        self.tmp = Path(tempfile.mkdtemp(prefix="hfget-install-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)


class PortableBinaryTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        if shutil.which("readelf") is None or shutil.which("objdump") is None:
            self.skipTest("needs readelf and objdump (binutils)")
        if is_sanitizer_build(self.binary):
            self.skipTest("a sanitizer build links its runtime and the dynamic libstdc++ on purpose")

    def test_needs_only_glibc_libcurl_openssl_and_lz4(self):
        needed = set(needed_libraries(self.binary))
        self.assertIn("libcurl.so.4", needed)
        self.assertIn("libc.so.6", needed)
        self.assertEqual(needed - ALLOWED_NEEDED, set(),
                         "a new shared library: link it statically or add it to docs/install.md and this test")

    def test_asks_glibc_for_no_version_above_the_documented_ceiling(self):
        symbols = run(["objdump", "-T", self.binary]).stdout
        versions = {tuple(int(p) for p in v.split(".")) for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", symbols)}
        self.assertTrue(versions, "no GLIBC_ symbol versions found")
        self.assertLessEqual(max(versions), GLIBC_CEILING,
                             f"needs glibc {'.'.join(map(str, max(versions)))}: see docs/install.md")
        # libstdc++ and libgcc are linked in: nothing of theirs may be asked of the target machine.
        self.assertNotRegex(symbols, r"GLIBCXX_|CXXABI_|\bGCC_\d")

    def test_ldd_finds_every_library_here(self):
        if shutil.which("ldd") is None:
            self.skipTest("no ldd")
        self.assertNotIn("not found", run(["ldd", self.binary]).stdout)


class VersionAndEnvTest(TempDirTestCase):
    def test_version_names_the_build_and_the_libraries_in_use(self):
        for flag in ("--version", "-V"):
            result = run([self.binary, flag], env=plain_env(self.tmp))
            self.assertEqual(result.returncode, 0, result.stderr)
            lines = result.stdout.splitlines()
            self.assertRegex(lines[0], r"^hfget \d+\.\d+\.\d+$")
            self.assertRegex(result.stdout, r"\ncommit (unknown|[0-9a-f]{7,}(-dirty)?)\n")
            self.assertRegex(result.stdout, r"\nlibcurl \d+\.\d+\.\d+ \(OpenSSL/3[^)]*\)\n")
            self.assertRegex(result.stdout, r"\nOpenSSL 3\.")

    def test_env_says_where_the_token_came_from_and_never_prints_it(self):
        home = self.tmp
        (home / "hf").mkdir()
        (home / "hf" / "token").write_text(TOKEN + "-file\n")
        cases = [({"HF_TOKEN": TOKEN}, "HF_TOKEN"), ({"HUGGING_FACE_HUB_TOKEN": TOKEN}, "HUGGING_FACE_HUB_TOKEN"),
                 ({}, "token file " + str(home / "hf" / "token"))]
        for extra, origin in cases:
            for json_flag in ([], ["--json"]):
                result = run([self.binary, "env", *json_flag], env=plain_env(home, **extra))
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertNotIn(TOKEN, result.stdout + result.stderr)
                self.assertNotIn("plantedToken", result.stdout + result.stderr)
                if json_flag:
                    report = json.loads(result.stdout)
                    self.assertEqual(report["token"], {"set": True, "from": origin})
                else:
                    self.assertIn("set, from " + origin, result.stdout)

    def test_env_reports_endpoint_cache_proxies_and_free_space_with_their_sources(self):
        cache = self.tmp / "elsewhere" / "hub"
        env = plain_env(self.tmp, HF_ENDPOINT="http://127.0.0.1:9/", HF_HUB_CACHE=str(cache),
                        https_proxy="http://alice:s3cret@proxy.example:3128", NO_PROXY="localhost")
        report = json.loads(run([self.binary, "env", "--json"], env=env).stdout)
        self.assertEqual(report["endpoint"], {"value": "http://127.0.0.1:9", "from": "HF_ENDPOINT"})
        self.assertEqual(report["hub_cache"], {"value": str(cache), "from": "HF_HUB_CACHE"})
        self.assertEqual(report["hf_home"]["from"], "HF_HOME")
        self.assertEqual(report["token"], {"set": False, "from": "none"})
        self.assertEqual(report["proxies"], {"https_proxy": "http://alice:***@proxy.example:3128",
                                             "NO_PROXY": "localhost"})
        self.assertEqual(report["target"], str(cache))
        self.assertIsInstance(report["free_bytes"], int, "the nearest existing parent's free space")
        text = run([self.binary, "env", "--local-dir", self.tmp], env=env).stdout
        self.assertNotIn("s3cret", text)
        self.assertRegex(text, r"target:\s+" + re.escape(str(self.tmp)))
        self.assertRegex(text, r"free space:\s+\d")
        defaults = json.loads(run([self.binary, "env", "--json"], env={"PATH": "/usr/bin:/bin",
                                                                        "HOME": str(self.tmp)}).stdout)
        self.assertEqual(defaults["endpoint"], {"value": "https://huggingface.co", "from": "default"})
        self.assertEqual(defaults["hub_cache"]["value"], str(self.tmp / ".cache" / "huggingface" / "hub"))


def help_text(binary: str, *command: str) -> str:
    result = run([binary, *command, "--help"])
    assert result.returncode == 0, result.stderr
    return result.stdout


def subcommands_in_help(text: str) -> list[str]:
    section = text.split("Subcommands:", 1)
    return re.findall(r"^  (\w[\w-]*)\s", section[1], re.M) if len(section) == 2 else []


class ManPageTest(TempDirTestCase):
    def page(self) -> str:
        result = run([self.binary, "__man"])
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def test_every_command_and_flag_of_help_is_in_the_page(self):
        page = unroff(self.page())
        pending, seen = [()], 0
        while pending and seen < 50:
            command = pending.pop()
            seen += 1
            text = help_text(self.binary, *command)
            if command:
                self.assertIn('.SS "hfget ' + " ".join(command) + '"', page)
            for flag in set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text.split("Subcommands:")[0])):
                self.assertIn(flag, page, f"{flag} of `hfget {' '.join(command)} --help` is not in hfget(1)")
            pending.extend((*command, sub) for sub in subcommands_in_help(text))
        self.assertGreater(seen, 8, "download, verify, ..., cache ls, cache rm")

    def test_the_built_page_is_the_binarys_and_man_renders_it(self):
        built = build_dir_of(self.binary) / "hfget.1"
        if built.exists():
            self.assertEqual(built.read_text(), self.page(), "hfget.1 is stale: rebuild")
        if shutil.which("man") is None:
            self.skipTest("no man (man-db)")
        path = self.tmp / "hfget.1"
        path.write_text(self.page())
        rendered = run(["man", "-l", path], env={**plain_env(self.tmp), "MANPAGER": "cat", "MANWIDTH": "100"})
        self.assertEqual(rendered.returncode, 0, rendered.stderr)
        self.assertNotIn("warning", rendered.stderr)
        for heading in ("NAME", "SYNOPSIS", "COMMANDS", "ENVIRONMENT"):
            self.assertIn(heading, rendered.stdout)
        self.assertIn("hfget download", rendered.stdout)


class BashCompletionTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        if shutil.which("bash") is None:
            self.skipTest("no bash")
        self.cache = self.tmp / "hf" / "hub"
        for folder in ("models--test-org--tiny-model", "models--gpt2", "datasets--test-org--tiny-dataset",
                       "spaces--a--b", ".locks", "version.txt"):
            (self.cache / folder).mkdir(parents=True)

    def complete(self, *words: str, script: Path = COMPLETION) -> list[str]:
        """What bash offers for `hfget WORDS`, the last word being the one completed."""
        driver = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
                  '_hfget; printf "%s\\n" "${COMPREPLY[@]}"')
        result = run(["bash", "-c", driver, "bash", script, self.binary, *words], env=plain_env(self.tmp),
                     timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        return sorted(filter(None, result.stdout.splitlines()))

    def test_complete_registers_the_function(self):
        result = run(["bash", "-c", 'source "$1"; complete -p hfget', "bash", COMPLETION])
        self.assertEqual(result.stdout.strip(), "complete -F _hfget hfget")

    def test_commands_then_their_flags(self):
        self.assertEqual(self.complete(""), ["cache", "download", "env", "ls", "rm", "status", "verify", "wait"])
        self.assertEqual(self.complete("do"), ["download"])
        self.assertIn("--include", self.complete("download", "--inc"))
        self.assertIn("--local-dir", self.complete("download", "org/x", "--"))
        self.assertEqual(self.complete("cache", ""), ["ls", "rm"])
        self.assertIn("--version", self.complete("--"))
        self.assertEqual(self.complete("download", "--repo-type", "d"), ["dataset"])
        self.assertNotIn("__man", self.complete("__"))

    def test_repo_ids_from_the_cache(self):
        self.assertEqual(self.complete("download", ""),
                         ["datasets/test-org/tiny-dataset", "gpt2", "spaces/a/b", "test-org/tiny-model"])
        self.assertEqual(self.complete("verify", "test-"), ["test-org/tiny-model"])
        self.assertEqual(self.complete("cache", "rm", "gp"), ["gpt2"])
        other = self.tmp / "other"
        (other / "models--x--y").mkdir(parents=True)
        self.assertEqual(self.complete("download", "--cache-dir", other, ""), ["x/y"])


class CmakeInstallTest(TempDirTestCase):
    def test_install_with_a_prefix_lays_out_every_file_without_root(self):
        build = build_dir_of(self.binary)
        if not (build / "cmake_install.cmake").exists() or shutil.which("cmake") is None:
            self.skipTest(f"{build} is not a CMake build directory")
        prefix = self.tmp / "local"
        result = run(["cmake", "--install", build, "--prefix", prefix, "--strip"], timeout=240)
        self.assertEqual(result.returncode, 0, result.stderr)
        for path in ("bin/hfget", "share/man/man1/hfget.1", "share/bash-completion/completions/hfget",
                     "share/doc/hfget/README.md", "share/doc/hfget/install.md"):
            self.assertTrue((prefix / path).is_file(), path)
        installed = prefix / "bin" / "hfget"
        self.assertEqual(run([installed, "--version"]).returncode, 0)
        if shutil.which("readelf"):
            self.assertNotIn(".debug_info", run(["readelf", "-S", installed]).stdout, "--strip")


class DebPackageTest(TempDirTestCase):
    """One cpack run (about a minute on two busy cores) for both tests."""

    @classmethod
    def setUpClass(cls):
        binary = hfget_binary()
        cls.build = build_dir_of(binary)
        if not (cls.build / "CPackConfig.cmake").exists():
            raise unittest.SkipTest(f"{cls.build} has no CPackConfig.cmake")
        for tool in ("cpack", "dpkg-deb"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest(f"needs {tool}")
        if is_sanitizer_build(binary):
            raise unittest.SkipTest("a sanitizer build is not packaged")
        cls.package_dir = Path(tempfile.mkdtemp(prefix="hfget-deb-"))
        result = run(["cpack", "-G", "DEB", "--config", cls.build / "CPackConfig.cmake", "-B", cls.package_dir],
                     timeout=400)
        debs = list(cls.package_dir.glob("hfget_*.deb"))
        if result.returncode != 0 or len(debs) != 1:
            shutil.rmtree(cls.package_dir, ignore_errors=True)
            raise AssertionError("cpack failed: " + result.stdout + result.stderr)
        cls.deb = debs[0]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.package_dir, ignore_errors=True)

    def test_the_deb_holds_every_file_and_names_the_libraries_of_debian_and_ubuntu(self):
        info = run(["dpkg-deb", "-I", self.deb]).stdout
        depends = re.search(r"^ Depends: (.*)$", info, re.M).group(1)
        for alternative in ("libcurl4 (>= 7.85.0) | libcurl4t64 (>= 7.85.0)", "libssl3 (>= 3.0.0) | libssl3t64",
                            "liblz4-1", "libc6 (>= 2.36)"):
            self.assertIn(alternative, depends)
        self.assertNotRegex(depends, r"spdlog|fmt|libstdc\+\+|libgcc")
        contents = run(["dpkg-deb", "-c", self.deb]).stdout
        for path in ("./usr/bin/hfget", "./usr/share/man/man1/hfget.1", "./usr/share/bash-completion/completions/hfget",
                     "./usr/share/doc/hfget/README.md"):
            self.assertIn(path, contents)

    def test_installs_runs_and_removes_cleanly_where_root(self):
        if os.geteuid() != 0 or shutil.which("dpkg") is None:
            self.skipTest("installing a .deb needs root and dpkg")
        if run(["dpkg-query", "-W", "hfget"]).returncode == 0:
            self.skipTest("an hfget package is already installed here; not touching it")
        files = [line.split()[-1][1:] for line in run(["dpkg-deb", "-c", self.deb]).stdout.splitlines()
                 if not line.startswith("d")]
        installed = run(["dpkg", "-i", self.deb], timeout=120)
        try:
            self.assertEqual(installed.returncode, 0, installed.stdout + installed.stderr)
            self.assertEqual(run(["/usr/bin/hfget", "--version"]).returncode, 0)
            page = run(["man", "hfget"], env={**plain_env(self.tmp), "MANPAGER": "cat"})
            if Path("/usr/share/man/man1/hfget.1").exists():  # a slim image may exclude /usr/share/man from dpkg
                self.assertEqual(page.returncode, 0, page.stderr)
                self.assertIn("hfget download", page.stdout)
            registered = run(["bash", "-c", "source /usr/share/bash-completion/completions/hfget; complete -p hfget"])
            self.assertIn("_hfget", registered.stdout)
        finally:
            removed = run(["dpkg", "-r", "hfget"], timeout=120)
        self.assertEqual(removed.returncode, 0, removed.stdout + removed.stderr)
        self.assertEqual([f for f in files if os.path.lexists(f)], [], "files left behind by dpkg -r")


if __name__ == "__main__":
    unittest.main()
