"""``python -m taskflow`` is the ``taskflow`` command."""

import sys

from taskflow.cli import main

sys.exit(main())
