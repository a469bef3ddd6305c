#!/bin/sh
# metergate command line (installed by the metergate package)
exec /usr/bin/node /opt/metergate/dist/cli.js "$@"
