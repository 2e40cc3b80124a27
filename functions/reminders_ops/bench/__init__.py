"""The benchmarks and the simulator (README.md); ``python -m reminders_ops.bench`` runs main.py."""
