"""Where the operator commands find the stack's resources, in AWS and in the local emulator alike.

Names come from explicit flags first, then from the stack's outputs: CloudFormation's
``DescribeStacks`` for a deployed stack, or — against the local emulator (``--endpoint-url``),
where no CloudFormation stack exists — the outputs the local runtime resolved and published in the
emulator's SSM parameter ``/reminders/local/<stack>/outputs``.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from typing import Any

DEFAULT_STACK = "RemindersStack"
LOCAL_OUTPUTS_PARAMETER = "/reminders/local/{stack}/outputs"
CHANNELS = ("webhook", "email", "dispatch")


class StackRefError(RuntimeError):
    """A resource of the stack could not be found (say which flag names it)."""


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("where")
    g.add_argument(
        "--endpoint-url",
        default=os.environ.get("REMINDERS_ENDPOINT_URL"),
        help="the local emulator (printed by `reminders local`); omit for AWS",
    )
    g.add_argument("--region", default=None, help="AWS region (default: the profile's, or us-east-1)")
    g.add_argument("--profile", default=None, help="AWS profile (AWS only)")
    g.add_argument("--stack", default=DEFAULT_STACK, help="the CloudFormation stack name")


@dataclass
class StackTarget:
    stack: str = DEFAULT_STACK
    endpoint_url: str | None = None
    region: str | None = None
    profile: str | None = None
    _outputs: dict[str, str] | None = field(default=None, repr=False)
    _session: Any = field(default=None, repr=False)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> StackTarget:
        return cls(stack=args.stack, endpoint_url=args.endpoint_url, region=args.region, profile=args.profile)

    @property
    def local(self) -> bool:
        return self.endpoint_url is not None

    def session(self) -> Any:
        if self._session is None:
            import boto3

            if self.local:
                # The emulator accepts any credentials; never pick up a real profile by accident.
                self._session = boto3.session.Session(
                    aws_access_key_id="local",
                    aws_secret_access_key="local",
                    aws_session_token="local",
                    region_name=self.region or "us-east-1",
                )
            else:
                from botocore.exceptions import ProfileNotFound

                try:
                    self._session = boto3.session.Session(profile_name=self.profile, region_name=self.region)
                except ProfileNotFound as exc:
                    raise StackRefError(f"--profile {self.profile!r}: no such AWS profile ({exc})") from exc
        return self._session

    def client(self, service: str) -> Any:
        session = self.session()
        region = self.region or session.region_name or "us-east-1"
        return session.client(service, endpoint_url=self.endpoint_url, region_name=region)

    def resource(self, service: str) -> Any:
        session = self.session()
        region = self.region or session.region_name or "us-east-1"
        return session.resource(service, endpoint_url=self.endpoint_url, region_name=region)

    def outputs(self) -> dict[str, str]:
        if self._outputs is None:
            self._outputs = self._local_outputs() if self.local else self._cloudformation_outputs()
        return self._outputs

    def _cloudformation_outputs(self) -> dict[str, str]:
        try:
            stacks = self.client("cloudformation").describe_stacks(StackName=self.stack)["Stacks"]
        except Exception as exc:
            raise StackRefError(f"stack {self.stack!r} not readable: {exc}") from exc
        return {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}

    def _local_outputs(self) -> dict[str, str]:
        name = LOCAL_OUTPUTS_PARAMETER.format(stack=self.stack)
        try:
            value = self.client("ssm").get_parameter(Name=name)["Parameter"]["Value"]
        except Exception as exc:
            raise StackRefError(
                f"no outputs of {self.stack!r} at {self.endpoint_url} ({name}): is `reminders local` running"
                " there?"
            ) from exc
        outputs: dict[str, str] = json.loads(value)
        return outputs

    def output(self, key: str) -> str:
        outputs = self.outputs()
        if key not in outputs:
            known = ", ".join(sorted(outputs))
            raise StackRefError(f"stack {self.stack!r} has no output {key!r} (outputs: {known})")
        return outputs[key]

    # -- names -----------------------------------------------------------------------------------
    def queue_url(self, channel: str) -> str:
        return self.output(f"{channel.capitalize()}QueueUrl")

    def dlq_url(self, channel: str) -> str:
        return self.output(f"{channel.capitalize()}DLQUrl")

    def table_name(self) -> str:
        return self.output("TableName")
