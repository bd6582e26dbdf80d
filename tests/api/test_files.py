"""Attached files over HTTP: ``POST /files``, signed downloads, caps and sniffing, a storage
that does not answer (docs/files.md)."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.api import app as api_app
from taskflow.service.common import container
from taskflow.service.files import files as file_service
from taskflow.store.files import storage
from tests import s3_server
from tests.api import magic as m
from tests.api import raw_asgi
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import gql

pytestmark = pytest.mark.anyio

PDF = m.PDF
#: Why a typed reference, or a file someone else uploaded, is refused.
UPLOAD_FIRST = "takes only files uploaded by you: upload the file first"
#: A ZIP archive's bytes, whatever name it is sent under.
ZIP = b"PK\x03\x04" + b"\x00" * 60


async def _upload_slot(world: World) -> str:
    run = await m.start_vendor(world.client, world.people)
    return (await m.upload_slots(world.client, world.people, run["id"]))["bank details"]


async def _send(
    world: World, slot_id: str, data: bytes, name: str = "bank.pdf", who: str = "olga"
) -> httpx.Response:
    return await world.client.post(
        "/files",
        data={"slot": slot_id, "field": "document"},
        files={"file": (name, data, "application/pdf")},
        headers={"Authorization": f"Bearer {world.people[who]}"},
    )


async def _completed_with_file(world: World) -> tuple[str, dict[str, Any]]:
    slot_id = await _upload_slot(world)
    answer = await _send(world, slot_id, PDF)
    assert answer.status_code == 201, answer.text
    ref = answer.json()
    done = await w.complete(world.client, world.people["olga"], slot_id, {"document": [ref]})
    assert done["__typename"] == "CompleteSuccess", done
    return slot_id, ref


async def test_upload_answers_the_reference_the_payload_keeps(world: World) -> None:
    slot_id, ref = await _completed_with_file(world)
    assert ref["name"] == "bank.pdf"
    assert ref["type"] == "application/pdf"
    assert ref["size"] == len(PDF)
    assert len(ref["sha256"]) == 64
    slot = await gql(world.client, m.SLOT_LINKS, {"id": slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["payload"]["document"] == [ref]


async def test_bytes_that_are_not_an_allowed_type_are_refused_whatever_the_name(
    world: World, tmp_path: Path
) -> None:
    slot_id = await _upload_slot(world)
    answer = await _send(world, slot_id, ZIP, name="bank.pdf")
    assert answer.status_code == 415
    assert answer.json()["code"] == "FILE_REFUSED"
    assert answer.json()["sniffed"] == "application/zip"
    assert "judged by its content" in answer.json()["message"]
    answer = await _send(world, slot_id, b"just some text pretending", name="bank.pdf")
    assert answer.status_code == 415
    assert answer.json()["sniffed"] == "application/octet-stream"


async def test_a_file_over_the_cap_is_refused_and_nothing_is_stored(world: World) -> None:
    slot_id = await _upload_slot(world)
    big = PDF + b"0" * (10 * 1024 * 1024)
    answer = await _send(world, slot_id, big)
    assert answer.status_code == 413
    assert answer.json()["max_bytes"] == 10 * 1024 * 1024
    root = world.services.settings.data_dir / "files"
    assert not root.exists() or not [p for p in root.rglob("*") if p.is_file()]


async def test_too_many_files_in_a_payload_are_refused(world: World) -> None:
    slot_id = await _upload_slot(world)
    ref = (await _send(world, slot_id, PDF)).json()
    done = await w.complete(world.client, world.people["olga"], slot_id, {"document": [ref] * 4})
    assert done["__typename"] == "PayloadInvalid"
    assert "at most 3 file(s)" in done["problems"][0]["reason"]


async def test_upload_needs_a_caller_who_may_see_the_slot(world: World) -> None:
    slot_id = await _upload_slot(world)
    anonymous = await world.client.post(
        "/files", data={"slot": slot_id, "field": "document"}, files={"file": ("a.pdf", PDF)}
    )
    assert anonymous.status_code == 401
    outsider = await _send(world, slot_id, PDF, who="sid")
    assert outsider.status_code == 404
    assert outsider.json()["code"] == "NOT_FOUND"


async def test_signed_download_with_and_without_powers_and_its_expiry(world: World) -> None:
    slot_id, ref = await _completed_with_file(world)
    query = {"slot": slot_id, "sha256": ref["sha256"]}
    refused = await world.client.get(
        "/files/url", params=query, headers={"Authorization": f"Bearer {world.people['sid']}"}
    )
    assert refused.status_code == 404
    signed = await world.client.get(
        "/files/url", params=query, headers={"Authorization": f"Bearer {world.people['lee']}"}
    )
    assert signed.status_code == 200, signed.text
    url = signed.json()["url"]
    got = await world.client.get(url)
    assert got.status_code == 200
    assert got.content == PDF
    assert got.headers["content-type"].startswith("application/pdf")
    assert got.headers["content-disposition"].startswith("attachment;")
    assert got.headers["x-content-type-options"] == "nosniff"
    tampered = await world.client.get(url[:-2] + ("AA" if not url.endswith("AA") else "BB"))
    assert tampered.status_code == 404
    world.clock.advance(timedelta(seconds=301))
    expired = await world.client.get(url)
    assert expired.status_code == 404
    assert "expired" in expired.json()["message"]


async def test_storage_down_is_unavailable_and_the_slot_stays_open(
    world: World, services: container.Services, tmp_path: Path
) -> None:
    slot_id = await _upload_slot(world)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the storage directory should be")
    services.file_storage = storage.LocalStorage(blocker)
    answer = await _send(world, slot_id, PDF)
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "5"
    assert answer.json()["code"] == "UNAVAILABLE"
    assert answer.json()["retryAfterSeconds"] == 5
    slot = await gql(world.client, m.SLOT_LINKS, {"id": slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["status"] == "OPEN"


async def test_a_download_with_storage_down_is_unavailable_not_a_missing_file(
    world: World, services: container.Services, tmp_path: Path
) -> None:
    slot_id, ref = await _completed_with_file(world)
    signed = await world.client.get(
        "/files/url",
        params={"slot": slot_id, "sha256": ref["sha256"]},
        headers={"Authorization": f"Bearer {world.people['lee']}"},
    )
    kept = services.file_storage
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the storage directory should be")
    services.file_storage = storage.LocalStorage(blocker / "sub")
    down = await world.client.get(signed.json()["url"])
    assert down.status_code == 503, down.text
    assert down.headers["retry-after"] == "5"
    assert down.json()["code"] == "UNAVAILABLE"
    services.file_storage = kept  # back up: the same link serves the file again
    assert (await world.client.get(signed.json()["url"])).content == PDF


async def _link_page(world: World) -> tuple[m.VendorLink, str, str]:
    minted = await m.vendor_link(world.client, world.people)
    path = m.path_of(minted.link["url"])
    page = await world.client.get(path)
    return minted, path, page.text


async def test_an_outsider_uploads_the_document_on_the_link_page(world: World) -> None:
    minted, path, html = await _link_page(world)
    assert 'enctype="multipart/form-data"' in html
    assert 'type="file"' in html
    assert 'accept="application/pdf,image/png,image/jpeg"' in html
    done = await world.client.post(
        path,
        data={"_page": m.page_token(html)},
        files=[("document", ("bank details.pdf", PDF, "application/pdf"))],
    )
    assert done.status_code == 200, done.text
    slot = await gql(world.client, m.SLOT_LINKS, {"id": minted.slot_id}, token=world.people["olga"])
    kept = slot.ok()["node"]["payload"]["document"]
    assert kept[0]["name"] == "bank details.pdf"
    assert kept[0]["type"] == "application/pdf"
    signed = await world.client.get(
        "/files/url",
        params={"slot": minted.slot_id, "sha256": kept[0]["sha256"]},
        headers={"Authorization": f"Bearer {world.people['olga']}"},
    )
    assert (await world.client.get(signed.json()["url"])).content == PDF


async def test_the_link_page_refuses_a_disguised_file_and_keeps_the_link(world: World) -> None:
    minted, path, html = await _link_page(world)
    refused = await world.client.post(
        path,
        data={"_page": m.page_token(html)},
        files=[("document", ("bank.pdf", ZIP, "application/pdf"))],
    )
    assert refused.status_code == 422
    assert "application/zip, judged by its content" in refused.text
    slot = await gql(world.client, m.SLOT_LINKS, {"id": minted.slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["status"] == "OPEN"
    assert slot.ok()["node"]["links"][0]["status"] == "ACTIVE"


async def test_the_link_page_with_storage_down_answers_unavailable(
    world: World, services: container.Services, tmp_path: Path
) -> None:
    minted, path, html = await _link_page(world)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the storage directory should be")
    services.file_storage = storage.LocalStorage(blocker)
    down = await world.client.post(
        path, data={"_page": m.page_token(html)}, files=[("document", ("b.pdf", PDF))]
    )
    assert down.status_code == 503
    slot = await gql(world.client, m.SLOT_LINKS, {"id": minted.slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["status"] == "OPEN"


MOVE = """mutation($input: MoveInput!) { move(input: $input) {
  __typename ... on RunSuccess { run { state status } } ... on Refusal { code message } } }"""


async def test_retention_removes_the_files_no_slot_keeps(world: World) -> None:
    run = await m.start_vendor(world.client, world.people)
    slots = await m.upload_slots(world.client, world.people, run["id"])
    kept_ref = (await _send(world, slots["bank details"], PDF)).json()
    done = await w.complete(
        world.client, world.people["olga"], slots["bank details"], {"document": [kept_ref]}
    )
    assert done["__typename"] == "CompleteSuccess"
    # Uploaded for the certificate, never completed: the cancel leaves it on no slot.
    orphan = PDF + b"% another document\n"
    orphan_ref = (await _send(world, slots["certificate of incorporation"], orphan)).json()
    cancel = {"input": {"runId": run["id"], "move": "cancel", "input": {"reason": "vendor left"}}}
    moved = await gql(world.client, MOVE, cancel, token=world.people["olga"])
    assert moved.ok()["move"]["__typename"] == "RunSuccess"
    kept_in = file_service.storage(world.services)

    # Within the grace an upload may still be awaiting its completeSlot: nothing goes.
    assert await file_service.sweep(world.services, datetime.now(UTC)) == 0
    assert await kept_in.get(orphan_ref["sha256"]) == orphan

    assert await file_service.sweep(world.services, datetime.now(UTC) + timedelta(days=2)) == 1
    assert await kept_in.get(orphan_ref["sha256"]) is None
    assert await kept_in.get(kept_ref["sha256"]) == PDF


# Litestar's multipart parser leaves the spooled file of a part cut short unclosed (its
# finaliser closes it): that warning is the parser's, not a fault of the upload.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_an_interrupted_upload_stores_nothing(world: World) -> None:
    slot_id = await _upload_slot(world)
    request = httpx.Request(
        "POST",
        "http://t/files",
        data={"slot": slot_id, "field": "document"},
        files={"file": ("bank.pdf", PDF + b"%" * 50_000, "application/pdf")},
    )
    body = request.read()
    content_type = request.headers["content-type"]
    app = api_app.create_app(services=world.services)
    # The client sends half the body, then goes away.
    parts = [
        {"type": "http.request", "body": body[: len(body) // 2], "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return parts.pop(0) if parts else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = raw_asgi.post_scope(
        "/files",
        [
            (b"content-type", content_type.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"authorization", f"Bearer {world.people['olga']}".encode()),
        ],
    )
    with contextlib.suppress(Exception):
        await app(scope, receive, send)  # type: ignore[arg-type]
    assert sent[0]["status"] == 400
    assert await file_service.storage(world.services).listed() == []
    slot = await gql(world.client, m.SLOT_LINKS, {"id": slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["status"] == "OPEN"


async def test_a_reference_to_no_stored_file_is_refused(world: World) -> None:
    slot_id = await _upload_slot(world)
    ref = (await _send(world, slot_id, PDF)).json()
    forged = {**ref, "type": "image/png"}  # bytes that are a PDF, claimed a PNG
    unknown = {**ref, "sha256": "0" * 64}
    # An altered reference to my upload names no stored file; one to bytes I never
    # uploaded is not mine to hand in.
    for sent, why in ((forged, "no stored file matches"), (unknown, UPLOAD_FIRST)):
        done = await w.complete(world.client, world.people["olga"], slot_id, {"document": sent})
        assert done["__typename"] == "PayloadInvalid"
        assert why in done["problems"][0]["reason"]
    slot = await gql(world.client, m.SLOT_LINKS, {"id": slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["status"] == "OPEN"


async def test_complete_with_link_checks_the_stored_bytes_as_complete_slot_does(
    world: World,
) -> None:
    minted = await m.vendor_link(world.client, world.people)
    ref = await m.uploaded(world.client, minted.slot_id, link=minted.link["token"])
    forged = {**ref, "type": "image/png", "size": ref["size"] + 1}  # claims other bytes
    unknown = {**ref, "sha256": "0" * 64}  # names no stored file
    for sent, why in ((forged, "no stored file matches"), (unknown, UPLOAD_FIRST)):
        done = await gql(
            world.client,
            m.COMPLETE_WITH_LINK,
            {"input": {"token": minted.link["token"], "payload": {"document": [sent]}}},
        )
        answer = done.ok()["completeWithLink"]
        assert answer["__typename"] == "PayloadInvalid", answer
        assert why in answer["problems"][0]["reason"]
    slot = await gql(world.client, m.SLOT_LINKS, {"id": minted.slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["status"] == "OPEN"
    assert slot.ok()["node"]["links"][0]["status"] == "ACTIVE"  # the link was not spent


async def test_complete_with_storage_down_is_unavailable_and_changes_nothing(
    world: World, services: container.Services, tmp_path: Path
) -> None:
    slot_id = await _upload_slot(world)
    ref = (await _send(world, slot_id, PDF)).json()
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the storage directory should be")
    services.file_storage = storage.LocalStorage(blocker)
    answer = await gql(
        world.client,
        w.COMPLETE,
        {"input": {"slotId": slot_id, "payload": {"document": ref}}},
        token=world.people["olga"],
    )
    assert answer.errors[0]["extensions"]["code"] == "UNAVAILABLE"
    assert "file storage did not answer" in answer.errors[0]["message"]
    slot = await gql(world.client, m.SLOT_LINKS, {"id": slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["status"] == "OPEN"


async def test_files_kept_in_s3_compatible_storage_upload_and_download(
    world: World, services: container.Services
) -> None:
    with s3_server.running() as endpoint:
        services.file_storage = storage.S3Storage(
            s3_server.BUCKET, "files/", endpoint_url=endpoint, **s3_server.KEYS
        )
        slot_id, ref = await _completed_with_file(world)
        signed = await world.client.get(
            "/files/url",
            params={"slot": slot_id, "sha256": ref["sha256"]},
            headers={"Authorization": f"Bearer {world.people['olga']}"},
        )
        assert (await world.client.get(signed.json()["url"])).content == PDF
        assert [sha for sha, _ in await services.file_storage.listed()] == [ref["sha256"]]


async def _still_open(world: World, slot_id: str) -> None:
    slot = await gql(world.client, m.SLOT_LINKS, {"id": slot_id}, token=world.people["olga"])
    assert slot.ok()["node"]["status"] == "OPEN"
    assert all(link["status"] == "ACTIVE" for link in slot.ok()["node"]["links"])


async def test_complete_slot_takes_only_files_the_completing_caller_uploaded(
    world: World,
) -> None:
    slot_id = await _upload_slot(world)
    by_app = await m.uploaded(world.client, slot_id, token=world.people["app"])
    for sent in ("ref-1", "https://drive.example/bank.pdf", [by_app]):
        done = await w.complete(world.client, world.people["olga"], slot_id, {"document": sent})
        assert done["__typename"] == "PayloadInvalid", done
        assert done["problems"][0]["field"] == "document"
        assert UPLOAD_FIRST in done["problems"][0]["reason"]
    await _still_open(world, slot_id)
    mine = await m.uploaded(world.client, slot_id, token=world.people["olga"])
    done = await w.complete(world.client, world.people["olga"], slot_id, {"document": [mine]})
    assert done["__typename"] == "CompleteSuccess", done


async def test_complete_with_link_takes_only_files_uploaded_through_that_link(
    world: World,
) -> None:
    minted = await m.vendor_link(world.client, world.people)
    slots = await m.upload_slots(world.client, world.people, minted.run_id)
    other = await m.minted(world.client, world.people, slots["certificate of incorporation"])
    by_staff = await m.uploaded(world.client, minted.slot_id, token=world.people["olga"])
    by_other_link = await m.uploaded(world.client, "", link=other["token"])

    async def complete(document: Any) -> dict[str, Any]:
        payload = {"document": document}
        done = await gql(
            world.client,
            m.COMPLETE_WITH_LINK,
            {"input": {"token": minted.link["token"], "payload": payload}},
        )
        return dict(done.ok()["completeWithLink"])

    for sent in ("ref-1", "https://drive.example/bank.pdf", [by_staff], [by_other_link]):
        answer = await complete(sent)
        assert answer["__typename"] == "PayloadInvalid", answer
        assert answer["problems"][0]["field"] == "document"
        assert UPLOAD_FIRST in answer["problems"][0]["reason"]
    await _still_open(world, minted.slot_id)
    own = await m.uploaded(world.client, minted.slot_id, link=minted.link["token"], name="b.pdf")
    answer = await complete([own])
    assert answer["__typename"] == "CompleteWithLinkSuccess", answer
    slot = await m.slot_links(world.client, world.people["olga"], minted.slot_id)
    assert slot["payload"] == {"document": [own]}


async def test_the_link_page_refuses_a_typed_reference_for_a_file_field(world: World) -> None:
    minted = await m.vendor_link(world.client, world.people)
    answer = await m.submit(world.client, minted.link["url"], {"document": "ref-1"})
    assert answer.status_code == 422
    assert "upload the file first" in answer.text
    await _still_open(world, minted.slot_id)


async def test_upload_with_a_link_token_needs_a_usable_link(world: World) -> None:
    minted = await m.vendor_link(world.client, world.people)
    answer = await world.client.post(
        "/files",
        data={"link": minted.link["token"] + "x", "field": "document"},
        files={"file": ("bank.pdf", PDF, "application/pdf")},
    )
    assert answer.status_code == 404
    assert answer.json()["code"] == "LINK_UNUSABLE"
    nothing = await world.client.post(
        "/files", data={"field": "document"}, files={"file": ("bank.pdf", PDF, "application/pdf")}
    )
    assert nothing.status_code == 401
    assert await file_service.storage(world.services).listed() == []


async def test_an_upload_unused_past_the_grace_must_be_sent_again(world: World) -> None:
    slot_id = await _upload_slot(world)
    ref = await m.uploaded(world.client, slot_id, token=world.people["olga"])
    later = world.clock.now() + file_service.GRACE + timedelta(seconds=1)
    await file_service.sweep(world.services, later)  # its bytes and its record both go
    done = await w.complete(world.client, world.people["olga"], slot_id, {"document": ref})
    assert done["__typename"] == "PayloadInvalid"
    assert UPLOAD_FIRST in done["problems"][0]["reason"]
    again = await m.uploaded(world.client, slot_id, token=world.people["olga"])
    done = await w.complete(world.client, world.people["olga"], slot_id, {"document": again})
    assert done["__typename"] == "CompleteSuccess", done
