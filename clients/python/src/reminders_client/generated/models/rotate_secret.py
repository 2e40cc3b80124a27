from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="RotateSecret")



@_attrs_define
class RotateSecret:
    """ 
        Attributes:
            expires_in_seconds (int | Unset):  Default: 86400.
     """

    expires_in_seconds: int | Unset = 86400





    def to_dict(self) -> dict[str, Any]:
        expires_in_seconds = self.expires_in_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if expires_in_seconds is not UNSET:
            field_dict["expires_in_seconds"] = expires_in_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        expires_in_seconds = d.pop("expires_in_seconds", UNSET)

        rotate_secret = cls(
            expires_in_seconds=expires_in_seconds,
        )

        return rotate_secret

