// Scan an HF cache with the @huggingface/hub npm client's own cache scanner and print what it reports, as JSON.
//
//   node tests/interop/scan_cache.mjs CACHE_DIR
//
// stdout: {"size": N, "repos": [{"id": {"name", "type"}, "path", "size", "filesCount",
//          "revisions": [{"commitOid", "refs", "size", "files": [{"path", "blobPath", "size"}]}]}],
//          "warnings": ["message", ...]}
// File paths are relative to the revision's snapshot folder; blobPath is the resolved target, as the client
// reports it. Dates are left out (they say nothing about interop). Exit 0 after a scan, 1 if it threw.
// Used by tests/integration/test_interop_hubjs.py; install the pinned client first: npm ci --prefix tests/interop

import { relative } from "node:path";
import { scanCacheDir } from "@huggingface/hub";

const [cacheDir] = process.argv.slice(2);
if (!cacheDir) {
  console.error("usage: node scan_cache.mjs CACHE_DIR");
  process.exit(2);
}

try {
  const info = await scanCacheDir(cacheDir);
  const report = {
    size: info.size,
    repos: info.repos.map((repo) => ({
      id: repo.id,
      path: repo.path,
      size: repo.size,
      filesCount: repo.filesCount,
      revisions: repo.revisions.map((revision) => ({
        commitOid: revision.commitOid,
        refs: [...revision.refs].sort(),
        size: revision.size,
        files: revision.files
          .map((file) => ({ path: relative(revision.path, file.path), blobPath: file.blob.path, size: file.blob.size }))
          .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      })),
    })),
    warnings: info.warnings.map((warning) => String(warning?.message ?? warning)),
  };
  process.stdout.write(JSON.stringify(report) + "\n");
} catch (error) {
  console.error(`scan_cache: ${error?.stack ?? error}`);
  process.exit(1);
}
