-- Steps of a trusted wall clock beyond clock.step_tolerance_s (docs/clock-safety.md). The
-- readings sampled inside a step's suspect window cannot be placed in time for sure (the
-- same instant may have been stamped twice, or the step happened somewhere between two
-- checks): they are flagged, kept, and session pricing refuses them instead of using them
-- silently. Readings stored later inside a recorded window are flagged as they are stored.
CREATE TABLE clock_steps (
  id              INTEGER PRIMARY KEY,
  detected_at_ms  INTEGER NOT NULL,       -- wall time (after the step) when it was seen
  step_ms         INTEGER NOT NULL,       -- change of wall - monotonic; negative = back
  suspect_from_ms INTEGER NOT NULL,       -- readings sampled in [from, to] are flagged
  suspect_to_ms   INTEGER NOT NULL
);

ALTER TABLE readings ADD COLUMN clock_suspect INTEGER NOT NULL DEFAULT 0;
CREATE INDEX readings_clock_suspect ON readings (resource_id, sampled_at_ms) WHERE clock_suspect = 1;
