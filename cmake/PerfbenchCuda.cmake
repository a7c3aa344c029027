# The CUDA paths are compiled in a handful of sources (CUDA events, the
# caching allocator's statistics, NCCL, CUDA graphs), each behind
# PERFBENCH_WITH_CUDA. They, and only they, get that definition and the CUDA
# toolkit's headers. Every other translation unit then compiles with the same
# command line with or without a toolkit, so a second build folder set up
# without one (scripts/no-toolkit-check.sh) is served from ccache rather than
# compiled again: CI pays for one build, not two.

# Takes the toolkit's include directories off the CUDA:: targets that the
# wheel's CMake config imports (torch -> torch::cudart -> CUDA::cudart would
# put them on every torch target) and keeps them in
# PERFBENCH_CUDA_INCLUDE_DIRS for perfbench_cuda_sources(). Call it in the
# directory that called find_package(Torch).
function(perfbench_confine_cuda_headers)
  get_property(imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  set(dirs)
  foreach(target IN LISTS imported)
    if(target MATCHES "^CUDA::")
      get_target_property(inc ${target} INTERFACE_INCLUDE_DIRECTORIES)
      if(inc)
        list(APPEND dirs ${inc})
        set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "")
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  set(PERFBENCH_CUDA_INCLUDE_DIRS "${dirs}" PARENT_SCOPE)
endfunction()

# perfbench_cuda_sources(FILE...): these files compile their CUDA paths
# (where PERFBENCH_CUDA_ENABLED). Source properties are per directory: call
# it where the files' target is made.
function(perfbench_cuda_sources)
  if(NOT PERFBENCH_CUDA_ENABLED)
    return()
  endif()
  set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_DEFINITIONS PERFBENCH_WITH_CUDA)
  foreach(dir IN LISTS PERFBENCH_CUDA_INCLUDE_DIRS)
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS "-isystem${dir}")  # one word: never de-duplicated
  endforeach()
endfunction()
