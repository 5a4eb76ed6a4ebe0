"""A small evaluator of GitHub Actions expressions, enough to run our workflows' real
`if:`, `matrix:`, `with:` and `concurrency:` expressions over event cases.

Semantics follow GitHub's documentation: `&&`/`||` return an operand (not a bool),
string comparison ignores case, mismatched types compare as numbers, `a.*.b` filters
an array of objects, and a missing property is null.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,*])|(?P<ident>[A-Za-z_][A-Za-z0-9_-]*))"
)
STATUS_FUNCTIONS = ("always", "success", "failure", "cancelled")


def tokenize(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise SyntaxError(f"cannot read expression at {text[pos:]!r}")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return tokens


@dataclass
class Context:
    """Contexts by name (github, inputs, needs, matrix, steps, ...) and job status."""

    values: dict = field(default_factory=dict)
    needs_ok: bool = True
    needs_failed: bool = False
    cancelled: bool = False


def truthy(value) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (None, False, 0, "")


def to_number(value) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value) if value.strip() else 0.0
        except ValueError:
            return math.nan
    return math.nan


def to_string(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def equal(a, b) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    if type(a) is type(b):
        return a == b
    return to_number(a) == to_number(b)


def _function(name: str, args: list, ctx: Context):
    if name == "contains":
        haystack, needle = args
        if isinstance(haystack, list):
            return any(equal(item, needle) for item in haystack)
        return to_string(needle).lower() in to_string(haystack).lower()
    if name == "startsWith":
        return to_string(args[0]).lower().startswith(to_string(args[1]).lower())
    if name == "endsWith":
        return to_string(args[0]).lower().endswith(to_string(args[1]).lower())
    if name == "format":
        template, rest = to_string(args[0]), args[1:]
        return re.sub(r"\{(\d+)\}", lambda m: to_string(rest[int(m.group(1))]), template)
    if name == "join":
        items = args[0]
        separator = to_string(args[1]) if len(args) > 1 else ","
        return separator.join(to_string(i) for i in items) if isinstance(items, list) else to_string(items)
    if name == "fromJSON":
        return json.loads(to_string(args[0]))
    if name == "toJSON":
        return json.dumps(args[0], indent=2)
    if name == "always":
        return True
    if name == "success":
        return ctx.needs_ok and not ctx.cancelled
    if name == "failure":
        return ctx.needs_failed
    if name == "cancelled":
        return ctx.cancelled
    raise NameError(f"unknown function {name}()")


class Parser:
    def __init__(self, text: str, ctx: Context):
        self.tokens = tokenize(text)
        self.pos = 0
        self.ctx = ctx

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)

    def take(self, value: str | None = None):
        token = self.peek()
        if value is not None and token[1] != value:
            raise SyntaxError(f"expected {value!r}, found {token[1]!r}")
        self.pos += 1
        return token

    def parse(self):
        value = self.or_()
        if self.pos != len(self.tokens):
            raise SyntaxError(f"unexpected {self.peek()[1]!r}")
        return value

    def or_(self):
        value = self.and_()
        while self.peek()[1] == "||":
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self):
        value = self.equality()
        while self.peek()[1] == "&&":
            self.take()
            right = self.equality()
            value = right if truthy(value) else value
        return value

    def equality(self):
        value = self.comparison()
        while self.peek()[1] in ("==", "!="):
            op = self.take()[1]
            right = self.comparison()
            value = equal(value, right) if op == "==" else not equal(value, right)
        return value

    def comparison(self):
        value = self.unary()
        while self.peek()[1] in ("<", ">", "<=", ">="):
            op = self.take()[1]
            a, b = to_number(value), to_number(self.unary())
            value = {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        return value

    def unary(self):
        if self.peek()[1] == "!":
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self):
        value, filtered = self.primary(), False
        while self.peek()[1] in (".", "["):
            if self.take()[1] == ".":
                kind, name = self.take()
                if name == "*":
                    value, filtered = (list(value) if isinstance(value, list) else []), True
                    continue
                value = self._property(value, name, filtered)
            else:
                key = self.or_()
                self.take("]")
                value = self._property(value, to_string(key) if not isinstance(key, float) else key, filtered)
        return value

    @staticmethod
    def _property(value, key, filtered: bool):
        if filtered:
            return [item.get(key) for item in value if isinstance(item, dict)]
        if isinstance(value, dict):
            lowered = {str(k).lower(): v for k, v in value.items()}
            return lowered.get(str(key).lower())
        if isinstance(value, list) and isinstance(key, float):
            index = int(key)
            return value[index] if 0 <= index < len(value) else None
        return None

    def primary(self):
        kind, text = self.take()
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return float(text)
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind == "ident":
            if text in ("true", "false"):
                return text == "true"
            if text == "null":
                return None
            if self.peek()[1] == "(":
                self.take("(")
                args = []
                while self.peek()[1] != ")":
                    args.append(self.or_())
                    if self.peek()[1] == ",":
                        self.take()
                self.take(")")
                return _function(text, args, self.ctx)
            return self.ctx.values.get(text)
        raise SyntaxError(f"unexpected {text!r}")


def evaluate(expression: str, ctx: Context):
    return Parser(expression, ctx).parse()


EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def render(template, ctx: Context):
    """A YAML value with `${{ }}` parts: one whole expression keeps its type."""
    if not isinstance(template, str):
        return template
    parts = list(EXPRESSION.finditer(template.strip()))
    if len(parts) == 1 and parts[0].span() == (0, len(template.strip())):
        return evaluate(parts[0].group(1), ctx)
    return EXPRESSION.sub(lambda m: to_string(evaluate(m.group(1), ctx)), template)


def condition(text, ctx: Context) -> bool:
    """A job or step `if:`; without a status function GitHub adds `success() &&`."""
    if text is None:
        return _function("success", [], ctx)
    if isinstance(text, bool):
        return text
    body = text.strip()
    parts = list(EXPRESSION.finditer(body))
    if len(parts) == 1 and parts[0].span() == (0, len(body)):
        body = parts[0].group(1)
    if not any(re.search(rf"\b{name}\s*\(", body) for name in STATUS_FUNCTIONS):
        if not _function("success", [], ctx):
            return False
    return truthy(evaluate(body, ctx))


def expressions_in(text: str) -> list[str]:
    return [m.group(1).strip() for m in EXPRESSION.finditer(text)]
