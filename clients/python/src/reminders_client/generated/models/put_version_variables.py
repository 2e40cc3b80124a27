from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.put_version_variables_additional_property import PutVersionVariablesAdditionalProperty






T = TypeVar("T", bound="PutVersionVariables")



@_attrs_define
class PutVersionVariables:
    

    additional_properties: dict[str, PutVersionVariablesAdditionalProperty] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        
        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            field_dict[prop_name] = prop.value


        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        put_version_variables = cls(
        )


        additional_properties = {}
        for prop_name, prop_dict in d.items():
            additional_property = PutVersionVariablesAdditionalProperty(prop_dict)



            additional_properties[prop_name] = additional_property

        put_version_variables.additional_properties = additional_properties
        return put_version_variables

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> PutVersionVariablesAdditionalProperty:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: PutVersionVariablesAdditionalProperty) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
