from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.create_reminder_data import CreateReminderData
  from ..models.email_channel import EmailChannel
  from ..models.send_window_in import SendWindowIn
  from ..models.template_ref import TemplateRef
  from ..models.webhook_channel import WebhookChannel





T = TypeVar("T", bound="CreateReminder")



@_attrs_define
class CreateReminder:
    """ 
        Attributes:
            account_id (str):
            channels (list[EmailChannel | WebhookChannel]):
            key (str):
            kind (str):
            template (TemplateRef):
            data (CreateReminderData | Unset):
            deliver_by (datetime.datetime | None | Unset):
            due_at (datetime.datetime | None | Unset):
            due_local (None | str | Unset):
            locale (None | str | Unset):
            send_window (None | SendWindowIn | Unset):
            time_zone (None | str | Unset):
     """

    account_id: str
    channels: list[EmailChannel | WebhookChannel]
    key: str
    kind: str
    template: TemplateRef
    data: CreateReminderData | Unset = UNSET
    deliver_by: datetime.datetime | None | Unset = UNSET
    due_at: datetime.datetime | None | Unset = UNSET
    due_local: None | str | Unset = UNSET
    locale: None | str | Unset = UNSET
    send_window: None | SendWindowIn | Unset = UNSET
    time_zone: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.create_reminder_data import CreateReminderData # noqa: PLC0415
        from ..models.email_channel import EmailChannel # noqa: PLC0415
        from ..models.send_window_in import SendWindowIn # noqa: PLC0415
        from ..models.template_ref import TemplateRef # noqa: PLC0415
        from ..models.webhook_channel import WebhookChannel # noqa: PLC0415
        account_id = self.account_id

        channels = []
        for channels_item_data in self.channels:
            channels_item: dict[str, Any]
            if isinstance(channels_item_data, WebhookChannel):
                channels_item = channels_item_data.to_dict()
            else:
                channels_item = channels_item_data.to_dict()

            channels.append(channels_item)



        key = self.key

        kind = self.kind

        template = self.template.to_dict()

        data: dict[str, Any] | Unset = UNSET
        if not isinstance(self.data, Unset):
            data = self.data.to_dict()

        deliver_by: None | str | Unset
        if isinstance(self.deliver_by, Unset):
            deliver_by = UNSET
        elif isinstance(self.deliver_by, datetime.datetime):
            deliver_by = self.deliver_by.isoformat()
        else:
            deliver_by = self.deliver_by

        due_at: None | str | Unset
        if isinstance(self.due_at, Unset):
            due_at = UNSET
        elif isinstance(self.due_at, datetime.datetime):
            due_at = self.due_at.isoformat()
        else:
            due_at = self.due_at

        due_local: None | str | Unset
        if isinstance(self.due_local, Unset):
            due_local = UNSET
        else:
            due_local = self.due_local

        locale: None | str | Unset
        if isinstance(self.locale, Unset):
            locale = UNSET
        else:
            locale = self.locale

        send_window: dict[str, Any] | None | Unset
        if isinstance(self.send_window, Unset):
            send_window = UNSET
        elif isinstance(self.send_window, SendWindowIn):
            send_window = self.send_window.to_dict()
        else:
            send_window = self.send_window

        time_zone: None | str | Unset
        if isinstance(self.time_zone, Unset):
            time_zone = UNSET
        else:
            time_zone = self.time_zone


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "account_id": account_id,
            "channels": channels,
            "key": key,
            "kind": kind,
            "template": template,
        })
        if data is not UNSET:
            field_dict["data"] = data
        if deliver_by is not UNSET:
            field_dict["deliver_by"] = deliver_by
        if due_at is not UNSET:
            field_dict["due_at"] = due_at
        if due_local is not UNSET:
            field_dict["due_local"] = due_local
        if locale is not UNSET:
            field_dict["locale"] = locale
        if send_window is not UNSET:
            field_dict["send_window"] = send_window
        if time_zone is not UNSET:
            field_dict["time_zone"] = time_zone

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.create_reminder_data import CreateReminderData # noqa: PLC0415
        from ..models.email_channel import EmailChannel # noqa: PLC0415
        from ..models.send_window_in import SendWindowIn # noqa: PLC0415
        from ..models.template_ref import TemplateRef # noqa: PLC0415
        from ..models.webhook_channel import WebhookChannel # noqa: PLC0415
        d = dict(src_dict)
        account_id = d.pop("account_id")

        channels = []
        _channels = d.pop("channels")
        for channels_item_data in (_channels):
            def _parse_channels_item(data: object) -> EmailChannel | WebhookChannel:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    channels_item_type_0 = WebhookChannel.from_dict(data)



                    return channels_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                channels_item_type_1 = EmailChannel.from_dict(data)



                return channels_item_type_1

            channels_item = _parse_channels_item(channels_item_data)

            channels.append(channels_item)


        key = d.pop("key")

        kind = d.pop("kind")

        template = TemplateRef.from_dict(d.pop("template"))




        _data = d.pop("data", UNSET)
        data: CreateReminderData | Unset
        if isinstance(_data,  Unset):
            data = UNSET
        else:
            data = CreateReminderData.from_dict(_data)




        def _parse_deliver_by(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                deliver_by_type_0 = datetime.datetime.fromisoformat(data)



                return deliver_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        deliver_by = _parse_deliver_by(d.pop("deliver_by", UNSET))


        def _parse_due_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                due_at_type_0 = datetime.datetime.fromisoformat(data)



                return due_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        due_at = _parse_due_at(d.pop("due_at", UNSET))


        def _parse_due_local(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        due_local = _parse_due_local(d.pop("due_local", UNSET))


        def _parse_locale(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        locale = _parse_locale(d.pop("locale", UNSET))


        def _parse_send_window(data: object) -> None | SendWindowIn | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                send_window_type_0 = SendWindowIn.from_dict(data)



                return send_window_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SendWindowIn | Unset, data)

        send_window = _parse_send_window(d.pop("send_window", UNSET))


        def _parse_time_zone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        time_zone = _parse_time_zone(d.pop("time_zone", UNSET))


        create_reminder = cls(
            account_id=account_id,
            channels=channels,
            key=key,
            kind=kind,
            template=template,
            data=data,
            deliver_by=deliver_by,
            due_at=due_at,
            due_local=due_local,
            locale=locale,
            send_window=send_window,
            time_zone=time_zone,
        )

        return create_reminder

