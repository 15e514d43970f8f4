#!/usr/bin/env bash
# Runs Azurite's own table tests (tests/table of its repository, at a pinned commit) against
# the table emulator of this repository, and with "azurite" as the first argument against
# Azurite itself, for the baseline. See tools/azuritesuite/README.md.
#
#   tools/azuritesuite/run.sh            # against the emulator
#   tools/azuritesuite/run.sh azurite    # against Azurite's own server, as its tests start it
#
# Azurite's sources come from AZURITE_SRC (a directory holding a clone or a bare git directory
# of the repository), else from a clone of its public repository; either way the pinned
# commit is checked out into .cache/azuritesuite/src, patched with azurite-tests.patch, and
# its npm dependencies installed there (once). Results: .cache/azuritesuite/<target>.json
# (mocha's JSON report) and a summary on standard output, which also names every failing test
# that tools/azuritesuite/RESULTS.md does not classify.
set -euo pipefail

# Azurite 3.35.0 (the tag v3.35.0), the version the fidelity suite's deviations describe.
readonly AZURITE_COMMIT=fd1103bbf702dc35220ba282260176132d7c7844
readonly AZURITE_REPO=https://github.com/Azure/Azurite.git

target=${1:-emulator}
case $target in
emulator | azurite) ;;
*)
	echo "usage: $0 [emulator|azurite]" >&2
	exit 2
	;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$root/tools/azuritesuite
cache=$root/.cache/azuritesuite
src=$cache/src
mkdir -p "$cache"

# --- Azurite's sources, patched, with their dependencies.
stamp="$AZURITE_COMMIT $(sha256sum "$here/azurite-tests.patch" | cut -d' ' -f1)"
if [[ ! -f $src/.suite-stamp || $(cat "$src/.suite-stamp") != "$stamp" ]]; then
	rm -rf "$src" "$cache/src.tmp"
	mkdir -p "$cache/src.tmp"
	gitdir=
	if [[ -n ${AZURITE_SRC:-} ]]; then
		if [[ -d $AZURITE_SRC/.git ]]; then
			gitdir=$AZURITE_SRC/.git
		else
			gitdir=$AZURITE_SRC
		fi
	else
		gitdir=$cache/azurite.git
		if [[ ! -d $gitdir ]]; then
			echo "azuritesuite: cloning $AZURITE_REPO"
			git clone --quiet --bare --filter=blob:none "$AZURITE_REPO" "$gitdir"
		elif ! git --git-dir="$gitdir" cat-file -e "$AZURITE_COMMIT^{commit}" 2>/dev/null; then
			git --git-dir="$gitdir" fetch --quiet origin
		fi
	fi
	git --git-dir="$gitdir" archive "$AZURITE_COMMIT" | tar -x -C "$cache/src.tmp"
	# patch, not git apply: the directory lies inside this repository's work tree, where git
	# apply would skip the paths.
	(cd "$cache/src.tmp" && patch --quiet -p1 --forward <"$here/azurite-tests.patch")
	echo "azuritesuite: installing Azurite's npm dependencies (once)"
	(cd "$cache/src.tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
	echo "$stamp" >"$cache/src.tmp/.suite-stamp"
	mv "$cache/src.tmp" "$src"
fi

# --- A free port on loopback, from the range the repository's helpers use.
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((21000 + RANDOM % 9000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "azuritesuite: no free port found" >&2
	return 1
}
wait_port() {
	for _ in $(seq 200); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
			return 0
		fi
		sleep 0.05
	done
	echo "azuritesuite: nothing answers on port $1" >&2
	return 1
}

port=$(free_port)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

suite_env=(AZURITE_SUITE_TABLE_PORT="$port" NODE_TLS_REJECT_UNAUTHORIZED=0)
if [[ $target == emulator ]]; then
	(cd "$root" && CGO_ENABLED=0 go build -o "$cache/udtables-emulator" ./tools/cmd/udtables-emulator)
	emu_port=$(free_port)
	"$cache/udtables-emulator" -addr "127.0.0.1:$emu_port" -blob-addr off -log "${EMULATOR_LOG:-off}" >"$cache/emulator.log" 2>&1 &
	pids+=($!)
	wait_port "$emu_port"
	# The tests speak HTTP in some files and HTTPS in others, to one port: the front ends TLS.
	node "$here/front.mjs" "$port" "$emu_port" "$src/tests/server.cert" "$src/tests/server.key" >"$cache/front.log" 2>&1 &
	pids+=($!)
	wait_port "$port"
	suite_env+=(AZURITE_SUITE_EXTERNAL=1)
fi

# The files that talk to a server; tests/table/unit tests Azurite's own parser in process.
files=("tests/table/apis/*.test.ts" "tests/table/auth/*.test.ts" "tests/table/KeepAlive/*.test.ts")
echo "azuritesuite: Azurite $AZURITE_COMMIT's table tests against $target (port $port)"
status=0
(cd "$src" && env "${suite_env[@]}" npx mocha --require ts-node/register --no-timeouts --exit \
	--reporter json --reporter-option "output=$cache/$target.json" "${files[@]}" \
	>"$cache/$target.mocha.log" 2>&1) || status=$?
if [[ ! -s $cache/$target.json ]]; then
	echo "azuritesuite: mocha wrote no report (exit $status); its output:" >&2
	tail -50 "$cache/$target.mocha.log" >&2
	exit 1
fi
node "$here/summary.mjs" "$cache/$target.json" "$here/RESULTS.md" "$target"
