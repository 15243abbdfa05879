"""What the console's next typed line answers: the choices and the form pending, with their rules.

The rules, stated once (`Pending` keeps them):
1. **Labels.** Each choice shown gets one label: the letter a multiple-choice option shows (`A. …`), else
   the next number after the numbers pending. A message that shows a letter already pending takes it
   over, and says so.
2. **A typed line** is a command (`/…`); else a pending label (any case, a trailing `.` allowed); else,
   while choices are pending, a number is refused ("Choose …"); else the waiting form's answer; else it
   is refused.
3. **The first reply to a typed line** closes what was pending before the line, except
   a. the other prompts' choices of the message a choice was made in, when the reply offers nothing of its
      own (a dispute sent leaves that message's Next question, as its buttons stay on Slack and Discord):
      the pressed choice's own prompt is answered, and its other choices close with it;
   b. the choices of the messages that came on their own (a round's next question, posted while the
      learner graded the last one), when the line was no command and none of theirs: nothing was done
      with them yet. A command moves on, and closes them.
   The replies after the first, and the messages that come on their own, add their choices.
4. **The form.** A reply to a typed line that offers choices closes the waiting form; a reply with a form
   opens it (it belongs to the message the choice was made in, else to the reply); the form answered is
   open again when its reply asks for the text again (`retype`: nothing was recorded).
5. **An update** of a message (a round question revealed) closes its choices, those of the same prompt
   shown in other messages, and its form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from adapters.replies import Inbound
from bot.core.messages import Actor, Choice, ChoiceMade, Command, Form, Place, Reply, TextSubmitted

LETTERED = re.compile(r"([A-Z])\. ")  # a choice that shows its own label ("A. 64 GPUs")


@dataclass(frozen=True)
class Offered:
    """A choice pending: its token, the message it came in, and whether that message came on its own."""

    token: str
    message: str
    on_its_own: bool

    @property
    def prompt(self) -> str:
        return self.token.partition(".")[0]


@dataclass
class Line:
    """The typed line being answered."""

    event: Inbound
    chosen: Offered | None = None  # the choice it made
    answered_form: Form | None = None  # the form it answered
    replied: bool = False  # whether a reply to it was shown yet


@dataclass(frozen=True)
class Shown:
    """How a message's choices are shown: a line each, and the letters it took over from earlier messages."""

    lines: list[str]
    taken: list[str]


@dataclass
class Pending:
    """The choices and the form the next typed line answers (the rules are the module's)."""

    offered: dict[str, Offered] = field(default_factory=dict)  # label as typed (upper case) -> choice
    form: Form | None = None  # the form waiting for the next line
    form_in: str | None = None  # the message it belongs to (its update closes it)
    line: Line | None = None  # the typed line being answered, if any
    _prompts: dict[str, set[str]] = field(default_factory=dict)  # the prompts each message offered

    @property
    def choices(self) -> dict[str, str]:
        """Each pending label with its choice token."""
        return {label: choice.token for label, choice in self.offered.items()}

    @property
    def wants_text(self) -> bool:
        """Whether the next line is the form's answer whatever it says (no choice is pending)."""
        return self.form is not None and not self.offered

    def read(self, text: str, actor: Actor, place: Place) -> Inbound | str:
        """What a typed line (stripped, not empty) is (rule 2): an event, or why it is refused."""
        if text.startswith("/"):
            name, _, args = text[1:].partition(" ")
            return Command(name, args, actor, place)
        if (label := text.rstrip(".").upper()) in self.offered:
            return ChoiceMade(self.offered[label].token, actor, place)
        if text.isdecimal() and self.offered:
            return f"Choose {either(list(self.offered))}."
        if self.form is not None:
            return TextSubmitted(self.form.token, text, actor, place)
        if text.isdecimal():
            return (f"{text[:9]} is not a choice here: a number answers the message just above it, and that one "
                    "offers none. Nothing was recorded; use /quiz for a fresh question.")
        return "Type a command such as /quiz or /help" + (f", or {either(list(self.offered))}." if self.offered
                                                          else ".")

    def typed(self, text: str, event: Inbound) -> None:
        """The line `text`, read as `event`, is being answered; a text answers the form (open again only if its
        reply asks)."""
        chosen = self.offered.get(text.rstrip(".").upper()) if isinstance(event, ChoiceMade) else None
        self.line = Line(event, chosen)
        if isinstance(event, TextSubmitted):
            self.line.answered_form, self.form = self.form, None

    def answered(self) -> None:
        """The line's replies are all shown."""
        self.line = None

    def shown(self, reply: Reply, message: str) -> Shown:
        """Take in the choices and the form of `reply`, shown as `message` (rules 1, 3 and 4)."""
        line = self.line
        kept = self._kept(reply, line) if line is not None and not line.replied else self.offered
        if line is not None:
            line.replied = True
        letters = {c.label[0] for c in reply.choices if LETTERED.match(c.label)}
        taken = sorted(k for k in kept if k in letters)
        self.offered = {k: v for k, v in kept.items() if k not in taken}
        lines = [self._label(choice, message, on_its_own=line is None) for choice in reply.choices]
        self._prompts[message] = {choice.token.partition(".")[0] for choice in reply.choices}
        self._take_form(reply, message, line)
        return Shown(lines, taken)

    def _label(self, choice: Choice, message: str, on_its_own: bool) -> str:
        """Rule 1: the choice pending under its label; the line that shows it."""
        if LETTERED.match(choice.label):
            key, shown = choice.label[0], choice.label
        else:
            key = str(max((int(k) for k in self.offered if k.isdecimal()), default=0) + 1)
            shown = f"{key}. {choice.label}"
        self.offered[key] = Offered(choice.token, message, on_its_own)
        return shown

    def updated(self, message: str) -> None:
        """`message` was updated (rule 5)."""
        closed = self._prompts.pop(message, set())
        self.offered = {k: v for k, v in self.offered.items() if v.message != message and v.prompt not in closed}
        if self.form is not None and self.form_in == message:
            self.form = None

    def _kept(self, reply: Reply, line: Line) -> dict[str, Offered]:
        """What the first reply to `line` leaves pending (rule 3)."""
        chosen = line.chosen
        in_chosen = chosen is not None and not reply.choices and not reply.form  # a
        untouched = not isinstance(line.event, Command)  # b
        return {k: v for k, v in self.offered.items()
                if (chosen is not None and v.message == chosen.message and in_chosen and v.prompt != chosen.prompt)
                or (untouched and v.on_its_own and (chosen is None or v.message != chosen.message))}

    def _take_form(self, reply: Reply, message: str, line: Line | None) -> None:
        """Rule 4."""
        if reply.choices and line is not None:
            self.form = None
        if reply.form:
            self.form = reply.form
            self.form_in = line.chosen.message if line is not None and line.chosen is not None else message
        elif line is not None and line.answered_form is not None and self.form is None and reply.retype:
            self.form = line.answered_form


def either(labels: list[str]) -> str:
    return ", ".join(labels[:-1]) + f" or {labels[-1]}" if len(labels) > 1 else labels[0]
