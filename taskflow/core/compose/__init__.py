"""Child runs decided purely: which to start on entering a state, what a child's end does.

May import taskflow.core.runs, core.definition and core.common (pure).
"""
