"""Automatic steps in PostgreSQL: step rows, attempts, what ``steps.once`` kept, their tables.

May import taskflow.store.common, store.runs, taskflow.core and taskflow.errors.
"""
