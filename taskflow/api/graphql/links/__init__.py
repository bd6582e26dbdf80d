"""GraphQL of links: mint, revoke, list and use magic links.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
