// Download a repo into an HF cache with the @huggingface/hub npm client's snapshotDownload(), as JSON.
//
//   node tests/interop/snapshot_download.mjs HUB_URL [TYPE:]ORG/NAME CACHE_DIR [REVISION]
//
// TYPE is model (default), dataset or space. The token, if any, comes from $HF_TOKEN. The client's own
// fetch talks to HUB_URL unchanged (no shim: what it needs from the Hub, the Hub emulator serves).
// stdout: {"snapshot": "<cache>/models--org--name/snapshots/<commit>"}; on failure {"error": "..."} and exit 1.
// The client's progress messages (console.debug/info) go to stderr so that stdout stays one JSON line.
// Used by tests/integration/test_interop_hubjs.py; install the pinned client first: npm ci --prefix tests/interop

import { snapshotDownload } from "@huggingface/hub";

const [hubUrl, spec, cacheDir, revision] = process.argv.slice(2);
if (!hubUrl || !spec || !cacheDir) {
  console.error("usage: node snapshot_download.mjs HUB_URL [TYPE:]ORG/NAME CACHE_DIR [REVISION]");
  process.exit(2);
}
for (const level of ["debug", "info", "log"]) {
  console[level] = (...args) => console.error(...args);
}

const [type, name] = spec.includes(":") ? spec.split(/:(.*)/s, 2) : ["model", spec];
try {
  const snapshot = await snapshotDownload({
    repo: { type, name },
    hubUrl,
    cacheDir,
    ...(revision ? { revision } : {}),
    ...(process.env.HF_TOKEN ? { accessToken: process.env.HF_TOKEN } : {}),
  });
  process.stdout.write(JSON.stringify({ snapshot }) + "\n");
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String(error?.message ?? error) }) + "\n");
  console.error(`snapshot_download: ${error?.stack ?? error}`);
  process.exit(1);
}
