"""taskflow: human work with deadlines.

The public workflow-definition vocabulary (``Workflow``, ``State``, ``Slot``...)
is re-exported here (each name imported as itself) so definitions read
``from taskflow import Workflow``.
See docs/definitions.md.
"""

from __future__ import annotations

from taskflow.core.definition import Actor as Actor
from taskflow.core.definition import Buffer as Buffer
from taskflow.core.definition import Catch as Catch
from taskflow.core.definition import Child as Child
from taskflow.core.definition import Deadline as Deadline
from taskflow.core.definition import Event as Event
from taskflow.core.definition import Exponential as Exponential
from taskflow.core.definition import Expr as Expr
from taskflow.core.definition import Field as Field
from taskflow.core.definition import Fixed as Fixed
from taskflow.core.definition import HookContext as HookContext
from taskflow.core.definition import Linear as Linear
from taskflow.core.definition import Move as Move
from taskflow.core.definition import OnError as OnError
from taskflow.core.definition import Owns as Owns
from taskflow.core.definition import Precondition as Precondition
from taskflow.core.definition import Route as Route
from taskflow.core.definition import Slot as Slot
from taskflow.core.definition import State as State
from taskflow.core.definition import Undoable as Undoable
from taskflow.core.definition import Workflow as Workflow
from taskflow.core.definition import actor as actor
from taskflow.core.definition import all_satisfied as all_satisfied
from taskflow.core.definition import any_satisfied as any_satisfied
from taskflow.core.definition import budget_by as budget_by
from taskflow.core.definition import business as business
from taskflow.core.definition import child as child
from taskflow.core.definition import count as count
from taskflow.core.definition import every as every
from taskflow.core.definition import expire as expire
from taskflow.core.definition import expired as expired
from taskflow.core.definition import item as item
from taskflow.core.definition import migration as migration
from taskflow.core.definition import milestone as milestone
from taskflow.core.definition import payload as payload
from taskflow.core.definition import principal as principal
from taskflow.core.definition import priority_by as priority_by
from taskflow.core.definition import real as real
from taskflow.core.definition import reminder as reminder
from taskflow.core.definition import result as result
from taskflow.core.definition import subject as subject
from taskflow.core.definition import timeout as timeout
from taskflow.core.definition import who as who

__version__ = "0.1.0"
