"""The reply policy every adapter shares, so that an adapter only translates.

An interaction (a command, a click, a form's text) is answered in one order on every platform:

1. The event is recorded first: `StudyBot.handle` commits before the platform hears anything.
2. A form opens first thing (a Slack trigger_id lasts 3 s; a Discord modal must be the answer).
   If it cannot open, its reply stays, with a note.
3. The interaction is answered within the platform's window: with the first private reply when
   nothing else goes out, with a public reply when the answer may be one and no private reply
   waits, else bare (`more` says private replies follow).
4. Posts, DMs, files and edits are delivered in order; then the private replies, which may
   confirm them ("Posted."). When a delivery fails the learner is told that instead: for a
   refusal for good the platform's advice, for a passing failure "try again", for a bug its
   reference (the details are in the log).

No exception reaches the SDK. `ChatAdapter` also holds start and close: `close()` is safe at any
moment, also while `start()` runs (which then returns), and waits for the follow-ups under way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from adapters.log_guard import clean
from bot.core.errors import DeliveryFailed, reference_id
from bot.core.messages import Audience, ChoiceMade, Command, MessageRef, Place, Reply, TextSubmitted
from bot.runtime.delivery import deliver

if TYPE_CHECKING:
    from bot.runtime.app import StudyBot

log = logging.getLogger("studybot.replies")

Inbound = Command | ChoiceMade | TextSubmitted  # what a user does on a platform
FORM_NOTE = "\n(The answer form could not open. Run the command again for a fresh one.)"
NOT_TAKEN = "{platform} did not take the message just now ({why}). Please try again in a minute."


def failed_text(ref: str) -> str:
    """What a learner is told when a bug stopped their request; `ref` is in the log beside the details."""
    return (f"Something went wrong on our side (reference {ref}). Please try again; "
            "if it keeps happening, give the reference to your instructor.")


def addressed(reply: Reply, event: Inbound) -> Reply:
    """A reply with its place and recipient filled in from the event that caused it."""
    if reply.place is not None and reply.to is not None:
        return reply
    return replace(reply, place=reply.place or event.place, to=reply.to or event.actor)


def said_privately(reply: Reply) -> bool:
    """Whether a reply is said within the interaction (ephemeral); the rest is delivered."""
    return reply.audience is Audience.PRIVATE and reply.edit is None and reply.file is None


class Interaction(Protocol):
    """One interaction as its platform answers it (the adapter's translation)."""

    @property
    def opens_forms(self) -> bool:
        """Whether a form can open now (as a modal)."""

    @property
    def form_answers(self) -> bool:
        """Whether the opened form is the interaction's answer itself."""

    @property
    def answers(self) -> tuple[Audience, ...]:
        """What the answer may carry: PRIVATE (ephemeral) and/or PUBLIC."""

    async def open_form(self, reply: Reply) -> bool:
        """Open `reply.form`; False when it could not (logged)."""

    async def answer(self, reply: Reply | None, *, more: bool) -> bool | MessageRef:
        """Answer the interaction within its window, with `reply` or bare (`more`: private replies
        follow). False when it expired (logged); the posted message when a public reply answered."""

    async def say(self, reply: Reply) -> None:
        """A private reply after the answer."""

    async def fail(self, text: str) -> None:
        """Tell the user a bug stopped the request, as the answer when none was given yet."""


@dataclass
class FollowUp:
    """What goes out after the answer: deliveries, then the private replies (if answered)."""

    deliveries: list[Reply]
    private: list[Reply]


class ChatAdapter:
    """What every adapter does the same way; a subclass translates. It sets `platform`, `title`,
    `failures` (its SDK's passing delivery failures) and `undeliverable` (its advice when a post
    (True) or a direct message (False) was refused for good), implements the Outbox (`send`,
    `edit`), `connect` and `disconnect`, and may override `why` (a failure as a log token)."""

    platform: ClassVar[str]
    title: ClassVar[str]  # the platform's name in a sentence
    failures: ClassVar[tuple[type[BaseException], ...]] = ()
    undeliverable: ClassVar[Mapping[bool, str]]
    follow_up_later: ClassVar[bool] = False  # deliver after the listener returned (Slack's 3 s ack)

    def __init__(self, bot: StudyBot) -> None:
        self.bot = bot
        self._tasks: set[asyncio.Task[None]] = set()
        self._starting: asyncio.Task[Any] | None = None
        self._closing = False

    # ------------------------------------------------------------ the platform's part

    async def send(self, reply: Reply) -> MessageRef | None:
        raise NotImplementedError

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        raise NotImplementedError

    async def channel_problem(self, place: Place) -> str | None:
        return None

    async def connect(self) -> None:
        """Connect or listen; PlatformRejected or PlatformUnreachable when it cannot."""

    async def disconnect(self) -> None:
        """Release what `connect` opened; safe when it opened nothing."""

    def why(self, exc: BaseException) -> str:
        """A failure as a short log token."""
        return clean(str(exc), 80) if isinstance(exc, DeliveryFailed) else type(exc).__name__

    # ------------------------------------------------------------ an interaction

    async def handle(self, interaction: Interaction, event: Callable[[], Awaitable[Inbound]]) -> None:
        """Read the event, record it, answer, then follow up; never raises."""
        try:
            happened = await event()
            replies = [addressed(r, happened) for r in await self.bot.handle(happened)]
            follow_up = await self.respond(interaction, replies)
        except Exception:
            ref = reference_id()
            log.exception("bug ref=%s: a %s interaction failed", ref, self.platform)
            try:
                await interaction.fail(failed_text(ref))
            except Exception as exc:
                log.warning("%s refused the note about reference %s (%s)", self.platform, ref, self.why(exc))
            return
        if not (follow_up.deliveries or follow_up.private):
            return
        if self.follow_up_later:
            self.defer(self.follow(interaction, follow_up))
        else:
            await self.follow(interaction, follow_up)

    async def respond(self, interaction: Interaction, replies: list[Reply]) -> FollowUp:
        """Open the form, answer the interaction, and return what follows."""
        replies, opened = await _form_opened(interaction, replies)
        deliveries = [r for r in replies if not said_privately(r)]
        private = [r for r in replies if said_privately(r)]
        if opened and interaction.form_answers:
            return FollowUp(deliveries, private)
        first, deliveries, private = _first_answer(interaction, deliveries, private)
        answered = await interaction.answer(first, more=bool(private and deliveries))
        if isinstance(answered, MessageRef) and first is not None and first.tag:
            await self.bot.message_posted(first.tag, answered)
        return FollowUp(deliveries, private if answered else [])

    async def follow(self, interaction: Interaction, follow_up: FollowUp) -> None:
        """Deliver in order, then say the private replies, or what failed instead; never raises."""
        private = follow_up.private
        for reply in follow_up.deliveries:
            notice = await self.delivered(reply)
            if notice is not None:
                private = [Reply(notice)]
                break
        for reply in private:
            try:
                await interaction.say(reply)
            except Exception as exc:
                log.warning("%s refused a private reply (%s)", self.platform, self.why(exc))

    async def delivered(self, reply: Reply) -> str | None:
        """Deliver one reply; what to tell the user when it failed, else None."""
        try:
            await deliver(self.bot, self, reply)
        except Exception as exc:
            if isinstance(exc, DeliveryFailed) and exc.permanent:
                log.warning("%s refused a %s reply for good (%s); telling the user", self.platform, reply.audience,
                            self.why(exc))
                return self.undeliverable[reply.audience is Audience.PUBLIC]
            if isinstance(exc, (DeliveryFailed, *self.failures)):
                log.warning("%s did not take a %s reply (%s); telling the user", self.platform, reply.audience,
                            self.why(exc))
                return NOT_TAKEN.format(platform=self.title, why=self.why(exc))
            ref = reference_id()
            log.exception("bug ref=%s while delivering a %s %s reply", ref, self.platform, reply.audience)
            return failed_text(ref)
        return None

    @contextlib.contextmanager
    def refusals(self, permanent: Callable[[BaseException], str | None]) -> Iterator[None]:
        """The SDK's refusals for good (those `permanent` names a reason for) as a permanent
        DeliveryFailed, so that a timer is given up rather than retried; the rest as they are."""
        try:
            yield
        except DeliveryFailed:
            raise
        except Exception as exc:
            reason = permanent(exc)
            if reason is None:
                raise
            raise DeliveryFailed(f"{self.platform} refused the message: {reason}", permanent=True) from exc

    def defer(self, work: Coroutine[Any, Any, None]) -> None:
        """Run follow-up work after the listener returned; `close()` waits for it."""
        async def guarded() -> None:
            try:
                await work
            except Exception:
                log.exception("bug ref=%s: a %s follow-up failed", reference_id(), self.platform)

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def idle(self) -> None:
        """Wait until every deferred follow-up has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # ------------------------------------------------------------ start and close

    async def start(self) -> None:
        """Connect; PlatformRejected or PlatformUnreachable when it cannot. A `close()` meanwhile
        makes it return without an error."""
        self._starting = asyncio.current_task()
        try:
            await self.connect()
        except asyncio.CancelledError:
            await self.disconnect()
            task = asyncio.current_task()
            if self._closing and task is not None and task.uncancel() == 0:
                return
            raise
        except BaseException:
            closing = self._closing
            await self.disconnect()
            if closing:
                return
            raise
        finally:
            self._starting = None

    async def close(self) -> None:
        """Stop taking requests, then finish the follow-ups already promised. Safe at any time,
        and more than once."""
        self._closing = True
        starting = self._starting
        if starting is not None and starting is not asyncio.current_task() and not starting.done():
            starting.cancel()
            await asyncio.wait({starting})
        await self.disconnect()
        await self.idle()


async def _form_opened(interaction: Interaction, replies: list[Reply]) -> tuple[list[Reply], bool]:
    """The replies once the first form among them is opened as a modal (and taken out), where the platform
    opens forms; a form it could not open stays a reply, with a note."""
    at = next((i for i, r in enumerate(replies) if r.form is not None), None) if interaction.opens_forms else None
    if at is None:
        return replies, False
    form, replies = replies[at], [*replies]
    if await interaction.open_form(form):
        del replies[at]
        return replies, True
    replies[at] = replace(form, form=None, text=form.text + FORM_NOTE)
    return replies, False


def _first_answer(interaction: Interaction, deliveries: list[Reply],
                  private: list[Reply]) -> tuple[Reply | None, list[Reply], list[Reply]]:
    """The reply that answers the interaction itself (if it can carry one), and the deliveries and private
    replies left to follow it."""
    if private and not deliveries and Audience.PRIVATE in interaction.answers:
        return private[0], deliveries, private[1:]
    if not private and Audience.PUBLIC in interaction.answers:
        first = next((r for r in deliveries if r.audience is Audience.PUBLIC and r.edit is None), None)
        return first, [r for r in deliveries if r is not first], private
    return None, deliveries, private
