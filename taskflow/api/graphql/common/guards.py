"""Schema extensions at the GraphQL edge: argument limits, query cost, quiet logs.

:func:`guard_arguments` checks every field's arguments (walking input objects and
JSON values) with :mod:`taskflow.api.limits` before the resolver runs, so a new
field cannot slip past: a mutation whose payload union has ``InvalidInput`` answers that
refusal, any other field a top-level ``INVALID_INPUT`` error on that field alone.
:class:`Gate` parses and validates (both cached) within the token cap and the limit
rules, and refuses an operation whose static cost is over the limit before anything
runs. :class:`QuietSchema` logs each error in one line: code and path, never the query
text, variables or the message (which may quote a value).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import strawberry
from graphql import ExecutionResult as GraphQLExecutionResult
from graphql import GraphQLError, GraphQLResolveInfo, default_field_resolver, parse
from graphql.language import DocumentNode
from graphql.type import GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLUnionType
from graphql.validation import ASTValidationRule
from strawberry.extensions import SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.schema.schema import validate_document
from strawberry.types import ExecutionContext
from strawberry.types.graphql import OperationType

from taskflow import errors
from taskflow.api import limits as edge
from taskflow.api.graphql.common import cost, hooks, relay, timing
from taskflow.api.graphql.common.errors import ShapeErrors

log = logging.getLogger("taskflow.api")


def _offers_invalid_input(info: GraphQLResolveInfo[Any]) -> bool:
    returned = info.return_type
    if isinstance(returned, GraphQLNonNull):
        returned = returned.of_type
    return isinstance(returned, GraphQLUnionType) and any(
        t.name == "InvalidInput" for t in returned.types
    )


def guard_arguments(schema: strawberry.Schema, limits: edge.Limits) -> None:
    """Wrap the resolver of every field that takes arguments with the edge's checks.

    Done once on the built schema (every object type, so a new field cannot slip
    past); fields without arguments keep their resolver untouched, which a schema
    extension's ``resolve`` hook would not (it runs for every field of every row).
    """
    for named in schema._schema.type_map.values():
        if not isinstance(named, GraphQLObjectType) or named.name.startswith("__"):
            continue
        for field in named.fields.values():
            if field.args:
                field.resolve = _guarded(field.resolve or default_field_resolver, limits)


def _guarded(resolve: Callable[..., Any], limits: edge.Limits) -> Callable[..., Any]:
    def guarded(root: Any, info: GraphQLResolveInfo[Any], **kwargs: Any) -> Any:
        if kwargs:
            try:
                edge.check_arguments(kwargs, limits)
            except errors.ValidationError as refused:
                if _offers_invalid_input(info):
                    return relay.InvalidInput(
                        code=relay.RefusalCode.INVALID_INPUT,
                        message=refused.message,
                        field=refused.facts.get("field"),
                    )
                raise
        return resolve(root, info, **kwargs)

    return guarded


class Gate(ShapeErrors):
    """Every request's way in and out, as one extension (one set of hooks per request,
    where strawberry's own would be seven): the request's latency and outcome
    (:mod:`timing`), the token cap on parsing, the parser cache, the limit rules added to
    validation, the validation cache, the cost limit (:mod:`cost`), which refuses an
    operation whose static cost is over ``limit`` before anything runs, and the shaping and
    masking of errors (:class:`ShapeErrors`, before the outcome is read). The caches live
    at module level, shared by every request."""

    def __init__(
        self,
        *,
        rules: Sequence[type[ASTValidationRule]],
        max_tokens: int,
        limit: int,
        execution_context: ExecutionContext | None = None,
    ) -> None:
        super().__init__()
        self.rules = tuple(rules)
        self.max_tokens = max_tokens
        self.limit = limit

    def on_operation(self) -> Iterator[None]:
        started, marks = timing.begin()
        try:
            context = self.execution_context
            context.parse_options["max_tokens"] = self.max_tokens
            context.validation_rules = context.validation_rules + self.rules
            if context.query and context.graphql_document is None:
                # Parsed here rather than in an on_parse hook (one hook less per request); a
                # text that does not parse is left to strawberry, which raises the same error.
                with contextlib.suppress(GraphQLError):
                    context.graphql_document = _parsed(context.query, **context.parse_options)
            yield from super().on_operation()  # the errors shaped and masked
            self._learn()
        finally:
            timing.end(self.execution_context, started, marks)

    def _learn(self) -> None:
        """Remember a document that ran without a GraphQL error, variables or request
        extensions (:func:`clean_document`)."""
        context = self.execution_context
        result, document = context.result, context.graphql_document
        if (
            document is None
            or context.query is None
            or context.variables
            or context.operation_extensions is not None
            or context.pre_execution_errors
            or result is None
            or result.errors
        ):
            return
        given: str | None = context._provided_operation_name
        key = (id(context.schema._schema), context.query, given)
        if key not in _CLEAN:
            _CLEAN[key] = (context.schema._schema, document)
            if len(_CLEAN) > DOCUMENTS_KEPT:
                _CLEAN.popitem(last=False)

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        assert context.graphql_document is not None
        context.pre_execution_errors = _validated(
            context.schema._schema, context.graphql_document, context.validation_rules
        )
        yield

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        if context.operation_type == OperationType.SUBSCRIPTION and context.result is None:
            # Only the socket runs subscriptions, through ``schema.subscribe``, which leaves
            # this hook out; one that reaches it came over HTTP.
            context.result = GraphQLExecutionResult(
                data=None,
                errors=[GraphQLError(SUBSCRIPTION_OVER_HTTP, extensions={"code": "INVALID_INPUT"})],
            )
        elif document is not None and context.result is None:
            found = _cost(context, document)
            if found > self.limit:
                context.result = GraphQLExecutionResult(
                    data=None, errors=[too_costly(found, self.limit)]
                )
        yield


#: The answer to a subscription sent over HTTP.
SUBSCRIPTION_OVER_HTTP = (
    "Subscriptions run over a WebSocket to /graphql (subprotocol graphql-transport-ws; "
    "docs/live.md), not over HTTP."
)


def too_costly(found: int, limit: int) -> GraphQLError:
    """The refusal of an operation whose static cost ``found`` is over ``limit``."""
    return GraphQLError(
        f"The query's cost is {found}, over the limit of {limit}: ask "
        "for smaller pages (first), fewer aliases or fewer nested lists, "
        "and page through the rest.",
        extensions={"code": "QUERY_TOO_COSTLY", "cost": found, "limit": limit},
    )


def operation_cost(
    schema: GraphQLSchema, query: str, name: str | None, variables: dict[str, Any]
) -> int | None:
    """The static cost of ``query``'s operation (a socket's subscribe: strawberry's
    subscription path leaves :class:`Gate`'s execute hook out); None when it does not
    parse or names no operation (the schema's own checks then refuse it)."""
    try:
        document = _parsed(query)
        return cost.of_operation(schema, document, name, variables)
    except (GraphQLError, errors.TaskflowError, KeyError, ValueError, TypeError):
        return None


#: Documents that ran without a GraphQL error, no variables and no request extensions, by
#: (schema, text, operation name given), the schema by identity (an entry keeps it alive):
#: such a text parses within the token cap, passes validation and the limit rules and the
#: cost limit of this schema, every time (``slots/claim_fast.py`` plans from them).
_CLEAN: OrderedDict[tuple[int, str, str | None], tuple[GraphQLSchema, DocumentNode]] = OrderedDict()


def clean_document(schema: GraphQLSchema, query: str, name: str | None) -> DocumentNode | None:
    """The document of ``query`` (sent with operation name ``name``) if it ran clean."""
    kept = _CLEAN.get((id(schema), query, name))
    return kept[1] if kept is not None and kept[0] is schema else None


#: Frontends send the same few operations over and over: parse and validate them once.
DOCUMENTS_KEPT = 512
_parsed = functools.lru_cache(maxsize=DOCUMENTS_KEPT)(parse)
#: Validation errors by (schema, document, rules), the first two by identity: a document
#: hashes by walking its whole tree, and the parser cache gives the same one for the same
#: text. An entry keeps its schema and document alive, so their ids are not reused meanwhile.
_VALIDATED: OrderedDict[
    tuple[int, int, tuple[type[ASTValidationRule], ...]],
    tuple[GraphQLSchema, DocumentNode, list[GraphQLError]],
] = OrderedDict()


def _validated(
    schema: GraphQLSchema, document: DocumentNode, rules: tuple[type[ASTValidationRule], ...]
) -> list[GraphQLError]:
    key = (id(schema), id(document), rules)
    kept = _VALIDATED.get(key)
    if kept is not None and kept[0] is schema and kept[1] is document:
        return kept[2]
    found = validate_document(schema, document, rules)
    _VALIDATED[key] = (schema, document, found)
    if len(_VALIDATED) > DOCUMENTS_KEPT:
        _VALIDATED.popitem(last=False)
    return found


#: Costs by (schema, document, operation name, variables): frontends send the same few
#: operations, and the parser cache gives the same document for the same text. An entry
#: keeps its schema and document alive, so the ids in its key are not reused meanwhile.
_COSTS: OrderedDict[tuple[int, int, str | None, str], tuple[object, DocumentNode, int]] = (
    OrderedDict()
)
COSTS_KEPT = 512
#: Variables longer than this (as JSON) are not worth a key: such a cost is computed afresh.
COST_KEY_CHARS = 512


def _cost(context: ExecutionContext, document: DocumentNode) -> int:
    """The static cost of the request's operation (``cost.of_operation``), remembered."""
    schema, name, variables = context.schema._schema, context.operation_name, context.variables
    variables = variables or {}
    try:
        shown: str | None = json.dumps(variables, sort_keys=True) if variables else ""
    except (TypeError, ValueError):
        shown = None
    if shown is None or len(shown) > COST_KEY_CHARS:
        return cost.of_operation(schema, document, name, variables)
    key = (id(schema), id(document), name, shown)
    kept = _COSTS.get(key)
    if kept is not None and kept[0] is schema and kept[1] is document:
        return kept[2]
    found = cost.of_operation(schema, document, name, variables)
    _COSTS[key] = (schema, document, found)
    if len(_COSTS) > COSTS_KEPT:
        _COSTS.popitem(last=False)
    return found


class QuietSchema(strawberry.Schema):
    """A schema whose error log is one line per error, without query text or variables.

    strawberry's own logger writes every error with the query source at ERROR level
    (a token written inline in a query would land in the log); unexpected errors are
    logged with their stack trace by :class:`taskflow.api.graphql.common.errors.ShapeErrors`.
    """

    def create_extensions_runner(
        self, execution_context: ExecutionContext, extensions: list[SchemaExtension]
    ) -> SchemaExtensionsRunner:
        """The one extension's hooks, looked up once per class (:mod:`hooks`)."""
        return hooks.runner_for(execution_context, extensions)

    def process_errors(
        self, errors_: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        context = execution_context.context if execution_context else None
        request_id = getattr(context, "request_id", "unknown")
        for error in errors_:
            original = error.original_error
            if original is None or isinstance(original, GraphQLError):
                code = (error.extensions or {}).get("code", "GRAPHQL_VALIDATION")
            elif isinstance(original, errors.TaskflowError):
                code = original.code
            else:
                continue  # unexpected: ShapeErrors logs it with its stack trace
            path = ".".join(str(p) for p in error.path or ()) or "-"
            log.info("graphql request %s refused: %s at %s", request_id, code, path)
