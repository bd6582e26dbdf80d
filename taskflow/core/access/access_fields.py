"""The field half of the access rule table: which rule guards every schema field.

``FIELDS`` maps every ``Type.field`` of the committed ``graphql/schema.graphql`` to a
rule of :data:`taskflow.core.access.access_rules.RULES` (read it there: ``access_rules.FIELDS``),
but for the refusals' and connections' fields, which are ``parent`` by type
(``access_rules.rule_of``). A new query, mutation or field gets its entry here.
"""

from __future__ import annotations

from typing import Final

from taskflow.core.access import history_fields

#: ``Type.field`` -> rule id, for every query, mutation and object field of the schema.
FIELDS: Final[dict[str, str]] = {
    "Card.run": "board",
    "Card.slots": "board",
    "Mutation.upsertPrincipal": "admin",
    "Mutation.deactivatePrincipal": "admin",
    "Mutation.startRun": "application",
    "Mutation.updateSubject": "application",
    "Mutation.upsertSubject": "application",
    "Mutation.deleteSubject": "subject.delete",
    "Mutation.raiseEvent": "event.raise",
    "Mutation.claim": "candidate",
    "Mutation.claimNext": "candidate",
    "Mutation.release": "candidate",
    "Mutation.assign": "candidate",
    "Mutation.addCandidate": "candidates.add",
    "Mutation.complete": "candidate",
    "Mutation.move": "move",
    "Mutation.cancelRun": "cancel",
    "Mutation.mintMagicLink": "links.manage",
    "Mutation.revokeMagicLink": "links.manage",
    "Mutation.completeWithLink": "link.token",
    "Mutation.mintNotificationLink": "outbox.link",
    "Mutation.takeNotifications": "outbox.send",
    "Mutation.markNotificationSent": "outbox.send",
    "Mutation.markNotificationFailed": "outbox.send",
    "Query.me": "self",
    "Query.principals": "admin",
    "Query.inbox": "candidate",
    "Query.work": "work",
    "Query.board": "board",
    "Query.run": "run.read",
    "Query.slot": "run.read",
    "Query.notifications": "outbox",
    "Query.slaReport": "report",
    "Query.node": "node",
    "Run.slots": "run.read",
    "Run.leadTime": "run.read",
    "Run.moves": "run.read",
    "Run.checklist": "run.read",
    "Run.timeline": "run.read",
    "Run.deadline": "run.read",
    "Slot.links": "links.read",
    "Slot.run": "run.read",
    "TimelineEntry.reason": "links.read",
    "TimelineEntry.details": "links.read",
    "Mutation.discardTimer": "timers",
    "Mutation.migrateRuns": "admin",
    "Mutation.retryTimer": "timers",
    # Automatic steps: whoever may read the run sees them; operators retry parked ones.
    "Mutation.retryStep": "operate",
    "Mutation.detachChild": "operate",
    "Mutation.resolveCompensation": "operate",
    "Run.steps": "run.read",
    # The linked run itself only when the caller may read it (powers are per workflow).
    "Run.children": "run.read",
    "Run.parent": "run.read",
    "RunChild.run": "run.read",
    "Run.compensations": "run.read",
    "Compensation.run": "run.read",
    "Mutation.signOutEverywhere": "signout",
    # A principal's own hours and leave: the same rule (themselves; admins for anyone).
    "Mutation.setWorkingHours": "signout",
    "Mutation.addLeave": "signout",
    "Mutation.removeLeave": "signout",
    "Query.timers": "timers",
    "Run.timers": "timers",
    # needs attention and operator verbs
    "Mutation.goto": "operate",
    "Mutation.pauseClocks": "operate",
    "Mutation.reassignHeld": "operate",
    "Mutation.rescheduleTimer": "operate",
    "Mutation.resumeClocks": "operate",
    "Query.needsAttention": "operate",
    "Mutation.bulkOperate": "operate",
    "Mutation.createWebhookEndpoint": "webhooks",
    "Mutation.deleteWebhookEndpoint": "webhooks",
    "Mutation.replayWebhookDeliveries": "webhooks",
    "Mutation.rotateWebhookSecret": "webhooks",
    "Mutation.updateWebhookEndpoint": "webhooks",
    "Query.webhookEndpoints": "webhooks",
    "Query.automations": "automations",
    "Mutation.createAutomation": "automations",
    "Mutation.validateAutomation": "automations",
    "Mutation.publishAutomation": "automations",
    "Mutation.pauseAutomation": "automations",
    "Mutation.resumeAutomation": "automations",
    "Mutation.simulateAutomation": "automations",
    "Mutation.deleteAutomation": "automations",
    "WebhookEndpoint.deliveries": "webhooks",
    "Query.workspaces": "workspaces",
    "Mutation.createWorkspace": "workspaces",
    "Mutation.suspendWorkspace": "workspaces",
    "Mutation.resumeWorkspace": "workspaces",
    "Mutation.setWorkspaceLimits": "workspaces",
    "Mutation.exportWorkspace": "workspaces",
}

# Fields of values the caller already reads through their parent object, so "parent".
_VALUE_FIELDS = {
    "Card": "lane subject moves childProgress deadline",
    "ChildProgress": "done total",
    "CheckItem": "name holds condition",
    "Clock": "milestone calendar calendarLink budget elapsed remaining dueAt status startedAt "
    "metAt breachedAt pauses explain terms",
    "ClockTerm": "since until dueAt budget policy breached",
    "ClockPause": "start end",
    "CompleteSuccess": "slot run",
    "CompleteWithLinkSuccess": "label completedAt",
    "DeactivatePrincipalSuccess": "principal",
    "Duration": "seconds kind text",
    "DurationPercentiles": "p50 p90 p95",
    "FieldProblem": "field reason",
    "LeadTimeSplit": "total worked waiting workedShare onChildren",
    "MagicLink": "id slotId event recipientName recipientEmail status createdBy createdAt "
    "expiresAt usedAt revokedAt revokedBy opens openedAt",
    "MeasuredTime": "business real",
    "MintMagicLinkSuccess": "link url token",
    "MintNotificationLinkSuccess": "link url token",
    "MoveOption": "name label to allowed guard guardText checklist reasons",
    "Notification": "id kind message recipient recipientKind recipientEmail recipientName "
    "linkRequested linkId runId slotId createdAt deliverAt details deliveryState attempts "
    "lastError leaseExpiresAt nextAttemptAt sentAt",
    "TakeNotificationsSuccess": "lease leaseExpiresAt notifications",
    "MarkNotificationSuccess": "notification",
    "PayloadField": "name type required choices label",
    "PowerGrant": "power workflows teams events",
    "Principal": "id login displayName email roles groups attributes timeZone calendar active "
    "powers tokensValidAfter workingHours leave workspace",
    "WorkingHours": "timeZone windows calendar",
    "Leave": "from to note",
    "SetWorkingHoursSuccess": "principal",
    "AddLeaveSuccess": "principal",
    "RemoveLeaveSuccess": "principal",
    "RaiseEventSuccess": "run slot duplicate",
    "RevokeMagicLinkSuccess": "link",
    "Run": "id workflow definitionVersion definitionDigest state status subject "
    "correlationKey startedAt stateEnteredAt endedAt version workspace",
    "RunLeadTime": "total states",
    "RunSuccess": "run",
    "SlaReport": "from to generatedAt zone rows runDeadlines",
    "RunDeadlineCounts": "workflow runs met missed open",
    "SlaReportRow": "workflow version state slot audience holder priority periodStart "
    "periodLabel opened met breached stillOpen breachRate breachRateText atRiskNow "
    "breachedNow pickup completion leadTime",
    "Slot": "id name label workflow state runState status event holder priority dueAt version "
    "item itemIndex payload candidates subject openedAt claimedAt satisfiedAt satisfiedBy "
    "fields clocks expiresAt outcome workspace",
    "SlotSuccess": "slot",
    "StartRunSuccess": "run created reached",
    "StateLeadTime": "state leadTime",
    "Subject": "type externalId attributes workspace",
    "TimelineEntry": "id kind actor at slotId",
    "UpdateSubjectSuccess": "subject runs",
    "UpsertSubjectSuccess": "subject runs started",
    "DeleteSubjectSuccess": "subject runs linksRevoked",
    "UpsertPrincipalSuccess": "principal created",
    "RetryStepSuccess": "step",
    "RaiseEventBuffered": "arrivedAt duplicate event expiresAt run",
    "SignOutEverywhereSuccess": "principal",
    "Timer": "attempts dueAt failedAt fired id key kind lastError maxAttempts part plannedAt "
    "runId slotId state",
    "TimerSuccess": "timer",
    "AttentionItem": "detail principalId reason remedy runId since slotId state timerId until "
    "workflow",
    "ReassignHeldSuccess": "dryRun held moved skipped slotIds",
    "BulkOperateSuccess": "applicable applied dryRun endCursor matched notApplicable refused "
    "remaining runIds skippedForAccess",
    "BulkRefusalCount": "code runs",
    "MigrateRunsSuccess": "migrated batches",
    "MigratedRuns": "step runs",
}
FIELDS.update({f"{t}.{f}": "parent" for t, fs in _VALUE_FIELDS.items() for f in fs.split()})

# The query API for frontends (workflows, runs): the definition types are values of a
# workflow the caller may read, so "parent" throughout.
_PARENT_FIELDS = {
    "DefinitionField": "name type required choices label help",
    "DefinitionMilestone": "kind within calendar forecastAlert",
    "DefinitionMove": "name label to by guard fields",
    "DefinitionSlot": "name label description waitsFor fields candidates delegates milestones "
    "after forEach magicLink",
    "DefinitionState": "name label description kind lane pausing slots moves routes",
    # Business calendars (the calendars query): values of a calendar any caller reads.
    "Calendar": "name timezone description versions",
    "CalendarVersion": "effective key description week holidays holidayMode closures workingDays",
    "CalendarDay": "weekday windows",
    "Workflow": "name latest versions",
    "WorkflowVersion": "version digest description tracks calendar initialState lanes states "
    "document",
    "WebhookEndpoint": "id url description eventTypes workflows enabled disabledAt "
    "disabledReason failingSince secret previousSecretValidUntil createdBy createdAt updatedAt",
    "WebhookDelivery": "id eventId eventType runId occurredAt state attempts lastAttemptAt "
    "lastStatusCode lastError latencyMs nextAttemptAt deliveredAt",
    "WebhookEndpointSuccess": "endpoint",
    "WebhookEndpointDeleted": "endpointId",
    "WebhookDeliveriesReplayed": "count endpoint",
    # Automations, values of an automation the caller manages (docs/automations.md).
    "Automation": "id workflow name status version document author attention createdAt updatedAt",
    "AutomationProblem": "pointer code message",
    "SimulatedEvent": "eventKind occurredAt runId outcome reason actions",
    "AutomationSuccess": "automation",
    "AutomationDeleted": "automationId",
    "AutomationValidation": "valid problems",
    "AutomationSimulation": "eventsRead capped wouldAct matched events",
    # Automatic steps, values of a run the caller may read (Run.steps).
    "Step": "id key kind state visit action status attemptCount dueAt result lastError "
    "createdAt endedAt attempts",
    "StepAttempt": "attempt worker startedAt finishedAt outcome durationMs errorClass "
    "errorMessage traceback",
    # Child runs, values of a parent run the caller may read (Run.children).
    "RunChild": "label workflow awaited status state outcome",
    # A saga's compensations, values of a run the caller may read (Run.compensations).
    "Compensation": "step compensation status attempts outcome",
    # An SLA dry run's answer (slaDryRun), computed for the caller alone.
    "SlaDryRun": "workflow version startedAt endedAt state status firings milestones "
    "reminders escalations breaches timeline",
    "DryRunMilestone": "slot visit clock",
    "DryRunLine": "at kind slot reason details",
    # A run's deadline, a value of the run the caller reads (Run.deadline).
    "RunDeadline": "dueAt source rule status breachedAt milestones",
    "DeadlineMilestone": "kind at firedAt",
    # Workspaces: an object's workspace is its reader's (the wall shows no other); the admin
    # verbs' answers are values of a workspace the caller manages.
    "Workspace": "id name",
    "WorkspaceDetail": "id name status limits createdAt",
    "WorkspaceLimits": "runs openSlots requestsPerMinute",
    "WorkspaceSuccess": "workspace",
    "WorkspaceExport": "workspace export",
}
FIELDS.update({f"{held}.workspace": "parent" for held in ("WebhookEndpoint", "Automation")})
FIELDS.update({f"{t}.{f}": "parent" for t, fs in _PARENT_FIELDS.items() for f in fs.split()})
FIELDS.update(
    {"Query.workflows": "definitions", "Query.runs": "runs", "Query.calendars": "calendars"}
)
# slaDryRun plays the caller's own subject through a definition: nothing live is read.
FIELDS["Query.slaDryRun"] = "definitions"
# Subscriptions (docs/live.md): each field the rule of the query it follows; the changes it
# yields are values of that answer, so "parent".
FIELDS.update(
    {
        "Subscription.inboxChanged": "candidate",
        "Subscription.workChanged": "work",
        "Subscription.boardChanged": "board",
        "Subscription.slotChanged": "run.read",
        "Subscription.runChanged": "run.read",
    }
)
_CHANGES = {"SlotChange": "slot slotId cursor", "BoardChange": "card runId cursor"}
_CHANGES["RunChange"] = "run runId cursor"
FIELDS.update({f"{t}.{f}": "parent" for t, fs in _CHANGES.items() for f in fs.split()})
FIELDS.update(history_fields.FIELDS)
# The breach forecast (docs/forecast.md): counts over past slots, read where the slot is.
_FORECAST = {
    "Slot": "breachRisk",
    "BreachRisk": "probability atRisk reason cohort samples breached history shareElapsed "
    "hourBand load queue",
}
FIELDS.update({f"{t}.{f}": "parent" for t, fs in _FORECAST.items() for f in fs.split()})
# Teams' own calendars (docs/calendars.md, "The calendar chain"): admins set and read them.
FIELDS.update({"Query.teamCalendars": "admin", "Mutation.setTeamCalendar": "admin"})
_TEAMS = {
    "TeamCalendar": "team calendar setAt setBy",
    "SetTeamCalendarSuccess": "team calendar movedSlots",
}
FIELDS.update({f"{t}.{f}": "parent" for t, fs in _TEAMS.items() for f in fs.split()})
