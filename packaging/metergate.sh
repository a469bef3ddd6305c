#!/bin/sh
# metergate command line (installed by the metergate package), on the package's own Node.
exec /opt/metergate/node/bin/node /opt/metergate/dist/cli.js "$@"
