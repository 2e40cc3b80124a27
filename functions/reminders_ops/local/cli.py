"""``reminders local``: run the whole stack locally (see reminders_ops.local.runtime)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .runtime import DEFAULT_TEMPLATE, Options
from .serve import run as run_runtime


def _env(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {value!r}")
    return key, val


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=8000, help="HTTP API port on 127.0.0.1 (0: any free port)"
    )
    parser.add_argument(
        "--demo",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="run the demo scenario (every delivery path) and print its proof summary",
    )
    parser.add_argument("--exit-after-demo", action="store_true", help="stop once the demo has finished")
    parser.add_argument("--template", type=Path, default=DEFAULT_TEMPLATE, help="the synthesized template")
    parser.add_argument(
        "--synth",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run `cdk synth` first when cdk.out is older than infra/ (default: yes)",
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="keep a snapshot of the emulator's state here across restarts (default: in memory only)",
    )
    parser.add_argument(
        "--emulator-port", type=int, default=0, help="moto server port (default: any free port)"
    )
    parser.add_argument(
        "--receiver-port", type=int, default=0, help="webhook receiver port (default: any free)"
    )
    parser.add_argument(
        "--tick-seconds",
        type=float,
        default=None,
        help="run rate(...) rules every N seconds instead of their template period (local only)",
    )
    parser.add_argument(
        "--env",
        type=_env,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a function environment variable (e.g. DELAY_WINDOW_SECONDS=30); repeatable",
    )
    parser.add_argument(
        "--view",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the live status view (default: when stdout is a terminal)",
    )
    parser.add_argument(
        "--ready-file", type=Path, help="write the endpoints and wiring here as JSON once ready"
    )
    parser.add_argument(
        "--log-file", type=Path, help="where handler logs and metrics go (default: a temp file)"
    )
    parser.add_argument("--parent-pid", type=int, help="stop when this process exits (for test harnesses)")
    parser.add_argument(
        "--concurrency-cap",
        type=int,
        default=None,
        help="at most this many concurrent invocations per event source mapping (default 4)",
    )


def run(args: argparse.Namespace) -> int:
    options = Options(
        port=args.port,
        demo=args.demo,
        template=args.template,
        synth=args.synth,
        state_dir=args.state_dir,
        emulator_port=args.emulator_port,
        receiver_port=args.receiver_port,
        tick_seconds=args.tick_seconds,
        env=dict(args.env),
        view=args.view,
        ready_file=args.ready_file,
        log_file=args.log_file,
        exit_after_demo=args.exit_after_demo,
        parent_pid=args.parent_pid,
    )
    if args.concurrency_cap:
        options.concurrency_cap = args.concurrency_cap
    return run_runtime(options)
