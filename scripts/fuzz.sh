#!/usr/bin/env bash
# Runs every fuzz target of the workspace for FUZZTIME (10s) each, one at a time: "go test
# -fuzz" takes one package and one target per run. Every target runs even after one fails;
# the status says whether any failed. Succeeds when there are none.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime=${FUZZTIME:-10s}
# The modules, from go.work (a failure stops the script, as a process substitution would not).
list=$(bash scripts/modules.sh)
mapfile -t modules <<<"$list"

targets=()
for m in "${modules[@]}"; do
	[[ -d $m ]] || continue
	while IFS=: read -r file _ line; do
		name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
		targets+=("$(dirname "$file") $name")
	done < <(grep -rnE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' "$m" | sort || true)
done

if ((${#targets[@]} == 0)); then
	echo "fuzz: no fuzz targets"
	exit 0
fi

failed=()
for t in "${targets[@]}"; do
	read -r dir name <<<"$t"
	echo "fuzz: $dir $name ($fuzztime)"
	if ! (cd "$dir" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" .); then
		failed+=("$dir $name")
	fi
done
if ((${#failed[@]} > 0)); then
	echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: ${#targets[@]} targets passed"
