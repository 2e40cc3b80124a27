"""``python -m reminders_ops.bench``: the benchmark command (main.py)."""

import sys

from reminders_ops.bench.main import main

sys.exit(main())
