"""Who a notice reaches: the principals its audience admits, and the outsiders it names.

Pure. The shell loads the active principals that may carry one of the
audience's keys (``store.principals.carrying_any``: user, e-mail, role and
group keys exactly, attribute keys by the attribute's name) and :func:`decide`
keeps those the audience really admits, residual rules included.

An **outsider** is an address named by an ``email:`` key that no active
principal has: a vendor's contact, a customer. They get a notification of
their own, addressed ``email:<address>`` (a principal id cannot hold a colon,
so the two never collide), with their name when the definition gives one
(``who.email(subject.contact_email, name=subject.contact_name)``). An address
that belongs to an account reaches that principal, as a principal, or nobody
if the audience excludes them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from taskflow.core.access import addresses as address_rules
from taskflow.core.access.principals import Principal
from taskflow.core.clocks.firing import Notice
from taskflow.core.definition import audience as au
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import Slot
from taskflow.core.definition.workflow import Definition

OUTSIDER_PREFIX = "email:"
#: A path under the subject; ``*`` stands for each element of a list (a foreach's items).
Path = tuple[str, ...]
EACH = "*"


@dataclass(frozen=True)
class Recipient:
    """One notification to write: to whom, where to, and whose calendar quiet hours wait for."""

    #: A principal's id, or ``email:<address>`` for an outsider.
    recipient: str
    email: str | None
    name: str | None
    #: The calendar whose opening a quiet-hours notification waits for (None: at once).
    calendar: str | None
    outsider: bool
    #: The sender should mint this outsider a magic link for the notice's slot.
    link_requested: bool = False


def outsider(address: str) -> str:
    """The recipient of an outsider's notifications: ``email:<address>``."""
    return OUTSIDER_PREFIX + address


def is_outsider(recipient: str) -> bool:
    """True for an outsider's notification (``email:<address>``), False for a principal's."""
    return recipient.startswith(OUTSIDER_PREFIX)


def addresses(audience: au.Audience) -> list[str]:
    """The e-mail addresses an audience names in its keys, sorted."""
    return sorted(k.removeprefix(OUTSIDER_PREFIX) for k in audience.keys if is_outsider(k))


def decide(
    notice: Notice,
    principals: Iterable[Principal],
    *,
    outsider_calendar: str | None = None,
    exclude: Collection[str] = (),
) -> list[Recipient]:
    """The recipients of ``notice``: admitted principals by id, then outsiders by address.

    ``principals`` are candidates (a superset is fine; inactive ones are ignored).
    Outsiders have no calendar of their own: quiet hours wait for
    ``outsider_calendar`` (the workflow's). ``exclude`` holds recipients already
    notified by this firing, so nobody hears the same firing twice.
    """
    found: list[Recipient] = []
    seen = set(exclude)
    owned: set[str] = set()
    for person in sorted((p for p in principals if p.active), key=lambda p: p.id):
        if person.email:
            owned.add(person.email)
        if person.id in seen or not notice.audience.admits(au.principal_keys(person)):
            continue
        seen.add(person.id)
        found.append(
            Recipient(person.id, person.email, person.display_name, person.calendar, False)
        )
    for address in addresses(notice.audience):
        key = outsider(address)
        if address in owned or key in seen:
            continue
        if not notice.audience.admits(frozenset({key})):
            continue  # e.g. "the vendor, but only if ..." with a rule an outsider cannot meet
        seen.add(key)
        found.append(
            Recipient(
                key,
                address,
                notice.names.get(address),
                outsider_calendar,
                True,
                link_requested=notice.with_link,
            )
        )
    return found


# -- where a definition reads outsiders' addresses (docs/security.md) ---------


def _slot_terms(slot: Slot) -> Iterator[au.Who]:
    for who in (slot.candidates, slot.delegates, slot.outsiders):
        if who is not None:
            yield who
    for reminder in slot.reminders:
        for action in reminder.actions:
            if action.who is not None:
                yield action.who


def recipient_paths(definition: Definition) -> frozenset[Path]:
    """Subject paths a definition reads an outsider's address from (``who.email`` terms)."""
    found: set[Path] = set()
    whos: list[tuple[au.Who, Slot | None]] = []
    for state in definition.states:
        whos += [(a.who, None) for t in state.timeouts for a in t.actions if a.who is not None]
        for slot in state.slots:
            whos += [(w, slot) for w in _slot_terms(slot)]
    for who, owner in whos:
        foreach = owner.foreach if owner is not None else None
        for term in au.emails(who):
            value = term.value
            if not isinstance(value, ex.Ref):
                continue
            if value.root == "subject":
                found.add(value.parts)
            elif value.root == "item" and isinstance(foreach, ex.Ref) and foreach.root == "subject":
                found.add((*foreach.parts, EACH, *value.parts))
    return frozenset(found)


def _at(value: Any, path: Path, shown: str) -> Iterator[tuple[str, Any]]:
    """(field, value) for each value at ``path`` under ``value`` (missing ones: none)."""
    if not path:
        yield shown, value
        return
    head, rest = path[0], path[1:]
    if head == EACH:
        if isinstance(value, list | tuple):
            for i, element in enumerate(value):
                yield from _at(element, rest, f"{shown}[{i}]")
    elif isinstance(value, Mapping) and head in value:
        yield from _at(value[head], rest, f"{shown}.{head}")


def check_subject(definition: Definition, attributes: Mapping[str, Any], prefix: str) -> None:
    """Refuse (INVALID_INPUT, field ``<prefix>.<attribute>``) a subject whose attribute that
    ``definition`` reads an outsider's address from is not one address (or a list of them)."""
    for path in sorted(recipient_paths(definition)):
        for field, value in _at(attributes, path, prefix):
            if value is None:
                continue  # no address: nobody to mail, as an absent attribute
            for one in value if isinstance(value, list | tuple) else (value,):
                address_rules.check(one, field)
