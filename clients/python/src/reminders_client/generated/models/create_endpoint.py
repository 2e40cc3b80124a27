from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="CreateEndpoint")



@_attrs_define
class CreateEndpoint:
    """ 
        Attributes:
            account_id (str):
            url (str):
            bare_urls (bool | Unset):  Default: False.
            description (str | Unset):  Default: ''.
            rate_per_second (float | None | Unset):
     """

    account_id: str
    url: str
    bare_urls: bool | Unset = False
    description: str | Unset = ''
    rate_per_second: float | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        url = self.url

        bare_urls = self.bare_urls

        description = self.description

        rate_per_second: float | None | Unset
        if isinstance(self.rate_per_second, Unset):
            rate_per_second = UNSET
        else:
            rate_per_second = self.rate_per_second


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "account_id": account_id,
            "url": url,
        })
        if bare_urls is not UNSET:
            field_dict["bare_urls"] = bare_urls
        if description is not UNSET:
            field_dict["description"] = description
        if rate_per_second is not UNSET:
            field_dict["rate_per_second"] = rate_per_second

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        url = d.pop("url")

        bare_urls = d.pop("bare_urls", UNSET)

        description = d.pop("description", UNSET)

        def _parse_rate_per_second(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        rate_per_second = _parse_rate_per_second(d.pop("rate_per_second", UNSET))


        create_endpoint = cls(
            account_id=account_id,
            url=url,
            bare_urls=bare_urls,
            description=description,
            rate_per_second=rate_per_second,
        )

        return create_endpoint

