"""The webhook channel's signing secret (Standard Webhooks), held in AWS Secrets Manager."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from .nag import acknowledge

#: A random key of 48 letters and digits. The webhook sender signs with these bytes as the HMAC key;
#: a receiver configures the same key in Standard Webhooks form, ``whsec_`` + base64(value).
SIGNING_SECRET_LENGTH = 48


class WebhookChannel(Construct):
    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.signing_secret = secretsmanager.Secret(
            self,
            "SigningSecret",
            description="Standard Webhooks signing key of the reminders webhook channel",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=SIGNING_SECRET_LENGTH,
                exclude_punctuation=True,
                include_space=False,
            ),
            # Every receiver holds this key: replacing it by accident would break all of them.
            removal_policy=RemovalPolicy.RETAIN,
        )
        acknowledge(
            self.signing_secret,
            "AwsSolutions-SMG4",
            "A webhook signing key is shared with every receiver: rotating it means publishing the new "
            "key to them first and signing with both during the overlap (Standard Webhooks allows "
            "several signatures), an operator-driven change a scheduled rotation cannot coordinate.",
        )
