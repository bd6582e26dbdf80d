"""The service kernel: the container of services, retries on lost races, outages, idempotency keys.

May import taskflow.store, taskflow.core, taskflow.config.config, taskflow.clock and
taskflow.errors."""
