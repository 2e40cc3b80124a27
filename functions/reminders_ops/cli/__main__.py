"""``python -m reminders_ops.cli``: the ``reminders`` command."""

import sys

from reminders_ops.cli import main

sys.exit(main())
