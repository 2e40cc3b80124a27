from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from typing import Literal, cast






T = TypeVar("T", bound="WebhookChannel")



@_attrs_define
class WebhookChannel:
    """ A webhook: a bare ``url`` (its account's implicit endpoint for that origin), or a registered
    ``endpoint_id`` (its own secret and rate). Exactly one of the two.

        Attributes:
            type_ (Literal['webhook']):
            endpoint_id (None | str | Unset):
            url (None | str | Unset):
     """

    type_: Literal['webhook']
    endpoint_id: None | str | Unset = UNSET
    url: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        endpoint_id: None | str | Unset
        if isinstance(self.endpoint_id, Unset):
            endpoint_id = UNSET
        else:
            endpoint_id = self.endpoint_id

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "type": type_,
        })
        if endpoint_id is not UNSET:
            field_dict["endpoint_id"] = endpoint_id
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = cast(Literal['webhook'] , d.pop("type"))
        if type_ != 'webhook':
            raise ValueError(f"type must match const 'webhook', got '{type_}'")

        def _parse_endpoint_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        endpoint_id = _parse_endpoint_id(d.pop("endpoint_id", UNSET))


        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        url = _parse_url(d.pop("url", UNSET))


        webhook_channel = cls(
            type_=type_,
            endpoint_id=endpoint_id,
            url=url,
        )

        return webhook_channel

