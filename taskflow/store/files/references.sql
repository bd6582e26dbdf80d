-- Statements of store/files/references.py: which stored files some slot still keeps.

-- name: kept_digests
-- The sha256 of every file reference in the payload of a slot that is not cancelled, of a
-- run that is not cancelled (a payload value is one reference or a list of them). A full
-- pass over payloads: the retention sweep runs it once per sweep, never per request.
SELECT DISTINCT f.value ->> 'sha256' AS sha256
FROM slot s
JOIN run r ON r.id = s.run
CROSS JOIN LATERAL jsonb_each(s.payload) AS e
CROSS JOIN LATERAL jsonb_array_elements(
    CASE jsonb_typeof(e.value) WHEN 'array' THEN e.value ELSE jsonb_build_array(e.value) END
) AS f
WHERE s.payload IS NOT NULL AND jsonb_typeof(s.payload) = 'object'
  AND s.status <> 'cancelled' AND r.status <> 'cancelled'
  AND jsonb_typeof(f.value) = 'object' AND f.value ? 'sha256'
