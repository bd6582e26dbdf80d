"""Timers and deadlines: firing due timers, batches, timer admin, calendar files.

May import taskflow.service (other domains' public functions), taskflow.store, taskflow.core.
"""
