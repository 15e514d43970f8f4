#!/usr/bin/env bash
# The consumer check: proves that the modules build for a program outside this repository.
#
# It stages the release of the working tree in a temporary directory (tools/cmd/release
# stage): every module at the version the modules pin (or VERSION), with complete go.sum
# files, and a module proxy on disk that serves them. Then, with GOWORK=off, GOPROXY set to
# that proxy first and to "go env GOPROXY" for everything else, checksum verification off for
# this repository's module path only (GONOSUMDB) and a temporary module cache:
#   1. every module builds, vets and passes its tests on its own, against the proxy (the
#      tests that need Azurite skip: the emulator half is "make test"'s job);
#   2. a new module outside the repository runs "go get" for tables, then for inmemory (one
#      command each), builds a program against tables and runs a test against inmemory
#      (scripts/consumer/consumer.txtar).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { echo "consumer-check: $*" >&2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
list=$(bash scripts/modules.sh)
mapfile -t modules <<<"$list"
module_path() { awk '$1 == "module" { print $2; exit }' "$1/go.mod"; }
tables=$(module_path tables)
inmemory=$(module_path inmemory)
program=$PWD/scripts/consumer/consumer.txtar

say "staging the release in a temporary directory"
version=$(bash scripts/release-tool.sh stage ${VERSION:+-version "$VERSION"} -dir "$tmp/release")

# From here on the go command sees the staged release and nothing of the workspace.
# shellcheck source=/dev/null
source "$tmp/release/env.sh"
say "GOPROXY=$GOPROXY GONOSUMDB=$GONOSUMDB GOWORK=$GOWORK"

for m in "${modules[@]}"; do
	cd "$tmp/release/src/$m"
	# A module without packages (go list warns, and succeeds) has nothing to build, and go vet
	# would fail on it; a go list that fails stops the check.
	if ! pkgs=$(go list ./... 2>"$tmp/go-list.err"); then
		cat "$tmp/go-list.err" >&2
		exit 1
	fi
	if [[ -z $pkgs ]]; then
		say "$m $version: no packages, nothing to build"
		continue
	fi
	say "$m $version: GOWORK=off go build ./... && go vet ./... && go test ./..."
	go build ./...
	go vet ./...
	# Without an emulator: the tests that need one skip, even where the caller (CI's .ci/run)
	# requires Azurite for make test and has stopped it since. No -race: the staged modules are
	# the working tree's code, which make test runs with -race. Nor -short: most of the time
	# (about 2 of 3 minutes on 2 cores) goes into compiling and linking the test binaries,
	# which -short or -run would not save.
	env -u UNIFIED_TABLES_REQUIRE_AZURITE -u UNIFIED_TABLES_TEST_CONNECTION_STRING \
		go test -count=1 ./...
done

mkdir "$tmp/consumer"
cd "$tmp/consumer"
go mod init example.com/consumer
say "go get $tables@$version"
go get "$tables@$version"
say "go get $inmemory@$version"
go get "$inmemory@$version"
# Each "-- name --" line of the txtar file starts a file; the lines before the first are its
# comment.
awk '/^-- .+ --$/ { file = substr($0, 4, length($0) - 6); next } file != "" { print > file }' "$program"
say "building the program against tables"
go build -o "$tmp/program" .
go vet .
say "testing against inmemory"
go test -count=1 .
say "ok: the $version release builds and tests from a module proxy"
