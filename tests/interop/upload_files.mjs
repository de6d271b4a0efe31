// Upload a directory into a Hub with the @huggingface/hub npm client's uploadFiles(), through Xet.
//
//   node tests/interop/upload_files.mjs HUB_URL [TYPE:]ORG/NAME DIR [BRANCH]
//
// The real JS Xet writer does the work: preupload, the LFS batch call (the Hub offers the "xet" transfer),
// xet-write-token, chunking, xorb packing and compression, the global-dedup chunk query, xorb and shard
// uploads, then the commit. The token comes from $HF_TOKEN. Every file under DIR is uploaded, with its
// path relative to DIR. stdout: {"commit": "<sha>"}; on failure {"error": "..."} and exit 1.
// Used by tests/integration/harness.py (xet_upload) and tests/integration/test_xet_hub.py.

import { openAsBlob } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { uploadFiles } from "@huggingface/hub";

const [hubUrl, spec, dir, branch] = process.argv.slice(2);
if (!hubUrl || !spec || !dir) {
  console.error("usage: node upload_files.mjs HUB_URL [TYPE:]ORG/NAME DIR [BRANCH]");
  process.exit(2);
}
for (const level of ["debug", "info", "log"]) {
  console[level] = (...args) => console.error(...args);
}

async function filesUnder(root) {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = [];
  for (const entry of entries) {
    if (entry.isFile()) {
      const full = join(entry.parentPath ?? entry.path, entry.name);
      const path = relative(root, full).split(sep).join("/");
      files.push({ path, content: await openAsBlob(full) });
    }
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : 1));
}

const [type, name] = spec.includes(":") ? spec.split(/:(.*)/s, 2) : ["model", spec];
try {
  const result = await uploadFiles({
    repo: { type, name },
    hubUrl,
    accessToken: process.env.HF_TOKEN,
    files: await filesUnder(dir),
    useXet: true,
    ...(branch ? { branch } : {}),
  });
  process.stdout.write(JSON.stringify({ commit: result?.commit?.oid ?? null }) + "\n");
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String(error?.message ?? error) }) + "\n");
  console.error(`upload_files: ${error?.stack ?? error}`);
  process.exit(1);
}
