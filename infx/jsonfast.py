"""JSON in and out. Reading: one strict reader (``parse``, ``read``) for every JSON file infx
takes. Writing: ``text`` (strict: allow_nan=False), and orjson when installed (5–10× faster on
the matrix's 1,820 rows), else the standard library, with byte-identical canonical output
either way for JSON data (ints, strings, booleans, null; plain floats). The canonical form is
the one every fingerprint hashes: rows (matrix), resolved recipes (launch), changelog items
(diff)."""

from __future__ import annotations

import json
import math
import re

from .fsio import read_bytes

try:
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    orjson = None  # type: ignore[assignment]  # the module, or None where orjson is not installed


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
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN_KEY = 40  # characters of a key shown in a path


class JSONProblem(ValueError):
    """Text that is not one JSON document infx can use: what is wrong, where in the text
    (1-based line and column) when known, and at which key path (``$.a.b[3]``) when known.
    ``file`` names the file once a reader knows it; str() is the whole located sentence."""

    def __init__(
        self,
        message: str,
        line: int | None = None,
        column: int | None = None,
        path: str | None = None,
        file: str | None = None,
    ):
        self.message = f"{message} at {path}" if path else message
        super().__init__(self.message)
        self.line, self.column, self.path, self.file = line, column, path, file

    def __str__(self) -> str:
        return f"{self.file}: {self.message}" if self.file else self.message


class _Duplicated(dict):
    """An object whose text named a key twice (which would silently win): refused by the walk."""

    duplicate: str = ""


def _pairs(pairs: list) -> dict:
    data = dict(pairs)
    if len(data) == len(pairs):
        return data
    marked = _Duplicated(data)
    seen: set = set()
    marked.duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]  # add's None: not seen
    return marked


def parse(text: str | bytes):
    """One strict JSON document (RFC 8259 with I-JSON's limits, RFC 7493), or JSONProblem.

    Refused, each with the key path where it is: NaN, Infinity and -Infinity (not JSON, though
    Python writes them), numbers past the float range (1e400) or the 64-bit integer range, a key
    named twice in one object (JSON leaves which one wins open), text that is not Unicode (a lone
    surrogate, bytes that are not UTF-8), and nesting deeper than MAX_DEPTH. Syntax errors are
    located by line and column."""
    try:
        data = json.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise JSONProblem(f"nested deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError as exc:
        raise JSONProblem(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except ValueError as exc:  # the integer digit limit, and nothing else json.loads raises
        raise JSONProblem(f"a number is too long to read ({str(exc).split(':')[0]})") from None
    if _problem_at(data) is not None:
        raise _located(data)
    return data


def check(data) -> None:
    """JSONProblem unless ``data`` (already decoded, e.g. by a zip reader or another JSON
    library) keeps the limits ``parse`` enforces."""
    if _problem_at(data) is not None:
        raise _located(data)


def _problem(item) -> str | None:
    kind = type(item)
    if kind is float:
        if math.isfinite(item):
            return None
        return (
            "NaN is not a JSON number"
            if item != item
            else f"{'-' if item < 0 else ''}Infinity (or a number beyond the float range, such as 1e400) is not a "
            "JSON number"
        )
    if kind is int:
        return None if INT_RANGE[0] <= item < INT_RANGE[1] else "a number is outside the 64-bit integer range"
    if kind is str:
        return (
            None if item.isascii() or not _SURROGATE.search(item) else "a string is not Unicode text (a lone surrogate)"
        )
    if kind is _Duplicated:
        return f"the key {_shown_key(item.duplicate)} appears twice in one object (which one counts is undefined)"
    if kind is dict:
        for key in item:
            if not key.isascii() and _SURROGATE.search(key):
                return "a key is not Unicode text (a lone surrogate)"
    return None


def _plain_numbers(items: list) -> bool:
    """True when every item is a number within the limits, decided in C (sum, min, max) instead of
    item by item: a result file's per-request latencies are millions of numbers. False means
    "look at each item" (a string among them, or a sum that is not finite), not a problem."""
    if not items:
        return True
    try:
        total = sum(items)
        return (
            (math.isfinite(total) if type(total) is float else True)
            and INT_RANGE[0] <= min(items)
            and max(items) < INT_RANGE[1]
        )
    except (TypeError, OverflowError):
        return False


def _problem_at(data) -> int | None:
    """The depth of the first problem (a cheap walk, level by level, no recursion), or None.
    The common kinds are checked inline: a result file holds tens of thousands of values."""
    isfinite, low, high, surrogate = math.isfinite, INT_RANGE[0], INT_RANGE[1], _SURROGATE.search
    level = [data]
    for depth in range(MAX_DEPTH + 1):
        below: list = []
        for item in level:
            kind = type(item)
            if kind is str:
                if not item.isascii() and surrogate(item):
                    return depth
            elif kind is float:
                if not isfinite(item):
                    return depth
            elif kind is int:
                if not low <= item < high:
                    return depth
            elif kind is list:
                if not _plain_numbers(item):
                    below.extend(item)
            elif kind is dict or kind is _Duplicated:
                if kind is _Duplicated or not "".join(item).isascii() and _problem(item) is not None:
                    return depth
                below.extend(item.values())
        if not below:
            return None
        level = below
    return MAX_DEPTH + 1


def _shown_key(key: str) -> str:
    shown = json.dumps(key[:_SHOWN_KEY] + ("…" if len(key) > _SHOWN_KEY else ""), ensure_ascii=True)
    return shown


def _step(path: str, key) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    simple = key.isascii() and key.replace("-", "").replace("_", "").isalnum() and len(key) <= _SHOWN_KEY
    return f"{path}.{key}" if simple else f"{path}[{_shown_key(key)}]"


def _located(data) -> JSONProblem:
    """The first problem again, this time with its key path (walked only when there is one)."""
    level = [(data, "$")]
    for _ in range(MAX_DEPTH + 1):
        for item, path in level:
            message = None if isinstance(item, list) or item is None or type(item) is bool else _problem(item)
            if message is not None:
                return JSONProblem(message, path=path)
        level = [
            (child, _step(path, key))
            for item, path in level
            if isinstance(item, (dict, list))
            for key, child in (item.items() if isinstance(item, dict) else enumerate(item))
        ]
        if not level:
            break
    deepest = level[0][1] if level else "$"
    return JSONProblem(
        f"nested deeper than {MAX_DEPTH} levels", path=deepest[:120] + ("…" if len(deepest) > 120 else "")
    )


def read(path, limit: int):
    """The strict JSON document in a regular file of at most ``limit`` bytes, never through a
    symbolic link and never from a FIFO or device: JSONProblem (naming the file) for what it
    holds, UnusablePath or the OSError of the open for the file itself (fsio.read_bytes)."""
    raw = read_bytes(path, limit, follow_symlinks=False, refuse_larger=True)
    try:
        return parse(raw)
    except JSONProblem as exc:
        exc.file = str(path)
        raise


def text(value, indent: int | None = None, sort_keys: bool = False, ascii_only: bool = False) -> str:
    """JSON text infx writes: strict (allow_nan=False: a NaN or an infinity reaching a writer is a
    bug, never written as the non-JSON `NaN`); UTF-8 unless ``ascii_only``."""
    return json.dumps(value, indent=indent, sort_keys=sort_keys, allow_nan=False, ensure_ascii=ascii_only)


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
