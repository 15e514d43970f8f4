#!/usr/bin/env bash
# Starts, stops and describes the Azurite storage emulator the tests run against.
#
#   scripts/azurite.sh start    reuse an emulator already answering on the ports, or install
#                               Azurite into .cache/azurite (once) and start it on 127.0.0.1
#   scripts/azurite.sh stop     stop the emulator, only if "start" started it; safe to repeat
#   scripts/azurite.sh status   exit 0 when an emulator answers on the table and blob ports
#   scripts/azurite.sh env      print the export line of the tests' connection string
#
# Ports: AZURITE_BLOB_PORT (10000), AZURITE_QUEUE_PORT (10001), AZURITE_TABLE_PORT (10002).
# Azurite is pinned to 3.35.0: later releases need a newer Node.js than 20.
set -euo pipefail

readonly AZURITE_VERSION=3.35.0
# The emulator's well-known development account; it is public and grants nothing elsewhere.
readonly ACCOUNT=devstoreaccount1
readonly ACCOUNT_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
readonly HOST=127.0.0.1

BLOB_PORT=${AZURITE_BLOB_PORT:-10000}
QUEUE_PORT=${AZURITE_QUEUE_PORT:-10001}
TABLE_PORT=${AZURITE_TABLE_PORT:-10002}
START_TIMEOUT=${AZURITE_START_TIMEOUT:-60}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR="$ROOT/.cache/azurite"
# One pid file and log per table port, so emulators started from one checkout on different
# ports (AZURITE_*_PORT) are started and stopped independently.
PID_FILE="$DIR/azurite-$TABLE_PORT.pid"
LOG_FILE="$DIR/azurite-$TABLE_PORT.log"
BIN="$DIR/node_modules/.bin/azurite"

say() { echo "azurite: $*" >&2; }
die() {
	say "$*"
	exit 1
}

# answers reports whether something accepts TCP connections on the port. A connect is enough:
# the emulator opens its ports only once it is ready to serve.
answers() {
	(exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

running() {
	answers "$TABLE_PORT" && answers "$BLOB_PORT"
}

# our_pid prints the pid recorded by "start" when that process is still the emulator we
# started; a stale file (the process gone, or its pid reused) prints nothing.
our_pid() {
	[[ -f $PID_FILE ]] || return 0
	local pid
	pid=$(<"$PID_FILE")
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q azurite; then
		echo "$pid"
	fi
}

installed_version() {
	local pkg="$DIR/node_modules/azurite/package.json"
	[[ -f $pkg && -x $BIN ]] || return 0
	node -e 'process.stdout.write(require(process.argv[1]).version)' "$pkg" 2>/dev/null || true
}

install() {
	if [[ $(installed_version) == "$AZURITE_VERSION" ]]; then
		return 0
	fi
	command -v node >/dev/null || die "Node.js is not installed; Azurite needs Node.js 20 and npm (or run an emulator yourself, e.g. with docker compose up)"
	command -v npm >/dev/null || die "npm is not installed; Azurite is installed with npm"
	say "installing azurite@$AZURITE_VERSION into .cache/azurite (once)"
	mkdir -p "$DIR"
	local started=$SECONDS
	if ! npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
		"azurite@$AZURITE_VERSION" </dev/null >"$DIR/npm-install.log" 2>&1; then
		tail -n 30 "$DIR/npm-install.log" >&2 || true
		die "npm install of azurite@$AZURITE_VERSION failed (log above)"
	fi
	[[ $(installed_version) == "$AZURITE_VERSION" ]] || die "npm install finished but azurite@$AZURITE_VERSION is not in .cache/azurite"
	say "installed in $((SECONDS - started)) s"
}

start() {
	if running; then
		if [[ -n $(our_pid) ]]; then
			say "already running (pid $(our_pid)), started earlier by this script"
		else
			# Not ours: a developer's emulator or a container. Leave no pid file, so that
			# "stop" leaves it running.
			rm -f "$PID_FILE"
			say "reusing the emulator already answering on $HOST:$TABLE_PORT (table) and $HOST:$BLOB_PORT (blob); it will not be stopped"
		fi
		return 0
	fi
	# One port answering without the other is someone else's server: starting would fail on it.
	if answers "$TABLE_PORT" || answers "$BLOB_PORT" || answers "$QUEUE_PORT"; then
		die "ports $BLOB_PORT/$QUEUE_PORT/$TABLE_PORT are partly in use by something that is not a complete emulator; free them or choose others with AZURITE_BLOB_PORT, AZURITE_QUEUE_PORT, AZURITE_TABLE_PORT"
	fi
	install
	: >"$LOG_FILE"
	# setsid gives the emulator a process group of its own, so "stop" can end it and every
	# child it spawned without touching the caller's group.
	(
		cd "$DIR"
		exec setsid "$BIN" \
			--inMemoryPersistence --disableTelemetry --loose --skipApiVersionCheck --silent \
			--blobHost "$HOST" --blobPort "$BLOB_PORT" \
			--queueHost "$HOST" --queuePort "$QUEUE_PORT" \
			--tableHost "$HOST" --tablePort "$TABLE_PORT" \
			</dev/null >>"$LOG_FILE" 2>&1
	) &
	local pid=$!
	echo "$pid" >"$PID_FILE"
	local deadline=$((SECONDS + START_TIMEOUT))
	until running; do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$PID_FILE"
			say "the emulator exited during start-up; last lines of .cache/azurite/azurite-$TABLE_PORT.log:"
			tail -n 30 "$LOG_FILE" >&2 || true
			exit 1
		fi
		if ((SECONDS >= deadline)); then
			say "no answer on $HOST:$TABLE_PORT and $HOST:$BLOB_PORT after ${START_TIMEOUT} s; last lines of .cache/azurite/azurite-$TABLE_PORT.log:"
			tail -n 30 "$LOG_FILE" >&2 || true
			stop
			exit 1
		fi
		sleep 0.2
	done
	say "started azurite@$AZURITE_VERSION (pid $pid) on $HOST: blob $BLOB_PORT, queue $QUEUE_PORT, table $TABLE_PORT"
}

stop() {
	local pid
	pid=$(our_pid)
	rm -f "$PID_FILE"
	if [[ -z $pid ]]; then
		return 0
	fi
	# The emulator leads its own group (see start); end the group, or the process alone
	# should it not.
	local target=$pid
	if [[ $(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ') == "$pid" ]]; then
		target=-$pid
	fi
	kill -TERM -- "$target" 2>/dev/null || true
	local i
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL -- "$target" 2>/dev/null || true
	fi
	say "stopped (pid $pid)"
}

print_env() {
	local conn="DefaultEndpointsProtocol=http;AccountName=$ACCOUNT;AccountKey=$ACCOUNT_KEY;BlobEndpoint=http://$HOST:$BLOB_PORT/$ACCOUNT;TableEndpoint=http://$HOST:$TABLE_PORT/$ACCOUNT;"
	echo "export UNIFIED_TABLES_TEST_CONNECTION_STRING='$conn'"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) running ;;
env) print_env ;;
*)
	echo "usage: $0 start|stop|status|env" >&2
	exit 2
	;;
esac
