#!/usr/bin/env bash
# Runs a command with the emulator of this repository (tools/cmd/udtables-emulator) serving
# tables and blobs on loopback and UNIFIED_TABLES_TEST_CONNECTION_STRING naming it, with
# UNIFIED_TABLES_TEST_EMULATOR=1 so that the fidelity suite runs its Azurite half against
# the emulator and expects the real service's answers. The emulator is stopped when the
# command ends, whether it passed or not; the exit status is the command's.
#
#   scripts/with-emulator.sh go test ./fidelity/
#
# Ports: EMULATOR_TABLE_PORT (20002, beside Azurite's 10002, so both can run) and
# EMULATOR_BLOB_PORT (the table port less 2, 20000 by default, as Azurite's 10000 and 10002).
set -euo pipefail

if (($# == 0)); then
	echo "usage: $0 command [args...]" >&2
	exit 2
fi

readonly HOST=127.0.0.1
readonly PORT=${EMULATOR_TABLE_PORT:-20002}
readonly BLOB_PORT=${EMULATOR_BLOB_PORT:-$((PORT - 2))}
# The development account's well-known key; it is public and grants nothing elsewhere.
readonly KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$root/.cache"
bin="$root/.cache/udtables-emulator"
log="$root/.cache/udtables-emulator-$PORT.log"
(cd "$root" && CGO_ENABLED=0 go build -o "$bin" ./tools/cmd/udtables-emulator)

for p in "$PORT" "$BLOB_PORT"; do
	if (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then
		echo "emulator: something already answers on $HOST:$p; set EMULATOR_TABLE_PORT and EMULATOR_BLOB_PORT" >&2
		exit 1
	fi
done
"$bin" -addr "$HOST:$PORT" -blob-addr "$HOST:$BLOB_PORT" -log off >"$log" 2>&1 &
pid=$!
# Stop the emulator this script started, by its pid, however the command ends.
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq 100); do
	if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null && (exec 3<>"/dev/tcp/$HOST/$BLOB_PORT") 2>/dev/null; then
		break
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "emulator: did not start; its log:" >&2
		cat "$log" >&2
		exit 1
	fi
	sleep 0.05
done

export UNIFIED_TABLES_TEST_EMULATOR=1
export UNIFIED_TABLES_TEST_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$KEY;BlobEndpoint=http://$HOST:$BLOB_PORT/devstoreaccount1;TableEndpoint=http://$HOST:$PORT/devstoreaccount1;"
status=0
"$@" || status=$?
exit "$status"
