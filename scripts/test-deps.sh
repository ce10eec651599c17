#!/usr/bin/env bash
# Installs and starts what the test suite needs, where it is missing:
# PostgreSQL on 127.0.0.1:5432 (trust auth, database "test"), dig and delv,
# the ACME pieces: Pebble (a test CA), certbot and the lego CLI; dnsperf, and
# Knot and PowerDNS with its PostgreSQL backend (make bench's peers);
# chromium and node with playwright-core (the dashboard's browser test);
# ddclient and inadyn (the dyndns2 client tests, e2e/dyndns_test.go); Knot, BIND and NSD
# (secondaries for the zone transfer tests); knsupdate and certbot's rfc2136
# plugin (the DNS UPDATE tests); Unbound (the resolver Pebble asks in the
# acme-dns registration test, e2e/acmedns_register_test.go); DNSViz (e2e/dnsviz_test.go).
# Safe to run again; needs root (or sudo) only when something is missing.
set -euo pipefail

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v dig >/dev/null || missing+=(bind9-dnsutils)
command -v pg_ctlcluster >/dev/null || missing+=(postgresql)
command -v pebble >/dev/null || missing+=(pebble)
command -v certbot >/dev/null || missing+=(certbot)
command -v lego >/dev/null || missing+=(lego)
command -v dnsperf >/dev/null || missing+=(dnsperf)
command -v chromium >/dev/null || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v ddclient >/dev/null || missing+=(ddclient)
command -v inadyn >/dev/null || missing+=(inadyn)
# Secondaries for the zone transfer tests (e2e/transfer_test.go). Debian's
# packages do not start their services where policy-rc.d forbids it; the
# tests run their own on loopback.
command -v knotd >/dev/null || missing+=(knot)
command -v named >/dev/null || missing+=(bind9)
command -v nsd >/dev/null || missing+=(nsd)
# DNS UPDATE clients (e2e/update_test.go): knsupdate and certbot's rfc2136
# plugin; nsupdate comes with bind9-dnsutils.
command -v knsupdate >/dev/null || missing+=(knot-dnsutils)
command -v kea-dhcp-ddns >/dev/null || missing+=(kea-dhcp-ddns-server)
command -v kzonecheck >/dev/null || missing+=(knot-dnssecutils)
[ -d /usr/lib/python3/dist-packages/certbot_dns_rfc2136 ] || missing+=(python3-certbot-dns-rfc2136)
# PowerDNS Authoritative on PostgreSQL, a peer in make bench (bench/pdns.go),
# which runs its own pdns_server on loopback.
command -v pdns_server >/dev/null || missing+=(pdns-server)
# A resolver between Pebble and two authorities (e2e/acmedns_register_test.go),
# run by the test on a port of its own.
command -v unbound >/dev/null || missing+=(unbound)
# DNSViz (e2e/dnsviz_test.go), run in a network namespace that has only
# loopback; its grok needs pygraphviz.
command -v dnsviz >/dev/null || missing+=(dnsviz)
command -v ip >/dev/null || missing+=(iproute2)
[ -d /usr/lib/python3/dist-packages/pygraphviz ] || missing+=(python3-pygraphviz)
dpkg-query -W -f='${Status}' pdns-backend-pgsql 2>/dev/null | grep -q 'ok installed' || missing+=(pdns-backend-pgsql)
# The container image (e2e/image_test.go): Debian's podman, run with runc
# (crun refuses this machine's cgroups), and a static busybox for the
# stand-in builder image (scripts/image-standins.sh); systemd-analyze and
# setpriv for the unit (e2e/systemd_test.go).
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v newuidmap >/dev/null || missing+=(uidmap)
command -v fuse-overlayfs >/dev/null || missing+=(fuse-overlayfs)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing+=(busybox-static)
command -v systemd-analyze >/dev/null || missing+=(systemd)
command -v setpriv >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-deps: installing ${missing[*]}"
  sudo_ apt-get update -qq
  # No package's service starts (knot, named, nsd, pdns and unbound would all take
  # port 53): the tests and the bench start what they need on ports of
  # their own. A policy-rc.d already there is put back afterwards.
  policy=/usr/sbin/policy-rc.d
  if [ -e "$policy" ]; then
    sudo_ mv "$policy" "$policy.test-deps"
    trap 'sudo_ mv -f "$policy.test-deps" "$policy"' EXIT
  else
    trap 'sudo_ rm -f "$policy"' EXIT
  fi
  printf '#!/bin/sh\nexit 101\n' | sudo_ tee "$policy" >/dev/null
  sudo_ chmod +x "$policy"
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Nor do they start at boot, or stay up if an earlier install started them:
# a system knotd or pdns_server on port 53 is nothing the tests want.
for svc in knot pdns inadyn unbound unbound-resolvconf kea-dhcp-ddns-server; do
  if command -v systemctl >/dev/null && systemctl is-enabled --quiet "$svc" 2>/dev/null; then
    echo "test-deps: disabling the $svc service"
    sudo_ systemctl disable --quiet "$svc" 2>/dev/null || true
  fi
  if [ -x "/etc/init.d/$svc" ] && ls /etc/rc[2-5].d/S*"$svc" >/dev/null 2>&1; then
    sudo_ update-rc.d "$svc" disable >/dev/null 2>&1 || true
  fi
  pidfile=/run/$svc/$svc.pid
  if [ -s "$pidfile" ] && pid=$(cat "$pidfile") && kill -0 "$pid" 2>/dev/null; then
    echo "test-deps: stopping the $svc service (pid $pid)"
    sudo_ kill "$pid" || true
  fi
done

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
if ! pg_up; then
  ver=$(ls /etc/postgresql | sort -n | tail -1)
  conf=/etc/postgresql/$ver/main
  # Trust auth on loopback for the tests, as on the project's machines.
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$conf/pg_hba.conf"; then
    sudo_ sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$conf/pg_hba.conf"
  fi
  echo "test-deps: starting PostgreSQL $ver"
  sudo_ pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  for _ in $(seq 50); do pg_up && break; sleep 0.2; done
  pg_up || { echo "test-deps: PostgreSQL did not start" >&2; exit 1; }
fi
psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1 ||
  psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE test" >/dev/null

# playwright-core, pinned by e2e/browser/package-lock.json; it drives the
# chromium above and downloads no browser of its own.
browser="$(dirname "$0")/../e2e/browser"
if [ ! -d "$browser/node_modules/playwright-core" ]; then
  echo "test-deps: npm ci in e2e/browser"
  (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error)
fi
