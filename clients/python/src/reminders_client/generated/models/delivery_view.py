from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.attempt_view import AttemptView
  from ..models.delivery_view_history_dropped import DeliveryViewHistoryDropped
  from ..models.delivery_view_last_error_type_0 import DeliveryViewLastErrorType0





T = TypeVar("T", bound="DeliveryView")



@_attrs_define
class DeliveryView:
    """ 
        Attributes:
            attempts (int):
            channel_id (str):
            cycle (int):
            dead_letter_reason (None | str):
            delivered_at (None | str):
            destination (str):
            history (list[AttemptView]):
            key (str):
            last_error (DeliveryViewLastErrorType0 | None):
            next_attempt_at (None | str):
            receipt (None | str):
            state (str):
            throttles (int):
            type_ (str):
            feedback (None | str | Unset):
            history_dropped (DeliveryViewHistoryDropped | Unset):
            lease_owner (None | str | Unset):
            lease_until (None | str | Unset):
            may_have_been_accepted (bool | Unset):  Default: False.
            receiver_receipt (None | str | Unset):
            resends (int | Unset):  Default: 0.
     """

    attempts: int
    channel_id: str
    cycle: int
    dead_letter_reason: None | str
    delivered_at: None | str
    destination: str
    history: list[AttemptView]
    key: str
    last_error: DeliveryViewLastErrorType0 | None
    next_attempt_at: None | str
    receipt: None | str
    state: str
    throttles: int
    type_: str
    feedback: None | str | Unset = UNSET
    history_dropped: DeliveryViewHistoryDropped | Unset = UNSET
    lease_owner: None | str | Unset = UNSET
    lease_until: None | str | Unset = UNSET
    may_have_been_accepted: bool | Unset = False
    receiver_receipt: None | str | Unset = UNSET
    resends: int | Unset = 0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.attempt_view import AttemptView # noqa: PLC0415
        from ..models.delivery_view_history_dropped import DeliveryViewHistoryDropped # noqa: PLC0415
        from ..models.delivery_view_last_error_type_0 import DeliveryViewLastErrorType0 # noqa: PLC0415
        attempts = self.attempts

        channel_id = self.channel_id

        cycle = self.cycle

        dead_letter_reason: None | str
        dead_letter_reason = self.dead_letter_reason

        delivered_at: None | str
        delivered_at = self.delivered_at

        destination = self.destination

        history = []
        for history_item_data in self.history:
            history_item = history_item_data.to_dict()
            history.append(history_item)



        key = self.key

        last_error: dict[str, Any] | None
        if isinstance(self.last_error, DeliveryViewLastErrorType0):
            last_error = self.last_error.to_dict()
        else:
            last_error = self.last_error

        next_attempt_at: None | str
        next_attempt_at = self.next_attempt_at

        receipt: None | str
        receipt = self.receipt

        state = self.state

        throttles = self.throttles

        type_ = self.type_

        feedback: None | str | Unset
        if isinstance(self.feedback, Unset):
            feedback = UNSET
        else:
            feedback = self.feedback

        history_dropped: dict[str, Any] | Unset = UNSET
        if not isinstance(self.history_dropped, Unset):
            history_dropped = self.history_dropped.to_dict()

        lease_owner: None | str | Unset
        if isinstance(self.lease_owner, Unset):
            lease_owner = UNSET
        else:
            lease_owner = self.lease_owner

        lease_until: None | str | Unset
        if isinstance(self.lease_until, Unset):
            lease_until = UNSET
        else:
            lease_until = self.lease_until

        may_have_been_accepted = self.may_have_been_accepted

        receiver_receipt: None | str | Unset
        if isinstance(self.receiver_receipt, Unset):
            receiver_receipt = UNSET
        else:
            receiver_receipt = self.receiver_receipt

        resends = self.resends


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attempts": attempts,
            "channel_id": channel_id,
            "cycle": cycle,
            "dead_letter_reason": dead_letter_reason,
            "delivered_at": delivered_at,
            "destination": destination,
            "history": history,
            "key": key,
            "last_error": last_error,
            "next_attempt_at": next_attempt_at,
            "receipt": receipt,
            "state": state,
            "throttles": throttles,
            "type": type_,
        })
        if feedback is not UNSET:
            field_dict["feedback"] = feedback
        if history_dropped is not UNSET:
            field_dict["history_dropped"] = history_dropped
        if lease_owner is not UNSET:
            field_dict["lease_owner"] = lease_owner
        if lease_until is not UNSET:
            field_dict["lease_until"] = lease_until
        if may_have_been_accepted is not UNSET:
            field_dict["may_have_been_accepted"] = may_have_been_accepted
        if receiver_receipt is not UNSET:
            field_dict["receiver_receipt"] = receiver_receipt
        if resends is not UNSET:
            field_dict["resends"] = resends

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt_view import AttemptView # noqa: PLC0415
        from ..models.delivery_view_history_dropped import DeliveryViewHistoryDropped # noqa: PLC0415
        from ..models.delivery_view_last_error_type_0 import DeliveryViewLastErrorType0 # noqa: PLC0415
        d = dict(src_dict)
        attempts = d.pop("attempts")

        channel_id = d.pop("channel_id")

        cycle = d.pop("cycle")

        def _parse_dead_letter_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        dead_letter_reason = _parse_dead_letter_reason(d.pop("dead_letter_reason"))


        def _parse_delivered_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        delivered_at = _parse_delivered_at(d.pop("delivered_at"))


        destination = d.pop("destination")

        history = []
        _history = d.pop("history")
        for history_item_data in (_history):
            history_item = AttemptView.from_dict(history_item_data)



            history.append(history_item)


        key = d.pop("key")

        def _parse_last_error(data: object) -> DeliveryViewLastErrorType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_error_type_0 = DeliveryViewLastErrorType0.from_dict(data)



                return last_error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeliveryViewLastErrorType0 | None, data)

        last_error = _parse_last_error(d.pop("last_error"))


        def _parse_next_attempt_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at"))


        def _parse_receipt(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        receipt = _parse_receipt(d.pop("receipt"))


        state = d.pop("state")

        throttles = d.pop("throttles")

        type_ = d.pop("type")

        def _parse_feedback(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        feedback = _parse_feedback(d.pop("feedback", UNSET))


        _history_dropped = d.pop("history_dropped", UNSET)
        history_dropped: DeliveryViewHistoryDropped | Unset
        if isinstance(_history_dropped,  Unset):
            history_dropped = UNSET
        else:
            history_dropped = DeliveryViewHistoryDropped.from_dict(_history_dropped)




        def _parse_lease_owner(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        lease_owner = _parse_lease_owner(d.pop("lease_owner", UNSET))


        def _parse_lease_until(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        lease_until = _parse_lease_until(d.pop("lease_until", UNSET))


        may_have_been_accepted = d.pop("may_have_been_accepted", UNSET)

        def _parse_receiver_receipt(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        receiver_receipt = _parse_receiver_receipt(d.pop("receiver_receipt", UNSET))


        resends = d.pop("resends", UNSET)

        delivery_view = cls(
            attempts=attempts,
            channel_id=channel_id,
            cycle=cycle,
            dead_letter_reason=dead_letter_reason,
            delivered_at=delivered_at,
            destination=destination,
            history=history,
            key=key,
            last_error=last_error,
            next_attempt_at=next_attempt_at,
            receipt=receipt,
            state=state,
            throttles=throttles,
            type_=type_,
            feedback=feedback,
            history_dropped=history_dropped,
            lease_owner=lease_owner,
            lease_until=lease_until,
            may_have_been_accepted=may_have_been_accepted,
            receiver_receipt=receiver_receipt,
            resends=resends,
        )


        delivery_view.additional_properties = d
        return delivery_view

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
