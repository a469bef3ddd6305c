#!/bin/sh
# metergate-install.sh: installs metergate from the boot partition at a gateway's first boot,
# so an installer with a stack of freshly flashed cards never logs into a gateway
# (docs/install.md, "2a. Many gateways"). Copy it to the card's boot partition next to
# metergate_<version>_<arch>.deb, metergate.yaml and the files it names, and let the OS's
# own first-boot hook run it as root:
#   Raspberry Pi OS trixie (cloud-init): in user-data,  runcmd: [ [sh, /boot/firmware/metergate-install.sh] ]
#   Raspberry Pi OS bookworm (firstrun.sh from cmdline.txt): the line  sh /boot/firmware/metergate-install.sh
#
# If metergate is not installed yet it installs the newest metergate_*_<this arch>.deb found
# there with apt (Debian's own sources for what the package depends on: apt-get update is
# tried only when something is missing), then runs metergate-firstboot.service, which takes
# metergate.yaml into /etc/metergate and starts the daemon. What happened is written to
# metergate-install.txt on the boot partition (Windows line ends, any laptop reads it).
# Running it again, or on a gateway that already has metergate, changes nothing.
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export DEBIAN_FRONTEND=noninteractive

BOOT=""
for d in /boot/firmware /boot; do
  if [ -f "$d/metergate-install.sh" ] || [ -f "$d/metergate.yaml" ]; then BOOT="$d"; break; fi
done
[ -n "$BOOT" ] || { echo "metergate-install: no boot partition with metergate files in /boot/firmware or /boot" >&2; exit 1; }
REPORT="$BOOT/metergate-install.txt"
report() { printf '%s\r\n' "$@" >> "$REPORT"; sync; }
: > "$REPORT"
report "metergate-install ran at $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)."

installed() { dpkg-query -W -f '${Status}' metergate 2>/dev/null | grep -q ' installed$'; }

if installed; then
  report "metergate $(dpkg-query -W -f '${Version}' metergate) is already installed: nothing to install."
else
  ARCH="$(dpkg --print-architecture)"
  DEB="$(ls "$BOOT"/metergate_*_"$ARCH".deb 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$DEB" ]; then
    report "FAILED: no metergate_<version>_$ARCH.deb on the boot partition (this gateway is $ARCH: dpkg --print-architecture)."
    exit 1
  fi
  # Off the FAT partition first: apt reads it as its own unprivileged user.
  WORK=/var/cache/metergate-install
  mkdir -p "$WORK"
  cp "$DEB" "$WORK/" && LOCAL="$WORK/$(basename "$DEB")"
  LOG="$WORK/apt.log"
  if ! apt-get install -y --no-install-recommends "$LOCAL" > "$LOG" 2>&1; then
    # A dependency is missing from this image: fetch it from the distribution's sources.
    report "the package needs something this image lacks: apt-get update, then again"
    apt-get update >> "$LOG" 2>&1
    if ! apt-get install -y --no-install-recommends "$LOCAL" >> "$LOG" 2>&1; then
      report "FAILED: apt-get install $(basename "$DEB"):" ""
      tail -n 15 "$LOG" | while IFS= read -r line; do report "  $line"; done
      report "" "What to do: check the gateway's network (apt needs Debian's mirror for what the package depends on), then boot again."
      exit 1
    fi
  fi
  rm -f "$LOCAL" "$DEB"
  report "installed metergate $(dpkg-query -W -f '${Version}' metergate) from $(basename "$DEB") (removed from this partition; apt's output: $LOG on the gateway)."
fi

# The package's own first-boot unit takes metergate.yaml now (at the next boot it would anyway).
if [ -f "$BOOT/metergate.yaml" ] && [ -d /run/systemd/system ]; then
  if systemctl start metergate-firstboot.service; then
    report "metergate-firstboot took metergate.yaml: see metergate-applied.txt or metergate-error.txt."
  else
    report "FAILED: metergate-firstboot.service: journalctl -u metergate-firstboot on the gateway says why."
    exit 1
  fi
fi
exit 0
