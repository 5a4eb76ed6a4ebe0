"""Hypothesis generators of hostile input: explicit YAML tags with any value, numbers past every
limit, deep nesting, values of the wrong type at real paths of real documents, hostile
strings, and odd files (folders, FIFOs, device nodes, symlink loops, names too long)."""

from __future__ import annotations

import copy
import email.utils
import io
import json
import os
import stat
import time
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from hypothesis import strategies as st

TAGS = [
    "!!bool",
    "!!int",
    "!!float",
    "!!null",
    "!!str",
    "!!timestamp",
    "!!binary",
    "!!set",
    "!!omap",
    "!!merge",
    "!!python/object:os.system",
    "!custom",
    "!<tag:yaml.org,2002:int>",
    "!!seq",
    "!!map",
]
TRICKY_SCALARS = [
    "maybe",
    "",
    '""',
    "''",
    "0x",
    "0b2",
    "0o9",
    "-",
    "+",
    "_",
    "1_",
    "1e999",
    "-.inf",
    ".nan",
    "~",
    "null",
    "yes",
    "On",
    "2026-13-45",
    "2026-08-21",
    "12:30:00",
    "0",
    "-0",
    "1.0",
    "[1]",
    "{a: 1}",
    "&a",
    "*a",
    "9" * 4301,
    "9" * 5000,
    "1" + "0" * 400,
    "é",
    "\\x00",
    "'quoted'",
]
HUGE_NUMBERS = st.sampled_from(
    [
        "9" * 20,
        "9" * 4300,
        "9" * 4301,
        "9" * 5000,
        "-" + "9" * 5000,
        "1e400",
        "1" + "0" * 5000 + ".5",
        "0x" + "f" * 5000,
        "18446744073709551616",
    ]
)
HOSTILE_TEXT = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "\n",
            "a\nb",
            "../../etc/passwd",
            "/abs/path",
            "-x",
            "--upload-pack=touch x;",
            "$(id)",
            "`id`",
            "a;b",
            "'",
            '"',
            "\\",
            "\t",
            "\r\n",
            "x" * 300,
            "x" * 5000,
            "🙂",
            "\u202e",
            "\x00",
            "\udcff",
            "%0A",
            "CONFIG_FILE=",
            "CONFIG_FILE=recipes/../../x",
            "JobState=COMPLETED",
            "::error::x",
            "${{ github.token }}",
        ]
    ),
    st.text(max_size=12),
)
# What a command line can carry: no NUL (argv is C strings); undecodable bytes arrive as surrogates.
ARGV_TEXT = HOSTILE_TEXT.map(lambda text: text.replace("\x00", ""))
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    HOSTILE_TEXT,
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(HOSTILE_TEXT, inner, max_size=3)),
    max_leaves=8,
)
DEPTHS = st.sampled_from([1, 5, 50, 199, 200, 201, 999, 5000, 100_000])


def nested_json(depth: int, kind: str) -> str:
    return "[" * depth + "]" * depth if kind == "array" else '{"a":' * depth + "1" + "}" * depth


def nested_yaml(depth: int, kind: str) -> str:
    if kind == "flow":
        return "a: " + "[" * depth + "]" * depth + "\n"
    return (
        "".join("  " * level + f"k{level}:\n" for level in range(min(depth, 3000))) + "  " * min(depth, 3000) + "x: 1\n"
    )


@st.composite
def tagged_scalar(draw) -> str:
    return f"{draw(st.sampled_from(TAGS))} {draw(st.one_of(st.sampled_from(TRICKY_SCALARS), st.text(max_size=6)))}"


def paths_of(data, prefix=()) -> list[tuple]:
    """Every path into plain data (keys and indexes), the root included."""
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths_of(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += paths_of(value, prefix + (index,))
    return found


def replaced(data, path: tuple, value):
    data = copy.deepcopy(data)
    if not path:
        return value
    target = data
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return data


@st.composite
def mutated(draw, document, values=JSON_VALUES):
    """``document`` with the value at one (or two) of its real paths replaced, or deleted."""
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(paths_of(document)))
        if path and draw(st.integers(0, 5)) == 0:
            document = copy.deepcopy(document)
            target = document
            for part in path[:-1]:
                target = target[part]
            del target[path[-1]]
        else:
            document = replaced(document, path, draw(values))
    return document


@st.composite
def yaml_text(draw, document) -> str:
    """A YAML document: a mutated real one, a tagged or huge scalar spliced into real text, deep
    nesting, or raw bytes of no YAML at all."""
    kind = draw(st.sampled_from(["mutated", "tag", "huge", "deep", "raw"]))
    if kind == "mutated":
        return yaml.safe_dump(draw(mutated(document)), sort_keys=False, allow_unicode=True)
    text = yaml.safe_dump(document, sort_keys=False)
    lines = text.splitlines()
    index = draw(st.integers(0, len(lines) - 1))
    line = lines[index]
    head = line.split(":", 1)[0] if ":" in line else line
    if kind == "tag":
        lines[index] = (
            f"{head}: {draw(tagged_scalar())}" if ":" in line else f"{head.split('-')[0]}- {draw(tagged_scalar())}"
        )
    elif kind == "huge":
        lines[index] = f"{head}: {draw(HUGE_NUMBERS)}" if ":" in line else line
    elif kind == "deep":
        return nested_yaml(draw(DEPTHS), draw(st.sampled_from(["flow", "block"])))
    else:
        return draw(
            st.one_of(
                st.text(max_size=40),
                st.sampled_from(
                    [
                        "\t- a",
                        "a: &a [*a]",
                        "a: b: c",
                        "- [",
                        "%YAML 9.9\n---\na: 1",
                        "a: 1\na: 2",
                        "\ufeffa: 1",
                        "--- a\n--- b",
                    ]
                ),
            )
        )
    return "\n".join(lines) + "\n"


@st.composite
def json_text(draw, document) -> str:
    """A JSON document: a mutated real one, a huge number or deep nesting spliced in, or garbage."""
    kind = draw(st.sampled_from(["mutated", "mutated", "huge", "deep", "raw"]))
    if kind == "mutated":
        return json.dumps(draw(mutated(document)), indent=draw(st.sampled_from([None, 1])))
    if kind == "huge":
        path = draw(st.sampled_from([p for p in paths_of(document) if p]))
        marker = "\u0000HUGE\u0000"
        return json.dumps(replaced(document, path, marker)).replace(json.dumps(marker), draw(HUGE_NUMBERS))
    if kind == "deep":
        path = draw(st.sampled_from(paths_of(document)))
        marker = "\u0000DEEP\u0000"
        return json.dumps(replaced(document, path, marker)).replace(
            json.dumps(marker), nested_json(draw(DEPTHS), draw(st.sampled_from(["array", "object"])))
        )
    return draw(
        st.one_of(
            st.text(max_size=40),
            st.sampled_from(
                ["", "{", "[1,]", "NaN", '{"a": Infinity}', "\ufeff{}", '{"a":1}{"b":2}', "\ud800", "null", "[]", "0"]
            ),
        )
    )


class OddFiles:
    """Paths that are not plain readable files, made once in ``folder``."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        (folder / "a-folder").mkdir(exist_ok=True)
        if not (folder / "a-fifo").exists():
            os.mkfifo(folder / "a-fifo")
        for name, target in (("loop-a", "loop-b"), ("loop-b", "loop-a"), ("dangling", "nowhere/at/all")):
            if not os.path.lexists(folder / name):
                (folder / name).symlink_to(folder / target)
        (folder / "not-utf8").write_bytes(b"\xff\xfe\x00a: \x80\n")
        (folder / "empty").write_bytes(b"")
        self.paths = [
            str(folder / "a-folder"),
            str(folder / "a-fifo"),
            "/dev/null",
            "/dev/zero",
            "/dev/full",
            str(folder / "loop-a"),
            str(folder / "dangling"),
            str(folder / "missing"),
            str(folder / "a-folder" / "new" / "deeper"),
            str(folder / ("n" * 300)),
            "x" * 5000,
            str(folder / "not-utf8"),
            str(folder / "empty"),
            "",
            "-",
            ".",
            "..",
            str(folder / "a-fifo" / "under"),
            str(folder / "loop-a" / "x"),
            str(folder / "\udcff"),
        ]

    def strategy(self):
        return st.sampled_from(self.paths)


# --- a point's artifact: where a result file or a launch record would be, something else ------------

ODD_PLACEMENTS = [
    "fifo",
    "link-to-device",
    "link-to-file",
    "dangling-link",
    "folder",
    "sparse-huge",
    "empty",
    "not-utf8",
    "deep-folders",
]


def place_odd(path: Path, kind: str, elsewhere: Path) -> None:
    """Put at ``path`` (a file's place in an artifact) what a bad upload or a hostile job leaves."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-to-device":
        path.symlink_to("/dev/zero")
    elif kind == "link-to-file":
        path.symlink_to(elsewhere)
    elif kind == "dangling-link":
        path.symlink_to(path.parent / "nowhere")
    elif kind == "folder":
        path.mkdir()
    elif kind == "sparse-huge":
        path.write_bytes(b"{")
        os.truncate(path, (1 << 30) + 2)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "not-utf8":
        path.write_bytes(b'{"a": "\xff\xfe"}')
    else:  # folders nested far deeper than any listing goes, where the file was
        os.makedirs(str(path) + "/d" * 400)


NONFINITE = st.sampled_from(
    [
        "NaN",
        "Infinity",
        "-Infinity",
        "1e400",
        "-1e999",
        "18446744073709551616",
        '"12.5"',
        '"fast"',
        "true",
        "null",
        "[]",
        "{}",
    ]
)


@st.composite
def result_json_text(draw, document) -> str:
    """A result file or launch record: json_text's forms, plus a number JSON does not have (or a
    string, a boolean) at a real key, and a key named twice."""
    kind = draw(st.sampled_from(["text", "text", "nonfinite", "duplicate"]))
    if kind == "text":
        return draw(json_text(document))
    path = draw(st.sampled_from([p for p in paths_of(document) if p and isinstance(p[-1], str)]))
    if kind == "nonfinite":
        marker = "\u0000VALUE\u0000"
        return json.dumps(replaced(document, path, marker)).replace(json.dumps(marker), draw(NONFINITE))
    text = json.dumps(document)
    key = json.dumps(path[-1])
    return text.replace(f"{key}: ", f"{key}: {draw(NONFINITE)}, {key}: ", 1)


# --- GitHub's answers on a bad day, and the archives it serves -----------------------------------------

HTTP_STATUSES = [200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 409, 410, 422, 429, 500, 502, 503, 504]
RETRY_AFTER = st.sampled_from(
    [
        "0",
        "1",
        "99999",
        "-1",
        "1e3",
        "soon",
        "",
        " 2 ",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "future-date",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Mon, 99 Foo 2026 99:99:99 GMT",
        "9" * 400,
    ]
)
RESET = st.sampled_from(["now+1", "0", "-5", "x", "9" * 30, "1e308", "nan", ""])
HTML_PAGE = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>Unicorn!</body></html>"


@dataclass(frozen=True)
class HttpFault:
    """A change to one real answer of the API or of blob storage (drawn up front, applied by the server)."""

    kind: str
    status: int = 200
    retry_after: str = "1"
    reset: str = "now+1"
    value: object = None
    choice: int = 0
    fraction: float = 0.5
    raw: bytes = b""

    def __call__(self, status: int, headers: dict, payload):
        body = payload if isinstance(payload, bytes) else (b"" if payload is None else json.dumps(payload).encode())
        if self.kind == "status":
            return self.status, headers, payload, None
        if self.kind == "limit":
            fields = (
                {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": _reset(self.reset)}
                if self.choice % 2
                else {"Retry-After": _retry_after(self.retry_after)}
            )
            return self.status, {**headers, **fields}, {"message": "You have exceeded a secondary rate limit."}, None
        if self.kind == "html":
            return self.status, {"Content-Type": "text/html"}, HTML_PAGE, None
        if self.kind == "cut":
            return status, headers, body[: int(len(body) * self.fraction)], len(body) + 1 + self.choice % 1000
        if self.kind == "short":  # a whole HTTP answer whose body stops early
            return status, headers, body[: int(len(body) * self.fraction)], None
        if self.kind == "json" and isinstance(payload, (dict, list)):
            paths = paths_of(payload)
            path = paths[self.choice % len(paths)]
            return status, headers, replaced(payload, path, self.value), None
        if self.kind == "redirect":
            where = ["javascript:alert(1)", "", "//elsewhere", "http://127.0.0.1:1/nowhere", "ftp://x/y"][
                self.choice % 5
            ]
            return 302, {"Location": where}, None, None
        return status, headers, self.raw, None  # bytes: anything at all


def _retry_after(value: str) -> str:
    return email.utils.formatdate(time.time() + 1, usegmt=True) if value == "future-date" else value


def _reset(value: str) -> str:
    return str(int(time.time()) + 1) if value == "now+1" else value


@st.composite
def http_faults(draw) -> HttpFault:
    kind = draw(st.sampled_from(["status", "limit", "html", "cut", "short", "json", "json", "redirect", "bytes"]))
    return HttpFault(
        kind,
        draw(st.sampled_from(HTTP_STATUSES if kind != "limit" else [403, 429, 503])),
        draw(RETRY_AFTER),
        draw(RESET),
        draw(JSON_VALUES),
        draw(st.integers(0, 10**6)),
        draw(st.floats(0, 1)),
        draw(st.binary(max_size=64)),
    )


@st.composite
def faults_by_request(draw, first: int = 0, last: int = 20) -> dict:
    """Up to three requests of a command (by their number) answered hostilely."""
    return draw(st.dictionaries(st.integers(first, last), http_faults(), max_size=3))


def _zip(members: list, method=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for info, data in members:
            archive.writestr(info, data)
    return buffer.getvalue()


def _info(name: str, mode: int | None = None) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    if mode is not None:
        info.external_attr = mode << 16
    return info


@cache
def zip_bomb() -> bytes:
    """64 MiB of zeros in about 64 KiB (made once)."""
    return _zip([(_info("zeros.log"), b"\0" * (64 << 20))])


def _patched(archive: bytes, field: str, value: int) -> bytes:
    """The archive with a field of its central directory entries changed (a lying header)."""
    data = bytearray(archive)
    offsets = {"size": (24, "<I"), "method": (10, "<H"), "flags": (8, "<H")}
    at, form = offsets[field]
    start = data.find(b"PK\x01\x02")
    while start != -1:
        import struct

        struct.pack_into(form, data, start + at, value)
        start = data.find(b"PK\x01\x02", start + 4)
    return bytes(data)


@st.composite
def hostile_archive(draw, files: dict) -> bytes:
    """A zip archive an artifact download may bring: the real one with a file's JSON mutated, or
    one that reaches outside its folder, links, lies about sizes, bombs, or is no zip at all."""
    kind = draw(
        st.sampled_from(
            [
                "mutated",
                "traversal",
                "absolute",
                "symlink",
                "fifo",
                "duplicate",
                "many",
                "lying-size",
                "bomb",
                "cut",
                "garbage",
                "encrypted",
                "method",
                "long-name",
                "empty-name",
                "empty",
            ]
        )
    )
    members = [(_info(name), text) for name, text in files.items()]
    if kind == "mutated" and files:
        name = draw(st.sampled_from(sorted(files)))
        try:
            document = json.loads(files[name])
        except (ValueError, TypeError):
            document = {"a": 1}
        text = draw(json_text(document)).encode("utf-8", "surrogatepass")
        return _zip([(info, text if info.filename == name else data) for info, data in members])
    extra = {
        "traversal": [(_info("../../escaped.json"), b"{}")],
        "absolute": [(_info("/tmp/infx-absolute.json"), b"{}")],
        "symlink": [(_info("linked.json", stat.S_IFLNK | 0o777), b"/etc/passwd")],
        "fifo": [(_info("a-fifo", stat.S_IFIFO | 0o644), b"")],
        "duplicate": members[:1],
        "long-name": [(_info("n" * 5000), b"{}")],
        "empty-name": [(_info("/"), b"")],
    }
    if kind in extra:
        return _zip(members + extra[kind])
    if kind == "many":
        return _zip([(_info(f"f{n}.json"), b"{}") for n in range(10_001)], zipfile.ZIP_STORED)
    if kind == "lying-size":
        return _patched(_zip(members), "size", 0xFFFFFFF0)
    if kind == "bomb":
        return zip_bomb()
    if kind == "cut":
        whole = _zip(members)
        return whole[: draw(st.integers(0, max(0, len(whole) - 1)))]
    if kind == "encrypted":
        return _patched(_zip(members), "flags", 0x1)
    if kind == "method":
        return _patched(_zip(members), "method", 99)
    if kind == "empty":
        return _zip([])
    return draw(st.binary(max_size=200))
