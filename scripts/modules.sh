#!/usr/bin/env bash
# Prints the directories of the workspace's modules, one a line, in go.work's order
# (alphabetical, not the release order: the release tool orders the modules by their
# requirements itself): the one list of modules that every script reads.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
# go list -m lists the workspace's modules; GOWORK names go.work even when the caller's
# environment turns the workspace off.
while IFS= read -r dir; do
	echo "${dir#"$root"/}"
done < <(GOWORK="$root/go.work" go list -m -f '{{.Dir}}')
