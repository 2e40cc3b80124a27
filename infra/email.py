"""The email channel on Amazon SES v2: a configuration set whose sending events go to EventBridge.

The sender identity (``reminders:emailFrom``, or its domain) is verified outside this stack:
verifying an address or a domain needs a mailbox or DNS records that CloudFormation does not own.
The stack references the identity to scope the send permission to it.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_ses as ses
from constructs import Construct

from .nag import acknowledge

#: The SES events the delivery ledger reconciles against (accepted-then-crashed sends, bounces).
RECONCILED_EVENTS = [
    ses.EmailSendingEvent.SEND,
    ses.EmailSendingEvent.DELIVERY,
    ses.EmailSendingEvent.BOUNCE,
    ses.EmailSendingEvent.COMPLAINT,
    ses.EmailSendingEvent.REJECT,
]


class EmailChannel(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, email_from: str) -> None:
        super().__init__(scope, construct_id)
        self.email_from = email_from
        # SES's account-level suppression list is one list for every tenant of the AWS account: a
        # hard bounce of one tenant's mail would silently stop every other tenant's mail to that
        # address. This configuration set does not apply it (SuppressionOptions with no reasons);
        # each account's own list, checked before every send, suppresses (issue 24 item 9).
        self.configuration_set = ses.ConfigurationSet(
            self, "ConfigurationSet", reputation_metrics=True, disable_suppression_list=True
        )
        # SES delivers sending events only to the account's default event bus.
        default_bus = events.EventBus.from_event_bus_name(self, "DefaultBus", "default")
        self.configuration_set.add_event_destination(
            "ToEventBridge",
            destination=ses.EventDestination.event_bus(default_bus),
            events=RECONCILED_EVENTS,
        )
        # The HMAC key of the one-click unsubscribe links (RFC 8058) in every email: its own secret,
        # read by the email consumer (to sign) and the API (to verify), never logged. Replacing it
        # invalidates every unsubscribe link in every inbox.
        self.unsubscribe_secret = _hmac_key(
            self,
            "UnsubscribeSecret",
            "HMAC key of the reminders' one-click List-Unsubscribe links",
            "Rotating the unsubscribe key invalidates every List-Unsubscribe link already sent (they "
            "stay valid 60 days after their due time); rotation needs a verify-with-both overlap, an "
            "operator-driven change a scheduled rotation cannot coordinate.",
        )
        # The HMAC key of the suppression list's address hashes (issue 19): a bare SHA-256 of an
        # address is reversed by hashing a dictionary of addresses; keyed, the table reveals nothing.
        # Replacing it orphans every keyed suppression entry (they would no longer match).
        self.address_hash_secret = _hmac_key(
            self,
            "AddressHashSecret",
            "HMAC key of the email addresses' hashes in the reminders' suppression list",
            "The key names every suppression entry: a rotation would stop every entry from matching "
            "(an address cannot be re-hashed without the address itself); it is never rotated.",
        )
        domain = email_from.rsplit("@", 1)[-1]
        # SES authorizes a send against the identity that covers the sender: the address itself
        # when it is verified, else its domain. Both are referenced, neither is created here.
        self.identities = [
            ses.EmailIdentity.from_email_identity_name(self, "SenderAddressIdentity", email_from),
            ses.EmailIdentity.from_email_identity_name(self, "SenderDomainIdentity", domain),
        ]

    @property
    def configuration_set_arn(self) -> str:
        return Stack.of(self).format_arn(
            service="ses",
            resource="configuration-set",
            resource_name=self.configuration_set.configuration_set_name,
        )

    def grant_send(self, grantee: iam.IGrantable) -> None:
        """ses:SendEmail from the configured sender through this configuration set, nothing wider."""
        for identity in self.identities:
            identity.grant_send_email(grantee)
        iam.Grant.add_to_principal(
            grantee=grantee, actions=["ses:SendEmail"], resource_arns=[self.configuration_set_arn]
        )


def _hmac_key(
    scope: Construct, construct_id: str, description: str, why_not_rotated: str
) -> secretsmanager.Secret:
    """A generated HMAC key in Secrets Manager, retained on delete, its rotation acknowledged off."""
    secret = secretsmanager.Secret(
        scope,
        construct_id,
        description=description,
        generate_secret_string=secretsmanager.SecretStringGenerator(
            password_length=48, exclude_punctuation=True, include_space=False
        ),
        removal_policy=RemovalPolicy.RETAIN,
    )
    acknowledge(secret, "AwsSolutions-SMG4", why_not_rotated)
    return secret
