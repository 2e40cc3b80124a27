from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.endpoint_health_view import EndpointHealthView
  from ..models.signing_key_view import SigningKeyView





T = TypeVar("T", bound="EndpointView")



@_attrs_define
class EndpointView:
    """ An endpoint as stored; never its secrets (only when each was made and until when it signs).

        Attributes:
            account_id (str):
            created_at (str):
            description (str):
            enabled (bool):
            id (str):
            rate_per_second (float | None):
            signing_keys (list[SigningKeyView]):
            url (str):
            health (EndpointHealthView | None | Unset):
     """

    account_id: str
    created_at: str
    description: str
    enabled: bool
    id: str
    rate_per_second: float | None
    signing_keys: list[SigningKeyView]
    url: str
    health: EndpointHealthView | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_health_view import EndpointHealthView # noqa: PLC0415
        from ..models.signing_key_view import SigningKeyView # noqa: PLC0415
        account_id = self.account_id

        created_at = self.created_at

        description = self.description

        enabled = self.enabled

        id = self.id

        rate_per_second: float | None
        rate_per_second = self.rate_per_second

        signing_keys = []
        for signing_keys_item_data in self.signing_keys:
            signing_keys_item = signing_keys_item_data.to_dict()
            signing_keys.append(signing_keys_item)



        url = self.url

        health: dict[str, Any] | None | Unset
        if isinstance(self.health, Unset):
            health = UNSET
        elif isinstance(self.health, EndpointHealthView):
            health = self.health.to_dict()
        else:
            health = self.health


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "account_id": account_id,
            "created_at": created_at,
            "description": description,
            "enabled": enabled,
            "id": id,
            "rate_per_second": rate_per_second,
            "signing_keys": signing_keys,
            "url": url,
        })
        if health is not UNSET:
            field_dict["health"] = health

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_health_view import EndpointHealthView # noqa: PLC0415
        from ..models.signing_key_view import SigningKeyView # noqa: PLC0415
        d = dict(src_dict)
        account_id = d.pop("account_id")

        created_at = d.pop("created_at")

        description = d.pop("description")

        enabled = d.pop("enabled")

        id = d.pop("id")

        def _parse_rate_per_second(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        rate_per_second = _parse_rate_per_second(d.pop("rate_per_second"))


        signing_keys = []
        _signing_keys = d.pop("signing_keys")
        for signing_keys_item_data in (_signing_keys):
            signing_keys_item = SigningKeyView.from_dict(signing_keys_item_data)



            signing_keys.append(signing_keys_item)


        url = d.pop("url")

        def _parse_health(data: object) -> EndpointHealthView | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                health_type_0 = EndpointHealthView.from_dict(data)



                return health_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointHealthView | None | Unset, data)

        health = _parse_health(d.pop("health", UNSET))


        endpoint_view = cls(
            account_id=account_id,
            created_at=created_at,
            description=description,
            enabled=enabled,
            id=id,
            rate_per_second=rate_per_second,
            signing_keys=signing_keys,
            url=url,
            health=health,
        )


        endpoint_view.additional_properties = d
        return endpoint_view

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
