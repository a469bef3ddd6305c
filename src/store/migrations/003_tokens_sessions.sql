-- API tokens: only a SHA-256 of the secret part is stored; the token is shown once.
CREATE TABLE api_tokens (
  id             TEXT    PRIMARY KEY,          -- public part of the token, shown by `token list`
  name           TEXT    NOT NULL,
  type           TEXT    NOT NULL CHECK (type IN ('cdrs', 'price_forecast', 'cpo')),
  secret_sha256  BLOB    NOT NULL,
  created_at_ms  INTEGER NOT NULL,
  revoked_at_ms  INTEGER
);

-- Charging sessions received from a charge-point operator integration.
-- readings_json holds the session's own readings as [[timestamp_ms, reading_kwh], ...];
-- a session of a local meter has resource_id instead and is priced from `readings`.
CREATE TABLE sessions (
  cpo_transaction_id TEXT    PRIMARY KEY,
  cdr_id             TEXT    NOT NULL UNIQUE,  -- stable id of the priced record
  market_area        TEXT    NOT NULL,
  status             TEXT    NOT NULL CHECK (status IN ('active', 'completed')),
  start_ms           INTEGER NOT NULL,
  end_ms             INTEGER,
  resource_id        TEXT,
  readings_json      TEXT,
  content_sha256     TEXT    NOT NULL,         -- of the canonical content, for idempotent PUTs
  created_at_ms      INTEGER NOT NULL,
  updated_at_ms      INTEGER NOT NULL,         -- last change of the session's content
  total_cost_excl_vat REAL,                    -- last computed price
  currency           TEXT,
  last_updated_ms    INTEGER NOT NULL          -- moves when the content or the price changes
);
