-- Readings in time order (SD-card wear, docs/uplink.md "Storage wear"). Keyed by
-- (resource_id, sampled_at_ms), every meter's readings sat in a leaf of their own, so a
-- poll tick of 10 meters rewrote 10 pages (to the WAL, and again at the checkpoint). Keyed
-- by time, a tick appends to the last leaf or two.
--
-- Existing readings are not copied (a year of 10 meters is tens of millions of rows: no
-- copy fits the 180 s start timeout on a Pi). Their table is renamed (instant) to
-- readings_by_meter and read beside the new one until the retention purge has taken them
-- all; it is never written again except by that purge and by clock-step flags.
ALTER TABLE readings RENAME TO readings_by_meter;

-- A small number per meter, part of each reading's key. At most 1024 meters per gateway.
CREATE TABLE reading_meters (
  id            INTEGER PRIMARY KEY CHECK (id BETWEEN 0 AND 1023),
  resource_id   TEXT    NOT NULL UNIQUE
);

-- id = sampled_at_ms * 1024 + meter: the rowid orders by time (appends at the right edge),
-- is unique per meter and instant, and finds one reading with one seek. sampled_at_ms is
-- id >> 10 (valid until the year 2248).
CREATE TABLE meter_readings (
  id               INTEGER PRIMARY KEY,
  meter            INTEGER NOT NULL,   -- reading_meters.id
  energy_import_wh REAL,
  power_w          REAL,
  metrics_json     TEXT    NOT NULL,   -- [metric_set_id, v1, v2, ...] (migration 160)
  clock_suspect    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX meter_readings_clock_suspect ON meter_readings (meter, id) WHERE clock_suspect = 1;

-- Which hours have readings of a meter (and whether one of them has energy): a per-meter
-- query that looks back or ahead without a bound (the reading before a session) skips the
-- hours of other meters and gaps. Written once per meter and hour; never a page per tick.
CREATE TABLE meter_reading_hours (
  meter         INTEGER NOT NULL,
  hour          INTEGER NOT NULL,      -- sampled_at_ms / 3600000
  with_energy   INTEGER NOT NULL,      -- 1: a reading of that hour has energy_import_wh
  PRIMARY KEY (meter, hour)
) WITHOUT ROWID;

-- The readings as they were, for operators, tools and tests: both tables, in the old columns.
CREATE VIEW readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json, clock_suspect) AS
  SELECT m.resource_id, r.id >> 10, r.energy_import_wh, r.power_w, r.metrics_json, r.clock_suspect
  FROM meter_readings r JOIN reading_meters m ON m.id = r.meter
  UNION ALL
  SELECT resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json, clock_suspect FROM readings_by_meter;

-- An insert into the view lands in meter_readings, as ReadingsStore.insert does it.
CREATE TRIGGER readings_insert INSTEAD OF INSERT ON readings BEGIN
  INSERT INTO reading_meters (id, resource_id)
    SELECT (SELECT COALESCE(MAX(id) + 1, 0) FROM reading_meters), NEW.resource_id
    WHERE NOT EXISTS (SELECT 1 FROM reading_meters WHERE resource_id = NEW.resource_id);
  INSERT OR IGNORE INTO meter_readings (id, meter, energy_import_wh, power_w, metrics_json, clock_suspect)
    SELECT CAST(NEW.sampled_at_ms AS INTEGER) * 1024 + m.id, m.id, NEW.energy_import_wh, NEW.power_w, NEW.metrics_json,
      COALESCE(NEW.clock_suspect, EXISTS (SELECT 1 FROM clock_steps WHERE NEW.sampled_at_ms BETWEEN suspect_from_ms AND suspect_to_ms))
    FROM reading_meters m WHERE m.resource_id = NEW.resource_id
      -- As ReadingsStore.insert: an instant already kept in the old table is not stored twice.
      AND NOT EXISTS (SELECT 1 FROM readings_by_meter o WHERE o.resource_id = NEW.resource_id AND o.sampled_at_ms = NEW.sampled_at_ms);
  INSERT INTO meter_reading_hours (meter, hour, with_energy)
    SELECT m.id, CAST(NEW.sampled_at_ms AS INTEGER) / 3600000, NEW.energy_import_wh IS NOT NULL FROM reading_meters m WHERE m.resource_id = NEW.resource_id
    ON CONFLICT (meter, hour) DO UPDATE SET with_energy = 1 WHERE excluded.with_energy = 1 AND with_energy = 0;
END;

CREATE TRIGGER readings_delete INSTEAD OF DELETE ON readings BEGIN
  DELETE FROM meter_readings WHERE id = OLD.sampled_at_ms * 1024 + (SELECT id FROM reading_meters WHERE resource_id = OLD.resource_id);
  DELETE FROM readings_by_meter WHERE resource_id = OLD.resource_id AND sampled_at_ms = OLD.sampled_at_ms;
END;
