// matrix.mjs runs a fixed sequence of @azure/data-tables calls against the connection string
// given as its first argument and prints one JSON line per step: the step's name, whether it
// succeeded, the status and error code of a failure, and a normalised result (etags and
// timestamps replaced by placeholders; their presence and order kept).
//
//   node matrix.mjs "<connection string>" <table name>
import { TableClient, TableServiceClient, odata } from "@azure/data-tables";
import { stepper } from "./step.mjs";

const [conn, table] = process.argv.slice(2);
if (!conn || !table) {
  console.error("usage: node matrix.mjs <connection string> <table>");
  process.exit(2);
}
const opts = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
const service = TableServiceClient.fromConnectionString(conn, opts);
const client = TableClient.fromConnectionString(conn, table, opts);
const missing = TableClient.fromConnectionString(conn, table + "missing", opts);

function norm(v) {
  if (Array.isArray(v)) return v.map(norm);
  if (typeof v === "bigint") return { int64: v.toString() };
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return { binary: Buffer.from(v).toString("base64") };
  if (v && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v).sort()) {
      if (k === "odata.metadata") continue; // names the endpoint, which differs
      if (k === "etag" || k === "odata.etag") out[k] = "<etag>";
      else if (k === "timestamp" || k === "date" || k === "requestId" || k === "clientRequestId" || k === "version") out[k] = "<" + k + ">";
      else out[k] = norm(v[k]);
    }
    return out;
  }
  return v;
}

const step = stepper(norm);

const all = (pk, rk) => ({
  partitionKey: pk,
  rowKey: rk,
  int64: { value: "9007199254740993", type: "Int64" },
  dbl: { value: "3", type: "Double" },
  when: new Date("2024-02-29T12:34:56.789Z"),
  id: { value: "3f1a2b4c-5d6e-4f70-8192-a3b4c5d6e7f8", type: "Guid" },
  bin: new Uint8Array([0, 1, 2, 253, 254, 255]),
  flag: true,
  text: "Grüße, 世界 — ✓",
});

// Only the fields of a response that both services must agree on.
const meta = (r) => (r ? { etag: r.etag } : r);

await step("createTable", () => client.createTable().then(() => "created"));
await step("createTable.again", () => service.createTable(table).then(() => "no error"));
await step("createEntity", () => client.createEntity(all("p", "r1")).then(meta));
await step("createEntity.duplicate", () => client.createEntity(all("p", "r1")).then(meta));
await step("createEntity.badKey", () => client.createEntity({ partitionKey: "p", rowKey: "a/b" }).then(meta));
await step("createEntity.missingTable", () => missing.createEntity({ partitionKey: "p", rowKey: "r" }).then(meta));
await step("getEntity", () => client.getEntity("p", "r1"));
await step("getEntity.select", () => client.getEntity("p", "r1", { queryOptions: { select: ["text", "int64"] } }));
await step("getEntity.missing", () => client.getEntity("p", "nope"));
await step("getEntity.missingTable", () => missing.getEntity("p", "r"));
await step("upsertEntity.replace", () => client.upsertEntity({ partitionKey: "p", rowKey: "r1", text: "replaced" }, "Replace").then(meta));
await step("getEntity.afterReplace", () => client.getEntity("p", "r1"));
await step("upsertEntity.merge", () => client.upsertEntity({ partitionKey: "p", rowKey: "r1", flag: false }, "Merge").then(meta));
await step("upsertEntity.mergeNew", () => client.upsertEntity(all("p", "r2"), "Merge").then(meta));
const current = await step("getEntity.afterMerge", () => client.getEntity("p", "r1"));
await step("updateEntity.etag", () => client.updateEntity({ partitionKey: "p", rowKey: "r1", n: 1 }, "Merge", { etag: current?.etag }).then(meta));
await step("updateEntity.staleEtag", () => client.updateEntity({ partitionKey: "p", rowKey: "r1", n: 2 }, "Merge", { etag: current?.etag }).then(meta));
await step("updateEntity.missing", () => client.updateEntity({ partitionKey: "p", rowKey: "nope" }, "Replace").then(meta));
await step("deleteEntity.staleEtag", () => client.deleteEntity("p", "r1", { etag: current?.etag }).then(() => "deleted"));
for (let i = 0; i < 5; i++) {
  await step(`createEntity.page${i}`, () => client.createEntity({ partitionKey: "q", rowKey: `k${i}`, n: i }).then(meta));
}
const list = async (o) => {
  const out = [];
  for await (const e of client.listEntities(o)) out.push(e);
  return out;
};
await step("listEntities", () => list());
await step("listEntities.filter", () => list({ queryOptions: { filter: odata`PartitionKey eq ${"q"} and n ge ${2}` } }));
await step("listEntities.select", () => list({ queryOptions: { filter: odata`PartitionKey eq ${"q"}`, select: ["n"] } }));
await step("listEntities.byPage", async () => {
  const pages = [];
  let token;
  for await (const page of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"q"}` } }).byPage({ maxPageSize: 2 })) {
    pages.push(page.map((e) => e.rowKey));
    token = page.continuationToken;
    if (pages.length === 1) break;
  }
  for await (const page of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"q"}` } }).byPage({ maxPageSize: 2, continuationToken: token })) {
    pages.push(page.map((e) => e.rowKey));
  }
  return { pages, hadToken: typeof token === "string" };
});
await step("submitTransaction", async () => {
  const r = await client.submitTransaction([
    ["create", { partitionKey: "t", rowKey: "a", n: 1 }],
    ["upsert", { partitionKey: "t", rowKey: "b", n: 2 }, "Replace"],
    ["upsert", { partitionKey: "t", rowKey: "c", n: 3 }, "Merge"],
  ]);
  return { status: r.status, subResponses: r.subResponses.map((s) => ({ status: s.status, rowKey: s.rowKey, etag: s.etag ? "<etag>" : undefined })) };
});
await step("submitTransaction.failsAtAction1", () =>
  client.submitTransaction([
    ["create", { partitionKey: "t", rowKey: "d", n: 1 }],
    ["create", { partitionKey: "t", rowKey: "a", n: 1 }],
  ]).then((r) => r.status));
await step("listEntities.afterTransactions", () => list({ queryOptions: { filter: odata`PartitionKey eq ${"t"}` } }));
await step("deleteEntity", () => client.deleteEntity("p", "r2").then(() => "deleted"));
await step("deleteEntity.missing", () => client.deleteEntity("p", "r2").then(() => "deleted"));
await step("listTables.prefix", async () => {
  const names = [];
  for await (const t of service.listTables({ queryOptions: { filter: odata`TableName ge ${table} and TableName lt ${table + "{"}` } })) names.push(t.name);
  return names;
});
await step("deleteTable", () => service.deleteTable(table).then(() => "deleted"));
await step("getEntity.deletedTable", () => client.getEntity("p", "r1"));
