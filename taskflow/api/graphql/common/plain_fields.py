"""Plain fields answered without graphql-core's per-field machinery.

A page of 50 slots resolves about 850 fields, and graphql-core spends several
microseconds on each: a path, a resolve info, the resolver call through strawberry's
wrapper, ``complete_value``'s type walk. Most of them are *plain*: an attribute of the
object read as is (a strawberry field with no resolver function, no field extension and
no argument) holding a scalar, an enum or an object. :class:`Executor` reads those
directly: a scalar or enum is coerced with the type's own ``coerce_output_value``, an
object's selection is run on it at once (a slot's ``subject``, an edge's ``node``), and
on each object of a list (a connection's ``edges``).
Every other field, and any plain one whose value is not ordinary (a null where the type
forbids one, a value the type refuses, a read that raises, an object its type does not
recognise, a directive on an object or list field), goes graphql-core's way, so errors, their
paths and their messages are graphql-core's own. Fields with arguments (wrapped by
:func:`taskflow.api.graphql.common.guards.guard_arguments`) are never plain, nor are lists of
scalars.
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, NamedTuple

from graphql import (
    GraphQLField,
    GraphQLID,
    GraphQLLeafType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLString,
    OperationType,
    Undefined,
    is_leaf_type,
)
from graphql.execution.collect_fields import FieldDetailsList, GroupedFieldSet
from graphql.pyutils import Path, gather_with_cancel
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

#: A placeholder keeping a field's place in the answer until graphql-core resolves it.
_PENDING = object()
#: The same, for other modules (``claim_fast``): graphql-core must decide this field.
PENDING = _PENDING


class Plain(NamedTuple):
    """How to answer one plain field: read the attribute, then coerce it to its leaf type
    (``leaf``), or run the selection on the object it holds (``object_type``) or on each
    object of the list it holds (``item_type``, of objects ``items``)."""

    read: Callable[[Any], Any]
    field_type: GraphQLOutputType
    non_null: bool
    leaf: GraphQLLeafType | None = None
    object_type: GraphQLObjectType | None = None
    item_type: GraphQLOutputType | None = None
    items: GraphQLObjectType | None = None
    #: A ``str`` value passes as is (String and ID coerce a ``str`` to itself).
    str_as_is: bool = False

    @property
    def item_non_null(self) -> bool:
        return isinstance(self.item_type, GraphQLNonNull)


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
    item_type = returned.of_type if isinstance(returned, GraphQLList) else None
    items = item_type.of_type if isinstance(item_type, GraphQLNonNull) else item_type
    if not (
        is_leaf_type(returned)
        or isinstance(returned, GraphQLObjectType)
        or isinstance(items, GraphQLObjectType)
    ):
        return None
    read: Callable[[Any], Any]
    if definition.default_resolver is getattr:
        read = operator.attrgetter(definition.python_name)
    else:

        def read(source: Any) -> Any:
            return resolve(source, None)

    if isinstance(returned, GraphQLObjectType):
        return Plain(read, field.type, non_null, object_type=returned)
    if isinstance(items, GraphQLObjectType):
        return Plain(read, field.type, non_null, item_type=item_type, items=items)
    leaf = returned if is_leaf_type(returned) else None
    return Plain(
        read, field.type, non_null, leaf=leaf, str_as_is=leaf is GraphQLString or leaf is GraphQLID
    )


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


#: A field of a selection: its response name, its nodes and its plan (None: not plain).
Step = tuple[str, FieldDetailsList, Plain | None]


class Executor(StrawberryGraphQLCoreExecutionContext):
    """strawberry's executor, answering plain fields itself (see the module's docstring)."""

    PLANS: ClassVar[Mapping[str, Mapping[str, Plain]]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Per selection (the same for every row of a list): its fields with their plans.
        #: An entry keeps its selection alive, so the id in its key is not reused meanwhile.
        self._steps: dict[int, tuple[GroupedFieldSet, list[Step]]] = {}
        #: A subscription's root fields as its first event collected them: graphql-core
        #: collects anew per event, missing the memos (keyed by identity) and growing them.
        self._subscription_root: list[GroupedFieldSet] = []

    def execute_collected_root_fields(self, *args: Any) -> Any:
        """A subscription's events run on its first event's root fields (docs/live.md).
        ``args``: root type, root value, grouped field set, serially, new defer usages."""
        kind, root, grouped, serially, defers = args
        if self.operation.operation == OperationType.SUBSCRIPTION and not defers:
            self._subscription_root[:] = self._subscription_root or [grouped]
            grouped = self._subscription_root[0]
        return super().execute_collected_root_fields(kind, root, grouped, serially, defers)

    def steps(self, fields: Mapping[str, Plain], grouped: GroupedFieldSet) -> list[Step]:
        """``grouped``'s fields with their plans (None: graphql-core resolves it)."""
        kept = self._steps.get(id(grouped))
        if kept is not None and kept[0] is grouped:
            return kept[1]
        found = [
            (name, details, fields.get(details[0].node.name.value))
            for name, details in grouped.items()
        ]
        self._steps[id(grouped)] = (grouped, found)
        return found

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
        if not fields or position_context is not None or (manager and manager.middlewares):
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        results: dict[str, Any] = {}
        rest: GroupedFieldSet = {}
        waiting: list[str] = []
        try:
            for name, details, found in self.steps(fields, grouped_field_set):
                if found is None:
                    value = _PENDING
                elif found.leaf is not None:
                    value = leaf_answer(found, source_value, self.is_awaitable)
                else:
                    value = self._nested(found, source_value, name, details, path, parent_type)
                    if _awaits(value):
                        waiting.append(name)
                results[name] = value
                if value is _PENDING:
                    rest[name] = details
            others = (
                super().execute_fields(parent_type, source_value, path, rest, None) if rest else {}
            )
        except Exception:
            if waiting:
                self.settle_in_background([results[name] for name in waiting])
            raise
        if not waiting and isinstance(others, dict):
            return _merged(results, rest, others)
        return self._gathered(results, rest, others, waiting)

    def _nested(
        self,
        found: Plain,
        source: Any,
        name: str,
        details: FieldDetailsList,
        path: Path | None,
        parent_type: GraphQLObjectType,
    ) -> Any:
        """A plain object or list-of-objects field's answer (an awaitable when a field below
        awaits), or ``_PENDING`` for anything graphql-core must decide."""
        value = read(found, source)
        if value is None or value is _PENDING:
            return value
        if details[0].node.directives:
            return _PENDING
        at = Path(path, name, parent_type.name)
        if found.object_type is not None:
            return self._object(found.object_type, found.field_type, value, details, at)
        return self._list(found, value, details, at)

    def _object(
        self,
        object_type: GraphQLObjectType,
        field_type: GraphQLOutputType,
        value: Any,
        details: FieldDetailsList,
        at: Path,
    ) -> Any:
        if not self._recognised(object_type, value, True):
            return _PENDING
        grouped, deferred, _ = self.collect_subfields(object_type, details)
        if deferred:
            return _PENDING
        try:
            done = self.execute_fields(object_type, value, at, grouped, None)
        except Exception as raw:
            self.handle_field_error(raw, field_type, details, at)
            return None
        if isinstance(done, dict):
            return done
        return self._guarded(done, field_type, details, at)

    def _list(self, found: Plain, value: Any, details: FieldDetailsList, at: Path) -> Any:
        """Each item's selection run (checked before any item runs: a null item the type
        forbids, an item its type does not recognise, go graphql-core's way)."""
        items, item_type = found.items, found.item_type
        if items is None or item_type is None or type(value) is not list:
            return _PENDING
        if not all(self._recognised(items, item, found.item_non_null) for item in value):
            return _PENDING
        grouped, deferred, _ = self.collect_subfields(items, details)
        if deferred:
            return _PENDING
        done: list[Any] = []
        waiting: list[int] = []
        try:
            for index, item in enumerate(value):
                if item is None:
                    done.append(None)
                    continue
                item_at = Path(at, index, None)
                try:
                    completed = self.execute_fields(items, item, item_at, grouped, None)
                except Exception as raw:
                    self.handle_field_error(raw, item_type, details, item_at)
                    completed = None
                if completed is not None and not isinstance(completed, dict):
                    completed = self._guarded(completed, item_type, details, item_at)
                    waiting.append(index)
                done.append(completed)
        except Exception as raw:
            if waiting:
                self.settle_in_background([done[index] for index in waiting])
            self.handle_field_error(raw, found.field_type, details, at)
            return None
        if waiting:
            return self._list_later(done, waiting, found.field_type, details, at)
        return done

    def _recognised(self, items: GraphQLObjectType, item: Any, non_null: bool) -> bool:
        """Whether ``item`` (an object field's value, a list's item) may run on the plain path."""
        if item is None:
            return not non_null
        if isinstance(item, Exception) or self.is_awaitable(item):
            return False
        if items.is_type_of is None:
            return True
        try:
            return items.is_type_of(item, None) is True  # type: ignore[arg-type]
        except Exception:  # graphql-core asks again, with the field's info
            return False

    async def _list_later(
        self,
        done: list[Any],
        waiting: list[int],
        field_type: GraphQLOutputType,
        details: FieldDetailsList,
        at: Path,
    ) -> Any:
        """As graphql-core's ``complete_list_value`` awaits the items that await."""
        try:
            values = await gather_with_cancel(*(done[index] for index in waiting))
        except Exception as raw:
            self.handle_field_error(raw, field_type, details, at)
            return None
        for index, item in zip(waiting, values, strict=True):
            done[index] = item
        return done

    async def _guarded(
        self,
        done: Awaitable[Any],
        field_type: GraphQLOutputType,
        details: FieldDetailsList,
        at: Path,
    ) -> Any:
        """As graphql-core's ``execute_field`` awaits a completed value."""
        try:
            return await done
        except Exception as raw:
            self.handle_field_error(raw, field_type, details, at)
            return None

    async def _gathered(
        self,
        results: dict[str, Any],
        rest: GroupedFieldSet,
        others: Any,
        waiting: list[str],
    ) -> dict[str, Any]:
        """``results`` once every awaitable in it (and graphql-core's part) has settled."""
        awaited = [results[name] for name in waiting]
        if not isinstance(others, dict):
            awaited.append(others)
        values = await gather_with_cancel(*awaited)
        if not isinstance(others, dict):
            others = values.pop()
        results.update(zip(waiting, values, strict=True))
        return _merged(results, rest, others)


def _awaits(value: Any) -> bool:
    """Whether an object or list field's answer is still to be awaited."""
    return value is not _PENDING and value is not None and not isinstance(value, dict | list)


def read(found: Plain, source: Any) -> Any:
    """The field's attribute, or ``_PENDING`` when the read raises or is a null the type
    forbids (graphql-core reads it again and reports the error)."""
    try:
        value = found.read(source)
    except Exception:
        return _PENDING
    return _PENDING if value is None and found.non_null else value


def leaf_answer(
    found: Plain, source: Any, is_awaitable: Callable[[Any], bool] = lambda _: False
) -> Any:
    """A plain leaf field's answer, or ``_PENDING`` for anything graphql-core must decide."""
    value = read(found, source)
    if value is None or value is _PENDING:
        return value
    if found.str_as_is and type(value) is str:
        return value
    leaf = found.leaf
    if leaf is None or isinstance(value, Exception) or is_awaitable(value):
        return _PENDING
    try:
        coerced = leaf.coerce_output_value(value)
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


def executor_for(schema: GraphQLSchema) -> type[Executor]:
    """An :class:`Executor` class knowing ``schema``'s plain fields (built once)."""
    return type("PlainFieldsExecutor", (Executor,), {"PLANS": plans(schema)})
