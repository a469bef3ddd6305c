#!/usr/bin/env bash
# Installs metergate on Debian / Raspberry Pi OS from a built checkout (npm ci && npm run build).
#
#   sudo scripts/install.sh                 install or upgrade; safe to run again
#   sudo scripts/install.sh --uninstall     remove the program and the service; keep config and data
#   sudo scripts/install.sh --uninstall --purge   also remove /etc/metergate, /var/lib/metergate and the user
#
# Options:
#   --root DIR     install into DIR instead of / (image building, tests). Acts on the files
#                  under DIR only: the user is created in DIR/etc/passwd, the service is
#                  enabled with `systemctl --root`, nothing is started. DESTDIR=DIR works too.
#   --no-npm       skip `npm ci --omit=dev --omit=optional` (node_modules provided some other way)
#   --no-start     do not (re)start the service after installing
#
# Layout: /opt/metergate (program, root-owned), /etc/metergate/config.yaml (root:metergate
# 0640, never overwritten), /var/lib/metergate (data, metergate 0750),
# /etc/systemd/system/metergate.service, /usr/local/bin/metergate (CLI wrapper).
set -euo pipefail

ROOT="${DESTDIR:-/}"
MODE=install
PURGE=0
NPM=1
START=1
while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT="$2"; shift 2 ;;
    --root=*) ROOT="${1#--root=}"; shift ;;
    --uninstall) MODE=uninstall; shift ;;
    --purge) PURGE=1; shift ;;
    --no-npm) NPM=0; shift ;;
    --no-start) START=0; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done
if [ "$PURGE" = 1 ] && [ "$MODE" != uninstall ]; then echo "install.sh: --purge only goes with --uninstall" >&2; exit 64; fi

ROOT="${ROOT%/}"                 # "" means the live system
LIVE=0; [ -z "$ROOT" ] && LIVE=1
SRC="$(cd "$(dirname "$0")/.." && pwd)"
USER_NAME=metergate
APP="$ROOT/opt/metergate"
ETC="$ROOT/etc/metergate"
DATA="$ROOT/var/lib/metergate"
UNIT="$ROOT/etc/systemd/system/metergate.service"
WRAPPER="$ROOT/usr/local/bin/metergate"

say() { printf 'metergate install: %s\n' "$*"; }
die() { printf 'metergate install: ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (sudo $0 $*)"
command -v systemctl >/dev/null 2>&1 || die "systemctl not found: this script needs a systemd-based Debian / Raspberry Pi OS"

# Look up a user's or group's numeric id in the target root's databases, so ownership is
# right even when installing into an image whose users the running host does not have.
id_in_root() { awk -F: -v n="$2" '$1 == n { print $3; found=1 } END { exit !found }' "$ROOT/etc/$1"; }

systemctl_root() { if [ "$LIVE" = 1 ]; then systemctl "$@"; else systemctl --root="$ROOT" "$@"; fi; }

uninstall() {
  if [ "$LIVE" = 1 ] && systemctl list-unit-files metergate.service >/dev/null 2>&1; then
    systemctl disable --now metergate.service >/dev/null 2>&1 || true
  elif [ -f "$UNIT" ]; then
    systemctl_root disable metergate.service >/dev/null 2>&1 || true
  fi
  rm -f "$UNIT" "$WRAPPER"
  rm -rf "$APP"
  [ "$LIVE" = 1 ] && systemctl daemon-reload || true
  if [ "$PURGE" = 1 ]; then
    rm -rf "$ETC" "$DATA"
    if id_in_root passwd "$USER_NAME" >/dev/null 2>&1; then
      if [ "$LIVE" = 1 ]; then userdel "$USER_NAME"; else userdel --root "$ROOT" "$USER_NAME"; fi
    fi
    say "removed program, service, configuration, data and the $USER_NAME user"
  else
    say "removed program and service; kept $ETC (configuration) and $DATA (data). --purge removes them too."
  fi
}

if [ "$MODE" = uninstall ]; then uninstall; exit 0; fi

# --- Preconditions ----------------------------------------------------------------
command -v node >/dev/null 2>&1 || die "Node.js not found. Install Node.js 20 or newer (Debian 13: apt install nodejs npm; Debian 12 / Pi OS: https://deb.nodesource.com)"
NODE_BIN="$(command -v node)"
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
[ "$NODE_MAJOR" -ge 20 ] || die "Node.js $(node --version) is too old: metergate needs 20 or newer"
[ -f "$SRC/dist/cli.js" ] || die "no build found at $SRC/dist: run 'npm ci && npm run build' in $SRC first"
[ -f "$SRC/config/example.yaml" ] || die "missing $SRC/config/example.yaml"
if [ "$NPM" = 1 ]; then command -v npm >/dev/null 2>&1 || die "npm not found (apt install npm), or use --no-npm"; fi
if [ "$LIVE" = 0 ]; then
  for f in passwd group shadow; do [ -f "$ROOT/etc/$f" ] || die "$ROOT/etc/$f not found: --root must hold a Debian root file system"; done
fi

# --- User -------------------------------------------------------------------------
id_in_root group dialout >/dev/null || die "group dialout not found in $ROOT/etc/group"
if ! id_in_root passwd "$USER_NAME" >/dev/null; then
  rootopt=(); [ "$LIVE" = 0 ] && rootopt=(--root "$ROOT")
  useradd "${rootopt[@]}" --system --user-group --groups dialout --home-dir /var/lib/metergate --no-create-home --shell /usr/sbin/nologin --comment "metergate gateway daemon" "$USER_NAME"
  say "created system user $USER_NAME (groups: $USER_NAME, dialout)"
else
  # Existing user (upgrade): make sure it still reaches the serial ports.
  if ! awk -F: -v u="$USER_NAME" '$1 == "dialout" { n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == u) ok = 1 } END { exit !ok }' "$ROOT/etc/group"; then
    rootopt=(); [ "$LIVE" = 0 ] && rootopt=(--root "$ROOT")
    usermod "${rootopt[@]}" --append --groups dialout "$USER_NAME"
    say "added $USER_NAME to dialout"
  fi
fi
UID_N="$(id_in_root passwd "$USER_NAME")"
GID_N="$(id_in_root group "$USER_NAME")"

# --- Program ----------------------------------------------------------------------
if [ "$LIVE" = 1 ] && systemctl is-active --quiet metergate.service 2>/dev/null; then WAS_ACTIVE=1; else WAS_ACTIVE=0; fi
install -d -m 0755 "$APP"
# Replace the program atomically enough for an upgrade: new tree next to the old, then swap.
STAGE="$APP.new"
rm -rf "$STAGE"
install -d -m 0755 "$STAGE"
cp -R "$SRC/dist" "$STAGE/dist"
cp "$SRC/package.json" "$SRC/package-lock.json" "$STAGE/"
cp -R "$SRC/config" "$SRC/systemd" "$STAGE/"
install -d "$STAGE/scripts" && cp "$SRC/scripts/install.sh" "$STAGE/scripts/"
[ -f "$SRC/README.md" ] && cp "$SRC/README.md" "$STAGE/"
[ -d "$SRC/docs" ] && cp -R "$SRC/docs" "$STAGE/"
cp "$SRC/scripts/smoke-check.mjs" "$STAGE/scripts/"
if [ "$NPM" = 1 ]; then
  # Production dependencies only: no development and no demo-only (optional) packages.
  # npm's warnings and errors are shown: a failed install script must not pass unseen.
  say "installing runtime dependencies (npm ci --omit=dev --omit=optional) ..."
  (cd "$STAGE" && npm ci --omit=dev --omit=optional --ignore-scripts=false --no-audit --no-fund --loglevel=warn) \
    || die "npm ci failed (see npm's messages above); nothing was changed in $APP"
elif [ -d "$APP/node_modules" ]; then
  mv "$APP/node_modules" "$STAGE/node_modules"
else
  say "WARNING: --no-npm and no node_modules in $APP: provide them (npm ci --omit=dev there) or the service cannot start"
fi
if [ -d "$STAGE/node_modules" ]; then
  # The native modules must load with this Node before the old program is replaced.
  node "$STAGE/scripts/smoke-check.mjs" || die "the smoke check failed (fix above); nothing was changed in $APP"
fi
chown -R 0:0 "$STAGE"
chmod -R u=rwX,go=rX "$STAGE"
rm -rf "$APP.old"
mv "$APP" "$APP.old"
mv "$STAGE" "$APP"
rm -rf "$APP.old"
say "installed $(node -p "require('$APP/package.json').version") to ${APP}"

install -d -m 0755 "$(dirname "$WRAPPER")"
cat > "$WRAPPER" <<EOF
#!/bin/sh
# metergate CLI (installed by scripts/install.sh)
exec $NODE_BIN /opt/metergate/dist/cli.js "\$@"
EOF
chmod 0755 "$WRAPPER"

# --- Configuration and data -------------------------------------------------------
install -d -m 0750 -o 0 -g "$GID_N" "$ETC"
chown 0:"$GID_N" "$ETC"; chmod 0750 "$ETC"
FRESH_CONFIG=0
if [ ! -e "$ETC/config.yaml" ]; then
  install -m 0640 -o 0 -g "$GID_N" "$SRC/config/example.yaml" "$ETC/config.yaml"
  FRESH_CONFIG=1
  say "wrote $ETC/config.yaml from the example: edit it before starting"
else
  say "kept existing $ETC/config.yaml"
fi
install -d -m 0750 -o "$UID_N" -g "$GID_N" "$DATA"
chown "$UID_N":"$GID_N" "$DATA"; chmod 0750 "$DATA"

# --- Service ----------------------------------------------------------------------
install -d -m 0755 "$(dirname "$UNIT")"
# The unit names the package's Node (/opt/metergate/node/bin/node); point it at the node this install found.
# --max-opt=2 caps V8 at Maglev, which a Node before 22 does not enable (the unit says why it is there).
MAX_OPT='s# --max-opt=2 # #'
[ "$("$NODE_BIN" -p 'process.versions.node.split(".")[0] >= 22')" = true ] && MAX_OPT=''
sed -e "s#^ExecStart=/opt/metergate/node/bin/node #ExecStart=$NODE_BIN #" -e "$MAX_OPT" "$SRC/systemd/metergate.service" > "$UNIT.tmp"
chmod 0644 "$UNIT.tmp" && mv "$UNIT.tmp" "$UNIT"
[ "$LIVE" = 1 ] && systemctl daemon-reload
systemctl_root enable metergate.service >/dev/null 2>&1 || die "systemctl enable metergate.service failed"
say "enabled metergate.service"

if [ "$LIVE" = 1 ] && [ "$START" = 1 ]; then
  if [ "$FRESH_CONFIG" = 1 ]; then
    say "not starting yet. Next: 'sudo metergate scan --port /dev/ttyUSB0' finds the meters; edit $ETC/config.yaml; 'sudo metergate doctor'; then 'sudo systemctl start metergate' (walkthrough: $APP/docs/install.md)"
  elif [ "$WAS_ACTIVE" = 1 ]; then
    systemctl restart metergate.service && say "restarted metergate.service"
  else
    systemctl start metergate.service && say "started metergate.service"
  fi
fi
say "done. Serial adapters: see $APP/systemd/99-metergate-serial.rules for stable device names."
