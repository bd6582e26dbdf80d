"""Agent tools over the Model Context Protocol: ``taskflow mcp`` (stdio) and ``/mcp`` (HTTP).

Each tool runs a GraphQL document of its own through the app's schema, as its caller: the
answers, access rules and refusals are the GraphQL API's (docs/agents.md).
"""
