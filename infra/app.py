"""The CDK app: ``python -m infra.app`` (see cdk.json); ``make synth`` runs it through the pinned CLI.

Account and region are pinned from context (``reminders:account`` / ``reminders:region``) so that
synthesis never looks anything up. cdk-nag's AwsSolutions pack runs at every synthesis and fails it
on any finding that is not acknowledged with a reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import App, Environment

from .nag import add_checks
from .settings import Settings
from .stack import RemindersStack

STACK_NAME = "RemindersStack"

#: What the CDK CLI sets by default; set here too so an in-process synthesis (tests) produces the
#: same template: asset metadata lets `sam local invoke` find the code, path metadata names
#: the constructs.
CLI_DEFAULT_CONTEXT: dict[str, Any] = {
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:enable-path-metadata": True,
}


def build_app(
    context: Mapping[str, Any] | None = None, outdir: str | None = None, *, nag: bool = True
) -> tuple[App, RemindersStack]:
    app = App(context={**CLI_DEFAULT_CONTEXT, **(context or {})}, outdir=outdir)
    settings = Settings.from_node(app.node)
    stack = RemindersStack(
        app,
        STACK_NAME,
        settings=settings,
        env=Environment(account=settings.account, region=settings.region),
        description="Reminder delivery: SQS + Lambda + DynamoDB + EventBridge + SES + API Gateway",
        analytics_reporting=False,
    )
    if nag:
        add_checks(app)
    return app, stack


def main() -> None:
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()
