"""The Hub emulator's Xet store: what a Xet writer uploaded, and the reconstruction answers a reader gets.

Xorbs and shards are kept as uploaded under a directory (`--xet-store DIR`: DIR/xorbs/<hash>,
DIR/shards/<sha256>.mdb) and indexed in memory: per file its terms, per xorb its chunk hashes, unpacked
lengths and serialized offsets (walked from the chunk headers: a shard's CAS-info offsets count unpacked
bytes). Files are also materialized (DIR/files/<sha256>) so the LFS bridge (302 to the CDN) keeps working.
Tokens and presigned xorb URLs are minted and checked here too. See tests/hub/README.md, "Xet".
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import os
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from xet_format import (FileInfo, FormatError, Term, XorbChunks, build_dedup_shard, decode_chunk, parse_shard,
                        walk_xorb)


@dataclass(frozen=True)
class XetToken:
    scope: str          # "read" or "write"
    repo: str           # repo key, "model:org/name"
    expires: int        # unix seconds
    name: str           # what the request log shows instead of the token: "xet-read-3"


class XetStore:
    """Uploaded xorbs and shards, their index, Xet tokens and signed xorb URLs. Thread-safe."""

    def __init__(self, root: Path, token_ttl: int, url_ttl: int, secret: str | None = None,
                 publish_root: Path | None = None) -> None:
        self.root = root
        # Bench only (--xorb-root): every xorb is also linked at publish_root/<hash> for a static server
        # (nginx) that serves /xorbs/default/<hash> with Range and checks no signature.
        self.publish_root = publish_root
        if publish_root:
            publish_root.mkdir(parents=True, exist_ok=True)
        for sub in ("xorbs", "shards", "files"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        self.token_ttl, self.url_ttl = token_ttl, url_ttl
        self.secret = secret or secrets.token_hex(16)
        self.cas_url = ""     # set once the CAS listens
        self.xorb_url = ""    # set once the xorb server listens
        self._lock = threading.Lock()
        self._files: dict[str, FileInfo] = {}
        self._by_sha256: dict[str, str] = {}
        self._xorb_chunks: dict[str, XorbChunks] = {}
        self._xorb_offsets: dict[str, list[int]] = {}
        self._unpacked_prefixes: dict[str, list[int]] = {}   # per xorb: its chunks' unpacked lengths summed
        self._chunk_to_xorb: dict[str, str] = {}
        self._tokens: dict[str, XetToken] = {}
        self._token_count = 0
        self.xorb_uploads: list[dict] = []   # {"hash", "bytes"} per accepted new xorb
        for path in sorted((root / "xorbs").iterdir()):
            self._index_xorb(path.name, path.read_bytes())
            self._publish(path)
        for path in sorted((root / "shards").iterdir()):
            self._index_shard(path.read_bytes())

    # -- uploads ----------------------------------------------------------------------------------

    def add_xorb(self, xorb_hash: str, body: bytes) -> bool:
        """Store a xorb; False if it was already there. FormatError if its chunks do not parse."""
        offsets = walk_xorb(body)
        with self._lock:
            if xorb_hash in self._xorb_offsets:
                return False
            path = self.root / "xorbs" / xorb_hash
            temporary = path.with_suffix(".tmp")
            temporary.write_bytes(body)
            os.replace(temporary, path)
            self._publish(path)
            self._xorb_offsets[xorb_hash] = offsets
            self.xorb_uploads.append({"hash": xorb_hash, "bytes": len(body)})
            return True

    def _publish(self, path: Path) -> None:
        if self.publish_root is None:
            return
        target = self.publish_root / path.name
        if target.exists():
            return
        try:
            os.link(path, target)
        except OSError:   # another filesystem, or links not allowed
            shutil.copyfile(path, target)

    def _index_xorb(self, xorb_hash: str, body: bytes) -> None:
        self._xorb_offsets[xorb_hash] = walk_xorb(body)

    def add_shard(self, body: bytes) -> list[FileInfo]:
        files, xorbs = parse_shard(body)
        with self._lock:
            for xorb in xorbs:
                offsets = self._xorb_offsets.get(xorb.xorb)
                if offsets is None or len(offsets) != len(xorb.chunk_hashes) + 1:
                    raise FormatError(f"shard names xorb {xorb.xorb}, not uploaded or with another chunk count")
            for f in files:
                for term in f.terms:
                    known = self._xorb_chunks.get(term.xorb) or next((x for x in xorbs if x.xorb == term.xorb), None)
                    if known is None or term.end > len(known.chunk_hashes):
                        raise FormatError(f"file {f.xet_hash} names chunks of xorb {term.xorb} that no shard lists")
            path = self.root / "shards" / (hashlib.sha256(body).hexdigest() + ".mdb")
            path.write_bytes(body)
            self._index(files, xorbs)
        return files

    def _index_shard(self, body: bytes) -> None:
        files, xorbs = parse_shard(body)
        self._index(files, xorbs)

    def _index(self, files: list[FileInfo], xorbs: list[XorbChunks]) -> None:
        for xorb in xorbs:
            self._xorb_chunks[xorb.xorb] = xorb
            self._unpacked_prefixes.pop(xorb.xorb, None)
            for chunk_hash in xorb.chunk_hashes:
                self._chunk_to_xorb.setdefault(chunk_hash, xorb.xorb)
        for f in files:
            self._files[f.xet_hash] = f
            if f.sha256:
                self._by_sha256[f.sha256] = f.xet_hash

    def _unpacked_prefix(self, xorb_hash: str) -> list[int]:
        """[0, l0, l0+l1, ...] over the xorb's chunks' unpacked lengths; requires self._lock."""
        prefix = self._unpacked_prefixes.get(xorb_hash)
        if prefix is None:
            prefix = [0]
            for length in self._xorb_chunks[xorb_hash].unpacked_lengths:
                prefix.append(prefix[-1] + length)
            self._unpacked_prefixes[xorb_hash] = prefix
        return prefix

    # -- lookups ----------------------------------------------------------------------------------

    def file(self, xet_hash: str) -> FileInfo | None:
        with self._lock:
            return self._files.get(xet_hash)

    def xet_hash_for_sha256(self, sha256: str) -> str | None:
        with self._lock:
            return self._by_sha256.get(sha256)

    def has_xorb(self, xorb_hash: str) -> bool:
        with self._lock:
            return xorb_hash in self._xorb_offsets

    def xorb_path(self, xorb_hash: str) -> Path:
        return self.root / "xorbs" / xorb_hash

    def dedup_shard(self, chunk_hash: str) -> bytes | None:
        with self._lock:
            xorb = self._chunk_to_xorb.get(chunk_hash)
            return build_dedup_shard([self._xorb_chunks[xorb]]) if xorb else None

    def materialize(self, xet_hash: str) -> Path:
        """Write the file's bytes (from its xorbs) to DIR/files/<sha256>; check its SHA-256 if known."""
        f = self.file(xet_hash)
        if f is None:
            raise FormatError(f"no file {xet_hash}")
        digest = hashlib.sha256()
        temporary = self.root / "files" / f"{xet_hash}.tmp"
        with open(temporary, "wb") as out:
            for term in f.terms:
                data = self.xorb_path(term.xorb).read_bytes()
                offsets = self._xorb_offsets[term.xorb]
                written = 0
                for index in range(term.start, term.end):
                    plain = decode_chunk(data, offsets[index])
                    out.write(plain)
                    digest.update(plain)
                    written += len(plain)
                if written != term.unpacked_length:
                    raise FormatError(f"term of xorb {term.xorb} decodes to {written}, not {term.unpacked_length}")
        sha256 = digest.hexdigest()
        if f.sha256 and f.sha256 != sha256:
            raise FormatError(f"file {xet_hash}: content sha256 {sha256}, shard says {f.sha256}")
        target = self.root / "files" / sha256
        os.replace(temporary, target)
        return target

    # -- tokens -----------------------------------------------------------------------------------

    def mint_token(self, scope: str, repo: str) -> tuple[str, XetToken]:
        with self._lock:
            self._token_count += 1
            token = XetToken(scope, repo, int(time.time()) + self.token_ttl, f"xet-{scope}-{self._token_count}")
            value = f"xet_{scope}_{secrets.token_hex(16)}"
            self._tokens[value] = token
            return value, token

    def check_token(self, value: str | None, scopes: tuple[str, ...]) -> XetToken | str:
        """The token, or why it is refused ("missing", "unknown", "expired", "scope")."""
        if value is None:
            return "missing"
        with self._lock:
            token = self._tokens.get(value)
        if token is None:
            return "unknown"
        if token.expires <= time.time():
            return "expired"
        return token if token.scope in scopes else "scope"

    def token_name(self, value: str | None) -> str | None:
        if value is None:
            return None
        with self._lock:
            token = self._tokens.get(value)
        return token.name if token else "unknown"

    # -- presigned xorb URLs ------------------------------------------------------------------------

    def _signature(self, xorb_hash: str, ranges: str, expires: int) -> str:
        return hmac.new(self.secret.encode(), f"{xorb_hash}\n{ranges}\n{expires}".encode(), hashlib.sha256).hexdigest()

    def signed_xorb_url(self, xorb_hash: str, byte_ranges: list[tuple[int, int]]) -> str:
        ranges = ",".join(f"{a}-{b}" for a, b in byte_ranges)
        expires = int(time.time()) + self.url_ttl
        query = urlencode({"X-Xet-Ranges": ranges, "X-Xet-Expires": expires,
                           "X-Xet-Signature": self._signature(xorb_hash, ranges, expires)})
        return f"{self.xorb_url}/xorbs/default/{xorb_hash}?{query}"

    def check_xorb_url(self, xorb_hash: str, ranges: str, expires: str, signature: str) -> str | None:
        """None if the URL is genuine and alive, else why not ("signature", "expired")."""
        if not expires.isdigit() or not hmac.compare_digest(signature,
                                                            self._signature(xorb_hash, ranges, int(expires))):
            return "signature"
        if int(expires) < time.time():
            return "expired"
        return None

    # -- reconstruction -----------------------------------------------------------------------------

    def reconstruction(self, xet_hash: str, first: int, last: int, version: int) -> dict:
        """The answer for bytes first..last (inclusive) of a file: the terms covering them, trimmed to whole
        chunks, `offset_into_first_range`, and per xorb the merged chunk ranges with signed URLs."""
        f = self.file(xet_hash)
        with self._lock:
            prefixes = {t.xorb: self._unpacked_prefix(t.xorb) for t in f.terms}
            offsets = {t.xorb: self._xorb_offsets[t.xorb] for t in f.terms}
        # Chunk i of a xorb decodes to prefix[i]..prefix[i+1] of the xorb's data: a term's chunks are found by
        # bisection, not walked (a real CAS answers from an index too; the benchmarks run the emulator on the
        # client's cores, and walking a 32 MiB term's chunks cost 4 times as much Python per answer).
        terms, skip, position = [], 0, 0
        for term in f.terms:
            term_end = position + term.unpacked_length
            if term_end <= first or position > last:
                position = term_end
                continue
            prefix = prefixes[term.xorb]
            base = prefix[term.start]
            start, end = term.start, term.end
            if first > position:   # the chunk holding `first`: the first whose end lies past it
                start = bisect.bisect_right(prefix, base + first - position, term.start, term.end + 1) - 1
            if not terms:
                skip = max(first - position, 0) - (prefix[start] - base)
            if last < term_end - 1:   # the chunks that start at or before `last`
                end = bisect.bisect_right(prefix, base + last - position, term.start, term.end)
            terms.append(Term(term.xorb, start, end, prefix[end] - prefix[start]))
            position = term_end
        fetch = self._fetch_ranges(terms, offsets)
        answer = {"offset_into_first_range": skip,
                  "terms": [{"hash": t.xorb, "unpacked_length": t.unpacked_length,
                             "range": {"start": t.start, "end": t.end}} for t in terms]}
        if version == 1:
            answer["fetch_info"] = {
                xorb: [{"range": {"start": a, "end": b}, "url": self.signed_xorb_url(xorb, [byte_range]),
                        "url_range": {"start": byte_range[0], "end": byte_range[1]}}
                       for (a, b), byte_range in ranges]
                for xorb, ranges in fetch.items()}
        else:
            answer["xorbs"] = {
                xorb: [{"url": self.signed_xorb_url(xorb, [byte_range for _, byte_range in ranges]),
                        "ranges": [{"chunks": {"start": a, "end": b}, "bytes": {"start": s, "end": e}}
                                   for (a, b), (s, e) in ranges]}]
                for xorb, ranges in fetch.items()}
        return answer

    @staticmethod
    def _fetch_ranges(terms: list[Term], offsets: dict[str, list[int]]):
        """Per xorb: the union of the terms' chunk ranges (overlapping or touching ones merged), each with its
        serialized byte range (end inclusive)."""
        by_xorb: dict[str, list[list[int]]] = {}
        for term in terms:
            by_xorb.setdefault(term.xorb, []).append([term.start, term.end])
        fetch = {}
        for xorb, ranges in by_xorb.items():
            ranges.sort()
            merged = [ranges[0]]
            for start, end in ranges[1:]:
                if start <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], end)
                else:
                    merged.append([start, end])
            fetch[xorb] = [((a, b), (offsets[xorb][a], offsets[xorb][b] - 1)) for a, b in merged]
        return fetch
