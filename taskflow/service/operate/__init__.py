"""Operator verbs: goto, pause, bulk, needs attention, retention, demo data.

May import taskflow.service (other domains' public functions), taskflow.store, taskflow.core.
"""
