"""JSON encoding: orjson when installed (5–10× faster on the matrix's 1,820 rows), else
the standard library, with byte-identical canonical output either way for JSON data
(ints, strings, booleans, null; plain floats). The canonical form is the one every
fingerprint hashes: rows (matrix), resolved recipes (launch), changelog items (diff)."""

from __future__ import annotations

import json
import math

try:
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    orjson = None


def canonical(value, default=None) -> bytes:
    """Sorted keys, `,`/`:` separators, ASCII-escaped: the form recipe fingerprints hash.
    ``default`` turns other values (e.g. YAML dates) into JSON; such values take the standard
    library path, whose output for them orjson does not reproduce."""
    if orjson is not None and default is None:
        try:
            text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # an integer past 64 bits, nesting past 255: the standard library takes it
            text = b"\x80"
        if text.isascii():  # orjson writes UTF-8; only non-ASCII text needs the escaping encoder
            return text
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=default).encode("ascii")


def dumps(value) -> str:
    """Compact JSON text of the rows (order kept)."""
    if orjson is not None:
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:  # an integer past 64 bits: the standard library writes it
            pass
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


INT_RANGE = (-(2**63), 2**64)  # what orjson (canonical, dumps) can write
MAX_DEPTH = 200  # as for YAML (infx.yamlio.MAX_DEPTH): deeper data would overflow recursive readers downstream


class JSONProblem(ValueError):
    """Text that is not one JSON document infx can use, with where (1-based) when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


def parse(text: str | bytes):
    """One JSON document, or JSONProblem: syntax errors located; integers past 64 bits, NaN and
    infinities, and nesting deeper than MAX_DEPTH refused instead of raising whatever the
    decoder (or a consumer, later) happens to raise."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise JSONProblem(f"nested deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError as exc:
        raise JSONProblem(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except ValueError as exc:  # the integer digit limit, and nothing else json.loads raises
        raise JSONProblem(f"a number is too long to read ({str(exc).split(':')[0]})") from None
    _check_shape(data)
    return data


def _check_shape(data) -> None:
    """Nesting within MAX_DEPTH, integers within 64 bits, floats finite: what every consumer
    (orjson, arithmetic on counts) can take. One walk, level by level, no recursion."""
    level = [data]
    for _ in range(MAX_DEPTH + 1):
        for item in level:
            if type(item) is int and not INT_RANGE[0] <= item < INT_RANGE[1]:
                raise JSONProblem("a number is outside the 64-bit integer range")
            if type(item) is float and not math.isfinite(item):
                raise JSONProblem("a number is not finite (NaN, Infinity or past 1.8e308)")
        level = [child for item in level if isinstance(item, (dict, list))
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return
    raise JSONProblem(f"nested deeper than {MAX_DEPTH} levels")


# The JSON Schema type names and the Python values that are each (an integral float is an integer).
JSON_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}
