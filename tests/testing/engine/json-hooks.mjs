// @actions/workflow-parser imports its JSON schema without an import attribute, which
// Node 20 refuses; this loader hook serves .json modules as JSON.
import { readFile } from "node:fs/promises";

export async function load(url, context, nextLoad) {
  if (url.startsWith("file:") && url.endsWith(".json")) {
    return { format: "json", source: await readFile(new URL(url), "utf8"), shortCircuit: true };
  }
  return nextLoad(url, context);
}
