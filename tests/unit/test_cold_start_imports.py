"""Cold start (issue 14, goal 3): each function imports only what its path uses, and its clients
load only their own service models. Each check runs in a fresh interpreter (a test process has
imported everything already), so a module imported at the wrong place fails it.

The figure itself (CPU above a boto3 + Powertools process) is printed by
``python -m reminders_ops.bench --only overhead``; nothing here is timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import UnknownServiceError
from botocore.loaders import Loader
from reminders.adapters.clients import SERVICE_KIND, fast_loader

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"

#: What a process that only imports boto3 and Powertools (the bench's baseline) does not load,
#: and which function's path never needs it.
SES_CODE = ("reminders.adapters.ses",)
BATCH_UTILITIES = ("aws_lambda_powertools.utilities.batch",)  # the resolver has its own data classes
PYDANTIC = ("pydantic", "pydantic_core")
RESOLVER = ("aws_lambda_powertools.event_handler",)


def fresh(script: str, env: dict[str, str] | None = None) -> Any:
    """Run ``script`` in a new interpreter; it prints one JSON line last."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    child_env.update(
        {
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }
    )
    child_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


IMPORT_ONLY = """
import json, sys
import {module}
print(json.dumps(sorted(sys.modules)))
"""


def imported_by(module: str) -> set[str]:
    return set(fresh(IMPORT_ONLY.format(module=module)))


def loaded(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize(
    ("module", "never"),
    [
        ("reminders.handlers.delivery", SES_CODE + PYDANTIC + RESOLVER),
        ("reminders.handlers.receipts", SES_CODE + PYDANTIC + RESOLVER),
        ("reminders.handlers.opevents", SES_CODE + PYDANTIC + RESOLVER),
        ("reminders.handlers.api", SES_CODE + BATCH_UTILITIES),
        ("reminders.handlers.public", SES_CODE + BATCH_UTILITIES),  # issue 24: the API's resolver
        # the tick's path: the shard worker imports the batch utilities on its first call
        ("reminders.handlers.dispatcher", SES_CODE + RESOLVER + PYDANTIC + BATCH_UTILITIES),
    ],
)
def test_a_handler_module_imports_only_what_its_path_uses(module: str, never: tuple[str, ...]) -> None:
    assert loaded(imported_by(module), never) == []


def test_importing_a_handler_creates_no_client_and_loads_no_service_model() -> None:
    """Nothing at import time: the clients (and their service models) come with the first call."""
    got = fresh(
        """
import json
import reminders.handlers.api, reminders.handlers.delivery, reminders.handlers.dispatcher
from reminders.adapters import clients
print(json.dumps({"made": len(clients.MADE)}))
"""
    )
    assert got == {"made": 0}


FIRST_WEBHOOK_DELIVERY = """
import json, os, sys, time
from datetime import UTC, datetime, timedelta
from moto import mock_aws
from reminders_ops.local.faithful import faithful_moto
from reminders_ops.local.events import sqs_event
from reminders_ops.local.receiver import WebhookReceiver
from reminders_ops.bench.sim.embedded import DEV_SECRET, create_stack_resources, lambda_context
from reminders_ops.bench.sim.scenarios import command
from reminders.domain.models import ChannelType
from reminders.services.intents import ChannelSpec
import dataclasses, boto3

faithful_moto()
with mock_aws(), WebhookReceiver(DEV_SECRET) as receiver:
    os.environ.update(create_stack_resources())
    from reminders import runtime
    from reminders.handlers.delivery import webhook_handler
    cmd = dataclasses.replace(
        command(0, datetime.now(UTC) - timedelta(seconds=1)),
        channels=(ChannelSpec(ChannelType.WEBHOOK, receiver.url + "/hook"),),
    )
    runtime.reminders_service().create(cmd)
    sqs = boto3.client("sqs")
    got = sqs.receive_message(
        QueueUrl=os.environ["WEBHOOK_QUEUE_URL"], MaxNumberOfMessages=10, WaitTimeSeconds=1,
        AttributeNames=["All"], MessageAttributeNames=["All"],
    )["Messages"]
    arn = "arn:aws:sqs:us-east-1:123456789012:webhook"
    result = webhook_handler(sqs_event(got, arn), lambda_context("webhook"))
    from reminders.adapters import clients
    loader = clients._session()._session.get_component("data_loader")
    models = sorted({k[1] for k in loader._cache if k[0] == "load_service_model"})
    print(json.dumps({
        "failures": result["batchItemFailures"],
        "posted": len(receiver.state.bodies),
        "modules": sorted(sys.modules),
        "clients": sorted(c.meta.service_model.service_name for c in clients.MADE),
        "models": models,
    }))
"""


def test_the_webhook_consumer_never_imports_ses_code_nor_loads_the_sesv2_model() -> None:
    """A fresh process delivers its first webhook (moto, a real receiver on 127.0.0.1): the SES
    adapter is never imported, no SES client made, botocore's sesv2 model never read."""
    got = fresh(FIRST_WEBHOOK_DELIVERY, {"POWERTOOLS_LOG_LEVEL": "WARNING"})
    assert got["failures"] == []
    assert got["posted"] == 1
    assert loaded(set(got["modules"]), SES_CODE) == []
    assert "sesv2" not in got["clients"]
    assert "sesv2" not in got["models"]
    assert {"dynamodb", "sqs"} <= set(got["clients"])


@pytest.mark.parametrize("service", sorted(SERVICE_KIND))
def test_the_fast_loader_reads_the_same_models_as_botocore(service: str) -> None:
    """Plain dicts instead of OrderedDicts, the service's own directory instead of a scan of all:
    the same service model, endpoint rule set and endpoints data, value for value."""
    fast, botocore_own = fast_loader(), Loader()
    for kind in ("service-2", "endpoint-rule-set-1"):
        assert fast.load_service_model(service, kind) == botocore_own.load_service_model(service, kind)
    assert fast.load_data("endpoints") == botocore_own.load_data("endpoints")


def test_the_fast_loader_still_refuses_an_unknown_service_by_name() -> None:
    with pytest.raises(UnknownServiceError, match="no-such-service"):
        fast_loader().load_service_model("no-such-service", "service-2")


def test_the_fast_loader_searches_aws_data_path_first(tmp_path: Path) -> None:
    """A model under AWS_DATA_PATH wins over botocore's own, as with botocore's loader."""
    own = Loader().load_service_model("sqs", "service-2")
    version = own["metadata"]["apiVersion"]
    custom = {**own, "metadata": {**own["metadata"], "serviceId": "SQS from AWS_DATA_PATH"}}
    (tmp_path / "sqs" / version).mkdir(parents=True)
    (tmp_path / "sqs" / version / "service-2.json").write_text(json.dumps(custom))
    got = fast_loader(str(tmp_path)).load_service_model("sqs", "service-2")
    assert got["metadata"]["serviceId"] == "SQS from AWS_DATA_PATH"


@pytest.mark.parametrize(
    "body",
    [
        '{"shard": "3"}',
        '{"shard": true}',
        '{"shard": 3.0}',
        '{"shard": 3, "x": 1}',
        "[3]",
        "3",
        "",
        "{",
        None,
    ],
)
def test_a_malformed_dispatch_payload_fails_its_record_with_a_clear_error(body: str | None) -> None:
    """Poison message (MISSION: malformed payloads): the shard worker's record fails (and goes to
    the DLQ after maxReceiveCount) with an error naming what is wrong; nothing is dispatched."""
    from reminders.handlers.dispatcher import parse_shard_body

    with pytest.raises(ValueError, match=r"JSON|shard"):
        parse_shard_body(body)


def test_a_dispatch_payload_names_its_shard() -> None:
    from reminders.handlers.dispatcher import parse_shard_body

    assert parse_shard_body('{"shard": 7}') == 7


GC_AROUND_FIRST_CALL = """
import gc, json
import reminders.handlers
from reminders.handlers import coldstart
paused_at_import = not gc.isenabled()

@coldstart.reported
def handler(event, context):
    if event == "boom":
        raise RuntimeError("first invocation failed")
    return not gc.isenabled()

try:
    paused_in_first = handler("boom", None)
except RuntimeError:
    paused_in_first = None
print(json.dumps({
    "paused_at_import": paused_at_import,
    "enabled_after_first": gc.isenabled(),
    "frozen": gc.get_freeze_count(),
    "paused_in_second": handler("ok", None),
}))
"""


def test_in_lambda_the_collector_is_paused_until_the_first_invocation_ends_then_frozen() -> None:
    """Even when the first invocation fails, the collector runs again after it, and what existed
    then (modules, models, clients) is frozen: never walked again by a full collection."""
    got = fresh(GC_AROUND_FIRST_CALL, {"AWS_LAMBDA_FUNCTION_NAME": "reminders-webhook"})
    assert got["paused_at_import"] is True
    assert got["enabled_after_first"] is True
    assert got["frozen"] > 0
    assert got["paused_in_second"] is False


def test_outside_lambda_the_collector_is_left_alone() -> None:
    got = fresh(GC_AROUND_FIRST_CALL)
    assert got == {
        "paused_at_import": False,
        "enabled_after_first": True,
        "frozen": 0,
        "paused_in_second": False,
    }


ROUTES_OF_A_CREATE = """
import json, sys
from reminders.handlers.api import composition
composition.include_routes("/reminders")
print(json.dumps(sorted(sys.modules)))
"""


def test_the_reminder_routes_import_the_preview_code_only_when_a_preview_is_asked_for() -> None:
    """The API's first ``POST /reminders`` includes the reminder routes; the preview's service (the
    delivery rules, health and outlook it replays: ~20 ms) waits for ``GET /reminders/preview``."""
    modules = set(fresh(ROUTES_OF_A_CREATE))
    assert "reminders.handlers.routes.reminders" in modules
    assert loaded(modules, ("reminders.services.support", "reminders.services.deliver")) == []
