-- The lists a count of `p_list` is kept under for a row created at `p_at` (migration 0841,
-- docs/decisions.md "Time filters and total_count"): the list itself and, for events, transfers and
-- transactions, the same key again in the row's UTC month, day and hour (`transfers@m2026-11`,
-- `transfers@d2026-11-29`, `transfers@h2026-11-29T10`; core/src/sql/ListCounts.ts countPeriods).
-- The period is the row's own created_at, never the time of the write. A SQL function of one
-- SELECT, so the planner inlines it into each counting statement.
CREATE OR REPLACE FUNCTION issuing_count_periods(
    p_list text,
    p_at timestamp with time zone
)
 RETURNS SETOF text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT p_list
  UNION ALL
  SELECT p_list || v.period
  FROM (SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS t) x
  CROSS JOIN LATERAL (VALUES ('@m' || left(x.t, 7)), ('@d' || left(x.t, 10)), ('@h' || x.t)) AS v(period)
  WHERE p_list IN ('events', 'transfers', 'transactions')
$function$;
