"""``db.record_as`` compiled: for each shape of call (dataclass, column prefix, renames, fields
given), straight-line code that reads a row's columns into the dataclass."""

from __future__ import annotations

import dataclasses
import functools
import uuid
from collections.abc import Callable
from typing import Any


def _plain_init(cls: type[Any], given: tuple[str, ...]) -> bool:
    """Whether ``cls(**fields)`` only stores each field: a dataclass whose ``__init__`` is
    the generated one, with no ``__post_init__``, no init-only or non-init fields and no
    slots, given nothing but its fields. Its instance is then built by filling its
    ``__dict__`` (a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``: 2.8 µs for a slot's 25 fields, 0.3 filled)."""
    init = cls.__dict__.get("__init__")  # made by dataclasses (from text), not written
    params = getattr(cls, "__dataclass_params__", None)
    every = getattr(cls, "__dataclass_fields__", {})
    names = {f.name for f in dataclasses.fields(cls)}
    return (
        params is not None
        and params.init
        and getattr(getattr(init, "__code__", None), "co_filename", None) == "<string>"
        and not hasattr(cls, "__post_init__")
        and "__slots__" not in cls.__dict__
        and len(every) == len(names)  # no InitVar or ClassVar pseudo-fields
        and all(f.init for f in dataclasses.fields(cls))
        and set(given) <= names
    )


@functools.cache
def builder(
    cls: type[Any],
    prefix: str,
    columns: tuple[tuple[str, str], ...],
    given: tuple[str, ...],
    absent: object,
) -> Callable[..., Any]:
    """``db.record_as`` for one shape of call, as straight-line code: (record, given) -> ``cls``.

    Each init field of ``cls`` not ``given`` reads its column (renamed by ``columns``, after
    ``prefix``), with ``record_as``'s conversions; a field with a default is read with
    ``get`` and keeps its default when the record has no such column (``absent``: what ``get``
    answers then). Written once per
    shape: the field-by-field loop and a frozen dataclass's ``__init__`` were a tenth of a
    GraphQL inbox page's CPU (bench/README.md, "claimNext within 3x of its statement").
    """
    renamed = dict(columns)
    plain = _plain_init(cls, given)
    lines = ["def build(record, given):", "    kw = {}"]
    scope: dict[str, Any] = {"UUID": uuid.UUID, "ABSENT": absent, "cls": cls}
    for i, f in enumerate(dataclasses.fields(cls)):
        if not f.init:
            continue
        if f.name in given:
            lines.append(f"    kw[{f.name!r}] = given[{f.name!r}]")
            continue
        column = repr(prefix + renamed.get(f.name, f.name))
        read = [f"    if isinstance(v{i}, UUID):", f"        v{i} = str(v{i})"]
        if str(f.type).startswith("tuple"):
            read += [f"    elif isinstance(v{i}, list):", f"        v{i} = tuple(v{i})"]
        read.append(f"    kw[{f.name!r}] = v{i}")
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            lines += [f"    v{i} = record[{column}]", *read]
            continue
        lines += [f"    v{i} = record.get({column}, ABSENT)", f"    if v{i} is not ABSENT:"]
        lines += ["    " + line for line in read]
        if plain:  # the default, as __init__ would have set it
            scope[f"default{i}"] = f.default
            scope[f"factory{i}"] = f.default_factory
            lines.append("    else:")
            lines.append(
                f"        kw[{f.name!r}] = default{i}"
                if f.default is not dataclasses.MISSING
                else f"        kw[{f.name!r}] = factory{i}()"
            )
    if plain:
        lines += ["    made = object.__new__(cls)", "    made.__dict__.update(kw)"]
        lines.append("    return made")
    else:
        lines.append("    return cls(**kw | given)")  # a name that is no field: TypeError
    # The text is made above from the dataclass's field names and column names only.
    exec("\n".join(lines), scope)
    built: Callable[..., Any] = scope["build"]
    return built
