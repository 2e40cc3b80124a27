from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.put_event_endpoint_event_types_item import PutEventEndpointEventTypesItem
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PutEventEndpoint")



@_attrs_define
class PutEventEndpoint:
    """ 
        Attributes:
            endpoint_id (str):
            event_types (list[PutEventEndpointEventTypesItem] | Unset):
     """

    endpoint_id: str
    event_types: list[PutEventEndpointEventTypesItem] | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        event_types: list[str] | Unset = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = []
            for event_types_item_data in self.event_types:
                event_types_item = event_types_item_data.value
                event_types.append(event_types_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "endpoint_id": endpoint_id,
        })
        if event_types is not UNSET:
            field_dict["event_types"] = event_types

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        _event_types = d.pop("event_types", UNSET)
        event_types: list[PutEventEndpointEventTypesItem] | Unset = UNSET
        if _event_types is not UNSET:
            event_types = []
            for event_types_item_data in _event_types:
                event_types_item = PutEventEndpointEventTypesItem(event_types_item_data)



                event_types.append(event_types_item)


        put_event_endpoint = cls(
            endpoint_id=endpoint_id,
            event_types=event_types,
        )

        return put_event_endpoint

