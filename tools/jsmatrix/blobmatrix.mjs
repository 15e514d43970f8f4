// blobmatrix.mjs runs a fixed sequence of @azure/storage-blob calls against the connection
// string given as its first argument (which must name a BlobEndpoint) and prints one JSON
// line per step: the step's name, whether it succeeded, the status and error code of a
// failure, and the fields of the result both services must agree on (etags and dates
// replaced by placeholders; their presence kept).
//
//   node blobmatrix.mjs "<connection string>" <container name>
import { BlobServiceClient } from "@azure/storage-blob";
import { stepper } from "./step.mjs";

const [conn, name] = process.argv.slice(2);
if (!conn || !name) {
  console.error("usage: node blobmatrix.mjs <connection string> <container>");
  process.exit(2);
}
const service = BlobServiceClient.fromConnectionString(conn, { retryOptions: { maxTries: 1 } });
const container = service.getContainerClient(name);
const missing = service.getContainerClient(name + "missing");
const blob = (n) => container.getBlockBlobClient(n);

const placeholder = (v) => (v === undefined ? undefined : "<set>");

function norm(v) {
  if (Array.isArray(v)) return v.map(norm);
  if (v instanceof Date) return "<date>";
  if (v instanceof Uint8Array) return { binary: Buffer.from(v).toString("base64") };
  if (v && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v).sort()) {
      if (k === "etag") out[k] = placeholder(v[k]);
      else out[k] = norm(v[k]);
    }
    return out;
  }
  return v;
}

const step = stepper(norm);

// The properties of a blob both services must agree on.
const props = (p) => ({
  blobType: p.blobType,
  contentLength: p.contentLength,
  contentType: p.contentType,
  contentEncoding: p.contentEncoding,
  contentLanguage: p.contentLanguage,
  contentDisposition: p.contentDisposition,
  cacheControl: p.cacheControl,
  contentMD5: p.contentMD5,
  metadata: p.metadata,
  etag: p.etag,
  lastModified: p.lastModified,
});

const text = async (stream) => {
  const chunks = [];
  for await (const c of stream) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString("utf8");
};

// A download: the body and the headers of a range.
const download = (n, offset, count, options) =>
  blob(n)
    .download(offset, count, options)
    .then(async (r) => ({
      body: r.readableStreamBody ? await text(r.readableStreamBody) : undefined,
      contentLength: r.contentLength,
      contentRange: r.contentRange,
      contentType: r.contentType,
      metadata: r.metadata,
      etag: r.etag,
    }));

const upload = (n, data, options) => blob(n).upload(data, Buffer.byteLength(data), options).then((r) => ({ etag: r.etag, contentMD5: r.contentMD5 }));

const staleEtag = '"0x8D000000000000F"';
const id = (i) => Buffer.from(`block-${String(i).padStart(3, "0")}`).toString("base64");

// Containers. (Without metadata: the emulator refuses container metadata with 501.)
await step("createContainer", () => container.create().then((r) => ({ etag: r.etag })));
await step("createContainer.again", () => container.create().then(() => "created"));
await step("createContainer.badName", () => service.getContainerClient("Bad_Name").create().then(() => "created"));
await step("containerExists", () => container.exists());
await step("containerExists.missing", () => missing.exists());
await step("containerProperties", () => container.getProperties().then((p) => ({ metadata: p.metadata, etag: p.etag, lastModified: p.lastModified })));
await step("containerProperties.missing", () => missing.getProperties().then(() => "found"));
await step("listContainers.prefix", async () => {
  const names = [];
  for await (const c of service.listContainers({ prefix: name })) names.push(c.name);
  return names;
});

// Uploads with headers and metadata, properties, downloads.
const headers = {
  blobContentType: "text/plain; charset=utf-8",
  blobContentEncoding: "identity",
  blobContentLanguage: "en",
  blobCacheControl: "no-cache",
  blobContentDisposition: "inline",
};
const first = await step("upload", () => upload("a/one.txt", "hello, world", { blobHTTPHeaders: headers, metadata: { color: "blue", size: "12" } }));
const current = await blob("a/one.txt").getProperties().then((p) => p.etag, () => undefined);
await step("getProperties", () => blob("a/one.txt").getProperties().then(props));
await step("getProperties.missing", () => blob("a/nope").getProperties().then(props));
await step("blobExists", () => blob("a/one.txt").exists());
await step("blobExists.missing", () => blob("a/nope").exists());
await step("download", () => download("a/one.txt"));
await step("download.range", () => download("a/one.txt", 7, 5));
await step("download.fromOffset", () => download("a/one.txt", 7));
await step("download.rangeOverTheEnd", () => download("a/one.txt", 10, 100));
await step("download.rangePastTheEnd", () => download("a/one.txt", 100, 5));
await step("download.missing", () => download("a/nope"));
await step("download.missingContainer", () => missing.getBlockBlobClient("b").download().then(() => "found"));
await step("downloadToBuffer", () => blob("a/one.txt").downloadToBuffer().then((b) => b.toString("utf8")));

// Conditional requests.
const cond = (c) => ({ conditions: c });
await step("download.ifMatchCurrent", () => download("a/one.txt", 0, undefined, cond({ ifMatch: current })));
await step("download.ifMatchStale", () => download("a/one.txt", 0, undefined, cond({ ifMatch: staleEtag })));
await step("download.ifNoneMatchCurrent", () => download("a/one.txt", 0, undefined, cond({ ifNoneMatch: current })));
await step("download.ifNoneMatchStale", () => download("a/one.txt", 0, undefined, cond({ ifNoneMatch: staleEtag })));
await step("download.missingIfMatch", () => download("a/nope", 0, undefined, cond({ ifMatch: staleEtag })));
await step("getProperties.ifNoneMatchCurrent", () => blob("a/one.txt").getProperties(cond({ ifNoneMatch: current })).then(props));
await step("upload.ifNoneMatchAny", () => upload("a/one.txt", "x", cond({ ifNoneMatch: "*" })));
await step("upload.ifNoneMatchAnyNew", () => upload("a/new.txt", "new", cond({ ifNoneMatch: "*" })));
await step("upload.ifMatchStale", () => upload("a/one.txt", "x", cond({ ifMatch: staleEtag })));
await step("upload.ifMatchCurrent", () => upload("a/one.txt", "hello, again", { conditions: { ifMatch: current }, blobHTTPHeaders: { blobContentType: "text/csv" } }));
await step("getProperties.afterConditionalUpload", () => blob("a/one.txt").getProperties().then(props));
await step("setMetadata.ifMatchStale", () => blob("a/one.txt").setMetadata({ shape: "round" }, cond({ ifMatch: current })).then(() => "set"));
await step("setMetadata", () => blob("a/one.txt").setMetadata({ shape: "round" }).then(() => "set"));
await step("setHTTPHeaders", () => blob("a/one.txt").setHTTPHeaders({ blobContentType: "application/json", blobContentLanguage: "nb" }).then(() => "set"));
await step("getProperties.afterSets", () => blob("a/one.txt").getProperties().then(props));
await step("upload.missingContainer", () => missing.getBlockBlobClient("b").upload("x", 1).then(() => "uploaded"));
await step("upload.badMetadataName", () => upload("a/bad", "x", { metadata: { "1bad": "x" } }));

// Staged blocks, block lists.
// The blob's length, which Get Block List also answers, is left out for a blob that has only
// staged blocks: what the service says of it there is not documented.
const blockList = (n, which, withLength = true) =>
  blob(n)
    .getBlockList(which)
    .then((l) => ({
      committed: (l.committedBlocks ?? []).map((b) => [b.name, b.size]),
      uncommitted: (l.uncommittedBlocks ?? []).map((b) => [b.name, b.size]),
      contentLength: withLength ? l.blobContentLength : undefined,
    }));
for (const [i, part] of ["aaa", "bb", "c"].entries()) {
  await step(`stageBlock${i}`, () => blob("b/blocks").stageBlock(id(i), part, part.length).then(() => "staged"));
}
await step("stageBlock.otherIdLength", () => blob("b/blocks").stageBlock(Buffer.from("short").toString("base64"), "s", 1).then(() => "staged"));
await step("getBlockList.beforeCommit", () => blockList("b/blocks", "all", false));
await step("download.onlyStagedBlocks", () => download("b/blocks"));
await step("commitBlockList", () =>
  blob("b/blocks")
    .commitBlockList([id(0), id(2)], { blobHTTPHeaders: { blobContentType: "text/plain" }, metadata: { kind: "blocks" } })
    .then((r) => ({ etag: r.etag })));
await step("download.committed", () => download("b/blocks"));
await step("getProperties.committed", () => blob("b/blocks").getProperties().then(props));
await step("getBlockList.afterCommit", () => blockList("b/blocks", "all"));
await step("commitBlockList.neverStaged", () => blob("b/blocks").commitBlockList([id(7)]).then(() => "committed"));
await step("stageBlock3", () => blob("b/blocks").stageBlock(id(3), "dddd", 4).then(() => "staged"));
await step("commitBlockList.committedAndStaged", () => blob("b/blocks").commitBlockList([id(2), id(3), id(0)]).then(() => "committed"));
await step("download.secondCommit", () => download("b/blocks"));
await step("getBlockList.committed", () => blockList("b/blocks", "committed"));
await step("getBlockList.uncommitted", () => blockList("b/blocks", "uncommitted"));
await step("getBlockList.putWhole", () => blockList("a/one.txt", "all"));
await step("getBlockList.missing", () => blockList("b/nope", "all"));
await step("commitBlockList.ifNoneMatchAny", () => blob("b/blocks").commitBlockList([], cond({ ifNoneMatch: "*" })).then(() => "committed"));

// Listings: flat with a prefix, in pages, and by hierarchy.
for (const n of ["a/two.txt", "a/sub/three.txt", "a/sub/deeper/four.txt", "c.txt"]) {
  await step(`upload.${n}`, () => upload(n, n, { metadata: { n: "1" } }).then(() => "uploaded"));
}
// A listed blob. A blob without metadata is listed with an empty Metadata element by some
// services and without one by others; the SDK reads the first as "", the second as
// undefined: both are no metadata.
const item = (b) => ({ name: b.name, contentLength: b.properties.contentLength, contentType: b.properties.contentType, blobType: b.properties.blobType, metadata: b.metadata || {} });
await step("listBlobsFlat", async () => {
  const out = [];
  for await (const b of container.listBlobsFlat()) out.push(b.name);
  return out;
});
await step("listBlobsFlat.prefix", async () => {
  const out = [];
  for await (const b of container.listBlobsFlat({ prefix: "a/", includeMetadata: true })) out.push(item(b));
  return out;
});
await step("listBlobsFlat.pages", async () => {
  const pages = [];
  for await (const page of container.listBlobsFlat({ prefix: "a/" }).byPage({ maxPageSize: 2 })) {
    pages.push({ names: page.segment.blobItems.map((b) => b.name), more: Boolean(page.continuationToken) });
  }
  return pages;
});
await step("listBlobsFlat.resume", async () => {
  const first = await container.listBlobsFlat({ prefix: "a/" }).byPage({ maxPageSize: 1 }).next();
  const token = first.value.continuationToken;
  const rest = [];
  for await (const page of container.listBlobsFlat({ prefix: "a/" }).byPage({ maxPageSize: 10, continuationToken: token })) {
    rest.push(...page.segment.blobItems.map((b) => b.name));
  }
  return { first: first.value.segment.blobItems.map((b) => b.name), rest };
});
await step("listBlobsByHierarchy", async () => {
  const out = [];
  for await (const x of container.listBlobsByHierarchy("/")) out.push(x.kind + " " + x.name);
  return out;
});
await step("listBlobsByHierarchy.prefix", async () => {
  const out = [];
  for await (const x of container.listBlobsByHierarchy("/", { prefix: "a/" })) out.push(x.kind + " " + x.name);
  return out;
});
await step("listBlobsByHierarchy.pages", async () => {
  const pages = [];
  for await (const page of container.listBlobsByHierarchy("/", { prefix: "a/" }).byPage({ maxPageSize: 2 })) {
    pages.push({
      prefixes: (page.segment.blobPrefixes ?? []).map((p) => p.name),
      blobs: page.segment.blobItems.map((b) => b.name),
      more: Boolean(page.continuationToken),
    });
  }
  return pages;
});
await step("listBlobsFlat.missingContainer", async () => {
  const out = [];
  for await (const b of missing.listBlobsFlat()) out.push(b.name);
  return out;
});

// Deletes.
await step("delete.ifMatchStale", () => blob("a/two.txt").delete(cond({ ifMatch: staleEtag })).then(() => "deleted"));
await step("delete", () => blob("a/two.txt").delete().then(() => "deleted"));
await step("delete.again", () => blob("a/two.txt").delete().then(() => "deleted"));
await step("deleteIfExists.missing", () => blob("a/two.txt").deleteIfExists().then((r) => r.succeeded));
await step("deleteIfExists", () => blob("c.txt").deleteIfExists().then((r) => r.succeeded));
await step("listBlobsFlat.afterDeletes", async () => {
  const out = [];
  for await (const b of container.listBlobsFlat()) out.push(b.name);
  return out;
});
await step("deleteContainer", () => container.delete().then(() => "deleted"));
await step("deleteContainer.again", () => container.delete().then(() => "deleted"));
await step("download.deletedContainer", () => download("a/one.txt"));
