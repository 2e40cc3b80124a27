"""explain, preview and purge against the real handlers and moto."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from reminders.adapters.codec import reminder_from_item
from reminders.services import support
from reminders_ops.cli.support import minutes_of, purge, render
from reminders_ops.local.receiver import Behaviour

from tests.proof.harness import Harness
from tests.support.aws import table
from tests.support.lambda_runtime import call_api

pytestmark = pytest.mark.usefixtures("no_sleep")


def _items() -> list[dict[str, Any]]:
    return [i for i in table().scan()["Items"] if str(i["pk"]).startswith("R#")]


def test_explain_shows_attempts_changes_and_next_the_same_from_table_and_api(proof: Harness) -> None:
    proof.receiver.script("*", [Behaviour(429)])
    r = proof.create("support:acct-1:explain")
    first = proof.webhook.poll()
    assert first is not None
    call_api("PATCH", f"/reminders/{r['id']}", {"data": {"plan": "team"}})
    _, api_view = call_api("GET", f"/reminders/{r['id']}")
    item = table().get_item(Key={"pk": f"R#{r['id']}", "sk": "R"})["Item"]
    now = datetime.now(UTC)
    from_api = support.explain(api_view, now)
    from_table = support.explain(support.reminder_view(reminder_from_item(item)), now)
    assert from_api == from_table
    (d,) = from_api["deliveries"]
    assert [(a["outcome"], a["status"], a["decision"]) for a in d["attempts"]] == [
        ("throttled", 429, "retry")
    ]
    assert d["attempts"][0]["policy_version"] and d["attempts"][0]["delay_seconds"] is not None
    assert [(c["event"], c["detail"]) for c in d["changes"]] == [("correct", "data")]
    assert d["state"] == "queued" and "next attempt" in d["next"] and d["stopped"] is None
    text = render(from_api)
    assert "attempt" in text and "throttled 429 -> retry" in text and "changed" in text
    assert "team" not in text and "hooks" not in text  # no data values, no destination


def test_explain_of_a_dead_letter_says_why_it_stopped_and_what_next(proof: Harness) -> None:
    proof.receiver.script("*", [Behaviour(410)])
    r = proof.create("support:acct-1:explain-dead")
    assert proof.webhook.poll() is not None
    _, view = call_api("GET", f"/reminders/{r['id']}")
    (d,) = support.explain(view, datetime.now(UTC))["deliveries"]
    assert d["stopped"].startswith("dead-lettered: permanent_failure")
    assert "redrive" in d["next"] and d["owner"] == "nobody (terminal)"


def test_preview_counts_per_minute_and_channel_and_changes_nothing(proof: Harness) -> None:
    proof.create("support:acct-1:soon", due_in=300)  # inside the SQS window: already in SQS
    proof.create("support:acct-1:later", due_in=1200, email=True)  # beyond it: the dispatcher's
    proof.create("support:acct-2:later", due_in=1300, account="acct-2")
    proof.create("support:acct-1:tomorrow", due_in=86400)
    before = _items()
    status, out = call_api("GET", "/reminders/preview", query={"next_minutes": "30"})
    assert status == 200, out
    assert out["totals"] == {"to_dispatch": 2, "in_sqs": 1}
    counts: dict[str, int] = {}
    for row in out["per_minute"].values():
        for k, v in row.items():
            counts[k] = counts.get(k, 0) + v
    assert counts == {"webhook:in_sqs": 1, "webhook": 2, "email": 1}
    assert len(out["first_ids"]) == 3 and out["queues"]["webhook"]["delayed"] == 1
    status, mine = call_api("GET", "/reminders/preview", query={"next_minutes": "30", "account_id": "acct-2"})
    assert mine["totals"] == {"attempts": 1, "may_attempt": 0, "not_attempted": 0}  # by the rules
    assert _items() == before
    status, _ = call_api("GET", "/reminders/preview", query={"next_minutes": "0"})
    assert status == 422
    assert minutes_of("1h") == 60 and minutes_of("30m") == 30
    for text in ("soon", "2h", "61m"):  # beyond the hour a preview may read in one request
        with pytest.raises(SystemExit):
            minutes_of(text)


def test_purge_is_bounded_resumable_and_touches_only_that_account(
    proof: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in range(5):
        proof.create(f"support:acct-1:purge-{n}", due_in=3600)
    for n in range(2):
        proof.create(f"support:acct-2:keep-{n}", due_in=3600, account="acct-2")
    client = boto3.client("dynamodb")
    name = table().name
    runs = []
    resume = None
    while True:
        result = purge(client, name, "acct-1", max_items=2, page_size=3, resume=resume)
        runs.append(result["deleted"])
        resume = result["resume"]
        if resume is None:
            break
        assert len(runs) < 10
    assert sum(runs) == 5 and max(runs) <= 2
    left = _items()
    assert sorted(i["acct"] for i in left) == ["acct-2", "acct-2"]
    assert "support:" not in json.dumps(runs) and "support:" not in capsys.readouterr().out


def test_the_cli_explains_previews_and_purges_through_the_stacks_outputs(
    proof: Harness, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``reminders explain|preview|purge`` find the table and queues through the stack's outputs
    (here moto's, as `reminders local` publishes them or CloudFormation answers them)."""
    from reminders_ops import cli
    from reminders_ops.stackrefs import StackTarget

    outputs = {
        "TableName": table().name,
        "WebhookQueueUrl": proof.env["WEBHOOK_QUEUE_URL"],
        "EmailQueueUrl": proof.env["EMAIL_QUEUE_URL"],
    }
    monkeypatch.setattr(StackTarget, "outputs", lambda self: outputs)
    r = proof.create("support:acct-9:cli", account="acct-9", due_in=600)
    capsys.readouterr()  # the API's own log lines
    assert cli.main(["explain", "acct-9:support:acct-9:cli", "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert explained["reminder"]["id"] == r["id"] and explained["deliveries"][0]["state"] == "queued"
    assert cli.main(["explain", r["id"]]) == 0
    assert r["id"] in capsys.readouterr().out
    assert cli.main(["explain", "rem_" + "0" * 32]) == 1
    assert cli.main(["preview", "--next", "15m", "--account", "acct-9", "--json"]) == 0
    previewed = json.loads(capsys.readouterr().out)
    assert previewed["first_ids"] == [r["id"]] and "queues" not in previewed  # shared by every account
    assert cli.main(["purge", "--account", "acct-9"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == {
        "action": "purge",
        "deleted": 1,
        "scanned": json.loads(out)["scanned"],
        "resume": None,
    }
    assert "support:" not in out


def test_the_cli_preview_promises_no_certain_attempt_when_its_endpoint_is_held(
    proof: Harness, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reminders.adapters.health_store import DynamoHealthStore
    from reminders.domain.endpoints import implicit_endpoint_id
    from reminders.domain.health import EndpointHealth, EndpointState, HealthPolicy, HealthWhy
    from reminders_ops import cli
    from reminders_ops.stackrefs import StackTarget

    outputs = {
        "TableName": table().name,
        "WebhookQueueUrl": proof.env["WEBHOOK_QUEUE_URL"],
        "EmailQueueUrl": proof.env["EMAIL_QUEUE_URL"],
    }
    monkeypatch.setattr(StackTarget, "outputs", lambda self: outputs)
    r = proof.create("support:acct-8:held", account="acct-8", due_in=120)
    endpoint = implicit_endpoint_id("acct-8", proof.receiver.url + "/hooks")
    health = DynamoHealthStore(boto3.client("dynamodb"), table().name, HealthPolicy())
    assert health.transition(
        EndpointHealth(endpoint, "acct-8"),
        EndpointState.HELD,
        HealthWhy.OPERATOR,
        datetime.now(UTC).timestamp(),
        "acct-8",
    )
    capsys.readouterr()
    assert cli.main(["preview", "--next", "15m", "--account", "acct-8", "--json"]) == 0
    previewed = json.loads(capsys.readouterr().out)
    assert [a["reminder_id"] for a in previewed["attempts"]] == [], previewed
    assert [a["reminder_id"] for a in previewed["may_attempt"]] == [r["id"]], previewed
