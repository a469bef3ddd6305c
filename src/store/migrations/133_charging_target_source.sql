-- Who set a target: a client over HTTP, or the connector's configured default target,
-- applied when a transaction starts without one set by a client (docs/chargers.md
-- "Default targets"). A client's PUT replaces a default one.
ALTER TABLE charging_targets ADD COLUMN source TEXT NOT NULL DEFAULT 'client' CHECK (source IN ('client', 'default'));
