"""``reminders invoke`` / ``make invoke``: run one function of the synthesized template on an event.

Under ``tests/sam/run.sh --invoke`` (what ``make invoke`` runs first), which prepares a container
engine of its own, it runs ``sam local invoke`` of the template's function in the stand-in Lambda
container against a moto server on the docker bridge (``reminders_ops.samlocal``). Otherwise it
invokes the function in this process, the way Lambda would call it: an in-process moto backend is
provisioned from the template, the function's environment is resolved against it, the ``Handler``
named in the template is imported and called with the event and a Lambda-like context. It always
says which of the two it did.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reminders_ops.provision import (
    DEFAULT_TEMPLATE_PATH,
    AwsClients,
    FunctionSpec,
    Inventory,
    Provisioned,
    load_template,
    provision,
)

#: Credentials for the emulator only: set when none are configured so boto3 never looks further.
EMULATOR_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
DOCKER_INFO_TIMEOUT_SECONDS = 15


@dataclass
class LocalLambdaContext:
    """The attributes and method of the Lambda context object that handlers and Powertools use."""

    function_name: str
    memory_limit_in_mb: int
    invoked_function_arn: str
    timeout_seconds: float
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_group_name: str = ""
    log_stream_name: str = "local"
    identity: Any = None
    client_context: Any = None
    _deadline: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        if not self.log_group_name:
            self.log_group_name = f"/aws/lambda/{self.function_name}"
        self._deadline = time.monotonic() + self.timeout_seconds

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def lambda_context(
    function_name: str = "local", *, timeout_seconds: float = 60.0, memory_mb: int = 256
) -> LocalLambdaContext:
    """A context for a function that is not in a provisioned template (tests, benchmarks)."""
    return LocalLambdaContext(
        function_name=function_name,
        memory_limit_in_mb=memory_mb,
        invoked_function_arn=f"arn:aws:lambda:us-east-1:111111111111:function:{function_name}",
        timeout_seconds=timeout_seconds,
    )


def context_for(spec: FunctionSpec, provisioned: Provisioned) -> LocalLambdaContext:
    return LocalLambdaContext(
        function_name=provisioned.physical[spec.logical_id],
        memory_limit_in_mb=spec.memory_mb,
        invoked_function_arn=provisioned.attributes[spec.logical_id]["Arn"],
        timeout_seconds=spec.timeout_seconds,
    )


def lambda_environment(spec: FunctionSpec, provisioned: Provisioned) -> dict[str, str]:
    """The function's resolved environment plus what the Lambda service itself sets."""
    name = provisioned.physical[spec.logical_id]
    return {
        **provisioned.environments[spec.logical_id],
        "AWS_REGION": provisioned.region,
        "AWS_DEFAULT_REGION": provisioned.region,
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
        "_HANDLER": spec.handler,
    }


def import_handler(handler: str) -> Callable[[Any, Any], Any]:
    """``reminders.handlers.api.handler`` -> the callable, as the Lambda Python runtime does it."""
    module_name, _, attribute = handler.rpartition(".")
    if not module_name:
        raise ValueError(f"handler {handler!r} is not <module>.<function>")
    function: Callable[[Any, Any], Any] = getattr(importlib.import_module(module_name), attribute)
    return function


@contextmanager
def patched_environ(values: Mapping[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def call_handler(spec: FunctionSpec, provisioned: Provisioned, event: Any) -> Any:
    """Call the template's handler in this process with the function's environment and a context.
    The caller provides the emulator (``moto.mock_aws`` or a moto server) ``provisioned`` lives in."""
    with patched_environ(lambda_environment(spec, provisioned)):
        handler = import_handler(spec.handler)
        return handler(event, context_for(spec, provisioned))


def invoke_in_process(template: Mapping[str, Any], selector: str, event: Any, *, region: str) -> Any:
    from moto import mock_aws

    spec = Inventory.from_template(template).function(selector)
    credentials = {k: v for k, v in EMULATOR_CREDENTIALS.items() if k not in os.environ}
    with patched_environ({**credentials, "AWS_DEFAULT_REGION": region}), mock_aws():
        provisioned = provision(template, AwsClients.create(region_name=region))
        return call_handler(spec, provisioned, event)


def container_runtime() -> str | None:
    """Why ``sam local invoke`` cannot run here, or None when it can."""
    sam = os.environ.get("REMINDERS_SAM_BIN") or shutil.which("sam")
    if sam is None or shutil.which(sam) is None:
        return "sam CLI not found"
    if not os.environ.get("REMINDERS_SAM_IMAGE"):
        return "no prepared stand-in Lambda image (tests/sam/run.sh)"
    if shutil.which("docker") is None:
        return "docker not found"
    try:
        ok = (
            subprocess.run(
                ["docker", "info"], capture_output=True, timeout=DOCKER_INFO_TIMEOUT_SECONDS, check=False
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return None if ok else "`docker info` failed (no running container runtime)"


def invoke_in_container(
    template: Mapping[str, Any], template_path: Path, spec: FunctionSpec, event: Any
) -> int:
    """``sam local invoke`` against a moto server on the docker bridge gateway, provisioned from
    the template, with ``--env-vars`` resolved from it."""
    from reminders_ops.local.emulator import Emulator
    from reminders_ops.samlocal import SamLocal

    sam = SamLocal.from_environment()
    local = sam.write_template(template, template_path.with_name(template_path.stem + ".sam-local.json"))
    print(f"[invoke] template: {local} (local-only variables declared; timeouts raised if emulated)",
          file=sys.stderr)  # fmt: skip
    server = Emulator(account_id="123456789012", region=sam.region, host=sam.gateway).start()
    try:
        provisioned = provision(
            template, AwsClients.create(endpoint_url=server.endpoint, region_name=sam.region)
        )
        from reminders_ops.samlocal import env_vars

        invocation = sam.invoke(
            local, spec.logical_id, event, env_vars(provisioned, endpoint=server.endpoint)
        )
    finally:
        server.stop()
    print(invocation.stderr, file=sys.stderr)
    print(json.dumps(invocation.result, indent=2, default=str))
    print(
        f"[invoke] done: sam local invoke of {spec.logical_id} in {invocation.seconds:.0f} s", file=sys.stderr
    )
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--function", "-f", required=True, help="logical id, construct id or unique prefix (WebhookDelivery)"
    )
    parser.add_argument(
        "--event", "-e", required=True, type=Path, help="event JSON file, e.g. events/...json"
    )
    parser.add_argument("--template", "-t", type=Path, default=DEFAULT_TEMPLATE_PATH)
    parser.add_argument(
        "--mode",
        choices=["auto", "sam", "in-process"],
        default="auto",
        help="auto: sam local invoke when a container runtime is present, else in-process",
    )
    parser.add_argument("--region", default=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"))


def run(args: argparse.Namespace) -> int:
    template = load_template(args.template)
    spec = Inventory.from_template(template).function(args.function)
    event = json.loads(args.event.read_text(encoding="utf-8"))
    why_not_sam = container_runtime() if args.mode != "in-process" else "--mode in-process"
    if args.mode == "sam" and why_not_sam:
        print(f"cannot use sam local invoke: {why_not_sam}", file=sys.stderr)
        return 2
    if why_not_sam is None:
        print(
            f"[invoke] mode: sam local invoke (container) of {spec.logical_id} ({spec.handler})",
            file=sys.stderr,
        )
        return invoke_in_container(template, args.template, spec, event)
    print(
        f"[invoke] mode: in-process ({why_not_sam}) -- {spec.logical_id} ({spec.handler}) on moto "
        f"provisioned from {args.template}",
        file=sys.stderr,
    )
    result = invoke_in_process(template, args.function, event, region=args.region)
    print(json.dumps(result, indent=2, default=str))
    print(f"[invoke] done: in-process invocation of {spec.name}", file=sys.stderr)
    return 0
