from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.delivery_view import DeliveryView
  from ..models.reminder_view_data import ReminderViewData
  from ..models.reminder_view_send_window_type_0 import ReminderViewSendWindowType0
  from ..models.reminder_view_template import ReminderViewTemplate





T = TypeVar("T", bound="ReminderView")



@_attrs_define
class ReminderView:
    """ 
        Attributes:
            account_id (str):
            created_at (str):
            data (ReminderViewData):
            deliveries (list[DeliveryView]):
            due_at (str):
            id (str):
            key (str):
            kind (str):
            state (str):
            template (ReminderViewTemplate):
            version (int):
            deliver_by (None | str | Unset):
            due_local (None | str | Unset):
            expires_at (int | None | Unset):
            generation (int | Unset):  Default: 0.
            locale (None | str | Unset):
            send_window (None | ReminderViewSendWindowType0 | Unset):
            time_zone (None | str | Unset):
            tzdata_release (None | str | Unset):
     """

    account_id: str
    created_at: str
    data: ReminderViewData
    deliveries: list[DeliveryView]
    due_at: str
    id: str
    key: str
    kind: str
    state: str
    template: ReminderViewTemplate
    version: int
    deliver_by: None | str | Unset = UNSET
    due_local: None | str | Unset = UNSET
    expires_at: int | None | Unset = UNSET
    generation: int | Unset = 0
    locale: None | str | Unset = UNSET
    send_window: None | ReminderViewSendWindowType0 | Unset = UNSET
    time_zone: None | str | Unset = UNSET
    tzdata_release: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.delivery_view import DeliveryView # noqa: PLC0415
        from ..models.reminder_view_data import ReminderViewData # noqa: PLC0415
        from ..models.reminder_view_send_window_type_0 import ReminderViewSendWindowType0 # noqa: PLC0415
        from ..models.reminder_view_template import ReminderViewTemplate # noqa: PLC0415
        account_id = self.account_id

        created_at = self.created_at

        data = self.data.to_dict()

        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)



        due_at = self.due_at

        id = self.id

        key = self.key

        kind = self.kind

        state = self.state

        template = self.template.to_dict()

        version = self.version

        deliver_by: None | str | Unset
        if isinstance(self.deliver_by, Unset):
            deliver_by = UNSET
        else:
            deliver_by = self.deliver_by

        due_local: None | str | Unset
        if isinstance(self.due_local, Unset):
            due_local = UNSET
        else:
            due_local = self.due_local

        expires_at: int | None | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = self.expires_at

        generation = self.generation

        locale: None | str | Unset
        if isinstance(self.locale, Unset):
            locale = UNSET
        else:
            locale = self.locale

        send_window: dict[str, Any] | None | Unset
        if isinstance(self.send_window, Unset):
            send_window = UNSET
        elif isinstance(self.send_window, ReminderViewSendWindowType0):
            send_window = self.send_window.to_dict()
        else:
            send_window = self.send_window

        time_zone: None | str | Unset
        if isinstance(self.time_zone, Unset):
            time_zone = UNSET
        else:
            time_zone = self.time_zone

        tzdata_release: None | str | Unset
        if isinstance(self.tzdata_release, Unset):
            tzdata_release = UNSET
        else:
            tzdata_release = self.tzdata_release


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "account_id": account_id,
            "created_at": created_at,
            "data": data,
            "deliveries": deliveries,
            "due_at": due_at,
            "id": id,
            "key": key,
            "kind": kind,
            "state": state,
            "template": template,
            "version": version,
        })
        if deliver_by is not UNSET:
            field_dict["deliver_by"] = deliver_by
        if due_local is not UNSET:
            field_dict["due_local"] = due_local
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if generation is not UNSET:
            field_dict["generation"] = generation
        if locale is not UNSET:
            field_dict["locale"] = locale
        if send_window is not UNSET:
            field_dict["send_window"] = send_window
        if time_zone is not UNSET:
            field_dict["time_zone"] = time_zone
        if tzdata_release is not UNSET:
            field_dict["tzdata_release"] = tzdata_release

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.delivery_view import DeliveryView # noqa: PLC0415
        from ..models.reminder_view_data import ReminderViewData # noqa: PLC0415
        from ..models.reminder_view_send_window_type_0 import ReminderViewSendWindowType0 # noqa: PLC0415
        from ..models.reminder_view_template import ReminderViewTemplate # noqa: PLC0415
        d = dict(src_dict)
        account_id = d.pop("account_id")

        created_at = d.pop("created_at")

        data = ReminderViewData.from_dict(d.pop("data"))




        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in (_deliveries):
            deliveries_item = DeliveryView.from_dict(deliveries_item_data)



            deliveries.append(deliveries_item)


        due_at = d.pop("due_at")

        id = d.pop("id")

        key = d.pop("key")

        kind = d.pop("kind")

        state = d.pop("state")

        template = ReminderViewTemplate.from_dict(d.pop("template"))




        version = d.pop("version")

        def _parse_deliver_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deliver_by = _parse_deliver_by(d.pop("deliver_by", UNSET))


        def _parse_due_local(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        due_local = _parse_due_local(d.pop("due_local", UNSET))


        def _parse_expires_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))


        generation = d.pop("generation", UNSET)

        def _parse_locale(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        locale = _parse_locale(d.pop("locale", UNSET))


        def _parse_send_window(data: object) -> None | ReminderViewSendWindowType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                send_window_type_0 = ReminderViewSendWindowType0.from_dict(data)



                return send_window_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReminderViewSendWindowType0 | Unset, data)

        send_window = _parse_send_window(d.pop("send_window", UNSET))


        def _parse_time_zone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        time_zone = _parse_time_zone(d.pop("time_zone", UNSET))


        def _parse_tzdata_release(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tzdata_release = _parse_tzdata_release(d.pop("tzdata_release", UNSET))


        reminder_view = cls(
            account_id=account_id,
            created_at=created_at,
            data=data,
            deliveries=deliveries,
            due_at=due_at,
            id=id,
            key=key,
            kind=kind,
            state=state,
            template=template,
            version=version,
            deliver_by=deliver_by,
            due_local=due_local,
            expires_at=expires_at,
            generation=generation,
            locale=locale,
            send_window=send_window,
            time_zone=time_zone,
            tzdata_release=tzdata_release,
        )


        reminder_view.additional_properties = d
        return reminder_view

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
