"""Run use cases: start, events (buffered too), moves, cancel, decisions and their ids, runs list.

May import taskflow.service.common, taskflow.store, taskflow.core, settings, clock, errors.
"""
