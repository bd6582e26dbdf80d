"""Slots in PostgreSQL: guarded writes, claim-next, inbox/work/board reads, candidacy, held slots.

May import taskflow.store.common, store.runs, taskflow.core and taskflow.errors.
"""
