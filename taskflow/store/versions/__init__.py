"""The registry of deployed definitions and the rows a run migration changes.

May import taskflow.store.common, store.runs, taskflow.core and taskflow.errors.
"""
