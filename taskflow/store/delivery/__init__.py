"""The notification outbox, leased deliveries, webhook endpoints, the event outbox and their tables.

May import taskflow.store.common, taskflow.core, taskflow.config.config and taskflow.errors.
"""
