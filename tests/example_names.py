"""The example workflows shipped in examples/, by name, sorted: the one list the tests that
enumerate them compare with (a new example is added here once)."""

EXAMPLE_WORKFLOWS = (
    "accounts-closure",
    "accounts-request",
    "badge-request",
    "badge-revocation",
    "employee-onboarding",
    "expense-approval",
    "laptop-request",
    "laptop-return",
    "security-assessment",
    "support-ticket",
    "vendor-onboarding",
)
