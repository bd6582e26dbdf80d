-- The runs list (store/runs/run_list.py): every condition is composed by the builder into
-- /*:where*/ (filters from fragments.sql run_*, the caller's reach, the keyset cursor);
-- newest first (/*:order*/ "newest"), /*:limit*/ a page's size.

-- name: runs_count
-- How many runs match (no fixed parameters).
SELECT count(*) FROM run r WHERE true /*:where*/

-- name: runs_page
-- A page of matching runs with their subjects (no fixed parameters).
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject
WHERE true /*:where*/
ORDER BY /*:order*/ LIMIT /*:limit*/
