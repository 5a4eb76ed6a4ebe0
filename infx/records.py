"""Records bound to their JSON Schema: one way to read a record from its JSON and write it back.

A record is a frozen dataclass that subclasses :class:`Record` and names the schema part it
holds (``SCHEMA``, a file of infx/schemas/, and ``POINTER``, the path of keys to the object
whose ``properties`` are its fields). Its attribute names are those field names with `_` for
`-` (``RENAMED`` where that spelling would mislead); the schema is the one source of the names.

- ``from_data`` (the one decode) builds a record from JSON the schema has checked (or that infx built): each
  field's value read as its ``read_as`` says (else as is), a field the JSON leaves out at its
  default. A record that declares ``present = order_kept()`` remembers the names it was read
  with, in their order, and ``to_json`` writes them back in that order, so a file round-trips
  byte for byte and a field a record never had is not invented.
- ``to_json`` writes every field (in the order kept, else the schema's): a record as its own
  JSON, a tuple as a list, each value as its ``write_as`` says; a ``DERIVED`` name is written
  from the attribute (often a property) of that name and never read back.
- ``check_records`` holds every record class and its schema part to the same field names (one
  test runs it over every record infx defines).

Reads the schema files through infx.schema (cached); no other effects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import Field, field, fields, is_dataclass, replace
from functools import cache
from typing import Any, ClassVar, Self, cast

from .schema import load_schema

PRESENT = "present"  # the attribute of a record that keeps the order it was read in


@cache
def schema_part(schema: str, pointer: str = "") -> dict:
    """The object at ``pointer`` (keys joined by `/`, e.g. `$defs/entry`) of a schema."""
    node = load_schema(schema)
    for key in filter(None, pointer.split("/")):
        node = node[key]
    return node


@cache
def json_names(schema: str, pointer: str = "") -> tuple[str, ...]:
    """The field names of a schema part, in the schema's order."""
    return tuple(schema_part(schema, pointer)["properties"])


def read_as(read: Callable[[Any], Any], **options: Any) -> Any:
    """A record field whose JSON value is converted by ``read`` (a list to a tuple, an object to a
    record); ``options`` are the field's own (``default=...``)."""
    return field(**options, metadata={"read": read})


def write_as(write: Callable[[Any], Any], **options: Any) -> Any:
    """A record field written as ``write`` gives (an eval set's rows: their count)."""
    return field(**options, metadata={"write": write})


def order_kept() -> Any:
    """The ``present`` field of a record that is written back in the order it was read (or built) in."""
    return field(default=(), compare=False, repr=False)


def each(record: type[Record]) -> Callable[[Any], tuple]:
    """How a list of records is read: each one decoded, the list a tuple."""
    return lambda items: tuple(record.from_data(item) for item in items)


def strings(items: Any) -> tuple[str, ...]:
    return tuple(items)


class Record:
    """The base of every record bound to a schema part (see the module's docstring)."""

    SCHEMA: ClassVar[str]
    POINTER: ClassVar[str] = ""
    RENAMED: ClassVar[Mapping[str, str]] = {}  # JSON name -> attribute, where `_` for `-` would mislead
    NOT_IN_SCHEMA: ClassVar[frozenset[str]] = frozenset()  # attributes the JSON does not hold (a key, a position)
    DERIVED: ClassVar[frozenset[str]] = frozenset()  # JSON names written from other fields, never read

    @classmethod
    def json_names(cls) -> tuple[str, ...]:
        return json_names(cls.SCHEMA, cls.POINTER)

    @classmethod
    def attribute(cls, name: str) -> str:
        return cls.RENAMED.get(name, name.replace("-", "_"))

    @classmethod
    def json_name(cls, attribute: str) -> str:
        return next(name for name in cls.json_names() if cls.attribute(name) == attribute)

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None, **given: Any) -> Self:
        """The record of ``data``, whose shape the schema has checked (or which infx built); None:
        every field at its default. ``given`` are the attributes the JSON does not hold (or holds
        otherwise: an eval set's rows, written as their count)."""
        specs = _specs(cls)
        values: dict[str, Any] = {}
        if data is not None:
            for name in cls.json_names():
                if name in data and name not in cls.DERIVED:
                    attribute = cls.attribute(name)
                    read = specs[attribute].metadata.get("read")
                    values[attribute] = read(data[name]) if read else data[name]
            if PRESENT in specs:
                values[PRESENT] = tuple(data)
        return cast(Any, cls)(**(values | given))

    @classmethod
    def build(cls, **attributes: Any) -> Self:
        """The record of these attributes, written in the order they are given."""
        return cast(Any, cls)(**attributes, **{PRESENT: tuple(cls.json_name(name) for name in attributes)})

    def completed(self, **attributes: Any) -> Self:
        """The record with these attributes set; a field it did not have is written after the others."""
        present = cast(tuple[str, ...], getattr(self, PRESENT))
        added = tuple(self.json_name(name) for name in attributes if self.json_name(name) not in present)
        return replace(cast(Any, self), **attributes, **{PRESENT: present + added})

    def to_json(self) -> dict:
        specs = _specs(type(self))
        written = {}
        for name in getattr(self, PRESENT, ()) or self.json_names():
            spec = specs.get(self.attribute(name))
            value = getattr(self, self.attribute(name))
            write = spec.metadata.get("write") if spec is not None else None
            written[name] = write(value) if write else encoded(value)
        return written


def encoded(value: Any) -> Any:
    """A value as JSON holds it: a record as its JSON, a tuple or list as a list (each item encoded)."""
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, (tuple, list)):
        return [encoded(item) for item in value]
    return value


def _specs(cls: Any) -> dict[str, Field]:
    return {spec.name: spec for spec in fields(cls)}


def records(classes: Iterable[type] = (Record,)) -> list[type[Record]]:
    """Every record class defined under ``classes`` (default: in every module imported); a base
    shared by records (no dataclass itself) is not one."""
    found: list[type[Record]] = []
    for cls in classes:
        for sub in cast(list[type[Record]], cls.__subclasses__()):
            found += [sub] if is_dataclass(sub) else []
            found += records([sub])
    return list(dict.fromkeys(found))


def check_records(classes: Iterable[type[Record]] | None = None) -> None:
    """Each record class and its schema part name the same fields (a test runs this over every record)."""
    for cls in records() if classes is None else classes:
        declared = {spec.name for spec in fields(cast(Any, cls))} - {PRESENT} - cls.NOT_IN_SCHEMA
        named = {cls.attribute(name) for name in cls.json_names() if name not in cls.DERIVED}
        if declared != named:
            where = " ".join(filter(None, (f"{cls.SCHEMA}.schema.json", cls.POINTER)))
            raise AssertionError(f"{cls.__name__} and {where} disagree: {sorted(declared ^ named)}")
