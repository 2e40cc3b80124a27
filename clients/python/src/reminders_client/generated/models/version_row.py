from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="VersionRow")



@_attrs_define
class VersionRow:
    """ 
        Attributes:
            created_at (str):
            retired_at (None | str):
            version (int):
     """

    created_at: str
    retired_at: None | str
    version: int





    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        retired_at: None | str
        retired_at = self.retired_at

        version = self.version


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "created_at": created_at,
            "retired_at": retired_at,
            "version": version,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        def _parse_retired_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        retired_at = _parse_retired_at(d.pop("retired_at"))


        version = d.pop("version")

        version_row = cls(
            created_at=created_at,
            retired_at=retired_at,
            version=version,
        )

        return version_row

