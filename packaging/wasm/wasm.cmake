# wasm.cmake - how kiln is linked for WebAssembly (included by
# CMakeLists.txt when CMAKE_SYSTEM_NAME is Emscripten; see
# packaging/wasm/build.sh).  BUILD/kiln.js is run by Node.js, as
# `node kiln.js ARGS` (the npm package kiln-precompress-wasm32, whose
# launcher does that): its worker threads are Node's, its file system
# calls Node's fs module, straight on the host's files (NODERAWFS; where
# that differs from Linux, lib/host.c stands in).
#
#   PROXY_TO_PTHREAD   main() runs in a worker thread, so that the main
#                      one is free to serve the file system calls the
#                      workers make (Emscripten runs each on the main
#                      thread) and to start the pool's threads
#   ALLOW_MEMORY_GROWTH up to 4 GiB, a 32-bit address space's: a run's
#                      memory is its workers' encoders (brotli's window
#                      is 16 MiB) and the files it holds
#   WASM_ASYNC_COMPILATION=0  the module is compiled as it is loaded:
#                      Emscripten 3.1.6 would otherwise fetch() it, which
#                      Node 18 and later have but cannot use on a file
#   EXIT_RUNTIME       exit() ends the process, with kiln's status
#   --pre-js           packaging/wasm/host.js: the JavaScript half of
#                      lib/host.c, and the process's environment for kiln
#   DEFAULT_TO_CXX=0   a C program: no C++ library linked
#   --wrap=...         lib/host.c's flock, strerror, sigwait, raise and
#                      pthread_sigmask, not Emscripten's (its flock comes in
#                      one object with functions libarchive needs; the
#                      others are called by other parts of its C library)
if(KILN_SERVE)
  message(FATAL_ERROR "kiln serve is not built for WebAssembly: configure with -DKILN_SERVE=OFF")
endif()
if(NOT KILN_CRYPTO STREQUAL "nettle")
  message(FATAL_ERROR "the WebAssembly build takes its digests from nettle: configure with -DKILN_CRYPTO=nettle")
endif()
target_compile_options(kiln_flags INTERFACE -pthread)
target_link_options(kiln_flags INTERFACE
  -pthread -sPROXY_TO_PTHREAD -sEXIT_RUNTIME
  -sALLOW_MEMORY_GROWTH -sINITIAL_MEMORY=64MB -sMAXIMUM_MEMORY=4GB
  -sDEFAULT_PTHREAD_STACK_SIZE=8MB
  -sNODERAWFS -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0 -sDEFAULT_TO_CXX=0
  "SHELL:--pre-js ${PROJECT_SOURCE_DIR}/packaging/wasm/host.js"
  -Wl,--wrap=flock -Wl,--wrap=strerror -Wl,--wrap=sigwait -Wl,--wrap=raise
  -Wl,--wrap=pthread_sigmask
  -Wno-pthreads-mem-growth)
# (the --pre-js is part of the link: a change to it links again)
set_property(TARGET kiln APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/packaging/wasm/host.js)

# The platform layer's and the digests' unit tests, for tests/package/
# wasm.sh to run under Node.js (linked at -O1: a quicker link; their speed
# is not what they test).
foreach(t host hash)
  add_executable(test_${t} tests/unit/test_${t}.c)
  target_include_directories(test_${t} PRIVATE lib)
  target_link_libraries(test_${t} PRIVATE libkiln)
  target_link_options(test_${t} PRIVATE -O1)
  set_property(TARGET test_${t} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/packaging/wasm/host.js)
endforeach()
