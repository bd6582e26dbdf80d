"""Who a notice reaches: principals by audience (attributes included), outsiders by address."""

from __future__ import annotations

from taskflow.core.access.principals import Principal
from taskflow.core.clocks.firing import Notice
from taskflow.core.definition import audience as au
from taskflow.core.definition import subject, who
from taskflow.core.delivery import recipients

MAX = Principal(
    "max",
    "Max Manager",
    email="max@example.com",
    roles=("manager",),
    attributes={"reports": ["sam", "sid"]},
    calendar="uk-london",
)
SAM = Principal("sam", "Sam Submitter", email="sam@example.com", attributes={"reports": ["sam"]})
OLGA = Principal("olga", "Olga", email="olga@example.com", roles=("procurement",))
VENDOR = {"contact_email": "anna@acme.example", "contact_name": "Anna Acme", "submitted_by": "sam"}


def notice(w: au.Who, subject_: dict[str, object] = VENDOR, *, with_link: bool = False) -> Notice:
    return Notice(
        au.compile(w, subject_),
        "Upload bank details",
        str(w),
        names=au.email_names(w, subject_),
        with_link=with_link,
    )


def test_an_outsider_is_reached_at_their_address_with_their_name_and_a_link_request() -> None:
    vendor = who.email(subject.contact_email, name=subject.contact_name)
    [anna, olga] = sorted(
        recipients.decide(
            notice(vendor | who.role("procurement"), with_link=True),
            [OLGA],
            outsider_calendar="de-berlin",
        ),
        key=lambda r: r.outsider,
        reverse=True,
    )
    assert anna == recipients.Recipient(
        "email:anna@acme.example",
        "anna@acme.example",
        "Anna Acme",
        "de-berlin",
        True,
        link_requested=True,
    )
    # A principal never gets a link request: they have an account.
    assert (olga.recipient, olga.outsider, olga.link_requested) == ("olga", False, False)
    assert olga.calendar is None
    assert recipients.is_outsider(anna.recipient)
    assert not recipients.is_outsider("olga")


def test_an_outsider_among_the_candidates_keeps_their_name() -> None:
    vendor = who.email(subject.contact_email, name=subject.contact_name)
    names = au.email_names(who.holder() | who.candidates(), VENDOR, candidates=vendor)
    assert names == {"anna@acme.example": "Anna Acme"}


def test_a_name_the_subject_lacks_leaves_the_outsider_unnamed() -> None:
    vendor = who.email(subject.contact_email, name=subject.contact_name)
    [anna] = recipients.decide(notice(vendor, {"contact_email": "anna@acme.example"}), [])
    assert (anna.email, anna.name) == ("anna@acme.example", None)
    assert au.email_names(who.email("x@y.example"), {}) == {}


def test_an_address_with_an_account_reaches_the_principal_or_nobody() -> None:
    own = who.email("max@example.com")
    [only] = recipients.decide(notice(own), [MAX])
    assert (only.recipient, only.outsider, only.name) == ("max", False, "Max Manager")
    # Excluded by the audience: the address is theirs, so it is not written to as an outsider.
    assert recipients.decide(notice(own - who.id("max")), [MAX]) == []
    # A deactivated account no longer owns its address: the person is an outsider again.
    gone = Principal("max", "Max", email="max@example.com", active=False)
    [outsider] = recipients.decide(notice(own), [gone])
    assert outsider.recipient == "email:max@example.com"


def test_an_attribute_audience_reaches_the_principals_whose_attribute_admits_them() -> None:
    managers = (who.attr("reports") == subject.submitted_by) - who.id(subject.submitted_by)
    found = recipients.decide(notice(managers), [SAM, OLGA, MAX])
    assert [r.recipient for r in found] == ["max"]
    assert found[0].calendar == "uk-london"


def test_nobody_hears_a_firing_twice() -> None:
    vendor = who.email(subject.contact_email)
    assert recipients.decide(notice(vendor), [], exclude=["email:anna@acme.example"]) == []
    assert recipients.decide(notice(who.id("max")), [MAX], exclude=["max"]) == []
