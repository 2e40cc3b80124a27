"""Receipts through the local API (``make bench``, figure "receipts"; issue 19): signed receiver
receipts POSTed over real HTTP to the API function (the local runtime's HTTP API in front of the
template's ApiFunction handler) on moto, then merged as the table's stream drives ReceiptsFunction.
Prints receipts per second (accept, merge) and the write units per receipt for a delivered item of
today's size, from the stored items' sizes (DynamoDB's own item-size rule)."""

from __future__ import annotations

import http.client
import json
import time
from datetime import UTC, datetime
from typing import Any


def measure(n: int = 300) -> dict[str, Any]:
    import os

    import boto3
    from moto import mock_aws
    from reminders import runtime
    from reminders.adapters.codec import reminder_to_item
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET, signing_key
    from reminders.domain.models import Attempt, ChannelType, destination_tag
    from reminders.domain.states import DeliveryState
    from reminders.services.intents import ChannelSpec, NewReminder
    from standardwebhooks.webhooks import Webhook

    from reminders_ops.bench.sim.embedded import create_stack_resources
    from reminders_ops.bench.sim.model import item_size, write_units
    from reminders_ops.local.http_api import HttpApi
    from reminders_ops.local.lambdas import LocalFunction
    from reminders_ops.local.spec import FunctionSpec, RouteSpec

    saved = dict(os.environ)
    with mock_aws():
        os.environ.update(
            {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}
        )
        env = create_stack_resources()
        env.update(
            {"WEBHOOK_SIGNING_SECRET": DEV_WEBHOOK_SECRET, "POWERTOOLS_METRICS_NAMESPACE": "Reminders"}
        )
        os.environ.update(env)
        runtime.reset()
        fn = LocalFunction(
            FunctionSpec("ApiFunction", "api", "reminders.handlers.api.handler", 10, 256, {}),
            "1",
            "us-east-1",
        )
        api = HttpApi(
            [RouteSpec("POST /inbound/receiver", "ApiFunction")], {"ApiFunction": fn}, account_id="1", port=0
        ).start()
        try:
            store = runtime.store()
            targets = []
            now = datetime.now(UTC)
            url = "http://127.0.0.1:9/reminders"
            for i in range(n):
                r, _ = runtime.reminders_service().create(
                    NewReminder(
                        account_id="acct-bench",
                        key=f"renewal-reminder:acct-bench:2026-12-20:{i}",
                        kind="renewal",
                        due_at=now,
                        channels=(ChannelSpec(ChannelType.WEBHOOK, url),),
                        template_id="renewal",
                        template_version=1,
                        data={"plan": "pro"},
                    )
                )
                d = r.deliveries["webhook-0"]
                d.state = DeliveryState.DELIVERED
                d.receipt = "r-1"
                d.delivered_at = now.isoformat()
                # Sent: the attempt's line scoped to its destination (a receipt proves only that).
                accepted = Attempt(
                    now.isoformat(), "attempt", "accepted", 200, "delivered", dest=destination_tag(url)
                )
                d.history.append(accepted)
                assert store.save_delivery(r.id, d, d.rev)
                targets.append((r.id, d.key))
            before = item_size(reminder_to_item(store.get(targets[0][0])))  # type: ignore[arg-type]
            # Receipts verify with the account's implicit endpoint of the origin (issue 24).
            endpoint = runtime.endpoints_service().signing_endpoint("acct-bench", url)
            assert endpoint is not None
            wh = Webhook(signing_key(endpoint.signing_secrets(now)[0]))
            port = int(api.server.server_address[1])
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            statuses: dict[int, int] = {}
            t0 = time.perf_counter()
            for i, (rid, key) in enumerate(targets):
                body = json.dumps(
                    {
                        "webhook_id": key,
                        "reminder_id": rid,
                        "status": "processed",
                        "event_time": now.isoformat(),
                        "event_id": f"evt-{i}",
                    }
                )
                msg_id = f"msg-{i}"
                at = datetime.now(UTC)
                headers = {
                    "content-type": "application/json",
                    "webhook-id": msg_id,
                    "webhook-timestamp": str(int(at.timestamp())),
                    "webhook-signature": wh.sign(msg_id, at, body),
                }
                conn.request("POST", "/inbound/receiver", body=body, headers=headers)
                resp = conn.getresponse()
                resp.read()
                statuses[resp.status] = statuses.get(resp.status, 0) + 1
            accept_s = time.perf_counter() - t0
            conn.close()
            ddb = boto3.client("dynamodb")
            items = [
                i for i in ddb.scan(TableName=env["TABLE_NAME"])["Items"] if i["pk"]["S"].startswith("RCPT#")
            ]
            from boto3.dynamodb.types import TypeDeserializer

            de = TypeDeserializer()
            plain = [{k: de.deserialize(v) for k, v in i.items()} for i in items]
            merger = runtime.receipt_merger()
            t1 = time.perf_counter()
            for item in plain:
                merger.apply_item(item)
            merge_s = time.perf_counter() - t1
            after = item_size(reminder_to_item(store.get(targets[0][0])))  # type: ignore[arg-type]
            receipt_item = item_size(plain[0]) if plain else 0
        finally:
            api.stop()
            runtime.reset()
    os.environ.clear()
    os.environ.update(saved)
    put_wu = write_units(receipt_item)
    merge_wu = write_units(after)
    return {
        "receipts": n,
        "statuses": statuses,
        "accept_per_second": n / accept_s if accept_s else 0.0,
        "merge_per_second": len(plain) / merge_s if merge_s else 0.0,
        "receipt_item_bytes": receipt_item,
        "delivered_item_bytes_before": before,
        "delivered_item_bytes_after": after,
        "write_units_per_receipt": put_wu + merge_wu,
        "write_units_breakdown": {"conditional_put": put_wu, "merge_write": merge_wu},
    }


def main() -> int:
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    print(json.dumps(measure(n), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
