#!/usr/bin/env bash
# libs.sh - the libraries of the WebAssembly kiln, compiled with Emscripten
# from Debian's own source packages (apt-get source, through
# packaging/debian_source.sh's private apt configuration), at the versions
# pinned below: the same code the native build links from Debian's -dev
# packages, so that both write the same bytes.  Debian 12 ships these
# libraries built for Linux only; nothing of them is copied into kiln's
# repository.
#
# Only what kiln calls is compiled, straight from the file lists below with
# emcc -O2 (each library's own build system would spend minutes probing
# the compiler): libdeflate, brotli, zstd, zopfli and zlib whole but their
# programs; Jansson; libarchive with what Debian's links for its filters
# (liblzma, bzip2, lz4, zstd, zlib); and of nettle only SHA-256, SHA-384
# and base64, which lib/hash_nettle.c uses in place of OpenSSL's libcrypto
# (whose build is several minutes).  Every
# object is built with -pthread: kiln's worker threads are Web Workers,
# whose shared memory every object must agree on.
#
# Writes PREFIX/usr/include, PREFIX/usr/lib/lib*.a with a pkg-config file
# for each (what CMakeLists.txt looks the libraries up with),
# PREFIX/usr/share/doc/PACKAGE/copyright (Debian's copyright file of each
# source package, which npm-pack ships) and PREFIX/packages.txt, "PACKAGE
# PATH" for each archive (see packaging/licence_files.sh).  Nothing to do
# when PREFIX holds these versions built by this script already.
#
# Needs: emscripten (EM_CONFIG may name a configuration of it:
# packaging/wasm/build.sh sets one up), dpkg-dev, make.
#
# usage: libs.sh PREFIX [JOBS]
set -euo pipefail
prefix=${1:?usage: libs.sh PREFIX [JOBS]}
jobs=${2:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../debian_source.sh"
die() { echo "wasm/libs.sh: $*" >&2; exit 1; }

# The source packages, at the versions of Debian 12's release.
SOURCES="libdeflate=1.14-1 brotli=1.0.9-2 libzstd=1.5.4+dfsg2-5 zopfli=1.0.3-1
zlib=1:1.2.13.dfsg-1 jansson=2.14-2 nettle=3.8.1-2 libarchive=3.6.2-1+deb12u5
xz-utils=5.4.1-1+deb12u2 bzip2=1.0.8-5 lz4=1.9.4-1"
CFLAGS="-O2 -pthread -DNDEBUG"

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
stamp=$prefix/versions
want=$(echo $SOURCES "$CFLAGS" "$(sha256sum <"$0" | cut -c1-16)")
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	exit 0
fi
command -v emcc >/dev/null || die "emcc is missing (apt-get install emscripten)"
src=$prefix.src
rm -rf "$src" "$prefix/usr" "$prefix/obj"
mkdir -p "$src"
debian_source "$src" --only-source $SOURCES || die "apt-get source failed"
dir() { # dir PACKAGE: where dpkg-source unpacked it
	local d
	d=$(find "$src" -maxdepth 1 -type d -name "$1-*" | head -n 1)
	[ -n "$d" ] || die "no $src/$1-* after apt-get source"
	echo "$d"
}
deflate=$(dir libdeflate) brotli=$(dir brotli) zstd=$(dir libzstd) zopfli=$(dir zopfli)
zlib=$(dir zlib) jansson=$(dir jansson) nettle=$(dir nettle) libarchive=$(dir libarchive)
xz=$(dir xz-utils) bzip2=$(dir bzip2) lz4=$(dir lz4)
inc=$prefix/usr/include
mkdir -p "$inc" "$prefix/usr/lib/pkgconfig" "$prefix/obj"

# Headers the build of a library or of kiln needs that its source package
# does not hold as they are installed.
mkdir -p "$inc/brotli" "$inc/zopfli" "$inc/nettle" "$prefix/obj/private"
cp "$deflate/libdeflate.h" "$inc/"
cp "$brotli"/c/include/brotli/*.h "$inc/brotli/"
cp "$zstd"/lib/zstd.h "$zstd"/lib/zstd_errors.h "$zstd"/lib/zdict.h "$inc/"
cp "$zopfli"/src/zopfli/*.h "$inc/zopfli/"
cp "$zlib"/zlib.h "$zlib"/zconf.h "$inc/"
cp "$jansson"/src/jansson.h "$inc/"
# jansson_config.h as its configure writes it for a C99 compiler with
# atomic builtins (both GCC and clang)
sed -e 's/@json_inline@/inline/' -e 's/@json_have_long_long@/1/' \
	-e 's/@json_have_localeconv@/1/' -e 's/@json_have_atomic_builtins@/1/' \
	-e 's/@json_have_sync_builtins@/1/' "$jansson/src/jansson_config.h.in" >"$inc/jansson_config.h"
cat >"$prefix/obj/private/jansson_private_config.h" <<'EOF'
#define HAVE_STDINT_H 1
#define HAVE_UNISTD_H 1
#define HAVE_FCNTL_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SCHED_H 1
#define HAVE_CLOSE 1
#define HAVE_OPEN 1
#define HAVE_READ 1
#define HAVE_GETPID 1
#define HAVE_GETTIMEOFDAY 1
#define HAVE_LOCALECONV 1
#define HAVE_SCHED_YIELD 1
#define HAVE_ATOMIC_BUILTINS 1
#define HAVE_SYNC_BUILTINS 1
#define USE_URANDOM 1
#define INITIAL_HASHTABLE_ORDER 3
EOF
cp "$nettle"/sha2.h "$nettle"/nettle-types.h "$nettle"/base64.h "$inc/nettle/"
sed -e 's/@MAJOR_VERSION@/3/' -e 's/@MINOR_VERSION@/8/' \
	-e 's/@GMP_NUMB_BITS@/0/' -e 's/@NETTLE_USE_MINI_GMP@/0/' \
	"$nettle/version.h.in" >"$inc/nettle/version.h"
grep -q '@' "$inc/nettle/version.h" && die "nettle's version.h.in has a field this script does not fill"
cp "$libarchive"/libarchive/archive.h "$libarchive"/libarchive/archive_entry.h "$inc/"
cp -R "$xz"/src/liblzma/api/lzma.h "$xz"/src/liblzma/api/lzma "$inc/"
cp "$bzip2"/bzlib.h "$inc/"
cp "$lz4"/lib/lz4.h "$lz4"/lib/lz4hc.h "$lz4"/lib/lz4frame.h "$inc/"
# liblzma's configuration as its configure writes it for Linux by default:
# every filter, match finder and check, threads, no assembler
mkdir -p "$prefix/obj/lzma"
{
	for f in LZMA1 LZMA2 DELTA X86 POWERPC IA64 ARM ARMTHUMB ARM64 SPARC; do
		echo "#define HAVE_ENCODER_$f 1"
		echo "#define HAVE_DECODER_$f 1"
	done
	for f in HC3 HC4 BT2 BT3 BT4; do echo "#define HAVE_MF_$f 1"; done
	cat <<'EOF'
#define HAVE_LZIP_DECODER 1
#define HAVE_CHECK_CRC32 1
#define HAVE_CHECK_CRC64 1
#define HAVE_CHECK_SHA256 1
#define HAVE_INTERNAL_SHA256 1
#define HAVE_STDBOOL_H 1
#define HAVE__BOOL 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define SIZEOF_SIZE_T 4
#define MYTHREAD_POSIX 1
#define HAVE_CLOCK_GETTIME 1
#define HAVE_CLOCK_MONOTONIC 1
#define HAVE_PTHREAD_CONDATTR_SETCLOCK 1
#define TUKLIB_PHYSMEM_SYSCONF 1
#define TUKLIB_CPUCORES_SYSCONF 1
#define HAVE_FUNC_ATTRIBUTE_CONSTRUCTOR 1
#define HAVE_VISIBILITY 0
#define ASSUME_RAM 128
#define PACKAGE_NAME "XZ Utils"
#define PACKAGE_URL "https://tukaani.org/xz/"
EOF
} >"$prefix/obj/lzma/config.h"
# libarchive's configuration: the Linux one it ships for builds without
# its configure, less what Emscripten's C library lacks (the ACL, xattr
# and file-flag calls, which kiln's archives never carry; posix_spawnp:
# external filter programs, which kiln never asks for, fail to start)
cat >"$prefix/obj/private/config.h" <<EOF
#include "$libarchive/contrib/android/config/linux_host.h"
#undef HAVE_SYS_CDEFS_H
#undef HAVE_ACL_LIBACL_H
#undef HAVE_SYS_ACL_H
#undef HAVE_ACL_USER
#undef HAVE_SYS_XATTR_H
#undef HAVE_ATTR_XATTR_H
#undef HAVE_LINUX_FS_H
#undef HAVE_LINUX_MAGIC_H
#undef HAVE_LINUX_FIEMAP_H
#undef HAVE_LINUX_TYPES_H
#undef HAVE_LGETXATTR
#undef HAVE_LLISTXATTR
#undef HAVE_LSETXATTR
#undef HAVE_FGETXATTR
#undef HAVE_FLISTXATTR
#undef HAVE_FSETXATTR
#undef HAVE_GETXATTR
#undef HAVE_LISTXATTR
#undef HAVE_SETXATTR
#undef HAVE_WORKING_EXT2_IOC_GETFLAGS
#undef HAVE_WORKING_FS_IOC_GETFLAGS
#undef HAVE_STATFS
#undef HAVE_FSTATFS
#undef HAVE_SYS_STATFS_H
#undef HAVE_SYS_VFS_H
#undef HAVE_STATVFS
#undef HAVE_FSTATVFS
#undef HAVE_SYS_STATVFS_H
#undef HAVE_LUTIMES
#undef HAVE_LCHMOD
#undef HAVE_LCHOWN
#undef HAVE_FUTIMESAT
#undef HAVE_MBRTOWC
#undef HAVE_ICONV
#undef HAVE_ICONV_H
#undef HAVE_LOCALCHARSET_H
#undef HAVE_LIBXML_XMLREADER_H
#undef HAVE_LIBXML2
#undef HAVE_LZO_LZOCONF_H
#undef HAVE_POSIX_SPAWNP
#undef HAVE_OPENSSL_EVP_H
#undef HAVE_LIBCRYPTO
#undef HAVE_NETTLE_AES_H
#undef HAVE_LIBNETTLE
#undef HAVE_MBEDTLS_AES_H
#undef HAVE_LIBMBEDCRYPTO
#define HAVE_ZLIB_H 1
#define HAVE_LIBZ 1
#define HAVE_ZSTD_H 1
#define HAVE_LIBZSTD 1
#define HAVE_LIBZSTD_COMPRESSOR 1
#define HAVE_ZSTD_compressStream 1
#define HAVE_LZMA_H 1
#define HAVE_LIBLZMA 1
#define HAVE_LZMA_STREAM_ENCODER_MT 1
#define HAVE_BZLIB_H 1
#define HAVE_LIBBZ2 1
#define HAVE_LZ4_H 1
#define HAVE_LIBLZ4 1
#define HAVE_LZ4HC_H 1
EOF

# The objects of each library: NAME DIR FLAGS FILES...
lib_files() {
	case $1 in
	deflate) echo "$deflate"/lib/*.c "$deflate"/lib/*/cpu_features.c ;;
	brotlicommon) echo "$brotli"/c/common/*.c ;;
	brotlienc) echo "$brotli"/c/enc/*.c ;;
	brotlidec) echo "$brotli"/c/dec/*.c ;;
	zstd) echo "$zstd"/lib/common/*.c "$zstd"/lib/compress/*.c "$zstd"/lib/decompress/*.c ;;
	zopfli) ls "$zopfli"/src/zopfli/*.c | grep -v '/zopfli_bin\.c$' ;;
	z) for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast \
		inflate inftrees trees uncompr zutil; do echo "$zlib/$f.c"; done ;;
	jansson) echo "$jansson"/src/*.c ;;
	nettle) for f in sha256 sha256-compress sha512 sha512-compress write-be32 \
		base64-encode base64-decode base64-meta; do echo "$nettle/$f.c"; done ;;
	archive) ls "$libarchive"/libarchive/*.c | grep -v '_windows\.c$' ;;
	lzma) ls "$xz"/src/liblzma/{common,check,lz,lzma,rangecoder,delta,simple}/*.c |
		grep -v '_tablegen\.c$\|_small\.c$'
		echo "$xz"/src/common/tuklib_physmem.c "$xz"/src/common/tuklib_cpucores.c ;;
	bz2) for f in blocksort huffman crctable randtable compress decompress bzlib; do echo "$bzip2/$f.c"; done ;;
	lz4) for f in lz4 lz4hc lz4frame xxhash; do echo "$lz4/lib/$f.c"; done ;;
	esac
}
lib_flags() {
	case $1 in
	deflate) echo "-I$deflate" ;;
	brotli*) echo "-I$brotli/c/include -DBROTLI_BUILD_64_BIT" ;;
	zstd) echo "-I$zstd/lib -I$zstd/lib/common -DZSTD_DISABLE_ASM -DZSTD_MULTITHREAD" ;;
	zopfli) echo "" ;;
	z) echo "-DHAVE_UNISTD_H -DHAVE_STDARG_H -D_LARGEFILE64_SOURCE=1" ;;
	jansson) echo "-DHAVE_CONFIG_H -I$prefix/obj/private -I$inc" ;;
	nettle) echo "-I$inc/nettle" ;;
	archive) echo "-DHAVE_CONFIG_H -I$prefix/obj/private -I$inc -D__LIBARCHIVE_CONFIG_H_INCLUDED=1" ;;
	lzma) echo "-DHAVE_CONFIG_H -I$prefix/obj/lzma -I$xz/src/common" \
		"$(printf -- " -I$xz/src/liblzma/%s" api common check lz lzma rangecoder delta simple)" ;;
	bz2) echo "-D_FILE_OFFSET_BITS=64" ;;
	lz4) echo "" ;;
	esac
}
# One file is compiled unoptimised: Emscripten's clang (LLVM 14) turns the
# first loop of brotli's EstimateBitCostsForLiteralsUTF8 (its induction
# variable rewritten, from -O1 on) into one that runs once more, so that the
# literal costs, and with them the .br siblings of some files (fonts, large
# scripts), differ from the native kiln's (GCC's, and clang's at -O0, are
# right: they count what the C says).
file_flags() {
	case $1 in
	*/c/enc/literal_cost.c) echo "-O0" ;;
	esac
}
LIBS="deflate brotlicommon brotlienc brotlidec zstd zopfli z jansson nettle archive lzma bz2 lz4"
mk=$prefix/obj/Makefile
{
	echo "all:"
	for l in $LIBS; do
		objs=""
		for f in $(lib_files $l); do
			o=$prefix/obj/$l/$(basename "${f%.c}").o
			objs="$objs $o"
			printf '%s: %s\n\t@mkdir -p %s\n\temcc %s %s %s -c %s -o %s\n' "$o" "$f" \
				"$(dirname "$o")" "$CFLAGS" "$(lib_flags $l)" "$(file_flags "$f")" "$f" "$o"
		done
		a=$prefix/usr/lib/lib$l.a
		printf '%s:%s\n\trm -f %s\n\temar rcs %s %s\nall: %s\n' "$a" "$objs" "$a" "$a" "$objs" "$a"
	done
} >"$mk"
make -f "$mk" -j "$jobs" >"$prefix/make.log" 2>&1 || { tail -40 "$prefix/make.log" >&2; die "make failed (log: $prefix/make.log)"; }

# pkg-config files: what kiln's CMakeLists.txt asks for, each with the
# version of the source package it was built from.
pc() { # pc NAME VERSION LIBS [REQUIRES]
	cat >"$prefix/usr/lib/pkgconfig/$1.pc" <<EOF
prefix=$prefix/usr
Name: $1
Description: $1 for Emscripten (packaging/wasm/libs.sh)
Version: $2
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib $3
Requires.private: ${4:-}
EOF
}
version() { echo "$SOURCES" | tr ' ' '\n' | sed -n "s/^$1=\(.*:\)\{0,1\}\([^-]*\)-.*/\2/p"; }
pc libdeflate "$(version libdeflate)" -ldeflate
pc libbrotlicommon "$(version brotli)" -lbrotlicommon
pc libbrotlienc "$(version brotli)" "-lbrotlienc -lbrotlicommon"
pc libbrotlidec "$(version brotli)" "-lbrotlidec -lbrotlicommon"
pc libzstd "$(version libzstd | sed 's/+.*//')" -lzstd
pc zlib "$(version zlib | sed 's/\.dfsg//')" -lz
pc jansson "$(version jansson)" -ljansson
pc nettle "$(version nettle)" -lnettle
pc libarchive "$(version libarchive)" "-larchive -llzma -lbz2 -llz4 -lzstd -lz"

# Licences: Debian's copyright file of each source package, and which
# archive came from which.
: >"$prefix/packages.txt"
for pair in libdeflate:deflate brotli:brotlicommon brotli:brotlienc brotli:brotlidec libzstd:zstd \
	zopfli:zopfli zlib:z jansson:jansson nettle:nettle libarchive:archive \
	xz-utils:lzma bzip2:bz2 lz4:lz4; do
	pkg=${pair%%:*} l=${pair#*:}
	mkdir -p "$prefix/usr/share/doc/$pkg"
	cp "$(dir "$pkg")/debian/copyright" "$prefix/usr/share/doc/$pkg/copyright"
	echo "$pkg usr/lib/lib$l.a" >>"$prefix/packages.txt"
done
echo "$want" >"$stamp"
