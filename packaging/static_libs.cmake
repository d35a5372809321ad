# static_libs.cmake - the archives a static link took code from, read from
# the linker's map: every "ARCHIVE.a(member.o)" line names one.  The list
# (real paths, sorted, one per line) is what the licence check and the npm
# package's licence files go by: an archive on the link line that gave no
# member is not in the binary.
#
# usage: cmake -DMAP=kiln.map -DOUT=static-libs.txt -P static_libs.cmake
file(STRINGS "${MAP}" members REGEX "^/[^( ]+\\.a\\(")
set(archives "")
foreach(line IN LISTS members)
  string(REGEX MATCH "^/[^( ]+\\.a" path "${line}")
  get_filename_component(path "${path}" REALPATH)
  list(APPEND archives "${path}")
endforeach()
list(REMOVE_DUPLICATES archives)
list(SORT archives)
if(NOT archives)
  message(FATAL_ERROR "static_libs.cmake: no archive member in ${MAP}")
endif()
list(JOIN archives "\n" text)
file(WRITE "${OUT}" "${text}\n")
