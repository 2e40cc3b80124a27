from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="EventEndpointView")



@_attrs_define
class EventEndpointView:
    """ Where the account's operational events go, and which ones.

        Attributes:
            account_id (str):
            endpoint_id (str):
            event_types (list[str]):
            registered_at (str):
     """

    account_id: str
    endpoint_id: str
    event_types: list[str]
    registered_at: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        endpoint_id = self.endpoint_id

        event_types = self.event_types



        registered_at = self.registered_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "account_id": account_id,
            "endpoint_id": endpoint_id,
            "event_types": event_types,
            "registered_at": registered_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        endpoint_id = d.pop("endpoint_id")

        event_types = cast(list[str], d.pop("event_types"))


        registered_at = d.pop("registered_at")

        event_endpoint_view = cls(
            account_id=account_id,
            endpoint_id=endpoint_id,
            event_types=event_types,
            registered_at=registered_at,
        )


        event_endpoint_view.additional_properties = d
        return event_endpoint_view

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
