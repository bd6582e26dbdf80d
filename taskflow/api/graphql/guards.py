"""Schema extensions at the GraphQL edge: argument limits, query cost, quiet logs.

:func:`guard_arguments` checks every field's arguments (walking input objects and
JSON values) with :mod:`taskflow.api.limits` before the resolver runs, so a new
field cannot slip past: a mutation whose payload union has ``InvalidInput`` answers that
refusal, any other field a top-level ``INVALID_INPUT`` error on that field alone.
:class:`CostLimit` refuses an operation whose static cost is over the limit before
anything runs. :class:`QuietSchema` logs each error in one line: code and path, never
the query text, variables or the message (which may quote a value).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import strawberry
from graphql import ExecutionResult as GraphQLExecutionResult
from graphql import GraphQLError, GraphQLResolveInfo, default_field_resolver
from graphql.type import GraphQLNonNull, GraphQLObjectType, GraphQLUnionType
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionContext

from taskflow import errors
from taskflow.api import limits as edge
from taskflow.api.graphql import cost, relay

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


class CostLimit(SchemaExtension):
    """Refuses an operation whose static cost (:mod:`cost`) is over ``limit``."""

    def __init__(self, *, limit: int, execution_context: ExecutionContext | None = None) -> None:
        self.limit = limit

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        if document is not None and context.result is None:
            found = cost.of_operation(
                context.schema._schema, document, context.operation_name, context.variables or {}
            )
            if found > self.limit:
                context.result = GraphQLExecutionResult(
                    data=None,
                    errors=[
                        GraphQLError(
                            f"The query's cost is {found}, over the limit of {self.limit}: ask "
                            "for smaller pages (first), fewer aliases or fewer nested lists, "
                            "and page through the rest.",
                            extensions={
                                "code": "QUERY_TOO_COSTLY",
                                "cost": found,
                                "limit": self.limit,
                            },
                        )
                    ],
                )
        yield


class QuietSchema(strawberry.Schema):
    """A schema whose error log is one line per error, without query text or variables.

    strawberry's own logger writes every error with the query source at ERROR level
    (a token written inline in a query would land in the log); unexpected errors are
    logged with their stack trace by :class:`taskflow.api.graphql.errors.ShapeErrors`.
    """

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
