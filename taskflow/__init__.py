"""taskflow: human work with deadlines.

The public workflow-definition vocabulary (``Workflow``, ``State``, ``Slot``...)
is re-exported here so definitions read ``from taskflow import Workflow``.
"""

from __future__ import annotations

__version__ = "0.1.0"
