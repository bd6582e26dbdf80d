"""Piccolo table classes of automations (``tables.TABLES`` lists them)."""

from __future__ import annotations

from piccolo.columns import JSONB, UUID, BigSerial, ForeignKey, Integer, Timestamptz, Varchar
from piccolo.columns.base import OnDelete
from piccolo.table import Table


class Automation(Table, tablename="automation"):
    """A rule a workflow's lead wrote: its JSON document and where it is in its life."""

    id = UUID(primary_key=True)
    workflow = Varchar(length=100)
    name = Varchar(length=200)
    #: ``draft``, ``published`` or ``paused``.
    status = Varchar(length=20, default="draft")
    #: The published version (0 while a draft was never published).
    version = Integer(default=0)
    document = JSONB(default="{}")
    #: Who wrote it: it acts with their powers, re-checked at each action.
    author = Varchar(length=100)
    created_at = Timestamptz()
    updated_at = Timestamptz()
    #: When its current version was published (None while a draft).
    published_at = Timestamptz(null=True, default=None)
    #: Why it stopped acting (its author lost the grant), and on which run; '' while well.
    attention = Varchar(length=500)
    attention_run = UUID(null=True, default=None)


class AutomationAct(Table, tablename="automation_act"):
    """One event an automation decided on: the unique (automation, event) row that makes
    acting happen once, written in the same transaction as the actions."""

    id = BigSerial(primary_key=True)
    automation = ForeignKey(references=Automation, null=False, on_delete=OnDelete.cascade)
    version = Integer()
    event_key = Varchar(length=200)
    #: ``act``, ``skip`` or ``loop`` (core.automations.decide).
    outcome = Varchar(length=20)
    #: The enrolling event's subject and instant (enrollment once per subject or window).
    subject = Varchar(length=100)
    event_at = Timestamptz()
    at = Timestamptz()


TABLES: tuple[type[Table], ...] = (Automation, AutomationAct)
