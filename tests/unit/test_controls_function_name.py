"""Pausing consumers by name (``reminders consumers pause <function>``) finds a mapping whether it
names the function or, with the SnapStart option (issue 32.2), its ``live`` alias."""

from __future__ import annotations

from reminders_ops.cli.controls import function_name

ARN = "arn:aws:lambda:us-east-1:111111111111:function:RemindersStack-EmailConsumer-ABC"


def test_consumer_name_is_the_function_when_the_mapping_names_its_alias() -> None:
    assert function_name(ARN) == "RemindersStack-EmailConsumer-ABC"
    assert function_name(ARN + ":live") == "RemindersStack-EmailConsumer-ABC"
    assert function_name(ARN + ":7") == "RemindersStack-EmailConsumer-ABC"
