"""The webhook channel's signing secret (Standard Webhooks), held in AWS Secrets Manager, and the
customer-managed KMS key that wraps each webhook endpoint's data key (envelope encryption of the
endpoints' own secrets in the table)."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
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
        # Wraps the deployment signing key (GenerateDataKey once per deployment; each instance that
        # opens a secret decrypts it once) that implicit endpoints' secrets are derived from (HKDF),
        # and one data key per registered endpoint (encryption context endpoint_id). The API creates
        # and rotates, the webhook consumer makes an account's implicit endpoint of a bare URL's
        # origin at its first send.
        self.endpoint_key = kms.Key(
            self,
            "EndpointKey",
            description="Wraps the data key of each webhook endpoint's signing secrets (envelope)",
            enable_key_rotation=True,
            removal_policy=RemovalPolicy.RETAIN,  # losing it loses every endpoint's secrets
        )

    def grant_endpoint_secrets(self, grantee: iam.IGrantable, *, create: bool) -> None:
        """``create``: make data keys and open them (the API); else open only (the consumer)."""
        # The exact actions used (no ``GenerateDataKey*`` / ``ReEncrypt*`` wildcards).
        if create:
            self.endpoint_key.grant(grantee, "kms:GenerateDataKey", "kms:Decrypt")
        else:
            self.endpoint_key.grant(grantee, "kms:Decrypt")
