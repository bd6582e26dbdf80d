"""History use cases: a run's state at an instant, its visits, counts per state.

May import the other service domains, the store, the core and taskflow.errors.
"""
