"""SLA report SQL: per-slot measures, aggregates, lead time, at risk, /metrics statements.

May import taskflow.store.common, store.runs, store.clocks, taskflow.core and taskflow.errors.
"""
