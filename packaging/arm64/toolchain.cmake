# toolchain.cmake - cross-compiling kiln for Linux on arm64 (aarch64) with
# Debian's cross compiler (gcc-aarch64-linux-gnu) and the arm64 multiarch
# -dev packages (dpkg --add-architecture arm64; libdeflate-dev:arm64 ...).
# Used by packaging/arm64/build.sh, which also gives the zopfli library
# (ZOPFLI_INCLUDE_DIR, ZOPFLI_LIBRARY: Debian's arm64 libzopfli-dev cannot
# be installed beside the amd64 one, see zopfli.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The build host runs arm64 programs through qemu-user.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)

# Libraries and headers of the target only; programs of the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
