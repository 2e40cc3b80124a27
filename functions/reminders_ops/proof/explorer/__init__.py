"""The deterministic explorer (issue 26): one seed, virtual time, replayable, on the one in-memory world.

Every operation of ``/openapi.json`` (through the route catalogue, ``proof/routes.py``) and every
operator action is an action the explorer may take at any step; several accounts act, one of them an
adversary naming the others' ids, endpoints, tokens and keys wherever a field takes a string; faults
(lost answers, duplicates, crashes, clock skew, stale reads) are actions too; a checker judges the
whole promise after every step; a violation is shrunk to a minimal trace with one replay command.

Modules: ``sim`` (the world: the real API handler and the services on in-memory twins, the network
and SES models), ``actions`` (the action catalogue and its generator), ``checker`` (the promise),
``engine`` (the run, replay, the command line), ``shrink`` (delta debugging of a trace).
"""
