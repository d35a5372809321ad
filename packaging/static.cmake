# static.cmake - KILN_STATIC=ON: every executable is linked with -static from
# the distribution's .a archives, so the kiln binary runs on any x86-64 Linux
# with no library installed.
#
# Included twice from the top-level CMakeLists.txt:
#   - before the dependencies are looked up (KILN_STATIC_STAGE "find"): every
#     find_library(), including those pkg_check_modules() runs for its
#     imported targets, then finds lib*.a instead of lib*.so;
#   - after them (KILN_STATIC_STAGE "link"): each PkgConfig:: imported target
#     is given its module's --static library list (the private dependencies a
#     shared library hides, e.g. libarchive's nettle, lzma, zstd, lz4, bz2,
#     acl), each resolved to its .a.  A dependency added the usual way, with
#     pkg_check_modules(... IMPORTED_TARGET ...), is thereby linked statically
#     with no change here; one found with find_library() gets its .a from the
#     first stage.
#
# libarchive's xar support needs libxml2 and ICU (about 40 MB static), so it
# is left out: packaging/no_xar.c replaces its two entry points (--wrap), and
# xml2 is dropped from libarchive's list.  kiln writes numeric owners only,
# so nothing calls glibc's name-service functions, which would need shared
# libraries at run time (tests/static/binary.sh checks that).
#
# The archives the linker took code from are listed in BUILD/static-libs.txt
# (packaging/static_libs.cmake reads the link map), which the tests compare
# with the README's licence table and npm-pack takes licence files from.

if(KILN_STATIC_STAGE STREQUAL "find")
  if(CMAKE_VERSION VERSION_LESS 3.21)
    message(FATAL_ERROR "KILN_STATIC=ON needs CMake 3.21 or later")
  endif()
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    message(FATAL_ERROR "KILN_STATIC=ON is for Linux")
  endif()
  if(NOT KILN_SANITIZE STREQUAL "")
    message(FATAL_ERROR "KILN_STATIC=ON and KILN_SANITIZE cannot be combined")
  endif()
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
  string(APPEND CMAKE_EXE_LINKER_FLAGS " -static")
  # libm, which a shared libbrotlienc brings along by itself but whose
  # brotli .pc file does not name, ends every link line.
  string(APPEND CMAKE_C_STANDARD_LIBRARIES " -lm")
  return()
endif()

# Libraries a module lists that a static kiln must not link.
set(KILN_STATIC_OMIT xml2)

get_directory_property(kiln_imported IMPORTED_TARGETS)
foreach(t IN LISTS kiln_imported)
  if(NOT t MATCHES "^PkgConfig::(.+)$")
    continue()
  endif()
  set(p ${CMAKE_MATCH_1})
  set(archives "")
  foreach(name IN LISTS ${p}_STATIC_LIBRARIES)
    if(name IN_LIST KILN_STATIC_OMIT)
      continue()
    endif()
    string(MAKE_C_IDENTIFIER "KILN_STATIC_LIB_${name}" var)
    find_library(${var} NAMES ${name} HINTS ${${p}_STATIC_LIBRARY_DIRS})
    if(NOT ${var})
      message(FATAL_ERROR "KILN_STATIC=ON: lib${name}.a (needed by ${p}) not found; install its -dev package")
    endif()
    list(APPEND archives ${${var}})
  endforeach()
  set_target_properties(${t} PROPERTIES
    INTERFACE_LINK_LIBRARIES "${archives}"
    INTERFACE_LINK_OPTIONS "${${p}_STATIC_LDFLAGS_OTHER}"
    INTERFACE_COMPILE_OPTIONS "${${p}_STATIC_CFLAGS_OTHER}")
endforeach()

# What went into kiln, from the linker's map.
target_link_options(kiln PRIVATE "-Wl,-Map=${PROJECT_BINARY_DIR}/kiln.map")
add_custom_command(TARGET kiln POST_BUILD
  COMMAND ${CMAKE_COMMAND} -DMAP=${PROJECT_BINARY_DIR}/kiln.map
          -DOUT=${PROJECT_BINARY_DIR}/static-libs.txt -P ${PROJECT_SOURCE_DIR}/packaging/static_libs.cmake
  VERBATIM)

# Every program linked with libkiln gets the xar stubs and the wraps.
add_library(kiln_no_xar OBJECT ${PROJECT_SOURCE_DIR}/packaging/no_xar.c)
target_link_libraries(kiln_no_xar PRIVATE kiln_flags PkgConfig::LIBARCHIVE)
target_sources(libkiln INTERFACE $<TARGET_OBJECTS:kiln_no_xar>)
target_link_options(libkiln INTERFACE
  -Wl,--wrap=archive_read_support_format_xar
  -Wl,--wrap=archive_write_set_format_xar)
