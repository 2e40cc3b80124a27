"""What the Tracer costs (issue 31): cold start (Tracer created and botocore patched, in a fresh
process that looks like a traced Lambda environment) and CPU per webhook send's subsegment
(annotations, the traceparent, the UDP emit to a socket on 127.0.0.1), against tracing disabled.

    .venv/bin/python -m reminders_ops.bench.trace [--runs 5] [--sends 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys

TRACE = "1-67a0b1c2-0123456789abcdef01234567"
_CHILD = r"""
import json, sys, time
from reminders import runtime
import botocore.client
t0 = time.perf_counter(); c0 = time.process_time()
enabled = runtime.tracing_enabled()
if enabled:
    runtime.tracer()
trace = runtime.send_trace()
t1 = time.perf_counter(); c1 = time.process_time()
n = int(sys.argv[1])
c2 = time.process_time()
for i in range(n):
    with trace("rem_" + "a" * 32, "dlv_%032x" % i) as tp:
        pass
c3 = time.process_time()
print(json.dumps({"enabled": enabled, "init_ms": (t1 - t0) * 1e3, "init_cpu_ms": (c1 - c0) * 1e3,
                  "send_us": (c3 - c2) / n * 1e6}))
"""


def _run(traced: bool, sends: int, port: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAMBDA_", "_X_AMZN", "AWS_XRAY"))}
    env.update({"AWS_LAMBDA_FUNCTION_NAME": "bench", "POWERTOOLS_SERVICE_NAME": "reminders"})
    if traced:
        env.update(
            {
                "LAMBDA_TASK_ROOT": os.getcwd(),
                "_X_AMZN_TRACE_ID": f"Root={TRACE};Parent=53995c3f42cd8ad8;Sampled=1",
                "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{port}",
            }
        )
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(sends)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--sends", type=int, default=2000)
    args = p.parse_args(argv)
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))  # receives (and drops) the segments: the emit is a real sendto
    port = sink.getsockname()[1]
    _run(True, 10, port), _run(False, 10, port)  # warm the file cache: runs compare like with like
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for _ in range(args.runs):  # interleaved: a busy machine slows both alike
        for traced in (False, True):
            runs[traced].append(_run(traced, args.sends, port))
    report = {
        ("traced" if traced else "disabled"): {
            k: round(statistics.median(r[k] for r in rs), 3) for k in ("init_ms", "init_cpu_ms", "send_us")
        }
        for traced, rs in runs.items()
    }
    sink.close()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
