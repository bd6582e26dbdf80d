"""GraphQL of delivery: notifications, outside senders, webhook endpoints and deliveries.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
