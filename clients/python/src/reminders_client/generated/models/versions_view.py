from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.version_row import VersionRow





T = TypeVar("T", bound="VersionsView")



@_attrs_define
class VersionsView:
    """ 
        Attributes:
            account_id (str):
            template_id (str):
            versions (list[VersionRow]):
     """

    account_id: str
    template_id: str
    versions: list[VersionRow]





    def to_dict(self) -> dict[str, Any]:
        from ..models.version_row import VersionRow # noqa: PLC0415
        account_id = self.account_id

        template_id = self.template_id

        versions = []
        for versions_item_data in self.versions:
            versions_item = versions_item_data.to_dict()
            versions.append(versions_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "account_id": account_id,
            "template_id": template_id,
            "versions": versions,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.version_row import VersionRow # noqa: PLC0415
        d = dict(src_dict)
        account_id = d.pop("account_id")

        template_id = d.pop("template_id")

        versions = []
        _versions = d.pop("versions")
        for versions_item_data in (_versions):
            versions_item = VersionRow.from_dict(versions_item_data)



            versions.append(versions_item)


        versions_view = cls(
            account_id=account_id,
            template_id=template_id,
            versions=versions,
        )

        return versions_view

