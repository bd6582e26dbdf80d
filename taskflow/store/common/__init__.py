"""Store kernel: pool, embedded PostgreSQL, migrations, tables, statements, builder, locks, writer.

May import taskflow.core, taskflow.config.config and taskflow.errors.
"""
