from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="TemplateRef")



@_attrs_define
class TemplateRef:
    """ 
        Attributes:
            id (str):
            version (int):
     """

    id: str
    version: int





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        version = self.version


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "version": version,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        version = d.pop("version")

        template_ref = cls(
            id=id,
            version=version,
        )

        return template_ref

