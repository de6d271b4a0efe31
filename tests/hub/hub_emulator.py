#!/usr/bin/env python3
"""A Hugging Face Hub emulator for hfget's integration tests (Python standard library only).

It serves repos from local directories with the Hub's download protocol (repo info, tree listing with
pagination, /resolve/ with LFS redirects to a signed CDN URL), its error codes, private and gated repos,
and injectable faults on file bodies; for hostile-server tests it also serves crafted tree pages, lying
bodies and redirect chains (README, "Hostile servers"). It is an independent oracle: every hash is computed here with
hashlib, never with hfget code. See tests/hub/README.md and /work/shared/HUB-PROTOCOL.md.

    python3 tests/hub/hub_emulator.py --repo org/name=DIR [--repo dataset:org/ds@dev=DIR2] ...

Once listening it prints one JSON line on stdout: {"hub": URL, "cdn": URL, "pid": N}.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import fnmatch
import functools
import gzip
import hashlib
import hmac
import http.server
import itertools
import json
import os
import random
import re
import shutil
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from xet_cas import XetStore
from xet_format import FormatError

# Which files are stored with Git LFS (served through a 302 to the CDN). The real Hub decides this by
# the repo's .gitattributes and its own size threshold; these are the common model-file patterns.
LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf", ".model")
LFS_SIZE_THRESHOLD = 64 * 1024  # bytes; any file larger than this is LFS too

DEFAULT_PAGE_SIZE = 1000  # the Hub's tree page size with expand=false
REPO_TYPES = ("model", "dataset", "space")
RESOLVE_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}
MAX_STALL_SECONDS = 120  # bound for "stall" faults, so a forgotten rule can't hang a thread forever
BODY_CHUNK = 256 * 1024
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
SHORT_SHA_RE = re.compile(r"^[0-9a-f]{7,39}$")


# --------------------------------------------------------------------------------------------- data

def lfs_pointer(sha256: str, size: int) -> bytes:
    """The Git LFS pointer file that git stores in place of an LFS file's content."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def is_lfs_path(path: str, size: int) -> bool:
    return path.endswith(LFS_SUFFIXES) or size > LFS_SIZE_THRESHOLD


@dataclass(frozen=True)
class RepoFile:
    path: str          # repo-relative, '/'-separated
    source: Path       # where the bytes are on disk
    size: int
    sha256: str        # of the content
    content_oid: str   # git blob sha1 of the content
    lfs: bool
    xet_hash: str | None = None   # set for files uploaded through Xet (tests/hub/xet_cas.py)

    @property
    def pointer(self) -> bytes:
        return lfs_pointer(self.sha256, self.size)

    @property
    def git_oid(self) -> str:
        """The tree listing's `oid`: git blob sha1 of what git stores (the pointer for LFS files)."""
        return git_blob_sha1(self.pointer) if self.lfs else self.content_oid

    @property
    def etag(self) -> str:
        """The normalised etag a client must name the blob with: sha256 for LFS, git sha1 otherwise."""
        return self.sha256 if self.lfs else self.content_oid

    @staticmethod
    def load(path: str, source: Path) -> "RepoFile":
        size = source.stat().st_size
        sha256 = hashlib.sha256()
        sha1 = hashlib.sha1(b"blob %d\0" % size)
        with open(source, "rb") as stream:
            while chunk := stream.read(1 << 20):
                sha256.update(chunk)
                sha1.update(chunk)
        return RepoFile(path, source, size, sha256.hexdigest(), sha1.hexdigest(), is_lfs_path(path, size))


@dataclass
class Commit:
    sha: str
    files: dict[str, RepoFile]          # sorted by path
    directories: list[str]

    @functools.cached_property
    def tree_entries(self) -> list[dict]:
        """Every file and directory of the commit as tree-API entries, sorted by path."""
        entries = []
        for directory in self.directories:
            children = sorted(p for p in self.files if p.startswith(directory + "/"))
            oid = hashlib.sha1("\n".join(f"{p} {self.files[p].git_oid}" for p in children).encode()).hexdigest()
            entries.append({"type": "directory", "oid": oid, "size": 0, "path": directory})
        for f in self.files.values():
            entry = {"type": "file", "oid": f.git_oid, "size": f.size, "path": f.path}
            if f.lfs:
                entry["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": len(f.pointer)}
            if f.xet_hash:
                entry["xetHash"] = f.xet_hash
            entries.append(entry)
        return sorted(entries, key=lambda e: e["path"])

    @staticmethod
    def load(repo_key: str, branch: str, root: Path) -> "Commit":
        if not root.is_dir():
            raise SystemExit(f"hub_emulator: not a directory: {root}")
        files = {}
        for source in sorted(root.rglob("*")):
            relative = source.relative_to(root).as_posix()
            if source.is_file() and not relative.startswith(".git/"):
                files[relative] = RepoFile.load(relative, source)
        return Commit.from_files(repo_key, branch, files)

    @staticmethod
    def from_files(repo_key: str, branch: str, files: dict[str, RepoFile], parent: str = "") -> "Commit":
        files = dict(sorted(files.items()))
        directories = sorted({str(Path(p).parent.as_posix()) for p in files} - {"."})
        # Add every ancestor of nested directories too (a/b/c.txt → a and a/b).
        directories = sorted({"/".join(d.split("/")[:i]) for d in directories for i in range(1, d.count("/") + 2)})
        # A deterministic commit id: the same directory for the same repo/branch always gives the same sha.
        listing = "".join(f"{p} {f.etag}\n" for p, f in files.items())
        parent_line = f"parent {parent}\n" if parent else ""
        sha = hashlib.sha1(f"{repo_key}@{branch}\n{parent_line}{listing}".encode()).hexdigest()
        return Commit(sha, files, directories)


@dataclass
class Repo:
    type: str
    id: str
    branches: dict[str, Commit] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)       # tag -> branch
    private_token: str | None = None
    gated: bool = False
    gated_tokens: set[str] = field(default_factory=set)      # tokens granted access to a gated repo
    history: list[Commit] = field(default_factory=list)      # earlier commits of branches (Xet uploads)
    xet_visible: bool = True                                  # False: --xet-hide, served as LFS only

    @property
    def key(self) -> str:
        return f"{self.type}:{self.id}"

    @property
    def default_branch(self) -> str:
        return "main" if "main" in self.branches else next(iter(self.branches))

    def commits(self) -> list[Commit]:
        return list({c.sha: c for c in [*self.branches.values(), *self.history]}.values())

    def resolve_revision(self, revision: str) -> Commit | None:
        """Branch, tag, full commit sha or a unique short sha prefix → commit."""
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.branches[self.tags[revision]]
        if COMMIT_RE.match(revision) or SHORT_SHA_RE.match(revision):
            matches = [c for c in self.commits() if c.sha.startswith(revision)]
            if len(matches) == 1:
                return matches[0]
        return None


# ------------------------------------------------------------------------------------------- faults

FAULT_KINDS = ("drop", "status", "stall", "flip", "expire",
               # Hostile servers (tests/integration/test_hostile_server.py):
               "extra", "short", "bad_range", "ignore_range", "redirect")
BODY_FAULT_KINDS = ("drop", "status", "stall", "flip", "extra", "short", "bad_range", "ignore_range")
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
MAX_EXTRA_BYTES = 64 * 1024 * 1024   # bound for "extra" faults
CAS_FAULT_KINDS = ("status", "drop", "stall")   # target "cas": an error answer, or no answer at all


@dataclass
class FaultRule:
    path: str                 # fnmatch pattern on the repo file path
    kind: str
    times: int = 1            # -1 = always
    after_bytes: int = 0      # drop, stall
    status: int = 503         # status
    retry_after: int | None = None
    ratelimit_reset: int | None = None  # status: a `RateLimit: "api";r=0;t=N` header (quota used up, resets in N s)
    seconds: float = 0.0      # stall
    offset: int = 0           # flip; -1: a byte drawn at random (seeded) from each range served
    target: str = "body"      # "body": file-body GETs; "resolve": any /resolve/ request; "api": /api/ requests
    extra_bytes: int = 0      # extra: junk bytes sent after the asked range (counted in Content-Length)
    shift: int = 1            # bad_range: the range served starts this many bytes after (or before) the asked one
    total_delta: int = 0      # bad_range: added to the complete length in Content-Range
    content_range_text: str = ""  # bad_range: this Content-Range value instead, verbatim (chars <= U+00FF as bytes)
    location: str = ""        # redirect: Location template ({hub}, {cdn}, {signed}, {signed_q}, {path})
    hops: int = 1             # redirect: redirects in the chain before Location (the extra ones go through /_hop)
    redirect_status: int = 302  # redirect: 301, 302, 303, 307 or 308
    probability: float = 1.0  # applies to a matching request with this probability (seeded draw); else skipped
    seed: int | None = None   # seed of the rule's own random draws (None: seeded from the rule's text)

    @staticmethod
    def from_json(raw: dict) -> "FaultRule":
        if not isinstance(raw, dict) or "path" not in raw or raw.get("kind") not in FAULT_KINDS:
            raise ValueError(f"a fault rule needs 'path' and 'kind' in {FAULT_KINDS}: {raw!r}")
        unknown = set(raw) - {f for f in FaultRule.__dataclass_fields__} - {"comment"}
        if unknown:
            raise ValueError(f"unknown fault rule fields {sorted(unknown)}")
        rule = FaultRule(**{k: v for k, v in raw.items() if k != "comment"})
        allowed_statuses = (404, 408, 429, 500, 501, 502, 503, 504) if rule.target == "cas" else (408, 429, 500, 502,
                                                                                                  503, 504)
        if rule.kind == "status" and rule.status not in allowed_statuses:
            raise ValueError(f"status fault must be one of {allowed_statuses}, got {rule.status}")
        if rule.kind == "stall" and not 0 < rule.seconds <= MAX_STALL_SECONDS:
            raise ValueError(f"stall seconds must be in (0, {MAX_STALL_SECONDS}]")
        if rule.target == "cas" and rule.kind not in CAS_FAULT_KINDS:
            raise ValueError(f"target 'cas' takes kinds {CAS_FAULT_KINDS}")
        if rule.target == "xorb" and rule.kind not in (*BODY_FAULT_KINDS, "expire"):
            raise ValueError("target 'xorb' takes body fault kinds or 'expire'")
        if rule.target not in ("body", "resolve", "api", "cas", "xorb") or (rule.target == "resolve" and rule.kind != "status"
                                                               and rule.kind != "redirect"):
            raise ValueError("target must be 'body', or 'resolve' with kind 'status'")
        if rule.target == "api" and rule.kind not in ("status", "redirect"):
            raise ValueError("target 'api' takes kind 'status' or 'redirect'")
        if rule.kind == "redirect" and (rule.target in ("body", "cas", "xorb") or not rule.location or rule.hops < 1
                                        or rule.redirect_status not in REDIRECT_STATUSES):
            raise ValueError("a redirect needs target 'resolve' or 'api', a location, hops >= 1 and a 3xx "
                             f"redirect_status in {REDIRECT_STATUSES}")
        if rule.kind == "extra" and not 0 < rule.extra_bytes <= MAX_EXTRA_BYTES:
            raise ValueError(f"extra_bytes must be in (0, {MAX_EXTRA_BYTES}]")
        if rule.times == 0 or rule.times < -1:
            raise ValueError("times must be a positive count or -1 (always)")
        if not isinstance(rule.probability, (int, float)) or not 0 < rule.probability <= 1:
            raise ValueError("probability must be in (0, 1]")
        return rule

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def status_headers(self) -> dict:
        """The headers a "status" fault answers with: Retry-After, the Hub's RateLimit pair."""
        headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
        if self.ratelimit_reset is not None:
            headers["RateLimit"] = f'"api";r=0;t={self.ratelimit_reset}'
            headers["RateLimit-Policy"] = '"fixed window";"api";q=500;w=300'
        return headers


class FaultBook:
    """The active fault rules and how many faults of each kind were injected. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._draws: list[random.Random] = []
        self.injected = {kind: 0 for kind in FAULT_KINDS}

    def set(self, rules: list[FaultRule]) -> None:
        with self._lock:
            self._rules = list(rules)
            # One seeded generator per rule: the same rules and the same request order give the same faults.
            self._draws = [random.Random(r.seed if r.seed is not None else json.dumps(r.to_json(), sort_keys=True))
                           for r in self._rules]

    def rules(self) -> list[dict]:
        with self._lock:
            return [r.to_json() for r in self._rules]

    def take(self, paths: list[str], kinds: tuple[str, ...], target: str = "body", applies=lambda rule: True,
             served: tuple[int, int] | None = None):
        """Consume and return the first matching rule that applies to a request for one of `paths`.

        `served`: the first and last byte of the body; a "flip" with offset -1 flips a byte drawn from it."""
        with self._lock:
            for rule, draws in zip(self._rules, self._draws):
                if (rule.kind in kinds and rule.target == target and rule.times != 0
                        and any(fnmatch.fnmatchcase(p, rule.path) for p in paths) and applies(rule)
                        and (rule.probability >= 1 or draws.random() < rule.probability)):
                    if rule.times > 0:
                        rule.times -= 1
                    self.injected[rule.kind] += 1
                    taken = FaultRule(**rule.to_json())
                    if taken.kind == "flip" and taken.offset < 0 and served is not None:
                        taken.offset = draws.randint(served[0], served[1])
                    return taken
        return None


# ------------------------------------------------------------------------------------- request log

class RequestLog:
    """Every request as one JSON record, in memory and optionally appended to a file. Thread-safe.

    The Authorization value is never recorded, only whether the header was present. A request is logged when
    it ends, so one that began before a reset (a killed client's, ended when the emulator next writes to it) is
    left out: after a reset the log holds only requests that began after it (the file keeps every one).
    """

    def __init__(self, path: str | None) -> None:
        self._lock = threading.Lock()
        self._records: list[dict] = []
        self._since = 0.0
        self._file = open(path, "a", encoding="utf-8", buffering=1) if path else None

    def add(self, record: dict) -> None:
        line = json.dumps(record, ensure_ascii=False)
        with self._lock:
            if record.get("time", self._since) >= self._since:
                self._records.append(record)
            if self._file:
                self._file.write(line + "\n")

    def records(self) -> list[dict]:
        with self._lock:
            return list(self._records)

    def reset(self) -> None:
        with self._lock:
            self._records.clear()
            self._since = time.time()


# ------------------------------------------------------------------------------------------ signing

def cdn_signature(sha256: str, expires: int, secret: str) -> str:
    """The CDN URL signature, in nginx secure_link_md5 form: base64url(md5("$expires$uri $secret")).

    Using nginx's own scheme means an nginx CDN (tests/integration/harness.py) can verify the same URLs.
    """
    digest = hashlib.md5(f"{expires}/{sha256} {secret}".encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


# -------------------------------------------------------------------------------------------- state

class HubState:
    """Everything the handlers share: repos, tokens, faults, the log and the CDN settings."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.valid_tokens: set[str] = set(args.token or [])
        self.page_size: int = args.page_size
        self.gzip_text: bool = args.gzip_text
        self.url_ttl: int = args.url_ttl
        self.body_rate: int = args.body_rate
        self.cas_latency: float = max(getattr(args, "cas_latency_ms", 0.0) or 0.0, 0.0) / 1000.0
        self.hub_latency: float = max(getattr(args, "hub_latency_ms", 0.0) or 0.0, 0.0) / 1000.0
        self.cdn_secret: str = args.cdn_secret or uuid.uuid4().hex
        self.cdn_url: str = (args.cdn_url or "").rstrip("/")   # set once the built-in CDN listens, if none given
        self.faults = FaultBook()
        self.log = RequestLog(args.request_log)
        self.request_counts = {"hub": 0, "cdn": 0}
        self.open_connections = 0   # accepted and not yet closed, on both listeners
        self._counter_lock = threading.Lock()
        self._nonce = itertools.count(1)
        self.used_cdn_urls: set[str] = set()   # for "expire" faults: signed URLs already fetched once
        self.blobs: dict[str, list[RepoFile]] = {}  # sha256 -> files with that content (CDN lookups)
        self.crafted_trees: dict[str, dict] = {}    # repo key -> {"pages": [...], "first_url": str | None}
        self.swaps: list[dict] = []   # POST /_emulator/content-swap: other bytes under the same URL
        self.swapped_bytes = 0        # body bytes served from a swap source
        self.cdn_root: Path | None = Path(args.cdn_root) if args.cdn_root else None
        self.commit_lock = threading.Lock()   # Xet uploads: one commit at a time
        self.xet: XetStore | None = None
        if args.xet_store:
            self.xet = XetStore(Path(args.xet_store), args.xet_token_ttl, args.url_ttl,
                                publish_root=Path(args.xorb_root) if args.xorb_root else None)
        self._load(args)

    def connection_opened(self) -> None:
        with self._counter_lock:
            self.open_connections += 1

    def connection_closed(self) -> None:
        with self._counter_lock:
            self.open_connections -= 1

    def swap_for(self, paths: list[str]) -> dict | None:
        """The content swap (POST /_emulator/content-swap) that covers one of `paths`, if any."""
        with self._counter_lock:
            for swap in self.swaps:
                if any(fnmatch.fnmatchcase(p, swap["path"]) for p in paths):
                    return swap
        return None

    def swap_etag(self, swap: dict | None) -> str | None:
        """The ETag a swap with an "etag" announces while its bytes are being served (else None)."""
        if swap is None or swap.get("etag") is None:
            return None
        with self._counter_lock:
            sent, start, length = swap["sent"], swap["after_bytes"], swap["for_bytes"]
            return swap["etag"] if sent >= start and (length < 0 or sent < start + length) else None

    def swap_source(self, swap: dict | None, want: int) -> tuple[str | None, int]:
        """Where the next body bytes of a swapped file come from: (swap source or None, bytes until that changes).

        Counts `want` bytes as served: the swap starts after `after_bytes` bytes of the file were sent (since
        it was set) and lasts `for_bytes` bytes (-1: for good); then the listed content is served again.
        """
        if swap is None:
            return None, want
        with self._counter_lock:
            sent, start = swap["sent"], swap["after_bytes"]
            end = start + swap["for_bytes"] if swap["for_bytes"] >= 0 else None
            if sent < start:
                count, source = min(want, start - sent), None
            elif end is None or sent < end:
                count, source = want if end is None else min(want, end - sent), swap["source"]
            else:
                count, source = want, None
            swap["sent"] += count
            if source is not None:
                self.swapped_bytes += count
            return source, count

    def _load(self, args: argparse.Namespace) -> None:
        for spec in args.repo or []:
            repo_type, repo_id, branch, directory = parse_repo_spec(spec)
            repo = self.repos.setdefault((repo_type, repo_id), Repo(repo_type, repo_id))
            if branch in repo.branches:
                raise SystemExit(f"hub_emulator: branch {branch!r} given twice for {repo_id}")
            repo.branches[branch] = Commit.load(repo.key, branch, Path(directory))
        if self.xet:
            self._replay_xet_commits()
        for spec in args.xet_repo or []:
            repo_type, repo_id, branch, _ = parse_repo_spec(spec, value_required=False)
            repo = self.repos.setdefault((repo_type, repo_id), Repo(repo_type, repo_id))
            repo.branches.setdefault(branch, Commit.from_files(repo.key, branch, {}))
        for spec in args.xet_hide or []:
            repo_type, repo_id, _, _ = parse_repo_spec(spec, branch_allowed=False, value_required=False)
            self._repo_for_option("--xet-hide", repo_type, repo_id).xet_visible = False
        for spec in args.tag or []:
            repo_type, repo_id, tag, branch = parse_repo_spec(spec)
            self._repo_for_option("--tag", repo_type, repo_id).tags[tag] = branch
        for spec in args.private or []:
            repo_type, repo_id, _, token = parse_repo_spec(spec, branch_allowed=False)
            self._repo_for_option("--private", repo_type, repo_id).private_token = token
            self.valid_tokens.add(token)
        for spec in args.gated or []:
            repo_type, repo_id, _, token = parse_repo_spec(spec, branch_allowed=False, value_required=False)
            repo = self._repo_for_option("--gated", repo_type, repo_id)
            repo.gated = True
            if token:
                repo.gated_tokens.add(token)
                self.valid_tokens.add(token)
        for repo in self.repos.values():
            for commit in repo.commits():
                for f in commit.files.values():
                    if f.lfs:
                        self.blobs.setdefault(f.sha256, []).append(f)

    def add_xet_commit(self, repo: Repo, branch: str, files: dict[str, RepoFile], parent: str,
                       replay: bool = False) -> Commit:
        """A commit made by a Xet upload: the branch's new head, recorded in DIR/commits.jsonl so that an
        emulator started later on the same --xet-store serves the same repos (replayed by _load)."""
        commit = Commit.from_files(repo.key, branch, files, parent)
        if branch in repo.branches:
            repo.history.append(repo.branches[branch])
        repo.branches[branch] = commit
        for f in commit.files.values():
            if f.lfs:
                self.blobs.setdefault(f.sha256, []).append(f)
        if self.cdn_root and not replay:
            self.place_cdn_blobs(self.cdn_root)
        if not replay:
            record = {"repo": repo.key, "branch": branch, "parent": parent,
                      "files": {p: {"sha256": f.sha256, "xet_hash": f.xet_hash, "lfs": f.lfs}
                                for p, f in files.items()}}
            with open(self.xet.root / "commits.jsonl", "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")
        return commit

    def _replay_xet_commits(self) -> None:
        journal = self.xet.root / "commits.jsonl"
        for line in journal.read_text(encoding="utf-8").splitlines() if journal.exists() else []:
            record = json.loads(line)
            repo_type, _, repo_id = record["repo"].partition(":")
            repo = self.repos.setdefault((repo_type, repo_id), Repo(repo_type, repo_id))
            files = {}
            for path, meta in record["files"].items():
                content = self.xet.root / "files" / meta["sha256"]
                if not content.exists() and meta["xet_hash"]:
                    self.xet.materialize(meta["xet_hash"])   # a store carried without its file copies (bench)
                f = RepoFile.load(path, content)
                files[path] = dataclasses.replace(f, lfs=meta["lfs"], xet_hash=meta["xet_hash"])
            self.add_xet_commit(repo, record["branch"], files, record["parent"], replay=True)

    def _repo_for_option(self, option: str, repo_type: str, repo_id: str) -> Repo:
        try:
            return self.repos[(repo_type, repo_id)]
        except KeyError:
            raise SystemExit(f"hub_emulator: {option} names {repo_type} {repo_id}, which no --repo defines") from None

    def place_cdn_blobs(self, cdn_root: Path) -> None:
        """Put every LFS blob at cdn_root/<sha256> so that a static server (nginx) can serve it."""
        cdn_root.mkdir(parents=True, exist_ok=True)
        for sha256, files in self.blobs.items():
            target = cdn_root / sha256
            if target.exists():
                continue
            try:
                os.link(files[0].source, target)
            except OSError:  # another filesystem, or links not allowed
                shutil.copyfile(files[0].source, target)

    def signed_cdn_url(self, sha256: str) -> str:
        expires = int(time.time()) + self.url_ttl
        signature = cdn_signature(sha256, expires, self.cdn_secret)
        # The nonce makes every resolve hand out a distinct URL, as the real Hub's signed URLs are.
        return f"{self.cdn_url}/{sha256}?{urlencode({'Expires': expires, 'Signature': signature, 'Key-Pair-Id': f'K{next(self._nonce)}'})}"

    def count_request(self, listener: str) -> None:
        with self._counter_lock:
            self.request_counts[listener] = self.request_counts.get(listener, 0) + 1

    def set_crafted_tree(self, repo_key: str, pages: list[dict] | None) -> None:
        with self._counter_lock:
            if pages:
                self.crafted_trees[repo_key] = {"pages": pages, "first_url": None}
            else:
                self.crafted_trees.pop(repo_key, None)

    def crafted_tree(self, repo_key: str, request_target: str, first_page: bool) -> dict | None:
        """The crafted pages of a repo (None: serve the real tree); records the URL of its first page."""
        with self._counter_lock:
            crafted = self.crafted_trees.get(repo_key)
            if crafted is not None and first_page and crafted["first_url"] is None:
                crafted["first_url"] = request_target
            return crafted

    def first_use_of_cdn_url(self, url: str) -> bool:
        with self._counter_lock:
            if url in self.used_cdn_urls:
                return False
            self.used_cdn_urls.add(url)
            return True


def parse_repo_spec(spec: str, branch_allowed: bool = True, value_required: bool = True):
    """'[TYPE:]ORG/NAME[@BRANCH]=VALUE' → (type, id, branch, value)."""
    left, sep, value = spec.partition("=")
    if value_required and not (sep and value):
        raise SystemExit(f"hub_emulator: expected [TYPE:]ORG/NAME[@REV]=VALUE, got {spec!r}")
    repo_type = "model"
    prefix, colon, rest = left.partition(":")
    if colon and prefix in REPO_TYPES:
        repo_type, left = prefix, rest
    repo_id, at, branch = left.partition("@")
    if at and not branch_allowed:
        raise SystemExit(f"hub_emulator: no @revision allowed in {spec!r}")
    if not repo_id or repo_id.count("/") > 1:
        raise SystemExit(f"hub_emulator: invalid repo id in {spec!r}")
    return repo_type, repo_id, branch or "main", value or None


# ----------------------------------------------------------------------------------------- handlers

class HubError(Exception):
    """An error answer: status, optional X-Error-Code, and the message (X-Error-Message + JSON body)."""

    def __init__(self, status: int, message: str, code: str | None = None, headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.headers = status, message, code, headers or {}


CRAFTED_PAGE_FIELDS = {"body", "body_b64", "repeat", "status", "next", "headers", "content_length", "close_after",
                       "comment"}


def validate_crafted_pages(pages) -> None:
    """Check the pages of POST /_emulator/tree-pages (None or [] removes the crafted listing)."""
    if pages is None:
        return
    if not isinstance(pages, list):
        raise ValueError("'pages' must be a list")
    for index, page in enumerate(pages):
        if not isinstance(page, dict):
            raise ValueError(f"page {index} is not an object")
        unknown = set(page) - CRAFTED_PAGE_FIELDS
        if unknown:
            raise ValueError(f"page {index}: unknown fields {sorted(unknown)}")
        if sum(k in page for k in ("body", "body_b64", "repeat")) > 1:
            raise ValueError(f"page {index}: give one of body, body_b64, repeat")
        following = page.get("next")
        if following is not None and not (following == "first" or isinstance(following, str)
                                          or (isinstance(following, int) and 0 <= following < len(pages))):
            raise ValueError(f"page {index}: 'next' must be a page index, 'first' or a URL")
        if "repeat" in page and not (isinstance(page["repeat"], dict) and isinstance(page["repeat"].get("count"), int)
                                     and page["repeat"]["count"] >= 0 and isinstance(page["repeat"].get("unit"), str)):
            raise ValueError(f"page {index}: 'repeat' needs a 'unit' string and a 'count' >= 0")
        if not isinstance(page.get("headers", {}), dict):
            raise ValueError(f"page {index}: 'headers' must be an object")


class RangeNotSatisfiable(Exception):
    pass


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """'bytes=a-b' | 'bytes=a-' | 'bytes=-n' → inclusive (first, last); None = serve the whole file.

    Multi-range and malformed headers are ignored (whole file, 200), as S3/CloudFront do.
    """
    if not header:
        return None
    match = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", header)
    if not match or (match.group(1) == "" and match.group(2) == ""):
        return None
    first_text, last_text = match.groups()
    if first_text == "":  # suffix range: the last n bytes
        suffix = int(last_text)
        if suffix == 0 or size == 0:
            raise RangeNotSatisfiable()
        return max(0, size - suffix), size - 1
    first = int(first_text)
    last = min(int(last_text), size - 1) if last_text else size - 1
    if first >= size or (last_text and int(last_text) < first):
        raise RangeNotSatisfiable()
    return first, last


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address, handler, state: HubState, listener: str):
        super().__init__(address, handler)
        self.state = state
        self.listener = listener

    def process_request(self, request, client_address):
        # Counted here, in the accepting thread, so no accepted connection is ever missing from the count.
        self.state.connection_opened()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.state.connection_closed()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.state.connection_closed()

    def handle_error(self, request, client_address):
        # Clients that hang up mid-body (killed downloads, dropped faults) are normal here.
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class BaseHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive; every answer carries Content-Length or is chunked
    server_version = "hub-emulator"
    # Headers and body go out in separate send()s; with Nagle on, a kept-alive client's delayed ACK held the
    # body back ~40 ms per answer (a cost the real Hub does not have).
    disable_nagle_algorithm = True

    def version_string(self) -> str:
        return self.server_version
    server: QuietServer

    # -- plumbing shared by both listeners --------------------------------------------------------

    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass

    @property
    def state(self) -> HubState:
        return self.server.state

    _record: dict = {}   # replaced per request in _handle; the base class may answer before that (bad request line)

    def send_response(self, code, message=None):
        self._record["status"] = code
        super().send_response(code, message)

    def _write(self, data: bytes) -> None:
        self.wfile.write(data)
        self._record["bytes_sent"] = self._record.get("bytes_sent", 0) + len(data)

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        self._record = {
            "time": time.time(), "listener": self.server.listener, "method": method,
            "path": url.path, "query": url.query, "status": None, "range": self.headers.get("Range"),
            "if_range": self.headers.get("If-Range"),
            "has_authorization": "Authorization" in self.headers, "bytes_sent": 0,
            "host": self.headers.get("Host"), "token": self._token_label(),
            "file": None, "repo": None, "fault": None,
            "client_port": self.client_address[1],
        }
        internal = url.path.startswith("/_emulator/")
        if not internal:
            self.state.count_request(self.server.listener)
        try:
            self.dispatch(method, url)
        except HubError as error:
            self._send_error(error)
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        finally:
            if not internal:
                self._record["seconds"] = time.time() - self._record["time"]
                self.state.log.add(self._record)

    def _token_label(self) -> str | None:
        """Which token a request carried, never the token: a Xet token's name ("xet-read-3"), else "hub-" and
        12 hex digits of the Authorization value's SHA-256 (the same token always gives the same label)."""
        value = self.headers.get("Authorization")
        if value is None:
            return None
        bearer = value.partition(" ")[2].strip()
        xet = self.server.state.xet
        if xet is not None and bearer.startswith("xet_") and (name := xet.token_name(bearer)) != "unknown":
            return name
        return "hub-" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:12]

    def do_GET(self):
        self._handle("GET")

    def do_HEAD(self):
        self._handle("HEAD")

    def do_POST(self):
        self._handle("POST")

    def do_DELETE(self):
        self._handle("DELETE")

    def dispatch(self, method: str, url) -> None:
        raise NotImplementedError

    def _send_bytes(self, status: int, body: bytes, content_type: str, headers: dict | None = None,
                    head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        if not head:
            self._write(body)

    def _send_json(self, status: int, payload, headers: dict | None = None, head: bool = False) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode()
        self._send_bytes(status, body, "application/json; charset=utf-8", headers, head)

    def _send_error(self, error: HubError) -> None:
        headers = dict(error.headers)
        if error.code:
            headers["X-Error-Code"] = error.code
        headers["X-Error-Message"] = error.message
        self._send_json(error.status, {"error": error.message}, headers, head=self.command == "HEAD")

    def _drain_request_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # -- file bodies with ranges and faults ---------------------------------------------------------

    def _send_file(self, f: RepoFile, headers: dict, head: bool, extra_paths: list[str] | None = None,
                   fault_target: str = "body") -> None:
        """Answer with f's content (200 or 206 on Range, 416 if unsatisfiable), injecting body faults."""
        paths = extra_paths or [f.path]
        self._record["file"] = f.path
        swap = self.state.swap_for(paths)
        if (swap_etag := self.state.swap_etag(swap)) is not None:
            headers = {**headers, "ETag": f'"{swap_etag}"'}
        try:
            byte_range = parse_range(self.headers.get("Range"), f.size)
        except RangeNotSatisfiable:
            self._send_bytes(416, b"", "text/plain", {**headers, "Content-Range": f"bytes */{f.size}"}, head)
            return
        # RFC 9110 13.1.5: an If-Range that does not name the current (strong) ETag gets the whole file, 200.
        if_range = self.headers.get("If-Range")
        if byte_range and if_range is not None and (if_range.startswith("W/") or if_range != headers.get("ETag")):
            self._record["if_range_mismatch"] = True
            byte_range = None
        first, last = byte_range if byte_range else (0, f.size - 1)
        length = last - first + 1 if f.size else 0

        fault = None
        if not head:
            def applies(rule: FaultRule) -> bool:
                if rule.kind == "flip":
                    return length > 0 and (rule.offset < 0 or first <= rule.offset <= last)
                if rule.kind == "ignore_range":   # only a Range that starts past byte 0
                    return byte_range is not None and first > 0
                return True
            fault = self.state.faults.take(paths, BODY_FAULT_KINDS, target=fault_target, applies=applies,
                                           served=(first, last))
        if fault and fault.kind == "status":
            self._record["fault"] = "status"
            extra = fault.status_headers()
            self._send_json(fault.status, {"error": f"injected {fault.status}"}, extra)
            return
        if fault:
            self._record["fault"] = fault.kind
        if fault and fault.kind in ("extra", "short", "bad_range", "ignore_range"):
            return self._send_hostile_body(f, headers, fault, byte_range, first, last)

        self.send_response(206 if byte_range else 200)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        if byte_range:
            self.send_header("Content-Range", f"bytes {first}-{last}/{f.size}")
        for name, value in headers.items():
            self.send_header(name, str(value))
        self.end_headers()
        if head or length == 0:
            return
        self._stream(f.source, first, length, fault, swap)

    def _send_hostile_body(self, f: RepoFile, headers: dict, fault: FaultRule, byte_range, first: int,
                           last: int) -> None:
        """A well-framed answer (Content-Length always matches what is sent) that does not match the request.

        extra: the asked range, then `extra_bytes` junk bytes · short: only `after_bytes` of the asked range,
        the Content-Range (if any) still claiming all of it · bad_range: a 206 for the range moved by `shift`
        bytes, with `total_delta` added to the complete length · ignore_range: 200 and the whole file.
        """
        status = 206 if byte_range else 200
        content_range = f"bytes {first}-{last}/{f.size}" if byte_range else None
        start, count, junk = first, (last - first + 1 if f.size else 0), 0
        if fault.kind == "extra":
            junk = fault.extra_bytes
        elif fault.kind == "short":
            count = min(count, fault.after_bytes)
        elif fault.kind == "bad_range":
            start = max(0, min(first + fault.shift, f.size - 1))
            end = max(start, min(last + fault.shift, f.size - 1))
            status, count = 206, end - start + 1
            content_range = fault.content_range_text or f"bytes {start}-{end}/{f.size + fault.total_delta}"
        elif fault.kind == "ignore_range":
            status, content_range, start, count = 200, None, 0, f.size
        self.send_response(status)
        self.send_header("Content-Length", str(count + junk))
        self.send_header("Accept-Ranges", "bytes")
        if content_range:
            self.send_header("Content-Range", content_range)
        for name, value in headers.items():
            self.send_header(name, str(value))
        self.end_headers()
        if count:
            self._stream(f.source, start, count, None)
        pattern = b"HOSTILE-EXTRA-BYTES\n"
        while junk > 0:
            piece = (pattern * (BODY_CHUNK // len(pattern) + 1))[:min(junk, BODY_CHUNK)]
            self._write(piece)
            junk -= len(piece)

    def _stream(self, source: Path, first: int, length: int, fault: FaultRule | None,
                swap: dict | None = None) -> None:
        cut = fault.after_bytes if fault and fault.kind in ("drop", "stall") else None
        sent = 0
        started = time.monotonic()
        with open(source, "rb") as stream:
            stream.seek(first)
            while sent < length:
                want = min(BODY_CHUNK, length - sent)
                if cut is not None:
                    want = min(want, cut - sent)
                    if want <= 0:
                        break
                other, want = self.state.swap_source(swap, want)
                if other is None:
                    chunk = bytearray(stream.read(want))
                else:   # the same offsets of another file: the bytes under this URL changed
                    with open(other, "rb") as replacement:
                        replacement.seek(first + sent)
                        chunk = bytearray(replacement.read(want))
                    stream.seek(first + sent + len(chunk))
                    self._record["fault"] = self._record.get("fault") or "swap"
                if fault and fault.kind == "flip" and first + sent <= fault.offset < first + sent + len(chunk):
                    chunk[fault.offset - first - sent] ^= 0xFF
                self._write(bytes(chunk))
                sent += len(chunk)
                if self.state.body_rate:
                    # Throttle: sleep until `sent` bytes are due at body_rate bytes/s.
                    delay = sent / self.state.body_rate - (time.monotonic() - started)
                    if delay > 0:
                        time.sleep(delay)
        if cut is None:
            return
        self.wfile.flush()
        if fault.kind == "stall":
            deadline = time.monotonic() + min(fault.seconds, MAX_STALL_SECONDS)
            while time.monotonic() < deadline:
                time.sleep(0.05)
        # The promised Content-Length is never reached: the client sees a truncated body.
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class HubHandler(BaseHandler):
    """The Hub listener: /api/..., /<repo>/resolve/..., and the /_emulator/ control endpoints."""

    def dispatch(self, method: str, url) -> None:
        if self.path.startswith("/_emulator/"):
            return self._control(method, url)
        if self.state.hub_latency:
            # The Hub across the internet (bench), as the CAS's latency puts the CAS: a rig that put only the
            # CAS far away would charge the Xet path a round trip the bridge's resolve pays on the real Hub too.
            time.sleep(self.state.hub_latency)
        self.request_id = uuid.uuid4().hex
        if method == "POST" and url.path.endswith(".git/info/lfs/objects/batch") and self.state.xet:
            return self._lfs_batch(url)
        if method == "POST" and url.path.startswith("/api/"):
            return self._api_post(url)
        if method not in ("GET", "HEAD"):
            self._drain_request_body()
            raise HubError(405, "Method not allowed")
        if url.path == "/_hop":
            return self._hop(url, head=method == "HEAD")
        if url.path.startswith("/api/"):
            fault = self.state.faults.take([url.path], ("status", "redirect"), target="api")
            if fault:
                self._record["fault"] = fault.kind
                if fault.kind == "redirect":
                    return self._redirect(fault, {}, None, head=method == "HEAD")
                extra = fault.status_headers()
                raise HubError(fault.status, f"injected {fault.status}", headers=extra)
            return self._api(url, head=method == "HEAD")
        if "/resolve/" in url.path:
            return self._resolve(url, head=method == "HEAD")
        raise HubError(404, "Sorry, we can't find the page you are looking for.")

    # -- redirects (hostile servers) ------------------------------------------------------------------

    def _redirect(self, fault: FaultRule, headers: dict, f: RepoFile | None, head: bool) -> None:
        """Answer a "redirect" fault: `hops` redirects in all (through /_hop), the last to `location`."""
        signed = self.state.signed_cdn_url(f.sha256) if f is not None and f.lfs else ""
        location = (fault.location.replace("{hub}", self._base_url()).replace("{cdn}", self.state.cdn_url)
                    .replace("{signed_q}", quote(signed, safe="")).replace("{signed}", signed)
                    .replace("{path}", quote(f.path) if f is not None else ""))
        if fault.hops > 1:
            location = f"{self._base_url()}/_hop?{urlencode({'n': fault.hops - 2, 'to': location})}"
        body = f"Redirecting to {location}".encode("utf-8", "replace")
        self._send_bytes(fault.redirect_status, body, "text/plain; charset=utf-8", {**headers, "Location": location},
                         head)

    def _hop(self, url, head: bool) -> None:
        """GET /_hop?n=N&to=URL: N more hops through /_hop, then to URL. /_hop?loop=a|b: a → b → a → … forever."""
        query = parse_qs(url.query)
        loop = query.get("loop", [""])[0]
        if loop:
            location = f"{self._base_url()}/_hop?loop={'b' if loop == 'a' else 'a'}"
        else:
            remaining = int(query.get("n", ["0"])[0] or 0)
            target = query.get("to", [""])[0]
            location = (f"{self._base_url()}/_hop?{urlencode({'n': remaining - 1, 'to': target})}"
                        if remaining > 0 else target)
        self._send_bytes(302, b"hop", "text/plain", {"Location": location}, head)

    def end_headers(self):
        if hasattr(self, "request_id"):
            self.send_header("X-Request-Id", self.request_id)
        super().end_headers()

    # -- access rules -------------------------------------------------------------------------------

    def _token(self) -> str | None:
        value = self.headers.get("Authorization")
        if value is None:
            return None
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HubError(401, "Invalid credentials in Authorization header")
        token = token.strip()
        if token not in self.state.valid_tokens:
            # The real Hub rejects an unknown token on every request, even for public repos.
            raise HubError(401, "Invalid credentials in Authorization header")
        return token

    def _find_repo(self, repo_type: str, segments: list[str]) -> tuple[Repo | None, str, list[str]]:
        """Split path segments into a known repo id (org/name or a bare name) and the rest."""
        for count in (2, 1):
            candidate = "/".join(segments[:count])
            repo = self.state.repos.get((repo_type, candidate))
            if repo:
                return repo, candidate, segments[count:]
        return None, "/".join(segments[:2]), segments[2:]

    def _authorize(self, repo: Repo | None, repo_type: str, repo_id: str, files: bool) -> None:
        """Apply the Hub's visibility rules; raise the answer it gives when access is refused."""
        token = self._token()
        self._record["repo"] = f"{repo_type}:{repo_id}"
        hidden = repo is None or (repo.private_token is not None and token != repo.private_token)
        if hidden:
            # Missing and private look the same: 401 without a token, 404 with a valid one.
            if token is None:
                raise HubError(401, "Invalid username or password.", "RepoNotFound")
            raise HubError(404, "Repository not found", "RepoNotFound")
        if files and repo.gated and token not in repo.gated_tokens:
            # Gated repos list their files publicly; only the file contents need approval.
            kind = "model" if repo_type == "model" else repo_type
            if token is None:
                raise HubError(401, f"Access to {kind} {repo_id} is restricted. You must have access to it and "
                               "be authenticated to access it. Please log in.", "GatedRepo")
            raise HubError(403, f"Access to {kind} {repo_id} is restricted and you are not in the authorized "
                           f"list. Visit {self._base_url()}/{RESOLVE_PREFIX[repo_type]}{repo_id} to ask for access.",
                           "GatedRepo")

    def _commit(self, repo: Repo, revision: str) -> Commit:
        commit = repo.resolve_revision(revision)
        if commit is None:
            raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return commit

    def _base_url(self) -> str:
        host = self.headers.get("Host") or "%s:%d" % self.server.server_address[:2]
        # Behind a TLS reverse proxy (tests/integration/test_tls.py) absolute links must say https.
        scheme = "https" if self.headers.get("X-Forwarded-Proto", "").lower() == "https" else "http"
        return f"{scheme}://{host}"

    # -- /api ---------------------------------------------------------------------------------------

    def _api_repo(self, url):
        """The repo an /api/{type}s/{id}/... path names: (repo, type, id, the path segments after the id)."""
        segments = url.path.split("/")[2:]   # after "/api/"
        plural = segments[0] if segments else ""
        repo_type = plural[:-1] if plural.endswith("s") else ""
        if repo_type not in REPO_TYPES or len(segments) < 2:
            raise HubError(404, "Sorry, we can't find the page you are looking for.")
        repo, repo_id, rest = self._find_repo(repo_type, [unquote(s) for s in segments[1:]])
        return repo, repo_type, repo_id, rest

    def _api(self, url, head: bool) -> None:
        repo, repo_type, repo_id, rest = self._api_repo(url)
        if not rest:
            self._authorize(repo, repo_type, repo_id, files=False)
            return self._repo_info(repo, repo.default_branch, head)
        if rest[0] == "revision" and len(rest) == 2:
            self._authorize(repo, repo_type, repo_id, files=False)
            return self._repo_info(repo, rest[1], head)
        if rest[0] == "tree" and len(rest) >= 2:
            self._authorize(repo, repo_type, repo_id, files=False)
            return self._tree(repo, rest[1], "/".join(rest[2:]).strip("/"), url, head)
        if rest[0] in ("xet-read-token", "xet-write-token") and self.state.xet:
            return self._xet_token(repo, repo_type, repo_id, rest[0], "/".join(rest[1:]), head)
        raise HubError(404, "Sorry, we can't find the page you are looking for.")

    def _api_post(self, url) -> None:
        """POST /api/{type}s/{id}/paths-info/{rev}: the entries of the asked paths (what @huggingface/hub and
        huggingface_hub's get_paths_info use). The body is form-encoded (`paths=a&paths=b&expand=true`, as
        httpx sends huggingface_hub's `data=`) or JSON (`{"paths": [...], "expand": true}`, as the npm client
        sends). Paths that do not exist are left out, as on the Hub; folders come back as directory entries."""
        body = self._drain_request_body()
        fault = self.state.faults.take([url.path], ("status",), target="api")
        if fault:
            self._record["fault"] = fault.kind
            extra = fault.status_headers()
            raise HubError(fault.status, f"injected {fault.status}", headers=extra)
        repo, repo_type, repo_id, rest = self._api_repo(url)
        if rest and rest[0] in ("preupload", "commit") and self.state.xet:
            return self._preupload(repo, repo_type, repo_id, body) if rest[0] == "preupload" else \
                self._xet_commit(repo, repo_type, repo_id, "/".join(rest[1:]), body)
        if not rest or rest[0] != "paths-info":
            raise HubError(404, "Sorry, we can't find the page you are looking for.")
        self._authorize(repo, repo_type, repo_id, files=False)
        revision = "/".join(rest[1:]).strip("/")   # percent-encoded or not (refs/pr/1)
        commit = self._commit(repo, revision or repo.default_branch)
        paths, expand = self._paths_info_request(body)
        files = {e["path"]: e for e in self._visible_entries(repo, commit)}
        answer, seen = [], set()
        for path in paths:
            path = path.strip("/")
            entry = files.get(path)
            if entry is None or path in seen:
                continue
            seen.add(path)
            entry = dict(entry)
            if expand:
                # The emulator's commits have no history: the commit is the last one that touched every path.
                entry["lastCommit"] = {"id": commit.sha, "title": "Upload folder using huggingface_hub",
                                       "date": "2026-01-01T00:00:00.000Z"}
                if entry["type"] == "file":
                    entry["securityFileStatus"] = {"status": "safe"}
            answer.append(entry)
        self._send_json(200, answer)

    def _paths_info_request(self, body: bytes) -> tuple[list[str], bool]:
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        try:
            if content_type == "application/json":
                document = json.loads(body or b"{}")
                if not isinstance(document, dict):
                    raise ValueError("body must be a JSON object")
                paths, expand = document.get("paths"), document.get("expand", False)
                if isinstance(paths, str):
                    paths = [paths]
                if not isinstance(expand, bool):
                    raise ValueError('"expand" must be a boolean')
            elif content_type in ("application/x-www-form-urlencoded", ""):
                form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
                paths = form.get("paths")
                expand = form.get("expand", ["false"])[-1].lower() in ("true", "1")
            else:
                raise ValueError(f"unsupported Content-Type {content_type!r}")
        except (ValueError, UnicodeDecodeError) as error:
            raise HubError(400, f"Invalid body: {error}") from None
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise HubError(400, '"paths" must be a non-empty list of strings')
        return paths, expand

    def _repo_info(self, repo: Repo, revision: str, head: bool) -> None:
        commit = self._commit(repo, revision)
        info = {
            "_id": hashlib.sha1(repo.key.encode()).hexdigest()[:24],
            "id": repo.id,
            "author": repo.id.split("/")[0] if "/" in repo.id else None,
            "sha": commit.sha,
            "private": repo.private_token is not None,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "tags": [],
            "downloads": 0,
            "likes": 0,
            "lastModified": "2026-01-01T00:00:00.000Z",
            "siblings": [{"rfilename": p} for p in commit.files],
        }
        if repo.type == "model":
            info["modelId"] = repo.id
        self._send_json(200, info, head=head)

    def _tree(self, repo: Repo, revision: str, sub_path: str, url, head: bool) -> None:
        commit = self._commit(repo, revision)
        query = parse_qs(url.query)
        crafted = self.state.crafted_tree(repo.key, self.path, first_page="_page" not in query)
        if crafted is not None:
            return self._crafted_tree_page(crafted, url, query, head)
        recursive = query.get("recursive", ["false"])[0].lower() in ("true", "1")
        entries = self._visible_entries(repo, commit)
        if sub_path:
            if sub_path not in commit.directories:
                raise HubError(404, f"Entry not found: {sub_path}", "EntryNotFound")
            entries = [e for e in entries if e["path"].startswith(sub_path + "/")]
        depth = sub_path.count("/") + 1 if sub_path else 0
        if not recursive:
            entries = [e for e in entries if e["path"].count("/") == depth]

        start = self._decode_cursor(query.get("cursor", [None])[0])
        page = entries[start:start + self.state.page_size]
        headers = {}
        if start + self.state.page_size < len(entries):
            next_query = {k: v[0] for k, v in query.items()}
            next_query["cursor"] = base64.urlsafe_b64encode(
                json.dumps({"offset": start + self.state.page_size}).encode()).decode()
            headers["Link"] = f'<{self._base_url()}{url.path}?{urlencode(next_query)}>; rel="next"'
        self._send_json(200, page, headers, head=head)

    def _crafted_tree_page(self, crafted: dict, url, query: dict, head: bool) -> None:
        """Serve page `_page` (default 0) of a crafted listing verbatim (POST /_emulator/tree-pages)."""
        raw_index = query.get("_page", ["0"])[0]
        pages = crafted["pages"]
        if not raw_index.isdigit() or int(raw_index) >= len(pages):
            raise HubError(404, f"no crafted tree page {raw_index!r}")
        page = pages[int(raw_index)]
        headers = {"Content-Type": "application/json; charset=utf-8", **page.get("headers", {})}
        following = page.get("next")
        if following is not None:
            if following == "first":
                link = self._base_url() + (crafted["first_url"] or self.path)
            elif isinstance(following, int):
                next_query = {k: v[0] for k, v in query.items() if k != "_page"}
                next_query["_page"] = str(following)
                link = f"{self._base_url()}{url.path}?{urlencode(next_query)}"
            else:
                link = following.replace("{hub}", self._base_url())
            headers["Link"] = f'<{link}>; rel="next"'
        if "repeat" in page:
            repeat = page["repeat"]
            prefix, unit, suffix = (repeat.get(k, "").encode() for k in ("prefix", "unit", "suffix"))
            count = int(repeat["count"])
            length = len(prefix) + len(unit) * count + len(suffix)
            parts = None
        else:
            body = base64.b64decode(page["body_b64"]) if "body_b64" in page else page.get("body", "").encode()
            length, parts = len(body), [body]
        promised = page.get("content_length", length)
        close_after = page.get("close_after")   # send this many bytes, then close (a truncated transfer)
        self.send_response(page.get("status", 200))
        self.send_header("Content-Length", str(promised))
        for name, value in headers.items():
            self.send_header(name, str(value))
        self.end_headers()
        if head:
            return
        budget = min(length, close_after if close_after is not None else length, promised)
        if parts is None:
            block_units = max(1, BODY_CHUNK // max(1, len(unit)))

            def generate():
                yield prefix
                left = count
                while left > 0:
                    take = min(block_units, left)
                    yield unit * take
                    left -= take
                yield suffix
            parts = generate()
        for part in parts:
            if budget <= 0:
                break
            piece = part[:budget]
            self._write(piece)
            budget -= len(piece)
        if close_after is not None or promised != length:
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    @staticmethod
    def _decode_cursor(cursor: str | None) -> int:
        if not cursor:
            return 0
        try:
            return int(json.loads(base64.urlsafe_b64decode(cursor.encode()))["offset"])
        except (ValueError, KeyError, TypeError):
            raise HubError(400, "Invalid cursor") from None

    # -- /resolve -----------------------------------------------------------------------------------

    def _resolve(self, url, head: bool) -> None:
        prefix, _, tail = url.path.partition("/resolve/")
        segments = prefix.strip("/").split("/")
        repo_type = "model"
        if segments[0] in ("datasets", "spaces"):
            repo_type, segments = segments[0][:-1], segments[1:]
        repo, repo_id, rest = self._find_repo(repo_type, [unquote(s) for s in segments])
        if rest or not tail:
            raise HubError(404, "Sorry, we can't find the page you are looking for.")
        self._authorize(repo, repo_type, repo_id, files=True)
        revision_and_path = tail.split("/")
        revision, path = unquote(revision_and_path[0]), "/".join(unquote(s) for s in revision_and_path[1:])
        commit = repo.resolve_revision(revision)
        # Clients may leave '/' unencoded in a revision (refs/pr/1); take the longest known one.
        for split in range(len(revision_and_path) - 1, 1, -1):
            if commit is not None:
                break
            candidate = "/".join(unquote(s) for s in revision_and_path[:split])
            commit = repo.resolve_revision(candidate)
            if commit is not None:
                path = "/".join(unquote(s) for s in revision_and_path[split:])
        if commit is None:
            raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        f = commit.files.get(path)
        self._record["file"] = path
        if f is None:
            raise HubError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": commit.sha})

        fault = self.state.faults.take([path], ("status", "redirect"), target="resolve")
        if fault and fault.kind == "redirect":
            self._record["fault"] = "redirect"
            headers = {"X-Repo-Commit": commit.sha}
            if f.lfs:
                headers.update({"X-Linked-Etag": f'"{f.sha256}"', "X-Linked-Size": f.size})
            return self._redirect(fault, headers, f, head)
        if fault:
            self._record["fault"] = "status"
            extra = fault.status_headers()
            raise HubError(fault.status, f"injected {fault.status}", headers=extra)

        if f.lfs:
            location = self.state.signed_cdn_url(f.sha256)
            body = f"Found. Redirecting to {location}".encode()
            headers = {
                "Location": location,
                "X-Linked-Etag": f'"{f.sha256}"',
                "X-Linked-Size": f.size,
                "X-Repo-Commit": commit.sha,
                "Vary": "Origin, Accept",
            }
            if f.xet_hash and repo.xet_visible and self.state.xet:
                headers.update(self._xet_resolve_headers(repo, commit, f))
                if "application/vnd.xet-fileinfo+json" in self.headers.get("Accept", ""):
                    return self._xet_file_info(f, headers, head)
            # The 302's own Content-Length is the length of this body, not the file's: clients must
            # take the size from X-Linked-Size.
            return self._send_bytes(302, body, "text/plain; charset=utf-8", headers, head)

        headers = {"ETag": f'"{f.content_oid}"', "X-Repo-Commit": commit.sha,
                   "Content-Type": "application/octet-stream"}
        if not head and self.state.gzip_text and f.path.endswith(".json") and self._accepts_gzip():
            return self._send_gzip(f, headers)
        self._send_file(f, headers, head)

    def _accepts_gzip(self) -> bool:
        codings = {c.split(";")[0].strip().lower() for c in self.headers.get("Accept-Encoding", "").split(",")}
        return "gzip" in codings and "identity" not in codings

    def _send_gzip(self, f: RepoFile, headers: dict) -> None:
        """Gzip a text file with chunked encoding and no Content-Length, ignoring Range (as a CDN can)."""
        self._record["file"] = f.path
        body = gzip.compress(f.source.read_bytes())
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        for start in range(0, len(body), 4096):
            chunk = body[start:start + 4096]
            self._write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        self._write(b"0\r\n\r\n")

    # -- Xet: uploads and read metadata (tests/hub/README.md, "Xet") -------------------------------------

    def _visible_entries(self, repo: Repo, commit: Commit) -> list[dict]:
        if repo.xet_visible:
            return commit.tree_entries
        return [{k: v for k, v in e.items() if k != "xetHash"} for e in commit.tree_entries]

    def _xet_resolve_headers(self, repo: Repo, commit: Commit, f: RepoFile) -> dict:
        token_url = f"{self._base_url()}/api/{repo.type}s/{repo.id}/xet-read-token/{commit.sha}"
        reconstruction_url = f"{self.state.xet.cas_url}/v1/reconstructions/{f.xet_hash}"
        return {"X-Xet-Hash": f.xet_hash,
                "Link": f'<{token_url}>; rel="xet-auth", <{reconstruction_url}>; rel="xet-reconstruction-info"'}

    def _xet_file_info(self, f: RepoFile, headers: dict, head: bool) -> None:
        """`Accept: application/vnd.xet-fileinfo+json`: a 200 with the Xet headers instead of the 302."""
        headers = {k: v for k, v in headers.items() if k != "Location"}
        headers["ETag"] = f'"{f.sha256}"'
        body = json.dumps({"hash": f.xet_hash, "size": f.size, "etag": f.sha256}).encode()
        self._send_bytes(200, body, "application/vnd.xet-fileinfo+json", headers, head)

    def _writer_token(self) -> str:
        token = self._token()
        if token is None:
            raise HubError(401, "Invalid username or password.")
        return token

    def _upload_repo(self, repo: Repo | None, repo_type: str, repo_id: str) -> Repo:
        """The repo an upload writes to, created on first use (the emulator has no create-repo endpoint)."""
        self._writer_token()
        if repo is not None:
            self._authorize(repo, repo_type, repo_id, files=False)
        with self.state.commit_lock:
            return self.state.repos.setdefault((repo_type, repo_id), Repo(repo_type, repo_id))

    def _xet_token(self, repo: Repo | None, repo_type: str, repo_id: str, kind: str, revision: str,
                   head: bool) -> None:
        """GET /api/{type}s/{id}/xet-read-token/{rev} (Hub access rules, as for file contents) and
        …/xet-write-token/{rev} (any valid Hub token) → {accessToken, exp, casUrl}."""
        if kind == "xet-read-token":
            self._authorize(repo, repo_type, repo_id, files=True)
            self._commit(repo, unquote(revision) or repo.default_branch)
            scope = "read"
        else:
            repo = self._upload_repo(repo, repo_type, repo_id)
            scope = "write"
        value, token = self.state.xet.mint_token(scope, f"{repo_type}:{repo_id}")
        self._record["xet_token"] = token.name
        # Both forms, as the Hub sends them: huggingface.js reads the body, huggingface_hub (hf_xet) the headers.
        headers = {"X-Xet-Access-Token": value, "X-Xet-Token-Expiration": str(token.expires),
                   "X-Xet-Cas-Url": self.state.xet.cas_url}
        self._send_json(200, {"accessToken": value, "exp": token.expires, "casUrl": self.state.xet.cas_url},
                        headers, head=head)

    def _json_body(self, body: bytes) -> dict:
        try:
            document = json.loads(body or b"{}")
        except ValueError as error:
            raise HubError(400, f"Invalid JSON body: {error}") from None
        if not isinstance(document, dict):
            raise HubError(400, "Invalid JSON body: not an object")
        return document

    def _preupload(self, repo: Repo | None, repo_type: str, repo_id: str, body: bytes) -> None:
        """POST /api/{type}s/{id}/preupload/{rev}: which files go through LFS/Xet (the emulator's LFS rule)."""
        self._upload_repo(repo, repo_type, repo_id)
        files = self._json_body(body).get("files")
        if not isinstance(files, list):
            raise HubError(400, '"files" must be a list')
        answer = []
        for item in files:
            if not (isinstance(item, dict) and isinstance(item.get("path"), str)
                    and isinstance(item.get("size"), int)):
                raise HubError(400, "each file needs a path and a size")
            mode = "lfs" if is_lfs_path(item["path"], item["size"]) else "regular"
            answer.append({"path": item["path"], "uploadMode": mode, "shouldIgnore": False})
        self._send_json(200, {"files": answer, "commitOid": None})

    def _lfs_batch(self, url) -> None:
        """POST /{repo}.git/info/lfs/objects/batch: offer the `xet` transfer; objects the store already has
        (by SHA-256) get no upload action."""
        body = self._drain_request_body()
        segments = [unquote(s) for s in url.path[:-len(".git/info/lfs/objects/batch")].strip("/").split("/")]
        repo_type = "model"
        if segments and segments[0] in ("datasets", "spaces"):
            repo_type, segments = segments[0][:-1], segments[1:]
        repo, repo_id, _ = self._find_repo(repo_type, segments)
        repo = self._upload_repo(repo, repo_type, repo_id)
        request = self._json_body(body)
        if "xet" not in (request.get("transfers") or []):
            raise HubError(400, "this emulator only offers the xet transfer")
        value, token = self.state.xet.mint_token("write", repo.key)
        self._record["xet_token"] = token.name
        revision = (request.get("ref") or {}).get("name") or "main"
        href = f"{self._base_url()}/api/{repo_type}s/{repo_id}/xet-write-token/{quote(revision, safe='')}"
        objects = []
        for item in request.get("objects") or []:
            oid, size = str(item.get("oid")), item.get("size")
            entry = {"oid": oid, "size": size, "authenticated": True}
            if self.state.xet.xet_hash_for_sha256(oid) is None:
                entry["actions"] = {"upload": {"href": href, "header": {
                    "X-Xet-Cas-Url": self.state.xet.cas_url, "X-Xet-Access-Token": value,
                    "X-Xet-Token-Expiration": str(token.expires), "X-Xet-Session-Id": uuid.uuid4().hex}}}
            objects.append(entry)
        self._send_bytes(200, json.dumps({"transfer": "xet", "objects": objects}).encode(),
                         "application/vnd.git-lfs+json")

    def _xet_commit(self, repo: Repo | None, repo_type: str, repo_id: str, revision: str, body: bytes) -> None:
        """POST /api/{type}s/{id}/commit/{rev} (NDJSON: header, file, lfsFile, deletedFile) → a new commit."""
        repo = self._upload_repo(repo, repo_type, repo_id)
        branch = unquote(revision) or "main"
        store = self.state.xet
        with self.state.commit_lock:
            parent = repo.branches.get(branch)
            files = dict(parent.files) if parent else {}
            for line in body.decode("utf-8", "replace").splitlines():
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                    key, value = item["key"], item["value"]
                    if key == "file":
                        content = base64.b64decode(value["content"])
                        source = store.root / "files" / hashlib.sha256(content).hexdigest()
                        source.write_bytes(content)
                        files[value["path"]] = RepoFile.load(value["path"], source)
                    elif key == "lfsFile":
                        files[value["path"]] = self._xet_repo_file(value["path"], str(value["oid"]))
                    elif key == "deletedFile":
                        files.pop(value["path"], None)
                    elif key != "header":
                        raise ValueError(f"unknown key {key!r}")
                except (ValueError, KeyError, TypeError, FormatError) as error:
                    raise HubError(400, f"Invalid commit line: {error}") from None
            commit = self.state.add_xet_commit(repo, branch, files, parent.sha if parent else "")
        commit_url = f"{self._base_url()}/{RESOLVE_PREFIX[repo_type]}{repo_id}/commit/{commit.sha}"
        self._send_json(200, {"success": True, "commitOid": commit.sha, "commitUrl": commit_url})

    def _xet_repo_file(self, path: str, sha256: str) -> RepoFile:
        xet_hash = self.state.xet.xet_hash_for_sha256(sha256)
        if xet_hash is None:
            raise ValueError(f"no uploaded Xet file has sha256 {sha256}")
        source = self.state.xet.root / "files" / sha256
        if not source.exists():
            source = self.state.xet.materialize(xet_hash)
        f = RepoFile.load(path, source)
        if f.sha256 != sha256:
            raise ValueError(f"{path}: reconstructed content has sha256 {f.sha256}")
        return dataclasses.replace(f, lfs=True, xet_hash=xet_hash)

    # -- /_emulator control -------------------------------------------------------------------------

    def _control(self, method: str, url) -> None:
        state = self.state
        route = (method, url.path.rstrip("/"))
        if route == ("GET", "/_emulator/requests"):
            return self._send_json(200, state.log.records())
        if route == ("POST", "/_emulator/reset-log"):
            self._drain_request_body()
            state.log.reset()
            return self._send_json(200, {"ok": True})
        if route == ("GET", "/_emulator/stats"):
            return self._send_json(200, {"faults_injected": dict(state.faults.injected),
                                         "requests": dict(state.request_counts),
                                         "swapped_bytes": state.swapped_bytes,
                                         # less the connection this answer goes out on
                                         "open_connections": state.open_connections - 1})
        if route == ("POST", "/_emulator/content-swap"):
            try:
                raw = json.loads(self._drain_request_body() or b"[]")
                swaps = []
                for item in (raw if isinstance(raw, list) else [raw]):
                    unknown = set(item) - {"path", "source", "after_bytes", "for_bytes", "etag"}
                    if unknown or not isinstance(item.get("path"), str) or not Path(str(item.get("source"))).is_file():
                        raise ValueError(f"a swap needs 'path' and an existing 'source' file: {item!r}")
                    swaps.append({"path": item["path"], "source": str(item["source"]),
                                  "after_bytes": int(item.get("after_bytes", 0)),
                                  "for_bytes": int(item.get("for_bytes", -1)), "sent": 0,
                                  "etag": None if item.get("etag") is None else str(item["etag"])})
            except (ValueError, TypeError, AttributeError) as error:
                raise HubError(400, f"bad content swap: {error}") from None
            with state._counter_lock:
                state.swaps = swaps
            return self._send_json(200, {"ok": True, "swaps": len(swaps)})
        if route == ("GET", "/_emulator/content-swap"):
            with state._counter_lock:
                return self._send_json(200, [dict(s) for s in state.swaps])
        if route == ("DELETE", "/_emulator/content-swap"):
            with state._counter_lock:
                state.swaps = []
            return self._send_json(200, {"ok": True})
        if route == ("GET", "/_emulator/faults"):
            return self._send_json(200, state.faults.rules())
        if route == ("POST", "/_emulator/faults"):
            try:
                raw = json.loads(self._drain_request_body() or b"[]")
                rules = [FaultRule.from_json(r) for r in (raw if isinstance(raw, list) else [raw])]
            except (ValueError, TypeError) as error:
                raise HubError(400, f"bad fault rules: {error}") from None
            state.faults.set(rules)
            return self._send_json(200, {"ok": True, "rules": len(rules)})
        if route == ("DELETE", "/_emulator/faults"):
            state.faults.set([])
            return self._send_json(200, {"ok": True})
        if route == ("POST", "/_emulator/tree-pages"):
            try:
                raw = json.loads(self._drain_request_body() or b"{}")
                repo_type, repo_id, _, _ = parse_repo_spec(str(raw.get("repo", "")) + "=x", branch_allowed=False)
                pages = raw.get("pages")
                validate_crafted_pages(pages)
            except (ValueError, TypeError, AttributeError, SystemExit) as error:
                raise HubError(400, f"bad crafted tree: {error}") from None
            if (repo_type, repo_id) not in state.repos:
                raise HubError(400, f"bad crafted tree: no repo {repo_type}:{repo_id}")
            state.set_crafted_tree(f"{repo_type}:{repo_id}", pages)
            return self._send_json(200, {"ok": True, "pages": len(pages or [])})
        if route == ("GET", "/_emulator/tree-pages"):
            with state._counter_lock:
                return self._send_json(200, {key: {"pages": len(c["pages"]), "first_url": c["first_url"]}
                                             for key, c in state.crafted_trees.items()})
        if route == ("DELETE", "/_emulator/tree-pages"):
            with state._counter_lock:
                state.crafted_trees.clear()
            return self._send_json(200, {"ok": True})
        raise HubError(404, f"no control endpoint {method} {url.path}")


class CdnHandler(BaseHandler):
    """The built-in CDN: GET/HEAD /<sha256>?Expires=..&Signature=.. with Range, signature check and faults."""

    server_version = "cdn-emulator"

    def dispatch(self, method: str, url) -> None:
        if method not in ("GET", "HEAD"):
            raise HubError(405, "Method not allowed")
        sha256 = url.path.strip("/")
        query = parse_qs(url.query)
        expires = query.get("Expires", [""])[0]
        signature = query.get("Signature", [""])[0]
        files = self.state.blobs.get(sha256)
        valid = (files and expires.isdigit()
                 and hmac.compare_digest(signature, cdn_signature(sha256, int(expires), self.state.cdn_secret)))
        if not valid:
            raise HubError(403, "Access denied: invalid signature")
        if int(expires) < time.time():
            raise HubError(403, "Access denied: request has expired")
        paths = [f.path for f in files]
        self._record["file"] = paths[0]
        if method == "GET" and not self.state.first_use_of_cdn_url(self.path):
            if self.state.faults.take(paths, ("expire",)):
                self._record["fault"] = "expire"
                raise HubError(403, "Access denied: request has expired")
        # The CDN's own ETag is unrelated to the Hub's etag, as on the real CDN; clients must not use it.
        headers = {"ETag": f'"{hashlib.sha256(b"cdn:" + sha256.encode()).hexdigest()}"',
                   "Content-Type": "application/octet-stream"}
        self._send_file(files[0], headers, head=method == "HEAD", extra_paths=paths)


class CasHandler(BaseHandler):
    """The Xet CAS: reconstructions (V1, V2), the global-dedup chunk query, xorb and shard uploads.

    Every request needs `Authorization: Bearer <Xet token>` (401 without, or with an unknown or expired one);
    uploads need a write token. Faults: target "cas", `path` matched against the URL path."""

    server_version = "cas-emulator"
    MAX_UPLOAD = 80 * 1024 * 1024   # a xorb is at most 64 MiB serialized; shards are smaller

    def dispatch(self, method: str, url) -> None:
        store = self.state.xet
        if self.state.cas_latency:
            # A CAS across the internet (bench): each answer a round trip away. Sleeping lets the GIL go, so
            # requests in flight together wait together, as they would for a remote server.
            time.sleep(self.state.cas_latency)
        value = self._bearer()
        fault = self.state.faults.take([url.path], CAS_FAULT_KINDS, target="cas")
        if fault:
            self._record["fault"] = fault.kind
            if fault.kind == "status":
                raise HubError(fault.status, f"injected {fault.status}", headers=fault.status_headers())
            if fault.kind == "stall":
                time.sleep(min(fault.seconds, MAX_STALL_SECONDS))
            self.close_connection = True     # "drop" (and a stall's end): no answer at all
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        parts = url.path.strip("/").split("/")
        write = method == "POST"
        body = self._upload_body() if write else b""
        self._record["upload_bytes"] = len(body)
        token = store.check_token(value, ("write",) if write else ("read", "write"))
        if isinstance(token, str):
            raise HubError(401, f"Xet token {token}")
        if method == "GET" and len(parts) == 3 and parts[0] in ("v1", "v2") and parts[1] == "reconstructions":
            return self._reconstruction(parts[2], 1 if parts[0] == "v1" else 2)
        if method == "GET" and len(parts) == 4 and parts[:3] == ["v1", "chunks", "default"]:
            shard = store.dedup_shard(parts[3])
            if shard is None:
                raise HubError(404, "chunk not found")
            return self._send_bytes(200, shard, "application/octet-stream")
        try:
            if write and len(parts) == 4 and parts[:3] == ["v1", "xorbs", "default"]:
                return self._send_json(200, {"was_inserted": store.add_xorb(parts[3], body)})
            if write and parts == ["v1", "shards"]:
                store.add_shard(body)
                return self._send_json(200, {"result": 1})
        except FormatError as error:
            raise HubError(400, f"invalid upload: {error}") from None
        raise HubError(404, "no such CAS endpoint")

    def _bearer(self) -> str | None:
        scheme, _, value = (self.headers.get("Authorization") or "").partition(" ")
        return (value.strip() or None) if scheme.lower() == "bearer" else None

    def _upload_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= self.MAX_UPLOAD:
            self.close_connection = True
            raise HubError(413 if length else 411, "upload needs a Content-Length of at most 80 MiB")
        return self.rfile.read(length)

    def _reconstruction(self, xet_hash: str, version: int) -> None:
        f = self.state.xet.file(xet_hash)
        if f is None:
            raise HubError(404, "file not found")
        self._record["file"] = xet_hash
        try:
            byte_range = parse_range(self.headers.get("Range"), f.size)
        except RangeNotSatisfiable:
            raise HubError(416, "range not satisfiable", headers={"Content-Range": f"bytes */{f.size}"}) from None
        first, last = byte_range if byte_range else (0, f.size - 1)
        self._send_json(200, self.state.xet.reconstruction(xet_hash, first, last, version))


class XorbHandler(BaseHandler):
    """Presigned xorb URLs: GET /xorbs/default/<hash>?X-Xet-Ranges=..&X-Xet-Expires=..&X-Xet-Signature=..

    The Range header must be the signed ranges (`bytes=a-b,c-d`: multipart/byteranges) or one of them; any
    other Range, a forged or an expired URL → 403; an Authorization header → 400 (as S3: one auth only).
    Faults: target "xorb", `path` matched against "xorbs/<hash>"."""

    server_version = "xorb-emulator"

    def dispatch(self, method: str, url) -> None:
        if method not in ("GET", "HEAD"):
            raise HubError(405, "Method not allowed")
        store = self.state.xet
        parts = url.path.strip("/").split("/")
        query = parse_qs(url.query)
        ranges = query.get("X-Xet-Ranges", [""])[0]
        xorb_hash = parts[2] if len(parts) == 3 and parts[:2] == ["xorbs", "default"] else ""
        self._record["file"] = f"xorbs/{xorb_hash}"
        if "Authorization" in self.headers:
            raise HubError(400, "Only one auth mechanism allowed: the URL is presigned")
        refused = store.check_xorb_url(xorb_hash, ranges, query.get("X-Xet-Expires", [""])[0],
                                       query.get("X-Xet-Signature", [""])[0])
        if refused or not store.has_xorb(xorb_hash):
            raise HubError(403, f"Access denied: {refused or 'no such xorb'}")
        signed = ranges.split(",")
        asked = (self.headers.get("Range") or "").removeprefix("bytes=")
        if asked != ranges and asked not in signed:
            raise HubError(403, "Access denied: the Range is not the signed one")
        if self.state.faults.take([f"xorbs/{xorb_hash}"], ("expire",), target="xorb"):
            self._record["fault"] = "expire"
            raise HubError(403, "Access denied: request has expired")
        path = store.xorb_path(xorb_hash)
        f = RepoFile(f"xorbs/{xorb_hash}", path, path.stat().st_size, xorb_hash, xorb_hash, True)
        headers = {"Content-Type": "application/octet-stream", "ETag": f'"{xorb_hash}"'}
        if "," in asked:
            return self._send_multipart(f, [tuple(int(x) for x in r.split("-")) for r in signed], headers,
                                        method == "HEAD")
        self._send_file(f, headers, method == "HEAD", fault_target="xorb")

    def _send_multipart(self, f: RepoFile, ranges: list[tuple[int, int]], headers: dict, head: bool) -> None:
        boundary = uuid.uuid4().hex
        with open(f.source, "rb") as stream:
            body = bytearray()
            for first, last in ranges:
                stream.seek(first)
                body += (f"--{boundary}\r\nContent-Type: application/octet-stream\r\n"
                         f"Content-Range: bytes {first}-{last}/{f.size}\r\n\r\n").encode()
                body += stream.read(last - first + 1) + b"\r\n"
            body += f"--{boundary}--\r\n".encode()
        headers = {k: v for k, v in headers.items() if k != "Content-Type"}
        self._send_bytes(206, bytes(body), f"multipart/byteranges; boundary={boundary}", headers, head)


# --------------------------------------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hub_emulator.py",
        description="Hugging Face Hub emulator for hfget's integration tests (see tests/hub/README.md).")
    parser.add_argument("--host", default="127.0.0.1", help="Hub listen address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="Hub listen port; 0 = ephemeral (default)")
    parser.add_argument("--repo", action="append", metavar="[TYPE:]ORG/NAME[@BRANCH]=DIR",
                        help="serve DIR as a branch (default main) of a repo; TYPE model|dataset|space; repeatable")
    parser.add_argument("--tag", action="append", metavar="[TYPE:]ORG/NAME@TAG=BRANCH", help="a tag on a branch")
    parser.add_argument("--private", action="append", metavar="[TYPE:]ORG/NAME=TOKEN",
                        help="make a repo private, readable only with Authorization: Bearer TOKEN")
    parser.add_argument("--gated", action="append", metavar="[TYPE:]ORG/NAME[=TOKEN]",
                        help="make a repo gated; TOKEN (optional) is granted access")
    parser.add_argument("--token", action="append", metavar="TOKEN",
                        help="a valid user token with no special access (unknown tokens get 401)")
    parser.add_argument("--page-size", type=int, default=DEFAULT_PAGE_SIZE, help="tree page size (default 1000)")
    parser.add_argument("--cdn-url", help="base URL of an external CDN (nginx) serving --cdn-root; "
                        "without it a built-in CDN listens on --cdn-host")
    parser.add_argument("--cdn-root", help="place every LFS blob at CDN_ROOT/<sha256> (hardlink or copy)")
    parser.add_argument("--cdn-host", default="127.0.0.2", help="built-in CDN listen address (default 127.0.0.2)")
    parser.add_argument("--cdn-port", type=int, default=0, help="built-in CDN port; 0 = ephemeral (default)")
    parser.add_argument("--cdn-secret", help="secret for signing CDN URLs (nginx secure_link_md5 scheme); "
                        "random if not given")
    parser.add_argument("--url-ttl", type=int, default=3600, help="lifetime of signed CDN URLs in seconds")
    parser.add_argument("--body-rate", type=int, default=0,
                        help="throttle every file body to this many bytes/s per request (0 = no limit)")
    parser.add_argument("--gzip-text", action="store_true",
                        help="gzip .json regular files (chunked) when the client accepts gzip and not identity")
    parser.add_argument("--faults", metavar="FILE.json", help="fault rules active from startup")
    parser.add_argument("--request-log", metavar="PATH", help="append one JSON line per request")
    parser.add_argument("--ready-file", metavar="PATH", help="also write the ready JSON line to this file")
    parser.add_argument("--xet-store", metavar="DIR",
                        help="enable Xet: accept uploads (preupload, LFS batch with the xet transfer, CAS, commit) "
                        "and serve Xet reads; xorbs and shards are kept under DIR")
    parser.add_argument("--xet-repo", action="append", metavar="[TYPE:]ORG/NAME[@BRANCH]",
                        help="create an empty repo for uploads (so that --private/--gated can name it)")
    parser.add_argument("--xet-hide", action="append", metavar="[TYPE:]ORG/NAME",
                        help="serve this repo without Xet metadata (no xetHash, no X-Xet-Hash): the LFS bridge only")
    parser.add_argument("--xet-token-ttl", type=int, default=3600, help="lifetime of Xet tokens in seconds")
    parser.add_argument("--cas-host", default="127.0.0.3", help="Xet CAS listen address (default 127.0.0.3)")
    parser.add_argument("--cas-latency-ms", type=float, default=0.0,
                        help="bench only: every CAS answer waits this long first, as a remote CAS's round trip would")
    parser.add_argument("--hub-latency-ms", type=float, default=0.0,
                        help="bench only: every Hub answer (API, resolve) waits this long first, likewise")
    parser.add_argument("--xorb-host", default="127.0.0.4",
                        help="presigned xorb URL server listen address (default 127.0.0.4)")
    parser.add_argument("--xorb-url", help="bench only: base URL of an external server (nginx) serving "
                        "XORB_ROOT/<hash> as /xorbs/default/<hash> with Range; the presigned xorb URLs point "
                        "there (their signature is not checked) and the built-in xorb server does not start")
    parser.add_argument("--xorb-root", help="link every xorb of --xet-store at XORB_ROOT/<hash> (hardlink or copy)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.repo and not args.xet_store:
        raise SystemExit("hub_emulator: give at least one --repo (or --xet-store)")
    if (args.xorb_url or args.xorb_root) and not (args.xorb_url and args.xorb_root and args.xet_store):
        raise SystemExit("hub_emulator: --xorb-url and --xorb-root go together, with --xet-store")
    if args.page_size < 1:
        raise SystemExit("hub_emulator: --page-size must be at least 1")
    state = HubState(args)
    if args.faults:
        state.faults.set([FaultRule.from_json(r) for r in json.loads(Path(args.faults).read_text())])
    if args.cdn_root:
        state.place_cdn_blobs(Path(args.cdn_root))   # replayed Xet commits included

    hub = QuietServer((args.host, args.port), HubHandler, state, "hub")
    servers = [hub]
    if not args.cdn_url:
        cdn = QuietServer((args.cdn_host, args.cdn_port), CdnHandler, state, "cdn")
        state.cdn_url = "http://%s:%d" % cdn.server_address[:2]
        servers.append(cdn)
    ready_fields = {"hub": "http://%s:%d" % hub.server_address[:2], "cdn": state.cdn_url, "pid": os.getpid()}
    if state.xet:
        cas = QuietServer((args.cas_host, 0), CasHandler, state, "cas")
        state.xet.cas_url = "http://%s:%d" % cas.server_address[:2]
        servers.append(cas)
        if args.xorb_url:
            state.xet.xorb_url = args.xorb_url.rstrip("/")
        else:
            xorbs = QuietServer((args.xorb_host, 0), XorbHandler, state, "xorb")
            state.xet.xorb_url = "http://%s:%d" % xorbs.server_address[:2]
            servers.append(xorbs)
        ready_fields.update(cas=state.xet.cas_url, xorbs=state.xet.xorb_url)
    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, name=server.listener, daemon=True).start()

    ready = json.dumps(ready_fields)
    if args.ready_file:
        temporary = args.ready_file + ".tmp"
        Path(temporary).write_text(ready + "\n")
        os.replace(temporary, args.ready_file)   # readers never see a half-written file
    print(ready, flush=True)
    try:
        hub.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
