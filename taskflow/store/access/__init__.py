"""Principal rows and report page sessions.

May import taskflow.store.common, taskflow.core and taskflow.errors.
"""
