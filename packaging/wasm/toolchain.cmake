# toolchain.cmake - kiln for WebAssembly, with Debian 12's Emscripten
# (package emscripten) and the libraries packaging/wasm/libs.sh compiled
# from Debian's source packages.  Used by packaging/wasm/build.sh, which
# gives KILN_WASM_TOOLS (its emcc, run with a private Emscripten
# configuration) and KILN_WASM_DEPS (libs.sh's PREFIX).
if(KILN_WASM_TOOLS)
  set(CMAKE_C_COMPILER "${KILN_WASM_TOOLS}/emcc")
endif()
include(/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake)
# CMake's checks (find_package(Threads)) compile without linking: each
# link of Emscripten's runs Node.js and binaryen, seconds a check.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# pkg-config reads the WebAssembly libraries' .pc files only; they and
# their headers are found where libs.sh put them.
if(KILN_WASM_DEPS)
  set(ENV{PKG_CONFIG_LIBDIR} "${KILN_WASM_DEPS}/usr/lib/pkgconfig")
  set(ENV{PKG_CONFIG_PATH} "")
  list(APPEND CMAKE_FIND_ROOT_PATH "${KILN_WASM_DEPS}")
endif()
