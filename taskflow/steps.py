"""What an automatic step's action receives, and ``once``: the API for action authors.

The public name action code imports (``from taskflow import steps``,
``from taskflow.steps import StepContext``); the code lives with the other automatic-step
modules in :mod:`taskflow.service.steps.authoring`. See docs/automatic-steps.md.
"""

from __future__ import annotations

from taskflow.service.steps.authoring import OutsideAStep as OutsideAStep
from taskflow.service.steps.authoring import Recorder as Recorder
from taskflow.service.steps.authoring import StepContext as StepContext
from taskflow.service.steps.authoring import once as once
from taskflow.service.steps.authoring import recording as recording
