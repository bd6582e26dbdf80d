"""``claimNext`` answered without graphql-core's execution, when its answer is plain.

A claim's server CPU was about 1 ms, of which strawberry's and graphql-core's execution
around the use case (the operation's extension hooks, the execution context, collecting
fields, the resolver's wrappers and its argument conversion, completing the union) took
about 0.45 ms (bench/README.md, "claimNext within 3x of its statement"). Frontends send
the same few documents over and over, so a document seen once is planned once:

- :func:`plan` plans a document ``guards.Gate`` saw run without a GraphQL error
  (``guards.clean_document``: it parsed within the token cap, passed validation and its
  limit rules and the cost limit, for this schema) when it is exactly one anonymous or named
  mutation of the one field ``claimNext`` with the literal argument ``input: {}`` (no
  filter, no idempotency key), no variables, directives or named fragments, whose
  ``SlotSuccess`` selection reads only plain fields (``plain_fields``: attributes, no
  resolver) and ``__typename``, each response name once. Any other document plans to
  None: it is executed as before.
- :func:`claimed` runs such a request's use case as the resolver would (the caller
  presumed, its row checked by the claim statement: ``service/callers.py``) and answers a
  success from the plan: the same ``data`` graphql-core would complete, then timed and
  logged as ``timing`` does. Any other outcome (a refusal, a changed caller, an error), or
  a caller this process has not authenticated, is left to strawberry's execution, handed
  the outcome (``Context.claimed``) so that the claim is never made twice.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NamedTuple, cast

import strawberry
from graphql import (
    DocumentNode,
    FieldNode,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    ObjectValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionNode,
    is_abstract_type,
)

from taskflow.api.graphql.common import context as contexts
from taskflow.api.graphql.common import guards, plain_fields, timing
from taskflow.api.graphql.slots.work import slot_type_of
from taskflow.core.runs.model import SlotView
from taskflow.core.slots.filters import SlotFilter
from taskflow.service.access import access
from taskflow.service.slots import slots as slot_service

FIELD = "claimNext"
SUCCESS = "SlotSuccess"
#: The filter of ``input: {}`` (``InboxFilter().to_filter()``: nothing filtered).
NO_FILTER = SlotFilter()


class Entry(NamedTuple):
    """One key of an object's answer: ``__typename`` (``plain`` None), a plain leaf, or a
    plain object field with its own entries."""

    key: str
    plain: plain_fields.Plain | None = None
    below: tuple[Entry, ...] = ()


class Plan(NamedTuple):
    """How to answer a planned document's success."""

    operation_name: str | None
    #: The response name of the one root field (``claimNext`` or its alias).
    key: str
    #: The payload's entries when it is a ``SlotSuccess``.
    success: tuple[Entry, ...]


#: Plans by (schema, document text, operation name given), the schema by identity: an
#: entry keeps its schema alive, so its id is not reused meanwhile. None: not planned.
_PLANS: OrderedDict[tuple[int, str, str | None], tuple[GraphQLSchema, Plan | None]] = OrderedDict()
PLANS_KEPT = 512


def plan(schema: strawberry.Schema, query: str, operation_name: str | None) -> Plan | None:
    """The plan of this text, or None (execute it as usual): planned the first time it is
    asked for after the text ran clean (``guards.clean_document``)."""
    core = schema._schema
    key = (id(core), query, operation_name)
    kept = _PLANS.get(key)
    if kept is not None and kept[0] is core:
        return kept[1]
    document = guards.clean_document(core, query, operation_name)
    plans = getattr(schema.execution_context_class, "PLANS", None)
    if document is None or plans is None:
        return None  # not run clean yet: asked again next time
    found = _planned(core, document, operation_name, plans)
    _PLANS[key] = (core, found)
    if len(_PLANS) > PLANS_KEPT:
        _PLANS.popitem(last=False)
    return found


def _planned(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    plans: Mapping[str, Mapping[str, plain_fields.Plain]],
) -> Plan | None:
    if len(document.definitions) != 1:
        return None
    operation = document.definitions[0]
    if (
        not isinstance(operation, OperationDefinitionNode)
        or operation.operation is not OperationType.MUTATION
        or operation.variable_definitions
        or operation.directives
    ):
        return None
    name = operation.name.value if operation.name else None
    if operation_name is not None and operation_name != name:
        return None
    roots = operation.selection_set.selections
    if len(roots) != 1 or not isinstance(roots[0], FieldNode):
        return None
    root = roots[0]
    arguments = root.arguments or ()
    argument = arguments[0] if len(arguments) == 1 else None
    if (
        root.name.value != FIELD
        or root.directives
        or root.selection_set is None
        or argument is None
        or argument.name.value != "input"
        or not isinstance(argument.value, ObjectValueNode)
        or argument.value.fields
    ):
        return None
    success = schema.get_type(SUCCESS)
    if not isinstance(success, GraphQLObjectType):
        return None
    found = _entries(schema, success, root.selection_set.selections, plans, set())
    if found is None:
        return None
    return Plan(name, root.alias.value if root.alias else FIELD, found)


def _entries(
    schema: GraphQLSchema,
    on: GraphQLObjectType,
    selections: tuple[SelectionNode, ...],
    plans: Mapping[str, Mapping[str, plain_fields.Plain]],
    keys: set[str],
) -> tuple[Entry, ...] | None:
    """What graphql-core's field collection gives for ``on``, when every field is plain,
    named once and undirected (else None); ``keys``: the names taken so far."""
    found: list[Entry] = []
    for selection in selections:
        if selection.directives:
            return None
        if isinstance(selection, InlineFragmentNode):
            condition = selection.type_condition
            if condition is not None:
                named = schema.get_type(condition.name.value)
                if named is None:
                    return None
                applies = named is on or (is_abstract_type(named) and schema.is_sub_type(named, on))
                if not applies:
                    continue
            inner = _entries(schema, on, selection.selection_set.selections, plans, keys)
            if inner is None:
                return None
            found += inner
            continue
        if not isinstance(selection, FieldNode) or selection.arguments:
            return None
        key = selection.alias.value if selection.alias else selection.name.value
        if key in keys:
            return None  # merged by graphql-core: not planned here
        keys.add(key)
        if selection.name.value == "__typename":
            found.append(Entry(key))
            continue
        field = plans.get(on.name, {}).get(selection.name.value)
        if field is None:
            return None
        if field.leaf is not None and selection.selection_set is None:
            found.append(Entry(key, field))
        elif field.object_type is not None and field.non_null and selection.selection_set:
            below = _entries(
                schema, field.object_type, selection.selection_set.selections, plans, set()
            )
            if below is None:
                return None
            found.append(Entry(key, field, below))
        else:
            return None
    return tuple(found)


def _answered(entries: tuple[Entry, ...], value: Any, type_name: str) -> dict[str, Any] | None:
    """``value``'s answer (as graphql-core completes it), or None if a field is not ordinary
    (a null its type forbids, a value its type refuses)."""
    answer: dict[str, Any] = {}
    for entry in entries:
        found = entry.plain
        if found is None:
            answer[entry.key] = type_name
            continue
        if found.object_type is None:
            leaf = plain_fields.leaf_answer(found, value)
            if leaf is plain_fields.PENDING:
                return None
            answer[entry.key] = leaf
            continue
        inner = plain_fields.read(found, value)
        if inner is None or inner is plain_fields.PENDING:
            return None
        below = _answered(entry.below, inner, found.object_type.name)
        if below is None:
            return None
        answer[entry.key] = below
    return answer


async def claimed(found: Plan, context: contexts.Context) -> dict[str, Any] | None:
    """The planned request's ``data`` on a success; None when strawberry's execution is
    to answer it (then ``context.claimed`` holds what the claim did, if it ran)."""
    holder = _Holder(context)
    if not contexts.presume(cast("contexts.Info", holder)):
        return None
    started, marks = timing.begin()
    services, me = context.services, context.principal
    assert me is not None  # presumed
    request = access.RequestAccess(services, me)
    try:
        slot = await slot_service.claim_next(
            services, me, NO_FILTER, request, caller_digest=context.caller_digest
        )
    except Exception as exc:  # a refusal, a changed caller, an error: strawberry answers it
        context.claimed = _raising(exc)
        contexts.doubt(cast("contexts.Info", holder))
        timing.REFUSED.set(None)
        return None
    data = _success(found, slot, request)
    if data is None:  # not reached for a plain slot: strawberry answers it, reading it
        context.claimed = _returning(slot)
        contexts.doubt(cast("contexts.Info", holder))
        timing.REFUSED.set(None)
        return None
    contexts.confirm(cast("contexts.Info", holder))
    timing.finish(found.operation_name, marks, started, services)
    return {found.key: data}


def _success(found: Plan, slot: SlotView, request: access.RequestAccess) -> Any:
    seen = request.seen_slot(slot.id)
    if seen is None:
        return None
    answer = _Success(slot_type_of(*seen))
    return _answered(found.success, answer, SUCCESS)


class _Success(NamedTuple):
    """Stands for ``SlotSuccess`` (its one field ``slot``) where its entries read it."""

    slot: Any


class _Holder:
    """What ``context.presume`` / ``confirm`` / ``doubt`` read of an ``Info``."""

    __slots__ = ("context",)

    def __init__(self, context: contexts.Context) -> None:
        self.context = context


def _raising(exc: BaseException) -> Callable[[], Awaitable[SlotView]]:
    async def again() -> SlotView:
        raise exc

    return again


def _returning(slot: SlotView) -> Callable[[], Awaitable[SlotView]]:
    async def again() -> SlotView:
        return slot

    return again
