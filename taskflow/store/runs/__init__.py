"""Runs, subjects, their timeline and buffered events in PostgreSQL (tables, .sql, rows <-> core).

May import taskflow.store.common, taskflow.core and taskflow.errors.
"""
