from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.correction_channels_type_0 import CorrectionChannelsType0
  from ..models.correction_data_type_0 import CorrectionDataType0
  from ..models.template_version_ref import TemplateVersionRef





T = TypeVar("T", bound="Correction")



@_attrs_define
class Correction:
    """ PATCH /reminders/{id}: any of these fields, applied together under one version bump. A field
    left out is unchanged; ``channels`` maps a channel id (``webhook-0``) to its new destination.
    At most one of ``due_at`` and ``due_local``; ``time_zone`` defaults to the reminder's own.

        Attributes:
            channels (CorrectionChannelsType0 | None | Unset):
            data (CorrectionDataType0 | None | Unset):
            due_at (datetime.datetime | None | Unset):
            due_local (None | str | Unset):
            resend (bool | Unset):  Default: False.
            template (None | TemplateVersionRef | Unset):
            time_zone (None | str | Unset):
     """

    channels: CorrectionChannelsType0 | None | Unset = UNSET
    data: CorrectionDataType0 | None | Unset = UNSET
    due_at: datetime.datetime | None | Unset = UNSET
    due_local: None | str | Unset = UNSET
    resend: bool | Unset = False
    template: None | TemplateVersionRef | Unset = UNSET
    time_zone: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.correction_channels_type_0 import CorrectionChannelsType0 # noqa: PLC0415
        from ..models.correction_data_type_0 import CorrectionDataType0 # noqa: PLC0415
        from ..models.template_version_ref import TemplateVersionRef # noqa: PLC0415
        channels: dict[str, Any] | None | Unset
        if isinstance(self.channels, Unset):
            channels = UNSET
        elif isinstance(self.channels, CorrectionChannelsType0):
            channels = self.channels.to_dict()
        else:
            channels = self.channels

        data: dict[str, Any] | None | Unset
        if isinstance(self.data, Unset):
            data = UNSET
        elif isinstance(self.data, CorrectionDataType0):
            data = self.data.to_dict()
        else:
            data = self.data

        due_at: None | str | Unset
        if isinstance(self.due_at, Unset):
            due_at = UNSET
        elif isinstance(self.due_at, datetime.datetime):
            due_at = self.due_at.isoformat()
        else:
            due_at = self.due_at

        due_local: None | str | Unset
        if isinstance(self.due_local, Unset):
            due_local = UNSET
        else:
            due_local = self.due_local

        resend = self.resend

        template: dict[str, Any] | None | Unset
        if isinstance(self.template, Unset):
            template = UNSET
        elif isinstance(self.template, TemplateVersionRef):
            template = self.template.to_dict()
        else:
            template = self.template

        time_zone: None | str | Unset
        if isinstance(self.time_zone, Unset):
            time_zone = UNSET
        else:
            time_zone = self.time_zone


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if channels is not UNSET:
            field_dict["channels"] = channels
        if data is not UNSET:
            field_dict["data"] = data
        if due_at is not UNSET:
            field_dict["due_at"] = due_at
        if due_local is not UNSET:
            field_dict["due_local"] = due_local
        if resend is not UNSET:
            field_dict["resend"] = resend
        if template is not UNSET:
            field_dict["template"] = template
        if time_zone is not UNSET:
            field_dict["time_zone"] = time_zone

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.correction_channels_type_0 import CorrectionChannelsType0 # noqa: PLC0415
        from ..models.correction_data_type_0 import CorrectionDataType0 # noqa: PLC0415
        from ..models.template_version_ref import TemplateVersionRef # noqa: PLC0415
        d = dict(src_dict)
        def _parse_channels(data: object) -> CorrectionChannelsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                channels_type_0 = CorrectionChannelsType0.from_dict(data)



                return channels_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CorrectionChannelsType0 | None | Unset, data)

        channels = _parse_channels(d.pop("channels", UNSET))


        def _parse_data(data: object) -> CorrectionDataType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                data_type_0 = CorrectionDataType0.from_dict(data)



                return data_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CorrectionDataType0 | None | Unset, data)

        data = _parse_data(d.pop("data", UNSET))


        def _parse_due_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                due_at_type_0 = datetime.datetime.fromisoformat(data)



                return due_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        due_at = _parse_due_at(d.pop("due_at", UNSET))


        def _parse_due_local(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        due_local = _parse_due_local(d.pop("due_local", UNSET))


        resend = d.pop("resend", UNSET)

        def _parse_template(data: object) -> None | TemplateVersionRef | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                template_type_0 = TemplateVersionRef.from_dict(data)



                return template_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TemplateVersionRef | Unset, data)

        template = _parse_template(d.pop("template", UNSET))


        def _parse_time_zone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        time_zone = _parse_time_zone(d.pop("time_zone", UNSET))


        correction = cls(
            channels=channels,
            data=data,
            due_at=due_at,
            due_local=due_local,
            resend=resend,
            template=template,
            time_zone=time_zone,
        )

        return correction

