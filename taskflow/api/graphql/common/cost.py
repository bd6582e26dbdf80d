"""The static cost of a GraphQL operation, computed before anything runs.

Every object a query may return costs 1, and every field with a resolver of its own
(a query or a computation per row) costs 1 more. A connection multiplies what it
selects by its ``first`` (the literal, the variable, or the argument's default,
at most :data:`relay.MAX_FIRST`); a plain list multiplies by :data:`LIST_SIZE`, the
size assumed for short lists (a run's slots, a slot's clocks). Fragments count as if
written out; every member of a union is counted. The limit is a setting
(``TASKFLOW_MAX_QUERY_COST``, README.md "GraphQL conventions and limits").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    VariableNode,
)
from graphql.pyutils import Undefined
from graphql.type import GraphQLInterfaceType, GraphQLOutputType, GraphQLUnionType

from taskflow.api.graphql.common import relay

#: Rows assumed for a list that is not a connection.
LIST_SIZE = 10


class _Walk:
    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: Mapping[str, Any],
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables

    def first(self, node: FieldNode, default: Any) -> int:
        value: Any = default
        for argument in node.arguments or ():
            if argument.name.value != "first":
                continue
            if isinstance(argument.value, IntValueNode):
                value = int(argument.value.value)
            elif isinstance(argument.value, VariableNode):
                value = self.variables.get(argument.value.name.value, default)
        if not isinstance(value, int) or isinstance(value, bool):
            value = relay.MAX_FIRST
        return int(min(max(value, 1), relay.MAX_FIRST))

    def selection(self, selections: SelectionSetNode | None, parent: Any) -> int:
        if selections is None:
            return 0
        total = 0
        for node in selections.selections:
            if isinstance(node, FieldNode):
                total += self.field(node, parent)
            elif isinstance(node, InlineFragmentNode):
                target = (
                    self.schema.get_type(node.type_condition.name.value)
                    if node.type_condition
                    else parent
                )
                total += self.selection(node.selection_set, target)
            elif isinstance(node, FragmentSpreadNode):
                fragment = self.fragments.get(node.name.value)
                if fragment is not None:
                    target = self.schema.get_type(fragment.type_condition.name.value)
                    total += self.selection(fragment.selection_set, target)
        return total

    def field(self, node: FieldNode, parent: Any) -> int:
        fields = getattr(parent, "fields", None)
        definition = fields.get(node.name.value) if fields else None
        if definition is None:
            return 1 if node.name.value.startswith("__") and node.name.value != "__typename" else 0
        strawberry_field = (definition.extensions or {}).get("strawberry-definition")
        own = 1 if getattr(strawberry_field, "base_resolver", None) is not None else 0
        returned: GraphQLOutputType = definition.type
        multiplier = 1
        if "first" in definition.args:
            default = definition.args["first"].default_value
            multiplier = self.first(node, None if default is Undefined else default)
        while isinstance(returned, GraphQLNonNull | GraphQLList):
            if isinstance(returned, GraphQLList) and "first" not in definition.args:
                inner = returned.of_type
                while isinstance(inner, GraphQLNonNull | GraphQLList):
                    inner = inner.of_type
                if not inner.name.endswith("Edge"):
                    multiplier = LIST_SIZE
            returned = returned.of_type
        if not isinstance(returned, GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType):
            return own
        return own + multiplier * (1 + self.selection(node.selection_set, returned))


def of_operation(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any],
) -> int:
    """The cost of the operation ``operation_name`` (or the only one) of ``document``."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [
        o
        for o in operations
        if operation_name is None or (o.name is not None and o.name.value == operation_name)
    ]
    if not chosen:
        return 0
    operation = chosen[0]
    root = (
        schema.mutation_type
        if operation.operation == OperationType.MUTATION
        else schema.subscription_type
        if operation.operation == OperationType.SUBSCRIPTION
        else schema.query_type
    )
    return _Walk(schema, fragments, variables).selection(operation.selection_set, root)
