"""Automatic steps: actions run under a lease, their queue, batch, guard, admin, authors' API.

May import taskflow.service (other domains' public functions), taskflow.store, taskflow.core.
"""
