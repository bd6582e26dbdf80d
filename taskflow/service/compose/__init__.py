"""Child runs: the worker's lane that starts, cancels and reads back children; detaching.

May import taskflow.core, store, service (runs, clocks, common), errors, config, clock.
"""
