"""Magic-link and throttle rows, and the guarded consume statement.

May import taskflow.store.common, taskflow.core and taskflow.errors.
"""
