#!/usr/bin/env bash
# Fails when git tracks a compiled executable (ELF, Mach-O, PE) or a file over 1 MB outside
# a testdata/ folder: build outputs belong in .gitignore, large fixtures in testdata/.
# make lint and CI (.ci/run) run it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

limit=$((1024 * 1024))
bad=0
while IFS= read -r -d '' f; do
	[[ -f $f ]] || continue
	case "/$f" in
	*/testdata/*) continue ;;
	esac
	size=$(stat -c %s -- "$f")
	if ((size > limit)); then
		echo "check-tracked: $f is $size bytes, over 1 MB: keep large files out of git, or under testdata/" >&2
		bad=1
	fi
	magic=$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')
	case $magic in
	7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | 4d5a*)
		echo "check-tracked: $f is a compiled executable: remove it from git and add its path to .gitignore" >&2
		bad=1
		;;
	esac
done < <(git ls-files -z)
if ((bad)); then
	exit 1
fi
echo "check-tracked: no executables, no file over 1 MB outside testdata/"
