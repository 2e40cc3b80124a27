#!/usr/bin/env python3
"""dockerd's userland proxy for make sam-test (``dockerd --userland-proxy-path``), docker-proxy's
arguments and readiness signal, with one difference: a connection that arrives before the
container listens waits for it (up to 60 s) instead of being dropped.

SAM takes a successful connect to the published port as the container's readiness and then tries
its request three times within 0.35 s; docker-proxy accepts at once and drops the connection while
the Runtime Interface Emulator (emulated under qemu for arm64) is still starting, so SAM reports
"No response from invoke container". Waiting here makes the first request the one that runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import threading
import time

WAIT_SECONDS = 60.0


def pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, target):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def serve(client: socket.socket, backend: tuple[str, int]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            upstream = socket.create_connection(backend, timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline:
                client.close()
                return
            time.sleep(0.1)
    upstream.settimeout(None)
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client)


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("proto", "host-ip", "host-port", "container-ip", "container-port"):
        parser.add_argument(f"-{name}")
    args, _ = parser.parse_known_args()
    signal = os.fdopen(3, "w")
    if args.proto != "tcp":
        signal.write(f"1\nonly tcp is supported, not {args.proto}\n")
        signal.close()
        return
    try:
        server = socket.create_server((args.host_ip, int(args.host_port)), reuse_port=False)
    except OSError as exc:
        signal.write(f"1\n{exc}\n")
        signal.close()
        return
    signal.write("0\n")
    signal.close()
    backend = (args.container_ip, int(args.container_port))
    while True:
        client, _ = server.accept()
        threading.Thread(target=serve, args=(client, backend), daemon=True).start()


if __name__ == "__main__":
    main()
