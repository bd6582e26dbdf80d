"""Attached files: taking an upload for a slot's field, signing and reading downloads,
and forgetting the files of slots that ended without them.

An upload is sniffed and capped against the field it is for (``core/files``), then kept
by sha256 in the storage of ``TASKFLOW_FILES_*`` (``store/files/storage.py``) and recorded
as its uploader's (a staff principal or a magic link, ``store/files/uploads.py``); the answer
is the reference a payload carries, and only that uploader's completion may carry it. A
download URL is signed for one slot's file and works ``TASKFLOW_FILES_URL_TTL`` seconds;
the signer checks that the reader may see the slot (``visible_slot``, the rule every slot
read follows) when it signs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from itsdangerous import BadSignature

from taskflow import errors
from taskflow.config import file_settings
from taskflow.core.access.principals import Principal
from taskflow.core.definition import fields as fl
from taskflow.core.files import files as fi
from taskflow.service.access import tokens
from taskflow.service.common.container import Services
from taskflow.service.links import link_use
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import views
from taskflow.store.files import references, uploads
from taskflow.store.files import storage as st
from taskflow.store.runs import runs as run_rows

SALT = "taskflow.files.download"


def settings_of(services: Services) -> file_settings.FileSettings:
    """The file settings, defaulting to ``<data dir>/files``."""
    found = services.settings.files
    return found if found is not None else file_settings.load({}, services.settings.data_dir)


def storage(services: Services) -> st.Storage:
    """The storage ``services`` keep files in (built once per services)."""
    if services.file_storage is None:
        chosen = settings_of(services)
        if chosen.s3_bucket:
            services.file_storage = st.S3Storage(
                chosen.s3_bucket,
                chosen.s3_prefix,
                endpoint_url=chosen.s3_endpoint,
                region_name=chosen.s3_region or "us-east-1",
                aws_access_key_id=chosen.s3_access_key,
                aws_secret_access_key=chosen.s3_secret_key,
            )
        else:
            services.file_storage = st.LocalStorage(chosen.directory)
    return services.file_storage


def field_of(fields: Sequence[fl.Field], name: str) -> fl.Field:
    """The ``file`` field ``name`` of a slot, or a refusal naming the file fields it has."""
    for found in fields:
        if found.name == name and found.type == "file":
            return found
    named = ", ".join(f.name for f in fields if f.type == "file") or "none"
    raise errors.ValidationError(
        f"The slot has no file field {name!r} (its file fields: {named}).", field=name
    )


def staff_uploader(actor: Principal) -> str:
    """The uploader a staff principal's uploads are recorded under."""
    return f"principal:{actor.id}"


def link_uploader(link_id: str) -> str:
    """The uploader a magic link's uploads are recorded under."""
    return f"link:{link_id}"


async def _stored(
    services: Services, kept: Sequence[tuple[fi.FileRef, bytes]], uploader: str
) -> None:
    """Store the files, then record that ``uploader`` uploaded them (the record is what
    lets its ``complete`` carry them: a file is never recorded before it is stored)."""
    for ref, data in kept:
        await storage(services).put(ref.sha256, data)
    async with services.db.connection() as conn:
        await uploads.record(conn, [ref.sha256 for ref, _ in kept], uploader, services.clock.now())


async def keep(
    services: Services, field: fl.Field, name: str | None, data: bytes, uploader: str
) -> fi.FileRef:
    """Sniff and cap ``data`` for ``field``, then store it as ``uploader``'s; its reference."""
    ref = fi.accept(name, data, content_types=field.content_types, max_bytes=field.max_bytes)
    await _stored(services, [(ref, data)], uploader)
    return ref


async def keep_many(
    services: Services,
    fields: Sequence[fl.Field],
    sent: Mapping[str, Sequence[tuple[str | None, bytes]]],
    uploader: str,
) -> dict[str, Any]:
    """Payload values for a form's uploads (field -> [(name, bytes)]) by ``uploader``: every
    file checked before any is stored, so a refused one stores nothing."""
    accepted: dict[str, list[tuple[fi.FileRef, bytes]]] = {}
    for name, files in sent.items():
        field = field_of(fields, name)
        if len(files) > field.max_files:
            raise fi.FileRefused(
                f"The field {name!r} takes at most {field.max_files} file(s); "
                f"{len(files)} were sent.",
                field=name,
            )
        accepted[name] = [
            (fi.accept(n, d, content_types=field.content_types, max_bytes=field.max_bytes), d)
            for n, d in files
        ]
    values: dict[str, Any] = {}
    await _stored(services, [one for kept in accepted.values() for one in kept], uploader)
    for name, kept in accepted.items():
        refs = [ref.to_json() for ref, _ in kept]
        values[name] = refs if field_of(fields, name).max_files > 1 else refs[0]
    return values


async def upload_for_slot(
    services: Services,
    actor: Principal,
    slot_id: str,
    field_name: str,
    name: str | None,
    data: bytes,
) -> fi.FileRef:
    """``POST /files``: a file for a slot the actor may see, checked against its field."""
    slot = await views.visible_slot(services, actor, slot_id)
    async with services.db.connection() as conn:
        run = await run_rows.get_run(conn, slot.run_id)
    if run is None:
        raise errors.NotFound(f"No slot has the id {slot_id!r}.")
    declared = run_service.definition_for(services, run.view).slot(slot.state, slot.name)
    field = field_of(declared.fields, field_name)
    return await keep(services, field, name, data, staff_uploader(actor))


async def upload_for_link(
    services: Services, token: str, client: str, field_name: str, name: str | None, data: bytes
) -> fi.FileRef:
    """``POST /files`` with a magic link's token: a file for the link's slot, recorded as the
    link's (its ``completeWithLink`` may carry it). An unusable link is refused as on its page."""
    page = await link_use.open_page(services, token, client, submitting=True)
    field = field_of(page.fields, field_name)
    return await keep(services, field, name, data, link_uploader(page.link.id))


async def sign(services: Services, actor: Principal, slot_id: str, sha256: str) -> str:
    """A download path for a file of a slot's payload, if the actor may see the slot."""
    slot = await views.visible_slot(services, actor, slot_id)
    if not any(ref.sha256 == sha256 for ref in fi.refs_in(slot.payload)):
        raise errors.NotFound(f"The slot {slot_id!r} holds no file {sha256!r}.")
    expires = services.clock.now() + timedelta(seconds=settings_of(services).url_ttl)
    signed = tokens.serializer(services.settings.secret_keys, SALT).dumps(
        [slot_id, sha256, int(expires.timestamp())]
    )
    return f"/files/d/{signed}"


async def read(services: Services, signed: str) -> tuple[fi.FileRef, bytes]:
    """The file a signed download path names, while it works; NOT_FOUND otherwise."""
    gone = errors.NotFound("This download link does not work (expired or wrong): ask again.")
    try:
        slot_id, sha256, expires = tokens.serializer(services.settings.secret_keys, SALT).loads(
            signed
        )
    except (BadSignature, ValueError, TypeError):
        raise gone from None
    if services.clock.now().timestamp() > expires:
        raise gone
    async with services.db.connection() as conn:
        slot = await run_rows.get_slot(conn, str(slot_id))
    refs = [r for r in fi.refs_in(slot.payload if slot else None) if r.sha256 == sha256]
    data = await storage(services).get(str(sha256)) if refs else None
    if data is None:
        raise gone
    return refs[0], data


#: How long a stored file no payload keeps yet survives (an upload awaiting its completeSlot).
GRACE = timedelta(days=1)


async def sweep(services: Services, now: datetime | None = None) -> int:
    """Remove stored files that no slot keeps any more (their slot or run was cancelled, or
    the run was pruned) and that are older than :data:`GRACE`; how many went."""
    at = now or services.clock.now()
    async with services.db.connection() as conn:
        kept = await references.kept_digests(conn)
        await uploads.forget_before(conn, at - GRACE)
    kept_in = storage(services)
    gone = 0
    for sha256, stored_at in await kept_in.listed():
        if sha256 not in kept and stored_at < at - GRACE:
            await kept_in.delete(sha256)
            gone += 1
    return gone


async def check_stored(
    services: Services, payload: Mapping[str, Any] | None, uploader: str
) -> None:
    """Every file reference a payload carries names a file ``uploader`` (the completing
    caller) uploaded, whose stored bytes are the size and type it claims (a reference is
    the caller's JSON: it is not believed; someone else's file is not theirs to hand in);
    :class:`~taskflow.core.definition.fields.PayloadError` naming the field otherwise."""
    carried = {
        name: [ref for item in (v if isinstance(v, list) else [v]) if (ref := fi.parse_ref(item))]
        for name, v in (payload or {}).items()
    }
    if not any(carried.values()):
        return
    async with services.db.connection() as conn:
        theirs = await uploads.uploaded_by(
            conn, uploader, [ref.sha256 for refs in carried.values() for ref in refs]
        )
    problems = []
    for name, refs in carried.items():
        for ref in refs:
            if ref.sha256 not in theirs:
                problems.append(fl.FieldProblem(name, fl.UPLOAD_FIRST))
                continue
            data = await storage(services).get(ref.sha256)
            if data is None or len(data) != ref.size or fi.sniff(data) != ref.type:
                problems.append(
                    fl.FieldProblem(
                        name,
                        f"no stored file matches {ref.name!r} (sha256 {ref.sha256[:12]}...): "
                        "upload it with POST /files and send the reference it answers",
                    )
                )
    if problems:
        raise fl.PayloadError(problems)
