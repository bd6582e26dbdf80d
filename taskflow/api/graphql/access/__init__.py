"""GraphQL of access: me, principals and their mutations.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
