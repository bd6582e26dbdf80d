"""Plain fields answered without graphql-core's per-field machinery.

A page of 50 slots resolves about 850 fields, and graphql-core spends several
microseconds on each: a path, a resolve info, the resolver call through strawberry's
wrapper, ``complete_value``'s type walk. Most of them are *plain*: a scalar or enum
attribute of the object, read as is (a strawberry field with no resolver function,
no field extension and no argument). :class:`Executor` reads those directly and
coerces them with the type's own ``coerce_output_value``; every other field, and any
plain one whose value is not ordinary (a null where the type forbids one, a value the
type refuses, a read that raises), goes graphql-core's way, so errors, their paths and
their messages are graphql-core's own. Fields with arguments (wrapped by
:func:`taskflow.api.graphql.guards.guard_arguments`) are never plain.
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, NamedTuple

from graphql import (
    GraphQLField,
    GraphQLID,
    GraphQLLeafType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLString,
    Undefined,
    is_leaf_type,
)
from graphql.execution.collect_fields import GroupedFieldSet
from graphql.pyutils import Path
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

#: A placeholder keeping a field's place in the answer until graphql-core resolves it.
_PENDING = object()


class Plain(NamedTuple):
    """How to answer one plain field: read, then coerce to its leaf type."""

    read: Callable[[Any], Any]
    leaf: GraphQLLeafType
    non_null: bool
    #: A ``str`` value passes as is (String and ID coerce a ``str`` to itself).
    str_as_is: bool


def plain(field: GraphQLField) -> Plain | None:
    """``field``'s plan, or None when it is not plain (graphql-core resolves it)."""
    definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    resolve = field.resolve
    if (
        field.args
        or resolve is None
        or not getattr(resolve, "_is_default", False)
        or not isinstance(definition, StrawberryField)
        or not definition.is_basic_field
    ):
        return None
    returned = field.type
    non_null = isinstance(returned, GraphQLNonNull)
    if isinstance(returned, GraphQLNonNull):
        returned = returned.of_type
    if not is_leaf_type(returned):
        return None
    read: Callable[[Any], Any]
    if definition.default_resolver is getattr:
        read = operator.attrgetter(definition.python_name)
    else:

        def read(source: Any) -> Any:
            return resolve(source, None)

    return Plain(read, returned, non_null, returned is GraphQLString or returned is GraphQLID)


def plans(schema: GraphQLSchema) -> dict[str, dict[str, Plain]]:
    """Type name -> field name -> plan, for every plain field of ``schema``."""
    found: dict[str, dict[str, Plain]] = {}
    for named in schema.type_map.values():
        if not isinstance(named, GraphQLObjectType) or named.name.startswith("__"):
            continue
        fields = {name: p for name, f in named.fields.items() if (p := plain(f)) is not None}
        if fields:
            found[named.name] = fields
    return found


class Executor(StrawberryGraphQLCoreExecutionContext):
    """strawberry's executor, answering plain fields itself (see the module's docstring)."""

    PLANS: ClassVar[Mapping[str, Mapping[str, Plain]]] = {}

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: GroupedFieldSet,
        position_context: Any,
    ) -> Any:
        fields = self.PLANS.get(parent_type.name)
        manager = self.middleware_manager
        if not fields or (manager is not None and manager.middlewares):
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        results: dict[str, Any] = {}
        rest: GroupedFieldSet = {}
        for name, details in grouped_field_set.items():
            found = fields.get(details[0].node.name.value)
            if found is not None:
                value = _answer(found, source_value)
                if value is not _PENDING:
                    results[name] = value
                    continue
            rest[name] = details
            results[name] = _PENDING
        if not rest:
            return results
        others = super().execute_fields(parent_type, source_value, path, rest, position_context)
        if isinstance(others, dict):
            return _merged(results, rest, others)
        return _merged_later(results, rest, others)


def _answer(found: Plain, source: Any) -> Any:
    """The field's answer, or ``_PENDING`` for anything graphql-core must decide."""
    try:
        value = found.read(source)
    except Exception:  # graphql-core reads it again and reports the error
        return _PENDING
    if value is None:
        return _PENDING if found.non_null else None
    if found.str_as_is and type(value) is str:
        return value
    if isinstance(value, Exception):
        return _PENDING
    try:
        coerced = found.leaf.coerce_output_value(value)
    except Exception:  # graphql-core coerces it again and reports the error
        return _PENDING
    return _PENDING if coerced is None or coerced is Undefined else coerced


def _merged(
    results: dict[str, Any], rest: GroupedFieldSet, others: Mapping[str, Any]
) -> dict[str, Any]:
    """``results`` with graphql-core's answers in their places (a field it skipped, dropped)."""
    for name in rest:
        if name in others:
            results[name] = others[name]
        else:
            del results[name]
    return results


async def _merged_later(
    results: dict[str, Any], rest: GroupedFieldSet, others: Awaitable[Mapping[str, Any]]
) -> dict[str, Any]:
    return _merged(results, rest, await others)


def executor_for(schema: GraphQLSchema) -> type[Executor]:
    """An :class:`Executor` class knowing ``schema``'s plain fields (built once)."""
    return type("PlainFieldsExecutor", (Executor,), {"PLANS": plans(schema)})
