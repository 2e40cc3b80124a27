"""Delivery of one queue message, one step per module: claim.py → attempt.py → record.py →
handoff.py (on base.py's ports and write; messages.py the message and shared facts). The use case
that composes them is services/deliver.py's ``Deliverer``."""
