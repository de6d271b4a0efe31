// Download a whole repo with the @huggingface/hub JS client's snapshotDownload(), for bench/download_bench.py.
//
//   node bench/hub_js_download.mjs HUB_URL ORG/NAME CACHE_DIR
//
// Prints the snapshot folder on stdout. Install the pinned client first: npm install --prefix bench
//
// snapshotDownload() asks POST /api/models/<repo>/paths-info/<rev> about each file before fetching it. The
// bundled Hub emulator now implements paths-info too, but this script still answers that call itself: the
// `fetch` that snapshotDownload() takes as a parameter answers it from the repo's tree listing, fetched once
// from the emulator (one extra GET), so the emulator never sees a paths-info request. Every other request — the revision lookup, the tree
// listing, each file's `Range: bytes=0-0` probe and its body over the Hub's redirect to the CDN — is the
// client's own, unchanged.
//
// One more adjustment, for empty files (the synthetic model has one, as real repos have `__init__.py`): the
// client probes every file with `Range: bytes=0-0`, which for a 0-byte file is unsatisfiable, and the emulator
// answers 416 with `Content-Range: bytes */0` as RFC 9110 says. Client 2.17.5 treats any non-2xx as an error
// and the whole snapshotDownload() fails. This fetch hands that one answer to the client as a 206 with the
// same headers (the size it reads from Content-Range is 0, which is true); the body is then fetched as usual.

import { snapshotDownload } from "@huggingface/hub";

const [hubUrl, repo, cacheDir] = process.argv.slice(2);
if (!hubUrl || !repo || !cacheDir) {
  console.error("usage: node hub_js_download.mjs HUB_URL ORG/NAME CACHE_DIR");
  process.exit(2);
}

const pathsInfoRe = /\/api\/(models|datasets|spaces)\/(.+)\/paths-info\/([^/?]+)$/;
const trees = new Map();   // "<type>s/<repo>@<rev>" -> Map(path -> tree entry)
let shimmedCalls = 0;
let emptyProbes = 0;

async function treeOf(kind, repoId, revision) {
  const key = `${kind}/${repoId}@${revision}`;
  if (!trees.has(key)) {
    const entries = new Map();
    let url = `${hubUrl}/api/${kind}/${repoId}/tree/${revision}?recursive=true&expand=false`;
    while (url) {
      const response = await fetch(url, { headers: { accept: "application/json" } });
      if (!response.ok) throw new Error(`tree listing: HTTP ${response.status}`);
      for (const entry of await response.json()) entries.set(entry.path, entry);
      const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") ?? "");
      url = next ? next[1] : null;
    }
    trees.set(key, entries);
  }
  return trees.get(key);
}

async function benchFetch(input, init = {}) {
  const url = typeof input === "string" ? input : input.url;
  const method = (init.method ?? "GET").toUpperCase();
  const match = method === "POST" ? pathsInfoRe.exec(new URL(url).pathname) : null;
  if (!match) {
    const response = await fetch(input, init);
    const range = new Headers(init.headers ?? {}).get("Range");
    if (response.status === 416 && range === "bytes=0-0" && response.headers.get("Content-Range") === "bytes */0") {
      emptyProbes += 1;
      await response.body?.cancel();
      return new Response(null, { status: 206, headers: response.headers });
    }
    return response;
  }
  shimmedCalls += 1;
  const [, kind, repoId, revision] = match;
  const tree = await treeOf(kind, decodeURIComponent(repoId), decodeURIComponent(revision));
  const { paths } = JSON.parse(init.body);
  const found = paths.filter((p) => tree.has(p)).map((p) => tree.get(p));
  return new Response(JSON.stringify(found), { status: 200, headers: { "Content-Type": "application/json" } });
}

try {
  const snapshot = await snapshotDownload({ repo, hubUrl, cacheDir, fetch: benchFetch });
  console.log(snapshot);
  console.error(`hub_js_download: paths-info answered locally ${shimmedCalls} times; ` +
                `416 on an empty file's probe passed on as 206 ${emptyProbes} times`);
} catch (error) {
  console.error(`hub_js_download: ${error?.stack ?? error}`);
  process.exit(1);
}
