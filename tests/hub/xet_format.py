"""The Xet byte formats the test CAS reads and writes: hashes, shards, xorb chunk headers, chunk payloads.

The Hub emulator's CAS (xet_cas.py) stores what a real Xet writer (the npm `@huggingface/hub` client)
uploads and must understand it independently of hfget: the shard's file and xorb sections (xet-core
`spec/shard.md`), the chunk headers inside a xorb (`spec/xorb.md`) and the chunk compression schemes (none,
LZ4 frame, byte-grouping-4 + LZ4 frame). Written from the spec; nothing here is shared with hfget's C++.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass



def _lz4_frame():
    """python3-lz4, imported on first use (only decoding needs it); a pyenv/venv interpreter without Debian's
    package borrows the system's copy; where neither exists (the GPU server's Python 3.12, for bench/device/run),
    the pure-Python frame decoder below, slow (a few MB/s) but enough to rebuild a small carried store."""
    try:
        import lz4.frame
        return lz4.frame
    except ImportError:
        pass
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import lz4.frame
        return lz4.frame
    except ImportError:
        sys.path.remove("/usr/lib/python3/dist-packages")
        return _PurePythonLz4Frame


class _PurePythonLz4Frame:
    """LZ4 frame decoding (the LZ4 frame and block format specifications), no checksums verified."""

    @staticmethod
    def decompress(frame: bytes) -> bytes:
        if len(frame) < 7 or frame[:4] != b"\x04\x22\x4d\x18":
            raise ValueError("not an LZ4 frame")
        flags = frame[4]
        at = 6 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0) + 1   # FLG BD [size] [dict] HC
        out = bytearray()
        while True:
            if at + 4 > len(frame):
                raise ValueError("truncated LZ4 frame")
            size = int.from_bytes(frame[at:at + 4], "little")
            at += 4
            if size == 0:
                return bytes(out)
            stored, size = size & 0x80000000, size & 0x7FFFFFFF
            block = frame[at:at + size]
            if len(block) != size:
                raise ValueError("truncated LZ4 block")
            at += size + (4 if flags & 0x10 else 0)
            if stored:
                out += block
            else:
                _lz4_block_into(block, out)

def _lz4_block_into(src: bytes, out: bytearray) -> None:
    i, n = 0, len(src)
    while i < n:
        token = src[i]
        i += 1
        literals = token >> 4
        if literals == 15:
            while True:
                extra = src[i]
                i += 1
                literals += extra
                if extra != 255:
                    break
        out += src[i:i + literals]
        i += literals
        if i >= n:
            return
        offset = src[i] | (src[i + 1] << 8)
        i += 2
        length = token & 15
        if length == 15:
            while True:
                extra = src[i]
                i += 1
                length += extra
                if extra != 255:
                    break
        length += 4
        start = len(out) - offset
        if offset == 0 or start < 0:
            raise ValueError("LZ4 match before the start of the output")
        if offset >= length:
            out += out[start:start + length]
        else:   # overlapping: the last `offset` bytes repeated
            pattern = bytes(out[start:])
            out += (pattern * (length // offset + 1))[:length]


HASH_BYTES = 32
SHARD_MAGIC = b"HFRepoMetaData\x00" + bytes([85, 105, 103, 69, 106, 123, 129, 87, 131, 165, 189, 217, 92, 205,
                                              209, 74, 169])
SHARD_HEADER_VERSION = 2
SHARD_FOOTER_VERSION = 1
SHARD_HEADER_SIZE = 48
SHARD_FOOTER_SIZE = 200
BOOKEND = b"\xff" * HASH_BYTES
FILE_FLAG_WITH_VERIFICATION = 1 << 31
FILE_FLAG_WITH_METADATA_EXT = 1 << 30
CHUNK_HEADER_BYTES = 8
MAX_CHUNK_BYTES = 128 * 1024          # spec: a chunk holds at most 128 KiB (with slack for incompressible data)
MAX_XORB_BYTES = 64 * 1024 * 1024     # spec: a serialized xorb is at most 64 MiB
MAX_SHARD_ENTRIES = 1 << 20           # bound on entries read from one shard


class FormatError(ValueError):
    """Bytes that are not a valid shard or xorb."""


def hash_hex(raw: bytes) -> str:
    """The API's hex form of a 32-byte hash: each 8-byte group read as a little-endian u64 (spec api.md)."""
    if len(raw) != HASH_BYTES:
        raise FormatError("a hash has 32 bytes")
    return "".join(f"{value:016x}" for value in struct.unpack("<4Q", raw))


def hash_raw(text: str) -> bytes:
    if len(text) != 64:
        raise FormatError("a hash has 64 hex digits")
    return struct.pack("<4Q", *(int(text[i:i + 16], 16) for i in range(0, 64, 16)))


@dataclass(frozen=True)
class Term:
    xorb: str           # hex
    start: int          # first chunk index
    end: int            # chunk index, exclusive
    unpacked_length: int


@dataclass(frozen=True)
class FileInfo:
    xet_hash: str
    terms: tuple[Term, ...]
    sha256: str | None  # from the metadata extension (hex of the plain digest), if the writer gave it

    @property
    def size(self) -> int:
        return sum(t.unpacked_length for t in self.terms)


@dataclass(frozen=True)
class XorbChunks:
    xorb: str
    chunk_hashes: tuple[str, ...]
    unpacked_lengths: tuple[int, ...]


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.offset = data, 0

    def take(self, count: int) -> bytes:
        if self.offset + count > len(self.data):
            raise FormatError("shard truncated")
        piece = self.data[self.offset:self.offset + count]
        self.offset += count
        return piece

    def u32s(self, count: int) -> tuple[int, ...]:
        return struct.unpack(f"<{count}I", self.take(4 * count))


def _sha256_hex_from_shard(raw: bytes) -> str:
    # The metadata extension stores the SHA-256 with the same per-8-byte reversal as every shard hash.
    return hash_hex(raw)


def parse_shard(data: bytes) -> tuple[list[FileInfo], list[XorbChunks]]:
    """The file-info and CAS-info sections of a shard (with or without its footer)."""
    reader = _Reader(data)
    if reader.take(32) != SHARD_MAGIC:
        raise FormatError("not a shard (magic tag)")
    version, _footer_size = struct.unpack("<2Q", reader.take(16))
    if version != SHARD_HEADER_VERSION:
        raise FormatError(f"shard header version {version}")
    files = []
    while (file_hash := reader.take(HASH_BYTES)) != BOOKEND:
        flags, entries = reader.u32s(2)
        reader.take(8)
        if entries > MAX_SHARD_ENTRIES:
            raise FormatError("too many file entries")
        terms = []
        for _ in range(entries):
            xorb = hash_hex(reader.take(HASH_BYTES))
            _cas_flags, length, start, end = reader.u32s(4)
            if end <= start:
                raise FormatError("empty chunk range in a file entry")
            terms.append(Term(xorb, start, end, length))
        if flags & FILE_FLAG_WITH_VERIFICATION:
            reader.take(entries * (HASH_BYTES + 16))
        sha256 = None
        if flags & FILE_FLAG_WITH_METADATA_EXT:
            sha256 = _sha256_hex_from_shard(reader.take(HASH_BYTES))
            reader.take(16)
        files.append(FileInfo(hash_hex(file_hash), tuple(terms), sha256))
    reader.take(16)
    xorbs = []
    while (xorb_hash := reader.take(HASH_BYTES)) != BOOKEND:
        _flags, entries, _bytes_in_xorb, _bytes_on_disk = reader.u32s(4)
        if entries > MAX_SHARD_ENTRIES:
            raise FormatError("too many chunk entries")
        hashes, lengths = [], []
        for _ in range(entries):
            hashes.append(hash_hex(reader.take(HASH_BYTES)))
            _unpacked_start, length, _chunk_flags, _unused = reader.u32s(4)
            lengths.append(length)
        xorbs.append(XorbChunks(hash_hex(xorb_hash), tuple(hashes), tuple(lengths)))
    return files, xorbs


def build_dedup_shard(xorbs: list[XorbChunks]) -> bytes:
    """A shard answering the global-dedup chunk query: no files, the xorbs' chunk lists, a footer.

    The chunk hashes are plain (HMAC key zero). The footer's first reserved u64 holds the end of the CAS
    section, where @huggingface/hub 2.17.5's shard parser stops reading xorbs."""
    body = bytearray()
    body += SHARD_MAGIC + struct.pack("<2Q", SHARD_HEADER_VERSION, SHARD_FOOTER_SIZE)
    body += BOOKEND + bytes(16)
    cas_offset = len(body)
    for xorb in xorbs:
        body += hash_raw(xorb.xorb) + struct.pack("<4I", 0, len(xorb.chunk_hashes), sum(xorb.unpacked_lengths), 0)
        start = 0
        for chunk_hash, length in zip(xorb.chunk_hashes, xorb.unpacked_lengths):
            body += hash_raw(chunk_hash) + struct.pack("<4I", start, length, 0, 0)
            start += length
    body += BOOKEND + bytes(16)
    footer_offset = len(body)
    footer = struct.pack("<3Q", SHARD_FOOTER_VERSION, SHARD_HEADER_SIZE, cas_offset)
    footer += struct.pack("<Q", footer_offset) + bytes(40)          # reserved; see the docstring
    footer += bytes(32)                                            # chunk_hash_hmac_key: none
    footer += struct.pack("<2Q", 0, 0) + bytes(72) + struct.pack("<Q", footer_offset)
    assert len(footer) == SHARD_FOOTER_SIZE
    return bytes(body + footer)


@dataclass(frozen=True)
class ChunkHeader:
    compressed_size: int
    scheme: int
    uncompressed_size: int


def parse_chunk_header(data: bytes, offset: int) -> ChunkHeader:
    if offset + CHUNK_HEADER_BYTES > len(data):
        raise FormatError("chunk header truncated")
    header = data[offset:offset + CHUNK_HEADER_BYTES]
    if header[0] != 0:
        raise FormatError(f"chunk header version {header[0]}")
    compressed = int.from_bytes(header[1:4], "little")
    uncompressed = int.from_bytes(header[5:8], "little")
    if header[4] > 2 or uncompressed > MAX_CHUNK_BYTES or compressed > MAX_CHUNK_BYTES + 4096:
        raise FormatError("chunk header out of bounds")
    return ChunkHeader(compressed, header[4], uncompressed)


XORB_FOOTER_IDENT = b"XETBLOB"   # the footer a stored xorb may end with (xet-core's xorb object info)


def walk_xorb(data: bytes) -> list[int]:
    """Serialized byte offsets of every chunk of a xorb, plus the end of the last chunk (len = chunks + 1).
    A xorb as the JS writer uploads it is chunks only; as hf_xet's local:// store keeps it, the chunks are
    followed by a footer (hashes and boundaries) that starts with XORB_FOOTER_IDENT, where the walk stops."""
    if len(data) > MAX_XORB_BYTES + (1 << 20):   # the footer: 40 bytes a chunk, ~1024 chunks
        raise FormatError("xorb too large")
    offsets, offset = [0], 0
    while offset < len(data):
        if data.startswith(XORB_FOOTER_IDENT, offset):
            break
        header = parse_chunk_header(data, offset)
        offset += CHUNK_HEADER_BYTES + header.compressed_size
        if offset > len(data):
            raise FormatError("chunk payload truncated")
        offsets.append(offset)
    return offsets


def decode_chunk(data: bytes, offset: int) -> bytes:
    """The uncompressed bytes of the chunk whose header starts at `offset`."""
    header = parse_chunk_header(data, offset)
    payload = data[offset + CHUNK_HEADER_BYTES:offset + CHUNK_HEADER_BYTES + header.compressed_size]
    if header.scheme == 0:
        plain = payload
    else:
        plain = _lz4_frame().decompress(payload)
        if header.scheme == 2:   # byte grouping: plane i holds bytes i, i+4, ...; planes concatenated
            size, plain_out = len(plain), bytearray(len(plain))
            position = 0
            for plane in range(4):
                count = (size - plane + 3) // 4
                plain_out[plane::4] = plain[position:position + count]
                position += count
            plain = bytes(plain_out)
    if len(plain) != header.uncompressed_size:
        raise FormatError("chunk decodes to the wrong length")
    return plain
