// See package.json: construct ocpp-ws-io with `logging: false` (or `logging: { logger }`).
const refuse = () => {
  throw new Error('voltlog-io stand-in: pass logging: false or logging: { logger } to ocpp-ws-io');
};
module.exports = { createLogger: refuse, consoleTransport: refuse, prettyTransport: refuse };
