"""The in-memory stores' fault mode, in one place: the next ``times`` writes of an operation land,
but their caller sees what the DynamoDB adapter answers when the answer was lost — botocore retried
the conditional write, the retry failed its own condition (the write is already there), and the
call answers False. The store keeps ``self.lock`` and calls ``_answer_lost(operation)`` after the
write landed."""

from __future__ import annotations

import threading


class LostAnswers:
    lock: threading.Lock | threading.RLock
    lost_answers: dict[str, int]  # operation -> answers still to lose

    def lose_next_answer(self, operation: str, times: int = 1) -> None:
        """The next ``times`` writes of ``operation`` land, but answer False."""
        with self.lock:
            self.lost_answers[operation] = self.lost_answers.get(operation, 0) + times

    def _answer_lost(self, operation: str) -> bool:
        left = self.lost_answers.get(operation, 0)
        if not left:
            return False
        self.lost_answers[operation] = left - 1
        return True
