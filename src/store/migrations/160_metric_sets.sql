-- The names and units of a meter's metrics, stored once (SD-card wear, docs/uplink.md):
-- a reading written from now on keeps only its values, `[set_id, v1, v2, ...]`, in
-- readings.metrics_json (about 90 instead of 600 bytes for an SDM630's 11 values), so a
-- small page holds several readings. Readings written before stay as they are (a JSON
-- array of {name, value, unit}); ReadingsStore reads both.
CREATE TABLE metric_sets (
  id            INTEGER PRIMARY KEY,
  names_units   TEXT NOT NULL UNIQUE   -- JSON [[name, unit], ...] in the order of the values
);
