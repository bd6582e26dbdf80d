"""GraphQL of operate: operator verbs, bulkOperate, needs attention.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
