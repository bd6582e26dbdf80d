"""GraphQL of slots: the Slot type, inbox/work/board queries and the work mutations.

May import taskflow.api.graphql.common, taskflow.service, taskflow.core; never taskflow.store.
"""
