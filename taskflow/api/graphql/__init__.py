"""The GraphQL API (strawberry): schema, context, error shaping, types by area."""
