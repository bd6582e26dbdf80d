"""The live feed: the trigger that announces committed timeline lines, and their reads.

May import taskflow.store.common, taskflow.core, taskflow.config.config and taskflow.errors.
"""
