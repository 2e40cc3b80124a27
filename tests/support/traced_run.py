"""One create and one webhook send through the real handlers on moto, in a process that looks like
a traced Lambda environment (run by tests/integration/test_tracing.py as a subprocess, so the X-Ray
SDK's global recorder starts in its Lambda mode and emits over UDP to the test's socket).

Prints one JSON line: the reminder id, the delivery key and the headers the receiver got."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime

#: What must never reach a trace: the reminder's data, its key, the account, the destination.
PERSONAL = {"email": "jane.doe@example.com", "name": "Jane Doe"}
KEY = "renewal-reminder:acct-traced:jane.doe.example.com"


def main() -> None:
    sys.path.insert(0, os.getcwd())
    import boto3
    from moto import mock_aws
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
    from reminders.handlers.delivery import webhook_handler
    from reminders_ops.local.receiver import WebhookReceiver

    from tests.support.aws import create_resources
    from tests.support.lambda_runtime import call_api, invoke_batch, receive

    with mock_aws(), WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        os.environ.update(create_resources())
        status, created = call_api(
            "POST",
            "/reminders",
            {
                "key": KEY,
                "account_id": "acct-traced",
                "kind": "renewal",
                "due_at": datetime.now(UTC).isoformat(),
                "channels": [{"type": "webhook", "url": receiver.url + "/hooks"}],
                "template": {"id": "renewal", "version": 1},
                "data": PERSONAL,
            },
        )
        assert status == 201, created
        sqs = boto3.client("sqs")
        url = os.environ["WEBHOOK_QUEUE_URL"]
        result = invoke_batch(webhook_handler, sqs, url, receive(sqs, url))
        assert result["batchItemFailures"] == [], result
        key = created["deliveries"][0]["key"]
        _body, headers = receiver.state.last_post[key]
        print(json.dumps({"reminder_id": created["id"], "delivery_key": key, "headers": dict(headers)}))


if __name__ == "__main__":
    main()
