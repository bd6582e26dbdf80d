"""Who may see and do what (the rule tables), principals and e-mail addresses, decided purely.

May import taskflow.core.common, taskflow.core.definition and taskflow.errors (pure).
"""
