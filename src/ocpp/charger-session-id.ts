// Charger sessions have their own id space (issue 20, migration 150): `ocpp:<cp>:<tx>`.
// A charge point id has no ':' (config pattern), and PUT /api/v1/sessions refuses ids that
// start with the prefix, so an operator's session can never take a charger's id.

export const CHARGER_SESSION_PREFIX = 'ocpp:';

/** The session id a charger transaction is priced under (GET /api/v1/cdrs/:id). */
export const chargerSessionId = (chargePointId: string, transactionId: number): string => `${CHARGER_SESSION_PREFIX}${chargePointId}:${transactionId}`;

/** Whether an id is in the charger sessions' space (refused for an operator's PUT). */
export const isChargerSessionId = (id: string): boolean => id.startsWith(CHARGER_SESSION_PREFIX);

/** The price record's path of a session: ':' stays as it is (a path segment may hold it), the rest encoded. */
export const cdrPath = (cpoTransactionId: string): string => `/api/v1/cdrs/${encodeURIComponent(cpoTransactionId).replace(/%3A/g, ':')}`;
