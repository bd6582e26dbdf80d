"""GraphQL of clocks: SLA clocks on slots, timers and their repair.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
