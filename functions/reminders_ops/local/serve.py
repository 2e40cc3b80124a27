"""``reminders local``'s command: start the local runtime (runtime.py), serve it until stopped, with
the live status view (status.py) and the demo (demo.py) on top. A view or a demo depends on the
runtime, never the reverse."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from .runtime import LocalRuntime, Options, StartupError

VIEW_REFRESH_SECONDS = 1.0


def run(options: Options) -> int:
    out = sys.stdout
    view = options.view if options.view is not None else out.isatty()
    rt = LocalRuntime(options, out=out)
    stop = rt.stop_event

    def on_signal(signum: int, _frame: Any) -> None:
        stop.set()

    # Ctrl-C, a supervisor's SIGTERM, a closed terminal (SIGHUP): the same clean stop.
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        try:
            rt.start()
        except StartupError as exc:
            out.write(f"reminders local: {exc}\n")
            return 2
        out.write(rt.banner() + "\n")
        out.flush()
        if options.ready_file is not None:
            tmp = options.ready_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(rt.describe(), indent=2))
            tmp.replace(options.ready_file)
        return _serve(rt, options, view, out)
    finally:
        rt.stop()
        for s, h in previous.items():
            signal.signal(s, h)
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            out.write("reminders local: stopped\n")
            out.flush()


def _serve(rt: LocalRuntime, options: Options, view: bool, out: TextIO) -> int:
    from .status import collect, render

    result: dict[str, Any] = {}
    say: Callable[[Any], None]
    live: Any = None
    if view:
        from rich.console import Console
        from rich.live import Live

        console = Console(file=out)
        live = Live(
            console=console,
            refresh_per_second=2,
            transient=False,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        live.start()

        def say(msg: Any) -> None:
            # Plain strings are printed as they are ("[demo] ..." is not rich markup).
            plain = isinstance(msg, str)
            live.console.print(msg, markup=not plain, highlight=not plain)

    else:

        def say(msg: Any) -> None:
            if not isinstance(msg, str):
                from rich.console import Console

                Console(file=out, width=120).print(msg)
            else:
                out.write(msg + "\n")
            out.flush()

    demo_thread: threading.Thread | None = None
    if options.demo:
        from .demo import Demo

        def run_demo() -> None:
            try:
                result["ok"] = Demo(rt, say).run()
            except Exception as exc:
                say(f"demo failed: {type(exc).__name__}: {exc}")
                result["ok"] = False
            finally:
                if options.exit_after_demo:
                    rt.stop_event.set()

        demo_thread = threading.Thread(target=run_demo, name="demo", daemon=True)
        demo_thread.start()
    try:
        while not rt.stop_event.is_set():
            if live is not None:
                live.update(render(rt, collect(rt)))
            if options.parent_pid is not None and not _alive(options.parent_pid):
                say(f"reminders local: parent process {options.parent_pid} is gone; stopping")
                break
            rt.stop_event.wait(VIEW_REFRESH_SECONDS)
    finally:
        if live is not None:
            with contextlib.suppress(OSError):
                live.update(render(rt, collect(rt)))
                live.stop()
    if options.demo and options.exit_after_demo:
        return 0 if result.get("ok") else 1
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
