"""Load-time checks of a definition: problems, their collection, checks of slots, steps, migrations.

May import taskflow.core.definition and its conditions (pure).
"""
