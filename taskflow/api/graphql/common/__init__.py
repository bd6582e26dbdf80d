"""The GraphQL kernel: context, relay ids and connections, refusals, errors, limits, cost, timing.

May import taskflow.service, taskflow.core types, settings and errors; never taskflow.store.
"""
