// LangGraph.js's side of TestLangGraphJSStoreBatch (store/langgraphjs_test.go): runs the
// batches of store_batches.json, one after the other, on an InMemoryStore with its batch method,
// and prints each op's result as JSON: a get's item (null when missing), a search's items, a
// namespace listing's namespaces, null for a put or a delete. Items keep namespace, key and
// value (times differ between runs).
import { InMemoryStore } from "@langchain/langgraph";
import { readFileSync } from "node:fs";

const batches = JSON.parse(readFileSync(new URL("./store_batches.json", import.meta.url)));
const toOp = (o) => {
  switch (o.op) {
    case "put":
      return { namespace: o.ns, key: o.key, value: o.value };
    case "delete":
      return { namespace: o.ns, key: o.key, value: null };
    case "get":
      return { namespace: o.ns, key: o.key };
    case "search":
      return { namespacePrefix: o.prefix, filter: o.filter, limit: o.limit, offset: o.offset ?? 0 };
    case "list": {
      const matchConditions = [];
      if (o.prefix) matchConditions.push({ matchType: "prefix", path: o.prefix });
      if (o.suffix) matchConditions.push({ matchType: "suffix", path: o.suffix });
      return { matchConditions, maxDepth: o.max_depth, limit: o.limit ?? 100, offset: o.offset ?? 0 };
    }
  }
  throw new Error("unknown op " + o.op);
};
const item = (it) => ({ namespace: it.namespace, key: it.key, value: it.value });

const s = new InMemoryStore();
const out = [];
for (const batch of batches) {
  const results = await s.batch(batch.map(toOp));
  out.push(
    results.map((r, i) => {
      switch (batch[i].op) {
        case "get":
          return r ? item(r) : null;
        case "search":
          return r.map(item);
        case "list":
          return r;
        default:
          return null;
      }
    }),
  );
}
process.stdout.write(JSON.stringify(out));
