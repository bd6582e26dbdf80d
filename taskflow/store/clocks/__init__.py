"""Clock ledgers, timer rows and batches, business time in SQL (calendar days, risk).

May import taskflow.store.common, store.runs, taskflow.core and taskflow.errors.
"""
