# static_libs.cmake - the archives a static link took code from, read from
# the linker's map: every "ARCHIVE.a(member.o)" line names one.  The list
# (real paths, sorted, one per line) is what the licence check and the npm
# package's licence files go by: an archive on the link line that gave no
# member is not in the binary.  The linker names an archive inside the
# build tree by a relative path (the arm64 build's zopfli, see
# packaging/arm64/zopfli.sh): it is taken relative to the map's directory,
# and the build's own archives (libkiln.a, in that directory) are left out.
#
# usage: cmake -DMAP=kiln.map -DOUT=static-libs.txt -P static_libs.cmake
get_filename_component(map_dir "${MAP}" DIRECTORY)
get_filename_component(map_dir "${map_dir}" REALPATH)
file(STRINGS "${MAP}" members REGEX "^[^( ]+\\.a\\(")
set(archives "")
foreach(line IN LISTS members)
  string(REGEX MATCH "^[^( ]+\\.a" path "${line}")
  get_filename_component(path "${path}" REALPATH BASE_DIR "${map_dir}")
  get_filename_component(dir "${path}" DIRECTORY)
  if(dir STREQUAL map_dir)
    continue()
  endif()
  list(APPEND archives "${path}")
endforeach()
list(REMOVE_DUPLICATES archives)
list(SORT archives)
if(NOT archives)
  message(FATAL_ERROR "static_libs.cmake: no archive member in ${MAP}")
endif()
list(JOIN archives "\n" text)
file(WRITE "${OUT}" "${text}\n")
