""" Contains all the data models used in inputs/outputs """

from .attempt_view import AttemptView
from .correction import Correction
from .correction_channels_type_0 import CorrectionChannelsType0
from .correction_data_type_0 import CorrectionDataType0
from .create_endpoint import CreateEndpoint
from .create_reminder import CreateReminder
from .create_reminder_data import CreateReminderData
from .delivery_view import DeliveryView
from .delivery_view_history_dropped import DeliveryViewHistoryDropped
from .delivery_view_last_error_type_0 import DeliveryViewLastErrorType0
from .email_channel import EmailChannel
from .email_target import EmailTarget
from .endpoint_health_view import EndpointHealthView
from .endpoint_secret_view import EndpointSecretView
from .endpoint_view import EndpointView
from .error import Error
from .error_detail_type_0_item import ErrorDetailType0Item
from .error_view import ErrorView
from .error_view_detail_type_0_item import ErrorViewDetailType0Item
from .event_endpoint_view import EventEndpointView
from .find_reminders_get_state_type_0 import FindRemindersGetStateType0
from .health_health_get_return import HealthHealthGetReturn
from .http_validation_error import HTTPValidationError
from .list_view import ListView
from .listed_view import ListedView
from .locale_in import LocaleIn
from .patch_endpoint import PatchEndpoint
from .preview_in import PreviewIn
from .preview_in_data import PreviewInData
from .preview_view import PreviewView
from .preview_view_attempts_type_0_item import PreviewViewAttemptsType0Item
from .preview_view_may_attempt_type_0_item import PreviewViewMayAttemptType0Item
from .preview_view_not_attempted_type_0_item import PreviewViewNotAttemptedType0Item
from .preview_view_per_minute import PreviewViewPerMinute
from .preview_view_per_minute_additional_property import PreviewViewPerMinuteAdditionalProperty
from .preview_view_queues_type_0 import PreviewViewQueuesType0
from .preview_view_queues_type_0_additional_property import PreviewViewQueuesType0AdditionalProperty
from .preview_view_totals import PreviewViewTotals
from .put_event_endpoint import PutEventEndpoint
from .put_event_endpoint_event_types_item import PutEventEndpointEventTypesItem
from .put_version import PutVersion
from .put_version_locales import PutVersionLocales
from .put_version_variables import PutVersionVariables
from .put_version_variables_additional_property import PutVersionVariablesAdditionalProperty
from .receipt_accepted import ReceiptAccepted
from .reminder_view import ReminderView
from .reminder_view_data import ReminderViewData
from .reminder_view_send_window_type_0 import ReminderViewSendWindowType0
from .reminder_view_template import ReminderViewTemplate
from .response_validation_error import ResponseValidationError
from .rotate_secret import RotateSecret
from .send_window_in import SendWindowIn
from .signing_key_view import SigningKeyView
from .suppression_view import SuppressionView
from .suppressions_removed import SuppressionsRemoved
from .suppressions_view import SuppressionsView
from .template_ref import TemplateRef
from .template_version_ref import TemplateVersionRef
from .unsubscribed_view import UnsubscribedView
from .validation_error import ValidationError
from .version_row import VersionRow
from .version_view import VersionView
from .version_view_locales import VersionViewLocales
from .version_view_locales_additional_property import VersionViewLocalesAdditionalProperty
from .version_view_variables import VersionViewVariables
from .versions_view import VersionsView
from .webhook_channel import WebhookChannel
from .webhook_target import WebhookTarget

__all__ = (
    "AttemptView",
    "Correction",
    "CorrectionChannelsType0",
    "CorrectionDataType0",
    "CreateEndpoint",
    "CreateReminder",
    "CreateReminderData",
    "DeliveryView",
    "DeliveryViewHistoryDropped",
    "DeliveryViewLastErrorType0",
    "EmailChannel",
    "EmailTarget",
    "EndpointHealthView",
    "EndpointSecretView",
    "EndpointView",
    "Error",
    "ErrorDetailType0Item",
    "ErrorView",
    "ErrorViewDetailType0Item",
    "EventEndpointView",
    "FindRemindersGetStateType0",
    "HealthHealthGetReturn",
    "HTTPValidationError",
    "ListedView",
    "ListView",
    "LocaleIn",
    "PatchEndpoint",
    "PreviewIn",
    "PreviewInData",
    "PreviewView",
    "PreviewViewAttemptsType0Item",
    "PreviewViewMayAttemptType0Item",
    "PreviewViewNotAttemptedType0Item",
    "PreviewViewPerMinute",
    "PreviewViewPerMinuteAdditionalProperty",
    "PreviewViewQueuesType0",
    "PreviewViewQueuesType0AdditionalProperty",
    "PreviewViewTotals",
    "PutEventEndpoint",
    "PutEventEndpointEventTypesItem",
    "PutVersion",
    "PutVersionLocales",
    "PutVersionVariables",
    "PutVersionVariablesAdditionalProperty",
    "ReceiptAccepted",
    "ReminderView",
    "ReminderViewData",
    "ReminderViewSendWindowType0",
    "ReminderViewTemplate",
    "ResponseValidationError",
    "RotateSecret",
    "SendWindowIn",
    "SigningKeyView",
    "SuppressionsRemoved",
    "SuppressionsView",
    "SuppressionView",
    "TemplateRef",
    "TemplateVersionRef",
    "UnsubscribedView",
    "ValidationError",
    "VersionRow",
    "VersionsView",
    "VersionView",
    "VersionViewLocales",
    "VersionViewLocalesAdditionalProperty",
    "VersionViewVariables",
    "WebhookChannel",
    "WebhookTarget",
)
