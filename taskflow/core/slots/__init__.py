"""Slot moves (claim, release, assign), slot filters, who held a slot, claim facts.

May import taskflow.core.runs models, core.common, core.definition and core.clocks (pure).
"""
