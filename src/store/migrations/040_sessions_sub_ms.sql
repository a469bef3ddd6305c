-- The digits below the millisecond of a session's start and end as the operator sent them
-- (0..999999 ns), so the price record gives back the instant it was given (issue 16 point 8).
ALTER TABLE sessions ADD COLUMN start_sub_ms_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN end_sub_ms_ns INTEGER NOT NULL DEFAULT 0;
