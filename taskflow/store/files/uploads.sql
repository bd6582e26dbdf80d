-- Statements of store/files/uploads.py: who uploaded which stored file.

-- name: record
-- One row per uploader and file; the same bytes uploaded again renew the row. A link's
-- upload (uploader 'link:<id>', an anonymous request in no workspace) is its link's slot's
-- workspace's; a principal's, the request's (docs/workspaces.md).
INSERT INTO file_upload (sha256, uploader, uploaded_at, workspace)
SELECT unnest($1::text[]), $2, $3, coalesce(
    (SELECT l.workspace FROM magic_link l
     WHERE $2 LIKE 'link:%' AND l.id::text = substr($2, 6)),
    taskflow_workspace())
ON CONFLICT (uploader, sha256) DO UPDATE SET uploaded_at = EXCLUDED.uploaded_at

-- name: uploaded_by
-- Which of the digests $2 the uploader $1 uploaded (the primary key answers it).
SELECT sha256 FROM file_upload WHERE uploader = $1 AND sha256 = ANY($2::text[])

-- name: forget_before
-- Rows older than the sweep's grace: an upload that long unused is no longer usable.
DELETE FROM file_upload WHERE uploaded_at < $1
