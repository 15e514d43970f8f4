#!/usr/bin/env bash
# Checks formatting (gofmt), runs go vet and staticcheck over every package of the workspace,
# checks that the modules pin each other at one version (tools/cmd/release check), and that
# every module is tidy (go mod tidy -diff). staticcheck is installed into GOBIN (or
# GOPATH/bin) at the pinned version when missing. Every check runs even after one fails, so
# that one run shows all there is to fix.
#
# go mod tidy ignores go.work, and the version the modules require each other at may not be
# published yet: the tidy check runs in a staged copy of each module, with GOWORK=off and
# the siblings served by an on-disk proxy of the working tree (tools/cmd/release tidy -diff;
# make tidy applies what it reports).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# v0.8.2 is staticcheck 2026.2.2, the first release that understands Go 1.26.
staticcheck_version=${STATICCHECK_VERSION:-v0.8.2}
# The modules, from go.work (a failure stops the script, as a process substitution would not).
list=$(bash scripts/modules.sh)
mapfile -t modules <<<"$list"

mapfile -t pkgs < <(bash scripts/packages.sh)
if ((${#pkgs[@]} == 0)); then
	echo "lint: no packages"
	exit 0
fi

failed=()

echo "lint: tracked files"
if ! bash scripts/check-tracked.sh; then
	failed+=(check-tracked)
fi

echo "lint: exported surface"
if ! go run ./tools/cmd/surface; then
	failed+=(surface)
fi

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

echo "lint: module pins"
bash scripts/release-tool.sh check || failed+=("module pins")

echo "lint: go mod tidy -diff"
bash scripts/release-tool.sh tidy -diff || failed+=("go mod tidy")

if ((${#failed[@]} > 0)); then
	echo "lint: failed: ${failed[*]}" >&2
	exit 1
fi
echo "lint: ok"
