from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.preview_in_data import PreviewInData





T = TypeVar("T", bound="PreviewIn")



@_attrs_define
class PreviewIn:
    """ 
        Attributes:
            account_id (str):
            data (PreviewInData | Unset):
            locale (None | str | Unset):
     """

    account_id: str
    data: PreviewInData | Unset = UNSET
    locale: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.preview_in_data import PreviewInData # noqa: PLC0415
        account_id = self.account_id

        data: dict[str, Any] | Unset = UNSET
        if not isinstance(self.data, Unset):
            data = self.data.to_dict()

        locale: None | str | Unset
        if isinstance(self.locale, Unset):
            locale = UNSET
        else:
            locale = self.locale


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "account_id": account_id,
        })
        if data is not UNSET:
            field_dict["data"] = data
        if locale is not UNSET:
            field_dict["locale"] = locale

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.preview_in_data import PreviewInData # noqa: PLC0415
        d = dict(src_dict)
        account_id = d.pop("account_id")

        _data = d.pop("data", UNSET)
        data: PreviewInData | Unset
        if isinstance(_data,  Unset):
            data = UNSET
        else:
            data = PreviewInData.from_dict(_data)




        def _parse_locale(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        locale = _parse_locale(d.pop("locale", UNSET))


        preview_in = cls(
            account_id=account_id,
            data=data,
            locale=locale,
        )

        return preview_in

