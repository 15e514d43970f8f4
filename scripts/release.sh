#!/usr/bin/env bash
# Releases every module of the workspace at VERSION, in dependency order (tools/cmd/release).
#
#   VERSION=v0.1.0 scripts/release.sh            the dry run: prints the plan, changes nothing
#   VERSION=v0.1.0 DRY_RUN=0 scripts/release.sh  pins every sibling requirement to VERSION,
#                                                completes the go.sum files, commits, and
#                                                tags each module (tables/v0.1.0, ...)
#   VERSION=v0.1.0 PUSH=1 scripts/release.sh     the same, then pushes the commit and the tags
#
# The real run refuses unless CHANGELOG.md has a section for VERSION, the working tree is
# clean, and no tag of the release exists yet.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
version=${VERSION:-}
if [[ -z $version ]]; then
	echo "release: VERSION is required, as in: make release VERSION=v0.1.0" >&2
	exit 2
fi
if [[ ${PUSH:-0} == 1 ]]; then
	exec bash scripts/release-tool.sh apply -version "$version" -push
elif [[ ${DRY_RUN:-1} == 0 ]]; then
	exec bash scripts/release-tool.sh apply -version "$version"
else
	exec bash scripts/release-tool.sh plan -version "$version"
fi
