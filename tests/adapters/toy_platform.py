"""A throwaway platform, to show what adding one takes: translation only. Its wire is a list of
calls in memory (`ToyWire`); the order of replies, the notices and the guarding are the shared
policy's (`adapters.replies`)."""

from __future__ import annotations

from typing import Any

from adapters.replies import ChatAdapter, Inbound
from bot.core.config import Instructors
from bot.core.messages import Actor, Audience, ChoiceMade, Cohort, Command, MessageRef, Place, Reply, TextSubmitted

PLATFORM = "toy"
UNDELIVERABLE = {True: "Toy: I may not post in this room.", False: "Toy: I may not write to you."}


class ToyRefused(Exception):
    """The toy platform refuses for good (no access)."""


class ToyDown(Exception):
    """The toy platform is briefly unavailable."""


class ToyWire:
    """The platform's API: every call made, rooms that refuse posts, rooms that are down."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.refusing: set[str] = set()
        self.down: set[str] = set()

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        room = str(params.get("room"))
        if room in self.refusing:
            raise ToyRefused(f"403 {method}")
        if room in self.down:
            raise ToyDown(f"503 {method}")
        self.calls.append((method, params))
        return {"id": str(len(self.calls)), "room": room}


def rendered(reply: Reply) -> dict[str, Any]:
    """A reply as the toy platform's message: its text and one button per choice."""
    return {"text": reply.text, "buttons": [{"label": c.label, "value": c.token} for c in reply.choices]}


def event_of(payload: dict[str, Any], instructors: Instructors) -> Inbound:
    """A toy payload (`type` command, click or form) as the core's event; instructors are listed by id."""
    teacher = instructors.listed(Cohort(PLATFORM, payload["team"]), payload["user"])
    actor = Actor(PLATFORM, payload["team"], payload["user"], is_instructor=teacher)
    place = Place(PLATFORM, payload["team"], payload.get("room"))
    if payload["type"] == "command":
        return Command(payload["name"], payload.get("text", ""), actor, place)
    if payload["type"] == "click":
        return ChoiceMade(payload["value"], actor, place)
    return TextSubmitted(payload["form"], payload["text"], actor, place)


class ToyInteraction:
    """One toy interaction: `respond` answers it once, `modal` opens a form as the answer, `whisper` follows."""

    form_answers = True
    answers = (Audience.PRIVATE,)

    def __init__(self, wire: ToyWire, payload: dict[str, Any]) -> None:
        self.wire, self.id = wire, payload["id"]
        self.opens_forms = payload["type"] != "form"

    async def open_form(self, reply: Reply) -> bool:
        assert reply.form is not None
        await self.wire.call("modal", interaction=self.id, form=reply.form.token, title=reply.form.title)
        return True

    async def answer(self, reply: Reply | None, *, more: bool) -> bool:
        await self.wire.call("respond", interaction=self.id, **(rendered(reply) if reply else {"text": None}))
        return True

    async def say(self, reply: Reply) -> None:
        await self.wire.call("whisper", interaction=self.id, **rendered(reply))

    async def fail(self, text: str) -> None:
        await self.wire.call("whisper", interaction=self.id, text=text)


class ToyAdapter(ChatAdapter):
    platform = PLATFORM
    title = "Toy"
    failures = (ToyDown,)
    undeliverable = UNDELIVERABLE

    def __init__(self, bot: Any, wire: ToyWire) -> None:
        super().__init__(bot)
        self.wire = wire

    async def receive(self, payload: dict[str, Any]) -> None:
        """What the platform's SDK would call for each interaction."""
        async def event() -> Inbound:
            return event_of(payload, self.bot.settings.instructors)

        await self.handle(ToyInteraction(self.wire, payload), event)

    async def send(self, reply: Reply) -> MessageRef | None:
        public = reply.audience is Audience.PUBLIC and reply.place is not None and reply.place.channel_id
        room = reply.place.channel_id if public and reply.place else f"dm-{reply.to.user_id if reply.to else ''}"
        with self.refusals(lambda exc: str(exc) if isinstance(exc, ToyRefused) else None):
            sent = await self.wire.call("post", room=room, **rendered(reply))
        return MessageRef(PLATFORM, sent["room"], sent["id"])

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        await self.wire.call("update", room=ref.channel_id, message=ref.message_id, **rendered(reply))
