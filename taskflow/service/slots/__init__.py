"""Slot use cases: claim, claim next, release, assign, complete; inbox, work, board, held slots.

May import taskflow.service (other domains' public functions), taskflow.store, taskflow.core.
"""
