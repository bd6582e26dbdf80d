"""GraphQL of runs: the Run type, its timeline, the runs list.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
