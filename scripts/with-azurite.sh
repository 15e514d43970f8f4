#!/usr/bin/env bash
# Runs a command with the Azurite emulator up and UNIFIED_TABLES_TEST_CONNECTION_STRING
# exported, then stops the emulator if this run started it, whether the command passed or
# not. The exit status is the command's.
#
#   scripts/with-azurite.sh go test ./...
#
# A connection string already in UNIFIED_TABLES_TEST_CONNECTION_STRING is used as it is and
# nothing is started. When the emulator cannot be started the command still runs, and the
# tests skip their Azurite half, unless UNIFIED_TABLES_REQUIRE_AZURITE=1 (as CI sets it).
set -euo pipefail

if (($# == 0)); then
	echo "usage: $0 command [args...]" >&2
	exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
azurite="$here/azurite.sh"

if [[ -n ${UNIFIED_TABLES_TEST_CONNECTION_STRING:-} ]]; then
	echo "azurite: using the connection string already in UNIFIED_TABLES_TEST_CONNECTION_STRING" >&2
	exec "$@"
fi

# Decide ownership before starting: an emulator that already answers belongs to someone
# else (a developer, a container, an outer make run) and must outlive this command.
owned=0
if ! bash "$azurite" status; then
	if bash "$azurite" start; then
		owned=1
	elif [[ ${UNIFIED_TABLES_REQUIRE_AZURITE:-} == 1 ]]; then
		echo "azurite: the emulator is required (UNIFIED_TABLES_REQUIRE_AZURITE=1) but did not start" >&2
		exit 1
	else
		echo "azurite: not available; the tests that need it will skip" >&2
		exec "$@"
	fi
else
	bash "$azurite" start
fi

if ((owned)); then
	trap 'bash "$azurite" stop' EXIT
	# A signal still runs the EXIT trap, and the status tells the caller what happened.
	trap 'exit 130' INT
	trap 'exit 143' TERM
fi

eval "$(bash "$azurite" env)"
status=0
"$@" || status=$?
exit "$status"
