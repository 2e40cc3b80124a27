"""The HTTP API's routes: one Powertools ``Router`` per resource (``router`` in each module),
composed by handlers/api.py; models beside their router, shared helpers in shared.py."""
