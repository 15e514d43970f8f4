// Summarises a mocha JSON report of Azurite's table tests: the totals, then one line per
// failing test (file, full title, first line of the error). Against the emulator, a failing
// test that RESULTS.md does not list (a table row naming its file and title) and a listed
// test that now passes (unless its row says it is flaky) are reported, and the exit status
// is 1 if there is either.
//
//   node summary.mjs REPORT.json RESULTS.md emulator|azurite
import fs from "node:fs";

const [reportFile, resultsFile, target] = process.argv.slice(2);
const report = JSON.parse(fs.readFileSync(reportFile, "utf8"));
const s = report.stats;
console.log(`${target}: ${s.passes} passed, ${s.failures} failed, ${s.pending} pending (${s.tests} tests)`);

const rel = (file) => (file ?? "").replace(/^.*\/tests\/table\//, "");
const cell = (text) => text.replaceAll("|", "\\|");
const failing = report.failures.map((t) => ({
  file: rel(t.file),
  title: t.fullTitle,
  err: (t.err?.message ?? "").split("\n")[0].slice(0, 160),
}));
for (const f of failing) {
  console.log(`  FAIL ${f.file} | ${f.title} | ${f.err}`);
}
if (target !== "emulator") {
  process.exit(0);
}

// The rows of RESULTS.md's tables: | file | test | class | reason |.
// A row whose reason starts with "Flaky:" may pass or fail.
const listed = new Set();
const flaky = new Set();
for (const line of fs.readFileSync(resultsFile, "utf8").split("\n")) {
  const m = line.match(/^\| `([^`]+)` \| (.+?) \| (?:[a-d]|open) \| (Flaky:)?/);
  if (m) {
    listed.add(`${m[1]} | ${m[2]}`);
    if (m[3]) {
      flaky.add(`${m[1]} | ${m[2]}`);
    }
  }
}
let bad = 0;
const failed = new Set(failing.map((f) => `${f.file} | ${cell(f.title)}`));
for (const key of failed) {
  if (!listed.has(key)) {
    console.log(`  NOT IN RESULTS.md: ${key}`);
    bad++;
  }
}
for (const t of report.passes) {
  const key = `${rel(t.file)} | ${cell(t.fullTitle)}`;
  if (listed.has(key) && !flaky.has(key)) {
    console.log(`  PASSES BUT LISTED IN RESULTS.md: ${key}`);
    bad++;
  }
}
console.log(bad === 0 ? "every failure is classified in RESULTS.md" : `${bad} failures not matching RESULTS.md`);
process.exit(bad === 0 ? 0 : 1);
