"""Run use cases: start, events (buffered too), moves, cancel, carrying out a decision, runs list.

May import taskflow.service.common, taskflow.store, taskflow.core, settings, clock, errors.
"""
