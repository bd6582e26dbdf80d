"""What leaves the house: notices, mail and its templates, outside senders, webhooks, sending.

May import taskflow.service (other domains' public functions), taskflow.store, taskflow.core.
"""
