// GitHub's own workflow parser and expression evaluator, as a line-oriented JSON service
// for the Python test executor (tests/testing/executor.py). One request per line:
//   {"op": "parse", "file": PATH}  -> {"tree": WORKFLOW, "errors": [...]}
//        every value as plain JSON, every `${{ }}` as {"$expr": EXPR}: the parser's own
//        expression (embedded text becomes format(...)), so the executor evaluates nothing itself
//   {"op": "eval", "expr": EXPR, "context": {...}, "status": {...}} -> {"value": ...}
//   {"op": "cond", ...same}  -> {"value": true|false}: an `if:`, with GitHub's implicit
//        success() added when it calls no status function
import { register } from "node:module";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

register(new URL("./json-hooks.mjs", import.meta.url));
const { parseWorkflow, NoOperationTraceWriter } = await import("@actions/workflow-parser");
const tokens = await import("@actions/workflow-parser/templates/tokens/index");
const { ensureStatusFunction } = await import("@actions/workflow-parser/model/converter/if-condition");
const { Lexer, Parser, Evaluator, data } = await import("@actions/expressions");

function plain(token) {
  if (token instanceof tokens.MappingToken) {
    const out = {};
    for (let i = 0; i < token.count; i++) {
      const pair = token.get(i);
      out[pair.key.toString()] = plain(pair.value);
    }
    return out;
  }
  if (token instanceof tokens.SequenceToken) {
    const out = [];
    for (let i = 0; i < token.count; i++) out.push(plain(token.get(i)));
    return out;
  }
  if (token instanceof tokens.BasicExpressionToken) return { $expr: token.expression };
  if (token instanceof tokens.NullToken) return null;
  if (token instanceof tokens.LiteralToken) return token.value;
  throw new Error(`unexpected token ${token.constructor.name}`);
}

const STATUS = ["success", "failure", "cancelled", "always"];

function evaluate(expr, context, status) {
  const names = Object.keys(context);
  const functions = STATUS.map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
  const lexed = new Lexer(expr).lex();
  const tree = new Parser(lexed.tokens, names, functions).parse();
  const impl = new Map(STATUS.map((name) => [name, {
    name, minArgs: 0, maxArgs: 0,
    call: () => new data.BooleanData(name === "always" ? true : Boolean(status[name])),
  }]));
  const contextData = JSON.parse(JSON.stringify(context), data.reviver);
  return new Evaluator(tree, contextData, impl).evaluate();
}

function toPlain(value) {
  return JSON.parse(JSON.stringify(value, data.replacer) ?? "null");
}

function handle(request) {
  if (request.op === "parse") {
    const content = readFileSync(request.file, "utf8");
    const result = parseWorkflow({ name: request.file, content }, new NoOperationTraceWriter());
    const errors = result.context.errors.getErrors().map((e) => e.message);
    return { tree: result.value ? plain(result.value) : null, errors };
  }
  const status = request.status || { success: true };
  if (request.op === "eval") return { value: toPlain(evaluate(request.expr, request.context, status)) };
  if (request.op === "cond") {
    // The contexts must be named for ensureStatusFunction to parse the condition: unparsed, it would
    // come back without GitHub's implicit success() (a step after a failure would still run).
    const allowed = { allowedContext: Object.keys(request.context || {}) };
    const value = evaluate(ensureStatusFunction(request.expr.trim() || "success()", allowed), request.context, status);
    return { value: value.coerceBoolean ? value.coerceBoolean() : Boolean(toPlain(value)) };
  }
  throw new Error(`unknown op ${request.op}`);
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let answer;
  try {
    answer = handle(JSON.parse(line));
  } catch (error) {
    answer = { error: String(error && error.stack || error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
