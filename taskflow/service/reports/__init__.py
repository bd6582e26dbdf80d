"""Report use cases (SLA report, lead time, at risk) and Prometheus metrics.

May import taskflow.service (other domains' public functions), taskflow.store, taskflow.core.
"""
