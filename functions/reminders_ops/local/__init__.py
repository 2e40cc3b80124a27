"""The embedded local runtime (MISSION.md §7): moto in server mode with the synthesized stack's
resources, the real handlers invoked in-process the way Lambda invokes them, the HTTP API on
localhost, a local webhook receiver and a live status view. ``reminders local`` starts it."""
