#!/bin/sh
# build-info.sh PACKAGE_FOLDER OUTPUT_FILE: writes `HeraldBuild` (the version in VERSION, the commit checked
# out) as Swift, for the BuildInfo plugin. A shell script rather than a Swift tool, so that no executable is
# built for it: the fuzz build's -sanitize=fuzzer would link libFuzzer's main into such a tool beside its own.
# Reads .git by hand rather than running git, which a build machine may lack; a tree without .git (a source
# archive) says `unknown` unless HERALD_COMMIT names the commit.
set -eu
[ $# -eq 2 ] || { echo "usage: build-info.sh PACKAGE_FOLDER OUTPUT_FILE" >&2; exit 2; }
package=$1
output=$2

# The folder git keeps this checkout's HEAD in (.git, or the one a worktree's .git file names) and the
# common folder that holds branches and packed-refs.
git_folder=$package/.git
if [ -f "$git_folder" ]; then
	link=$(sed -n 's/^gitdir: *//p' "$git_folder")
	case $link in /*) git_folder=$link ;; *) git_folder=$package/$link ;; esac
fi
common=$git_folder
if [ -f "$git_folder/commondir" ]; then
	link=$(cat "$git_folder/commondir")
	case $link in /*) common=$link ;; *) common=$git_folder/$link ;; esac
fi

commit=
if [ -f "$git_folder/HEAD" ]; then
	head=$(cat "$git_folder/HEAD")
	case $head in
	ref:*)
		reference=$(printf '%s' "${head#ref:}" | tr -d ' ')
		if [ -f "$common/$reference" ]; then
			commit=$(cat "$common/$reference")
		elif [ -f "$common/packed-refs" ]; then
			commit=$(awk -v reference="$reference" '$2 == reference { print $1; exit }' "$common/packed-refs")
		fi ;;
	*) commit=$head ;;
	esac
fi
[ -n "$commit" ] || commit=${HERALD_COMMIT:-}
case $commit in '' | *[!0-9a-f]*) commit=unknown ;; esac

version=$(tr -d ' \t\r\n' < "$package/VERSION" 2>/dev/null || true)
[ -n "$version" ] || version=0.0.0
case $version in *[!A-Za-z0-9.+~-]*)
	echo "VERSION holds '$version': letters, digits and . + ~ - only" >&2; exit 1 ;;
esac

temporary=$output.$$
cat > "$temporary" <<SWIFT
// Written by Tools/build-info.sh at build time; not in the repository.

/// Which build is running: the release number from \`VERSION\` and the commit it was built from.
public enum HeraldBuild {
    public static let version = "$version"
    public static let commit = "$commit"
}
SWIFT
mv "$temporary" "$output"
