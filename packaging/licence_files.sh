# licence_files.sh - which Debian package a linked archive came from, and
# its copyright file; sourced by packaging/npm/pack.sh and the tests that
# compare the linked archives with the README's licence table.
#
# lib_package LIB: prints "PACKAGE COPYRIGHT_FILE" for the archive LIB, or
# fails.  The package is the one dpkg knows LIB (or its real path) from; an
# archive no installed package owns may come from .deb files unpacked into
# a directory above it (packaging/arm64/zopfli.sh), whose packages.txt
# lists "PACKAGE PATH" for each file unpacked, PATH relative to it: the
# copyright file is then the one unpacked beside it.
lib_package() {
	local lib=$1 deb d
	deb=$( (dpkg-query -S "$lib" || dpkg-query -S "$(readlink -f "$lib")") 2>/dev/null | head -n 1 | cut -d: -f1) || true
	if [ -n "$deb" ]; then
		echo "$deb /usr/share/doc/$deb/copyright"
		return 0
	fi
	d=$(dirname "$lib")
	while [ "$d" != / ] && [ "$d" != . ]; do
		if [ -f "$d/packages.txt" ]; then
			deb=$(awk -v f="${lib#"$d"/}" '$2 == f { print $1; exit }' "$d/packages.txt")
			if [ -n "$deb" ]; then
				echo "$deb $d/usr/share/doc/$deb/copyright"
				return 0
			fi
		fi
		d=$(dirname "$d")
	done
	return 1
}
