"""An SES send refused with an error that names the recipient, made inside a traced handler whose
Tracer patched botocore (as every function's does), in a process that looks like a traced Lambda
(run by tests/integration/test_tracing_hostile.py, which collects the segments over UDP)."""

from __future__ import annotations

import os
import sys

ADDRESS = "jane.doe@example.com"
#: What SES answers in its sandbox for a recipient it has not verified (it names the address).
MESSAGE = (
    "Email address is not verified. The following identities failed the check in region US-EAST-1: " + ADDRESS
)


def main() -> None:
    sys.path.insert(0, os.getcwd())
    import boto3
    from botocore.exceptions import ClientError
    from botocore.stub import Stubber
    from reminders import runtime
    from reminders.handlers import tracing

    runtime.tracer()  # the functions' Tracer: botocore patched
    ses = boto3.client("sesv2", region_name="us-east-1")
    stub = Stubber(ses)
    stub.add_client_error("send_email", "MessageRejected", MESSAGE, 400)
    stub.activate()

    @tracing.traced
    def handler(event: object, context: object) -> dict[str, bool]:
        try:
            ses.send_email(
                FromEmailAddress="reminders@example.org",
                Destination={"ToAddresses": [ADDRESS]},
                Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "b"}}}},
            )
        except ClientError:
            return {"sent": False}  # the adapter classifies it; nothing raised
        return {"sent": True}

    print(handler({}, None))


if __name__ == "__main__":
    main()
