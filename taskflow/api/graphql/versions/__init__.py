"""GraphQL of versions: workflows, deployed versions, migrateRuns.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
