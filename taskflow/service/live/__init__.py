"""Live subscriptions: one listener per process, changes read per group and fanned out.

May import taskflow.core, taskflow.store, taskflow.service, taskflow.config and taskflow.errors.
"""
