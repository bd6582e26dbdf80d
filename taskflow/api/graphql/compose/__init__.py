"""Child runs in GraphQL: ``Run.children``, ``Run.parent`` (docs/composition.md).

May import taskflow.api, taskflow.service, taskflow.core, taskflow.errors.
"""
