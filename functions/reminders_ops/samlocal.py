"""``sam local invoke`` of the synthesized template against a moto server the container reaches.

``tests/sam/run.sh`` prepares the engine (a dockerd of its own, the stand-in Lambda image, the
Powertools layer in SAM's layer cache) and passes it here through ``REMINDERS_SAM_*`` variables;
``make sam-test`` (tests/sam/) and ``make invoke`` use it.

What SAM is given besides the template and the event:

- ``--env-vars`` resolved from the resources provisioned in moto (SAM itself would pass logical ids
  as queue URLs), plus ``AWS_ENDPOINT_URL`` (the moto server on the docker bridge gateway).
- A copy of the template (``local_template``) that differs from the synthesized one in two ways,
  both printed: SAM passes a function only the variables its template declares, so the copy
  declares ``AWS_ENDPOINT_URL`` and ``ALLOW_DESTINATION_NETWORKS`` (empty; --env-vars fills them);
  and where the function runs under emulation (arm64 on x86_64), its ``Timeout`` is raised, since
  importing boto3 + Powertools + pydantic under qemu takes longer than the deployed timeouts.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reminders_ops.provision import FUNCTION, Provisioned

#: Declared empty in the local copy of the template so that --env-vars may set them.
LOCAL_ONLY_VARIABLES = ("AWS_ENDPOINT_URL", "ALLOW_DESTINATION_NETWORKS")
#: Timeout of each function in the local copy when it runs under emulation.
EMULATED_TIMEOUT_SECONDS = 300
#: SAM gives up on a container whose emulator is not listening yet (docker-proxy accepts the
#: connection first); such an attempt never reached the function, so it is retried.
READINESS_RACE = "No response from invoke container"
ATTEMPTS = 8


def local_template(template: Mapping[str, Any], *, timeout_seconds: int | None) -> dict[str, Any]:
    """The template with the local-only variables declared and, if given, every Timeout raised to
    at least ``timeout_seconds``; nothing else changes."""
    local: dict[str, Any] = copy.deepcopy(dict(template))
    for resource in local["Resources"].values():
        if resource.get("Type") != FUNCTION:
            continue
        properties = resource["Properties"]
        variables = properties.setdefault("Environment", {}).setdefault("Variables", {})
        for name in LOCAL_ONLY_VARIABLES:
            variables.setdefault(name, "")
        if timeout_seconds is not None:
            properties["Timeout"] = max(int(properties.get("Timeout", 3)), timeout_seconds)
    return local


def env_vars(
    provisioned: Provisioned, *, endpoint: str, allow_networks: str = "", **extra: str
) -> dict[str, dict[str, str]]:
    """``--env-vars``: per function logical id, its environment resolved against the provisioned
    resources, and the emulator endpoint."""
    return {
        lid: {
            **environment,
            "AWS_ENDPOINT_URL": endpoint,
            "ALLOW_DESTINATION_NETWORKS": allow_networks,
            **extra,
        }
        for lid, environment in provisioned.environments.items()
    }


@dataclass
class Invocation:
    logical_id: str
    result: Any
    logs: list[dict[str, Any]]
    stderr: str
    seconds: float
    attempts: int

    def log(self, action: str) -> dict[str, Any]:
        for line in self.logs:
            if line.get("action") == action:
                return line
        raise AssertionError(f"{self.logical_id} logged no {action!r}:\n{self.stderr[-4000:]}")


@dataclass
class SamLocal:
    sam: str
    image: str
    layer_cache: str
    region: str
    docker_host: str
    gateway: str
    arch: str
    extra_env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> SamLocal:
        env = os.environ if env is None else env
        missing = [
            k
            for k in ("REMINDERS_SAM_BIN", "REMINDERS_SAM_IMAGE", "REMINDERS_SAM_LAYER_CACHE", "DOCKER_HOST")
            if not env.get(k)
        ]
        if missing:
            raise RuntimeError(
                f"no prepared SAM engine ({', '.join(missing)} unset): run it via tests/sam/run.sh"
            )
        return cls(
            sam=env["REMINDERS_SAM_BIN"],
            image=env["REMINDERS_SAM_IMAGE"],
            layer_cache=env["REMINDERS_SAM_LAYER_CACHE"],
            region=env.get("REMINDERS_SAM_REGION", "us-east-1"),
            docker_host=env["DOCKER_HOST"],
            gateway=env.get("REMINDERS_SAM_GATEWAY", "172.17.0.1"),
            arch=env.get("REMINDERS_SAM_ARCH", "arm64"),
        )

    @property
    def emulated(self) -> bool:
        import platform

        host = {"aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), platform.machine())
        return host != self.arch

    def write_template(self, template: Mapping[str, Any], path: Path) -> Path:
        """The local copy beside the original (SAM resolves code assets relative to it)."""
        timeout = EMULATED_TIMEOUT_SECONDS if self.emulated else None
        path.write_text(json.dumps(local_template(template, timeout_seconds=timeout), indent=1))
        return path

    def invoke(
        self,
        template_path: Path,
        logical_id: str,
        event: Any,
        variables: Mapping[str, Mapping[str, str]],
        *,
        add_hosts: list[str] | None = None,
    ) -> Invocation:
        with tempfile.TemporaryDirectory(prefix="sam-invoke-") as tmp:
            event_file, env_file = Path(tmp, "event.json"), Path(tmp, "env.json")
            event_file.write_text(json.dumps(event))
            env_file.write_text(json.dumps(variables))
            command = [
                self.sam, "local", "invoke", "-t", str(template_path), logical_id,
                "-e", str(event_file), "--env-vars", str(env_file),
                "--invoke-image", self.image, "--skip-pull-image",
                "--layer-cache-basedir", self.layer_cache, "--region", self.region,
                "--container-host-interface", "127.0.0.1",
                *[arg for host in add_hosts or [] for arg in ("--add-host", host)],
            ]  # fmt: skip
            environment = {
                k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "REMINDERS_", "MOTO_"))
            }
            environment.update(
                DOCKER_HOST=self.docker_host,
                SAM_CLI_TELEMETRY="0",
                AWS_ACCESS_KEY_ID="testing",
                AWS_SECRET_ACCESS_KEY="testing",
                AWS_DEFAULT_REGION=self.region,
                **self.extra_env,
            )
            start = time.monotonic()
            for attempt in range(1, ATTEMPTS + 1):
                returncode, stdout, stderr, raced = _run(command, environment)
                if not raced:
                    break
                print(f"[sam] {logical_id}: the container was not listening yet (attempt {attempt}); again")
            seconds = time.monotonic() - start
        if returncode != 0 or raced:
            raise AssertionError(f"sam local invoke {logical_id} exited {returncode}:\n{stderr[-6000:]}")
        out = stdout.strip().splitlines()
        try:
            result = json.loads(out[-1]) if out else None
        except json.JSONDecodeError:
            result = out[-1]
        logs = []
        for line in stderr.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    logs.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return Invocation(logical_id, result, logs, stderr, seconds, attempt)


def _run(command: list[str], environment: Mapping[str, str]) -> tuple[int, str, str, bool]:
    """One ``sam local invoke``; on the readiness race it is stopped at once (SAM would otherwise
    wait out the function's timer before exiting) and reported as raced."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(environment)
    )
    assert process.stdout is not None and process.stderr is not None
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(process.stdout.read() if process.stdout else ""))
    reader.start()
    lines: list[str] = []
    raced = False
    for line in process.stderr:
        lines.append(line)
        if READINESS_RACE in line:
            raced = True
            process.terminate()
            break
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    reader.join()
    return process.returncode, "".join(out), "".join(lines), raced
