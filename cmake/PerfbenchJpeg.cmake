# libjpeg with headers and library that belong together.
#
# Debian keeps libjpeg-turbo's jconfig.h (which defines JPEG_LIB_VERSION) in
# the multiarch folder include/<triplet>/, beside jpeglib.h's include/. A
# private prefix (PERFBENCH_DEPS_PREFIX) whose multiarch folder is not on
# the include path compiles jpeglib.h against the host's jconfig.h instead
# (Ubuntu's libjpeg-turbo8: 80) while linking the prefix's libjpeg.so.62,
# and every compressor then fails with "Wrong JPEG library version: library
# is 62, caller expects 80". So:
#   perfbench_find_jpeg()            find_package(JPEG), with the multiarch
#                                    folder beside JPEG_INCLUDE_DIR put first
#                                    on JPEG::JPEG's include path;
#   perfbench_check_jpeg_version(INCLUDE_DIRS LIBRARY)
#                                    builds and runs a program that compiles
#                                    jpeglib.h with INCLUDE_DIRS (in order) and
#                                    creates a compressor against LIBRARY; a
#                                    mismatch fails the configure naming both.
include_guard(GLOBAL)

set(_PERFBENCH_JPEG_PROBE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(perfbench_check_jpeg_version include_dirs library)
  set(bin "${CMAKE_BINARY_DIR}/CMakeFiles/perfbench_jpeg_probe")
  set(flags "")
  foreach(d IN LISTS include_dirs)
    list(APPEND flags "-I${d}")
  endforeach()
  try_run(run_result compile_ok "${bin}" "${_PERFBENCH_JPEG_PROBE_DIR}/jpeg_version_probe.cc"
          COMPILE_DEFINITIONS ${flags}
          LINK_LIBRARIES "${library}"
          COMPILE_OUTPUT_VARIABLE compile_out
          RUN_OUTPUT_VARIABLE run_out)
  if(NOT compile_ok)
    message(FATAL_ERROR "libjpeg: a program including jpeglib.h (include path: ${include_dirs}) "
                        "does not build against ${library}:\n${compile_out}")
  endif()
  string(STRIP "${run_out}" run_out)
  if(NOT run_result EQUAL 0)
    message(FATAL_ERROR "libjpeg: headers and library do not match: ${run_out} "
                        "(jpeglib.h's jconfig.h from ${include_dirs}; library ${library}). "
                        "Put the library's own include/<triplet>/ folder (its jconfig.h) first.")
  endif()
  message(STATUS "libjpeg: ${run_out}")
endfunction()

function(perfbench_find_jpeg)
  find_package(JPEG REQUIRED)
  set(dirs "")
  if(CMAKE_LIBRARY_ARCHITECTURE AND EXISTS "${JPEG_INCLUDE_DIR}/${CMAKE_LIBRARY_ARCHITECTURE}/jconfig.h")
    list(APPEND dirs "${JPEG_INCLUDE_DIR}/${CMAKE_LIBRARY_ARCHITECTURE}")
  endif()
  list(APPEND dirs "${JPEG_INCLUDE_DIR}")
  # Ahead of every other include directory of the targets that link it.
  set_property(TARGET JPEG::JPEG PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${dirs}")
  list(GET JPEG_LIBRARIES 0 lib)
  perfbench_check_jpeg_version("${dirs}" "${lib}")
endfunction()
