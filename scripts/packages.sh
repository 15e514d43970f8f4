#!/usr/bin/env bash
# Prints the import paths of every package of the workspace's modules, one a line.
#
# "go test" fails with "no packages to test" when no pattern matches anything, and a module
# that has only its go.mod so far matches nothing; listing first lets callers pass only real
# packages, and say so when there are none. -e keeps packages that do not compile in the
# list, so that the build error is reported by the command that runs them.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The modules, from go.work (a failure stops the script, as a process substitution would not).
list=$(bash scripts/modules.sh)
mapfile -t modules <<<"$list"
patterns=()
for m in "${modules[@]}"; do
	patterns+=("./$m/...")
done
# go list warns on stderr about each pattern that matches nothing; that is expected here,
# any other message is not.
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
status=0
go list -e "${patterns[@]}" 2>"$errors" || status=$?
grep -v 'matched no packages$' "$errors" >&2 || true
exit "$status"
