"""The GraphQL documents the agent tools run, one per tool.

Payloads and subject attributes are selected only when the call asks for them
(``includePayloads``), and then only as far as GraphQL shows them to the caller.
"""

from __future__ import annotations

_SLOT_ROW = """
        id name label workflow runState status holder priority dueAt version candidates
        subject { type externalId attributes @include(if: $payloads) }
"""


def _slot_page(name: str, root: str, filter_type: str | None) -> str:
    """A query of one page of slots from ``root`` (inbox, work), optionally filtered."""
    declared = f", $filter: {filter_type}" if filter_type else ""
    passed = ", filter: $filter" if filter_type else ""
    return (
        f"query {name}($first: Int, $after: String{declared}, $payloads: Boolean!) {{\n"
        f"  {root}(first: $first, after: $after{passed}) {{\n"
        "    totalCount\n    pageInfo { hasNextPage endCursor }\n"
        f"    edges {{ node {{{_SLOT_ROW}}} }}\n  }}\n}}"
    )


INBOX = _slot_page("Inbox", "inbox", None)
WORK = _slot_page("Work", "work", "WorkFilter")

BOARD = """
query Board($workflow: String!, $first: Int, $after: String, $payloads: Boolean!) {
  board(workflow: $workflow, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      lane
      subject { type externalId attributes @include(if: $payloads) }
      run { id status state version }
      slots { id label status holder version }
      moves { name to allowed reasons }
    } }
  }
}"""

RUN = """
query Run($id: ID!, $payloads: Boolean!) {
  run(id: $id) {
    id workflow definitionVersion state status version correlationKey startedAt endedAt
    subject { type externalId attributes @include(if: $payloads) }
    slots {
      id name label status holder priority dueAt version candidates event
      openedAt claimedAt satisfiedAt satisfiedBy
      payload @include(if: $payloads)
    }
    moves { name to allowed reasons }
    steps { id key state action status attemptCount dueAt lastError }
    timeline(first: 100) { totalCount edges { node { id kind actor reason at slotId
      details @include(if: $payloads) } } }
  }
}"""

NEEDS_ATTENTION = """
query NeedsAttention($filter: AttentionFilter, $first: Int, $after: String) {
  needsAttention(filter: $filter, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      reason since until runId workflow state slotId timerId principalId detail remedy
    } }
  }
}"""

SLA_REPORT = """
query SlaReport($from: DateTime!, $to: DateTime, $filter: SlaReportFilter) {
  slaReport(from: $from, to: $to, filter: $filter) {
    from to generatedAt zone
    rows {
      periodLabel workflow state slot audience opened met breached stillOpen
      breachRateText atRiskNow breachedNow
      pickup { business { p50 { text } p90 { text } } }
      completion { business { p50 { text } p90 { text } } }
    }
  }
}"""

#: What a write tool reads first: the workflow its target belongs to (the agent opt-in is
#: per workflow) and, for retryStep, the run's steps.
SLOT_WORKFLOW = "query SlotWorkflow($id: ID!) { slot(id: $id) { workflow } }"
RUN_WORKFLOW = "query RunWorkflow($id: ID!) { run(id: $id) { workflow steps { id } } }"

#: A refusal's code and words, and the typed facts an agent acts on (what the slot or run is
#: now, who holds it).
_REFUSAL = (
    "__typename ... on Refusal { code message } ... on StaleVersion { currentVersion currentState }"
)
_SLOT_DONE = (
    "... on SlotSuccess { slot { id status holder version } } "
    "... on AlreadyClaimed { holder claimedAt }"
)
_RUN_DONE = "... on RunSuccess { run { id state status version } }"


def _mutation(name: str, field: str, input_type: str, done: str) -> str:
    return (
        f"mutation {name}($input: {input_type}!) {{ {field}(input: $input) {{ "
        f"{_REFUSAL} {done} }} }}"
    )


CLAIM = _mutation("Claim", "claim", "ClaimInput", _SLOT_DONE)
RELEASE = _mutation("Release", "release", "ReleaseInput", _SLOT_DONE)
ASSIGN = _mutation("Assign", "assign", "AssignInput", _SLOT_DONE)
COMPLETE = _mutation(
    "Complete",
    "complete",
    "CompleteInput",
    "... on CompleteSuccess { slot { id status version } run { id state status version } }",
)
RAISE_EVENT = _mutation(
    "RaiseEvent",
    "raiseEvent",
    "RaiseEventInput",
    "... on RaiseEventSuccess { slot { id status version } run { id state status version } }"
    " ... on RaiseEventBuffered { run { id state status version } event }",
)
RETRY_STEP = _mutation(
    "RetryStep", "retryStep", "RetryStepInput", "... on RetryStepSuccess { step { id status } }"
)
PAUSE_CLOCKS = _mutation("PauseClocks", "pauseClocks", "ClocksInput", _RUN_DONE)
RESUME_CLOCKS = _mutation("ResumeClocks", "resumeClocks", "ClocksInput", _RUN_DONE)
