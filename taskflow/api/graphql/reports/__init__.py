"""GraphQL of reports: slaReport, lead time and their types.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
