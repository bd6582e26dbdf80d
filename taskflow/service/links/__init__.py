"""Magic links: mint, revoke, list, use one, mint one for a reminder.

May import taskflow.service (other domains' public functions), taskflow.store, taskflow.core.
"""
