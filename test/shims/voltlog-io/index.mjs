// See package.json: construct ocpp-ws-io with `logging: false` (or `logging: { logger }`).
const refuse = () => {
  throw new Error('voltlog-io stand-in: pass logging: false or logging: { logger } to ocpp-ws-io');
};
export const createLogger = refuse;
export const consoleTransport = refuse;
export const prettyTransport = refuse;
