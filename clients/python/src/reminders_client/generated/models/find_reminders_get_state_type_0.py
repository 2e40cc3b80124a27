from enum import StrEnum

class FindRemindersGetStateType0(StrEnum):
    DEAD_LETTER = "dead_letter"
    HELD = "held"
    RETRYABLE = "retryable"

    def __str__(self) -> str:
        return str(self.value)
