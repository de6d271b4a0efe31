#!/usr/bin/env python3
"""Writes the hostile documents of security issue 14 (items 5 and 6) for the JSON fuzz targets, so that
scripts/fuzz can replay them under a memory and time limit: a parser that builds a tree again (31 M nested
brackets once cost 2.27 GB) or rescans what it has read (1 M empty objects once ran for minutes) fails the
run. They are generated rather than stored because they are tens of MB, and kept few and small enough for
the instrumented targets (ASan, UBSan, coverage: ten times slower) to replay each in seconds. Each is a
valid input for its target's format (a safetensors input starts with its 8-byte data-region length).

    tests/fuzz/hostile_inputs.py OUTDIR      → OUTDIR/<target>/<case>
"""

import struct
import sys
from pathlib import Path

MB = 1000 * 1000
OID = "0123456789abcdef0123456789abcdef01234567"


def nested(prefix: str, depth: int, suffix: str = "") -> bytes:
    return (prefix + "[" * depth + "]" * depth + suffix).encode()


def empty_objects(count: int) -> str:
    return "[" + ",".join(["{}"] * count) + "]"


def safetensors(header: str, data_length: int = 0) -> bytes:
    return struct.pack("<Q", data_length) + header.encode()


def tiny_tensors(count: int) -> str:
    # Zero-length tensors all at offset 0: a valid header of `count` tensors and no data.
    return "{" + ",".join(f'"t{i}":{{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}' for i in range(count)) + "}"


def cases() -> dict:
    file_entry = f'{{"type":"file","path":"a.bin","size":1,"oid":"{OID}","junk":'
    return {
        "fuzz_tree_listing": {
            "1m-empty-objects-in-an-unused-field.json": f"[{file_entry}{empty_objects(1_000_000)}}}]".encode(),
            "40m-nested-arrays-in-an-entry.json": nested(f"[{file_entry}", 20 * MB, "}]"),
        },
        "fuzz_revision_info": {
            "40m-nested-arrays.json": nested(f'{{"sha":"{OID}","x":', 20 * MB, "}"),
            "1m-empty-objects.json": f'{{"sha":"{OID}","siblings":{empty_objects(1_000_000)}}}'.encode(),
        },
        "fuzz_safetensors_header": {
            "40m-nested-metadata.bin": safetensors(nested('{"__metadata__":{"a":', 20 * MB, "}}").decode()),
            "1m-empty-objects-in-metadata.bin": safetensors(f'{{"__metadata__":{{"a":{empty_objects(1_000_000)}}}}}'),
            "20k-tiny-tensors.bin": safetensors(tiny_tensors(20_000)),
        },
        "fuzz_shard_index": {
            "40m-nested-metadata.json": nested('{"weight_map":{},"metadata":{"a":', 20 * MB, "}}"),
            "1m-empty-objects-in-metadata.json":
                f'{{"weight_map":{{"a":"s"}},"metadata":{{"a":{empty_objects(1_000_000)}}}}}'.encode(),
            "200k-tensors-unsorted.json": ('{"weight_map":{' + ",".join(f'"t{i}":"s{i % 64}"' for i in range(200_000))
                                           + "}}").encode(),
        },
    }


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: tests/fuzz/hostile_inputs.py OUTDIR")
    out = Path(sys.argv[1])
    for target, files in cases().items():
        (out / target).mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            path = out / target / name
            if not path.exists() or path.stat().st_size != len(content):
                path.write_bytes(content)


if __name__ == "__main__":
    main()
