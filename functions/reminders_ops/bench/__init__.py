"""The benchmarks and the simulator (docs/performance.md); ``python -m reminders_ops.bench`` runs main.py."""
