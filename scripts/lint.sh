#!/usr/bin/env bash
# Checks formatting (gofmt), runs go vet and staticcheck over every package of the workspace.
# staticcheck is installed into GOBIN (or GOPATH/bin) at the pinned version when missing.
# Every check runs even after one fails, so that one run shows all there is to fix.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# v0.8.2 is staticcheck 2026.2.2, the first release that understands Go 1.26.
staticcheck_version=${STATICCHECK_VERSION:-v0.8.2}
modules=(abstractions tables inmemory identity fidelity tools)

mapfile -t pkgs < <(bash scripts/packages.sh)
if ((${#pkgs[@]} == 0)); then
	echo "lint: no packages"
	exit 0
fi

failed=()

echo "lint: gofmt"
if ! unformatted=$(gofmt -l "${modules[@]}"); then
	failed+=(gofmt)
elif [[ -n $unformatted ]]; then
	echo "these files need gofmt -w:" >&2
	echo "$unformatted" >&2
	failed+=(gofmt)
fi

echo "lint: go vet"
go vet "${pkgs[@]}" || failed+=("go vet")

gobin=$(go env GOBIN)
if [[ -z $gobin ]]; then
	gobin="$(go env GOPATH)/bin"
fi
staticcheck=$(command -v staticcheck || true)
if [[ -z $staticcheck ]]; then
	staticcheck="$gobin/staticcheck"
fi
if [[ ! -x $staticcheck ]]; then
	echo "lint: installing staticcheck $staticcheck_version into $gobin"
	GOBIN=$gobin go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
fi
echo "lint: staticcheck"
"$staticcheck" "${pkgs[@]}" || failed+=(staticcheck)

if ((${#failed[@]} > 0)); then
	echo "lint: failed: ${failed[*]}" >&2
	exit 1
fi
echo "lint: ok"
