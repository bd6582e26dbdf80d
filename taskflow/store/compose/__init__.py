"""Child runs in PostgreSQL: the ``run_child`` rows, their statements and their trigger.

May import taskflow.store.common, store.runs, taskflow.core and taskflow.errors.
"""
