#!/usr/bin/env bash
# Runs the release tool (tools/cmd/release) on this workspace:
#
#   scripts/release-tool.sh check|plan|apply|tidy|stage [flags]
#
# The tool is built with GOWORK=off inside the tools module, which needs none of the other
# modules for it: it then runs even when a go.mod pins a sibling version the workspace cannot
# load, which is the mistake its check is there to report, naming the go.mod.
set -euo pipefail

if (($# == 0)); then
	echo "usage: $0 check|plan|apply|tidy|stage [flags]" >&2
	exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command=$1
shift
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$root/tools" && GOWORK=off go build -o "$bin/release" ./cmd/release)
"$bin/release" "$command" -C "$root" "$@"
