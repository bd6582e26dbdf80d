"""Checks of slots: fields, audiences, milestones, reminders and ``after`` ordering."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Final

from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import labels, milestones, sla
from taskflow.core.definition.checks.checking import Checker
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd
from taskflow.core.definition.model import Slot, State
from taskflow.core.definition.timing_rules import deadline, expiry

_DAY_LENGTH_SECONDS: Final = bu.DEFAULT_DAY_LENGTH.total_seconds()


class SlotChecker(Checker):
    """Checks of the slots of a state."""

    def slot(self, where: str, st: State, slot: Slot) -> None:
        swhere = f"{where} / slot {slot.name!r}"
        roots = ("subject", "item") if slot.foreach is not None else ("subject",)
        if slot.foreach is not None and not (
            (isinstance(slot.foreach, ex.Ref) and slot.foreach.root == "subject")
            or (isinstance(slot.foreach, ex.Lit) and isinstance(slot.foreach.value, list))
        ):
            self.add(
                "BAD_FOREACH",
                swhere,
                f"foreach is {slot.foreach}",
                "give a subject path to a list (subject.documents) or a literal list",
            )
        self.fields(swhere, slot.fields)
        self.who(swhere, "candidates", slot.candidates, roots, ("anyone",))
        self.who(swhere, "delegates", slot.delegates, roots, ("anyone",))
        self.who(swhere, "outsiders", slot.outsiders, roots, ("anyone",))
        if slot.outsiders is not None and not slot.magic_link:
            self.add(
                "LINKS_NOT_ALLOWED",
                swhere,
                "outsiders are declared, but the slot may not be completed by a magic link",
                "add magic_link=True (and shareable=[...]) to the slot, or drop outsiders",
            )
        if slot.magic_link:
            self.shareable(swhere, slot)
        self.condition(swhere, "armed", slot.armed, (*roots, "payload"))
        if slot.label is not None:
            self.refs(swhere, "the label", labels.refs(slot.label), (*roots, "payload", "result"))
        prio = slot.priority_rule
        if prio.key is not None:
            self.refs(swhere, "the priority", exd.refs(prio.key), roots)
        values = [prio.default, *(v for _, v in prio.table)]
        if prio.fixed is not None:
            values.append(prio.fixed)
        if any(v < 1 for v in values):
            self.add(
                "BAD_PRIORITY",
                swhere,
                "a priority is below 1",
                "use 1 for the most urgent, larger numbers for less urgent",
            )
        self.duplicates(swhere, "milestone", (m.kind for m in slot.milestones))
        for m in slot.milestones:
            if m.kind not in sla.MILESTONE_KINDS:
                self.add(
                    "BAD_MILESTONE",
                    swhere,
                    f"unknown milestone {m.kind!r}",
                    "use milestone.assigned(...) or milestone.finished(...)",
                )
            if m.recompute not in bu.RECOMPUTE_POLICIES:
                self.add(
                    "BAD_RECOMPUTE",
                    swhere,
                    f"unknown recompute policy {m.recompute!r} on the {m.kind} milestone",
                    "use recompute='keep-elapsed', 'restart' or 'retroactive'",
                )
            if m.holder_leave not in milestones.HOLDER_LEAVE:
                self.add(
                    "BAD_HOLDER_LEAVE",
                    swhere,
                    f"unknown holder_leave {m.holder_leave!r} on the {m.kind} milestone",
                    "use holder_leave='pause' (the clock stands still through the holder's "
                    "leave) or 'run' (the default)",
                )
            source, _, path = m.region_from.partition(".")
            if m.region_from and (source not in ("subject", "holder") or not path):
                self.add(
                    "BAD_REGION_FROM",
                    swhere,
                    f"region_from {m.region_from!r} on the {m.kind} milestone names no field",
                    "use region_from='subject.<path>' or 'holder.<attribute>'",
                )
            self.calendar(swhere, m.calendar)
            for named in m.regions.values():
                self.calendar(swhere, named)
            self.budget(swhere, f"the {m.kind} milestone's budget", m.within, roots)
        for i, rem in enumerate(slot.reminders):
            self.reminder(f"{swhere} / reminder {i + 1}", slot, rem)
        if slot.expires is not None:
            self.expiry(f"{swhere} / expires", slot, slot.expires)

    def expiry(self, where: str, slot: Slot, rule: expiry.Expire) -> None:
        """An expiry: a budget or a subject path, a known zone and calendar, real-time
        warnings whose actions are sound."""
        if (rule.after is None) == (rule.at is None):
            self.add(
                "BAD_EXPIRY",
                where,
                "give after= or at=",
                "write expire.after(real.days(14)) or expire.at(subject.valid_until)",
            )
        if rule.after is not None:
            self.budget(where, "the expiry", rule.after, ("subject",))
        if rule.at is not None:
            self.condition(where, "the expiry instant", rule.at, ("subject",))
        if (problem := deadline.zone_problem(rule.zone)) is not None:
            self.add(
                "UNKNOWN_TIME_ZONE", where, problem, 'write an IANA zone, e.g. zone="Europe/Berlin"'
            )
        self.calendar(where, rule.calendar)
        fix = "give it notify= (with_link=True for outsiders), escalate_to= or raise_priority_to="
        for i, warning in enumerate(rule.warnings):
            wwhere = f"{where} / warning {i + 1}"
            self.budget(wwhere, "the warning's lead time", warning.before, ())
            if isinstance(warning.before, bu.Budget) and warning.before.kind != "real":
                self.add(
                    "BAD_EXPIRY",
                    wwhere,
                    f"the warning comes {warning.before} before",
                    "count it in real time: real.days(2)",
                )
            self.actions(wwhere, warning.actions, "BAD_EXPIRY", "the warning", fix)
            for action in warning.actions:
                if action.with_link:
                    self.link_request(wwhere, slot, action)

    def actions(
        self, where: str, actions: tuple[sla.Action, ...], code: str, what: str, fix: str
    ) -> None:
        """The actions of a reminder or timeout (``what``): at least one, and each sound."""
        if not actions:
            self.add(code, where, f"{what} does nothing", fix)
        specials = ("holder", "candidates", "anyone")
        for a in actions:
            self.target(where, "a move action", a.target)
            self.who(where, f"the {a.kind} action", a.who, ("subject", "item"), specials)
            if a.kind == "raise_priority" and (a.priority is None or a.priority < 1):
                self.add(
                    "BAD_PRIORITY",
                    where,
                    f"raise_priority_to={a.priority}",
                    "raise to a priority of 1 or more (1 is the most urgent)",
                )

    def reminder(self, where: str, slot: Slot, rem: sla.Reminder) -> None:
        ms = slot.milestone(rem.milestone)
        if ms is None:
            declared = ", ".join(m.kind for m in slot.milestones) or "none"
            self.add(
                "UNKNOWN_MILESTONE",
                where,
                f"the reminder is scheduled off the "
                f"{rem.milestone!r} milestone, which the slot does not declare "
                f"(declared: {declared})",
                f"add milestone.{rem.milestone}(within=...) or change of=",
            )
        fix = "give it notify=, escalate_to=, reassign_to=, raise_priority_to= or move_to="
        self.actions(where, rem.actions, "BAD_REMINDER", "the reminder", fix)
        for action in rem.actions:
            if action.with_link:
                self.link_request(where, slot, action)
        for label, offset in (("first", rem.first), ("until", rem.until)):
            if isinstance(offset, float) and offset <= 0:
                self.add(
                    "BAD_REMINDER",
                    where,
                    f"{label} is at {offset:.0%} of the budget",
                    "use a fraction above 0 (0.75 is 75 %, 1.0 is the breach)",
                )
            elif isinstance(offset, bu.Budget):
                self.budget(where, f"the reminder's {label} offset", offset, ())
        if rem.every is not None:
            self.budget(where, "the reminder's interval", rem.every, ())
        if rem.times is not None and rem.times < 1:
            self.add(
                "BAD_REMINDER", where, f"times={rem.times}", "fire at least once, or drop times="
            )
        if rem.until is not None:
            budget = ms.within if ms is not None and isinstance(ms.within, bu.Budget) else None
            first, until = _seconds(rem.first, budget), _seconds(rem.until, budget)
            if (
                first is not None
                and until is not None
                and first[0] == until[0]
                and until[1] < first[1]
            ):
                self.add(
                    "REMINDER_AFTER_UNTIL",
                    where,
                    f"the reminder first fires at {_offset(rem.first)}, after its own until "
                    f"({_offset(rem.until)}), so it would never fire",
                    "move until= later than the first firing, or drop it",
                )

    def shareable(self, where: str, slot: Slot) -> None:
        """A link slot's label (also the text of its reminders) may read only shareable fields."""
        if slot.label is None:
            return
        for ref in labels.refs(slot.label):
            if not isinstance(ref, ex.Ref) or ref.root != "subject":
                continue
            field = ref.parts[0] if ref.parts else ""
            if field and field in slot.shareable:
                continue
            shown = f"subject.{field}" if field else "the whole subject"
            self.add(
                "NOT_SHAREABLE",
                where,
                f"the label reads {shown} ({ref.dotted}), which is not in shareable: the link "
                "page and the reminders sent with a link would show it to the outsider",
                f"add {field!r} to shareable=[...], or take it out of the label"
                if field
                else "read single shareable fields in the label",
            )

    def link_request(self, where: str, slot: Slot, action: sla.Action) -> None:
        """``with_link=True``: the slot must allow links, and someone must receive them."""
        if not slot.magic_link:
            self.add(
                "LINKS_NOT_ALLOWED",
                where,
                f"the reminder asks for a magic link (with_link=True), but slot {slot.name!r} "
                "may not be completed by one",
                "add magic_link=True (and shareable=[...]) to the slot, or drop with_link",
            )
        if action.who is None:
            self.add(
                "BAD_REMINDER",
                where,
                "with_link=True, but the reminder notifies nobody",
                "add notify=who.email(subject.<address field>) to say whom the link is for",
            )
        elif not au.emails(action.who) and not (
            slot.candidates is not None
            and "candidates" in au.specials(action.who)
            and au.emails(slot.candidates)
        ):
            self.add(
                "BAD_REMINDER",
                where,
                f"with_link=True, but notify={action.who} names no e-mail address: links are "
                "for outsiders without an account",
                "notify an outsider, e.g. notify=who.email(subject.contact_email), or drop "
                "with_link",
            )

    def after(self, where: str, st: State) -> None:
        siblings = {s.name: s.after for s in st.slots}
        for slot in st.slots:
            for name in slot.after:
                if name == slot.name:
                    self.add(
                        "AFTER_CYCLE",
                        f"{where} / slot {slot.name!r}",
                        "the slot waits for itself",
                        "remove its own name from after=",
                    )
                elif name not in siblings:
                    self.add(
                        "UNKNOWN_SIBLING",
                        f"{where} / slot {slot.name!r}",
                        f"after names {name!r}, which is not a slot of this state",
                        f"use one of: {', '.join(sorted(siblings))}",
                    )
        cycle = _find_cycle(siblings)
        if cycle:
            self.add(
                "AFTER_CYCLE",
                where,
                "slots wait for each other: " + " -> ".join(cycle),
                "break the cycle: one of them must not wait for the other",
            )


def _offset(offset: sla.Offset) -> str:
    return f"{offset:.0%} of the budget" if isinstance(offset, float) else str(offset)


def _seconds(offset: sla.Offset | None, budget: bu.Budget | None) -> tuple[str, float] | None:
    """An offset as (clock kind, seconds) when that can be known at load time."""
    if isinstance(offset, float):
        return None if budget is None else (budget.kind, offset * _budget_seconds(budget))
    if offset is None:
        return None
    return offset.kind, _budget_seconds(offset)


def _budget_seconds(b: bu.Budget) -> float:
    unit = {"minutes": 60.0, "hours": 3600.0}.get(b.unit)
    if unit is None:  # days: a business day is a working day, a real day 24 hours
        unit = _DAY_LENGTH_SECONDS if b.kind == "business" else 86400.0
    return b.amount * unit


def _find_cycle(graph: Mapping[str, Collection[str]]) -> list[str]:
    """One cycle in ``graph`` (excluding self-loops, reported apart) as a path, or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt == node or nxt not in graph:
                continue
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return []

    for node in graph:
        if node not in state and (found := visit(node)):
            return found
    return []
