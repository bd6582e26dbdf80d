"""GraphQL of steps: automatic steps on a run, retryStep.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
