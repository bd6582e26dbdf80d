"""GraphQL subscriptions: the Subscription type and the changes it yields.

May import taskflow.api.graphql.common, taskflow.api.graphql.slots, taskflow.api.graphql.runs,
taskflow.service, taskflow.core; never taskflow.store.
"""
