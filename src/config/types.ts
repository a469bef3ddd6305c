// Typed view of a validated configuration (see schema.json, the single source of truth).
// Values of these types only exist after loadConfig() has validated and frozen them.

export type Parity = 'none' | 'even' | 'odd';
export type RegisterType = 'int16' | 'uint16' | 'int32' | 'uint32' | 'float32' | 'int64' | 'uint64' | 'float64';
export type WordOrder = 'big' | 'little';

export interface RegisterSpec {
  readonly metric: string;
  readonly address: number;
  readonly function_code?: 3 | 4;
  readonly type: RegisterType;
  readonly word_order: WordOrder;
  readonly scale: number;
  readonly unit: string;
  readonly default: boolean;
}

export interface MeterProfile {
  readonly vendor: string;
  readonly model: string;
  readonly function_code: 3 | 4;
  readonly max_registers_per_request: number;
  readonly max_gap_registers: number;
  readonly max_power_w: number;
  readonly registers: readonly RegisterSpec[];
}

export interface BusConfig {
  readonly name: string;
  /** Which meter source reads the bus (sources/index.ts): Modbus, or a DSMR P1 port. */
  readonly type: 'rtu' | 'tcp' | 'rtu-over-tcp' | 'p1' | 'p1-tcp';
  readonly port?: string;
  readonly baud_rate: number;
  readonly parity: Parity;
  readonly data_bits: 7 | 8;
  readonly stop_bits: 1 | 2;
  readonly host?: string;
  readonly tcp_port: number;
  readonly timeout_ms: number;
  readonly retries: number;
  readonly inter_frame_gap_ms?: number;
  /** P1 only: DSMR 4+ (115200 8N1, the default) or DSMR 2.2/3.0 (9600 7E1). */
  readonly line?: '115200 8N1' | '9600 7E1' | '2400 7E1' | '9600 8N1';
  /** `C`: an IEC 62056-21 mode C meter, asked each poll (sign-on at 300 7E1, then its rate); type p1 only. */
  readonly mode?: 'C';
}

export interface MeterConfig {
  readonly resource_id: string;
  readonly bus: string;
  readonly unit_id: number;
  readonly profile: string;
  readonly extra_metrics: readonly string[];
  readonly max_power_w?: number;
  /** P1 meters: M-Bus channel number ('1'..'4') to the resource id it is published as. */
  readonly channels?: Readonly<Record<string, string>>;
  /**
   * Set on the entries config/load.ts adds for a P1 meter's `channels` (never in the file): this
   * resource is M-Bus channel `number` of the meter `of`. Its unit_id is the channel number.
   */
  readonly channel?: { readonly of: string; readonly number: number };
}

export interface MqttConfig {
  /** The first node (urls[0]); kept for callers that name one broker. */
  readonly url: string;
  /** Every configured node, in the order tried (`mqtt.url` alone becomes a list of one). */
  readonly urls: readonly string[];
  readonly username?: string;
  readonly password?: string;
  readonly password_file?: string;
  readonly ca_file?: string;
  readonly cert_file?: string;
  readonly key_file?: string;
  readonly servername?: string;
  readonly client_id?: string;
  readonly protocol_version: 4 | 5;
  readonly topic_prefix: string;
  readonly keepalive_s: number;
  readonly inflight_window: number;
  readonly backlog_rate_per_s: number;
  readonly reconnect_min_ms: number;
  readonly reconnect_max_ms: number;
  readonly heartbeat_interval_ms: number;
}

/** A charge point allowed to connect over OCPP 1.6J (docs/chargers.md). */
/** A connector's limits and default target (docs/chargers.md "Default targets"). */
export interface ConnectorConfig {
  readonly connector_id: number;
  readonly max_current_a: number;
  readonly min_current_a: number;
  readonly phases: 1 | 3;
  readonly voltage_v: number;
  readonly default_target?: {
    /** HH:MM in the market's time zone. */
    readonly departure_local_time: string;
    readonly energy_wh: number;
  };
}

/** OCPP 2.0.1 IdTokenEnumType values that carry an identifier (NoAuthorization carries none). */
export type IdTokenType201 = 'ISO14443' | 'ISO15693' | 'eMAID' | 'KeyCode' | 'Local' | 'MacAddress' | 'Central';

export interface ChargerConfig {
  readonly id: string;
  /** Set from password_file by the loader when only the file is given. */
  readonly password?: string;
  readonly password_file?: string;
  /** The weakest connection it may use: 1 ws + basic auth, 2 wss + basic auth, 3 wss + client certificate. */
  readonly security_profile: 1 | 2 | 3;
  /** Which OCPP version it may speak (docs/chargers.md "OCPP 2.0.1"): auto takes the charger's offer. */
  readonly ocpp_version: 'auto' | '1.6' | '2.0.1';
  /** id_tags: who may charge; parent_id_tags: id tag → its group (1.6 parentIdTag, 2.0.1 groupIdToken). */
  readonly auth: 'accept_all' | { readonly id_tags: readonly string[]; readonly parent_id_tags?: Readonly<Record<string, string>> };
  /** OCPP 2.0.1: the idToken type of the id tags sent to the station (default ISO14443). */
  readonly id_token_type: IdTokenType201;
  /** Connector id → resource_id of a configured meter measuring it (prices its sessions). */
  readonly connector_meters?: Readonly<Record<string, string>>;
  /** Hex public key of the calibrated meter signing its meter values (OCMF), for connectors without one in meter_public_keys. */
  readonly meter_public_key?: string;
  /** Connector id → hex public key of that connector's meter. */
  readonly meter_public_keys?: Readonly<Record<string, string>>;
  readonly connectors?: readonly ConnectorConfig[];
}

/** The site's grid connection, for charging plans (docs/planning.md). */
export interface SiteConfig {
  readonly limit_a?: number;
  /** resource_id of the configured meter measuring the site's connection. */
  readonly meter?: string;
  readonly meter_includes_chargers: boolean;
  readonly max_reading_age_s: number;
  readonly raise_interval_s: number;
  readonly raise_hysteresis_a: number;
  readonly voltage_v: number;
  readonly lower_deadline_s: number;
  readonly escalation_step_s: number;
  readonly uncounted_chargers: 'refuse' | 'allow';
  /** The Belgian capacity tariff (docs/grid-limits.md); absent: not applied. */
  readonly capacity?: CapacityConfig;
}

/** site.capacity: charging never raises the quarter-hour's average demand above the month's peak (planning/capacity.ts). */
export interface CapacityConfig {
  readonly eur_per_kw_month: number;
  readonly target_kw?: number;
  readonly margin_kw: number;
  readonly raise_peak_for_departure: boolean;
}

/** A control box's contacts on Linux GPIO lines (grid/gpio-signal.ts). */
export interface GpioInputConfig {
  readonly type: 'gpio';
  readonly chip: string;
  readonly lines: readonly number[];
  readonly active?: 'high' | 'low';
  readonly debounce_ms?: number;
  readonly gpioget?: string;
  readonly gpiomon?: string;
}

/** A control box's contacts on a Modbus I/O module's discrete inputs or coils (grid/modbus-signal.ts). */
export interface ModbusInputConfig {
  readonly type: 'modbus';
  readonly bus: string;
  readonly unit_id: number;
  readonly table?: 'discrete_input' | 'coil';
  readonly addresses: readonly number[];
  readonly active?: 'high' | 'low';
  readonly debounce_ms?: number;
  readonly poll_ms?: number;
}

export type GridControlInputConfig = GpioInputConfig | ModbusInputConfig;

/** The grid operator's dimming (§14a EnWG) through a control box (docs/grid-limits.md). */
export interface GridControlConfig {
  readonly input: GridControlInputConfig;
  /** Contact pattern → limit; the first match counts. */
  readonly patterns: ReadonlyArray<{ readonly contacts: readonly boolean[]; readonly limit: 'minimum' | 'none' | { readonly power_kw: number } }>;
  /** Overrides P_min,14a computed by BK6-22-300 Annex 1 (a newer recommendation, or the grid operator's figure). */
  readonly minimum_power_kw?: number;
  /** Controllable devices behind this energy manager the gateway does not control: they count in P_min,14a and draw their fixed load while dimmed. */
  readonly other_devices: ReadonlyArray<{ readonly name: string; readonly kind: 'heat-pump' | 'air-conditioning' | 'storage' | 'charge-point'; readonly connection_power_kw: number; readonly fixed_load_kw?: number }>;
  readonly on_signal_lost: 'dim' | 'hold-last' | 'release';
  /** The deadline the gateway holds itself to, from the signal change to the last controlled connector confirmed within its share. */
  readonly reaction_deadline_s: number;
}

export interface Config {
  readonly organization_id: string;
  readonly gateway_id?: string;
  readonly data_dir: string;
  readonly log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
  readonly poll: {
    readonly interval_ms: number;
    readonly offline_after_misses: number;
    readonly reprobe_initial_ms: number;
    readonly reprobe_max_ms: number;
  };
  readonly buses: readonly BusConfig[];
  readonly meters: readonly MeterConfig[];
  readonly profiles: Readonly<Record<string, MeterProfile>>;
  readonly mqtt?: MqttConfig;
  readonly store: {
    readonly readings_retention_days: number;
    /** Completed sessions and stopped charger transactions are deleted this many days after they ended. */
    readonly sessions_retention_days: number;
    readonly outbox_max_rows: number;
    readonly outbox_max_bytes: number;
    /** Readings and messages kept in memory while the store refuses writes (disk full, locked); beyond it the oldest go. */
    readonly write_queue_max_entries: number;
  };
  readonly http: {
    readonly enabled: boolean;
    readonly host: string;
    readonly port: number;
    /** HTTPS instead of HTTP; required beyond loopback unless allow_plaintext_lan. */
    readonly tls?: { readonly cert_file: string; readonly key_file: string };
    readonly allow_plaintext_lan: boolean;
    readonly body_limit_bytes: number;
    readonly max_readings: number;
    readonly forecast_burst: number;
    readonly forecast_interval_s: number;
  };
  readonly ocpp: {
    readonly host: string;
    /** ws:// (security profile 1); false: off, only wss:// listens. */
    readonly port: number | false;
    readonly tls_port?: number;
    /** CA(s) whose client certificates identify chargers on wss:// (security profile 3). */
    readonly client_ca_file?: string;
    readonly heartbeat_interval_s: number;
    /** How long a charger's call waits for a store that refuses writes before it gets a CallError (its write stays queued). */
    readonly storage_wait_s: number;
    readonly market_area?: string;
    /** How long an operator operation waits for the charger's answer (ocpp/charger-operations.ts). */
    readonly operation_timeout_s?: number;
    /** How long a charger's refusal of a charging profile counts before it is tried again (ocpp/charging-strategy.ts). */
    readonly refusal_retry_h?: number;
  };
  readonly chargers: readonly ChargerConfig[];
  readonly site: SiteConfig;
  readonly grid_control?: GridControlConfig;
  readonly sessions?: {
    /** Default: 3 x poll.interval_ms (see http/session-pricing.ts maxEdgeGapMs). */
    readonly max_edge_gap_ms?: number;
    /** How long after a charger transaction's stop late values still change its session (default 600). */
    readonly late_meter_values_s?: number;
  };
  readonly prices: {
    readonly regions: readonly string[];
    readonly source: 'entsoe' | 'none';
    readonly backfill_from: string;
    readonly entsoe: {
      readonly base_url: string;
      readonly security_token?: string;
      readonly security_token_file?: string;
      readonly max_requests_per_minute: number;
      readonly timeout_ms: number;
    };
    readonly sync_cron: string;
    readonly exogenous_sync_cron: string;
    readonly repair_cron: string;
  };
  readonly clock: {
    readonly trust: 'auto' | 'ntp' | 'system';
    readonly stable_for_s: number;
    readonly max_held_samples: number;
    readonly max_future_days: number;
    readonly step_tolerance_s: number;
  };
  /** The price the driver pays, per market area code, in force from each valid_from (pricing/tariff.ts); a market without one is priced on the day-ahead price alone. */
  readonly tariffs?: Readonly<Record<string, readonly TariffConfig[]>>;
  readonly forecast: {
    readonly enabled: boolean;
    readonly horizon_days: number;
    readonly training_window_days: number;
    readonly interval: number;
  };
}

export type WeekdayName = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** A grid fee time-of-day zone, in the market's local time (config tariffs.<market>.grid_fee.zones[]). */
export interface GridFeeZoneConfig {
  readonly name: string;
  readonly per_kwh: number;
  /** "HH:MM" on a quarter-hour. */
  readonly from: string;
  /** "HH:MM" on a quarter-hour or "24:00"; before `from`: the zone runs past midnight. */
  readonly to: string;
  readonly days?: readonly WeekdayName[];
  readonly months?: readonly number[];
}

/** One market's tariff (config tariffs.<market>); amounts in the market's currency, excl. VAT. */
export interface TariffConfig {
  /** YYYY-MM-DD: from that day's local midnight in the market's time zone. */
  readonly valid_from: string;
  readonly day_ahead_multiplier: number;
  readonly supplier_margin_per_kwh: number;
  readonly grid_fee: { readonly per_kwh: number; readonly zones: readonly GridFeeZoneConfig[] };
  readonly session_fee: number;
  readonly vat_rate: number;
}
