"""Magic links, the pure part: a link's status, the abuse throttle, form text to payload.

May import taskflow.core.common, core.definition and taskflow.errors (pure).
"""
