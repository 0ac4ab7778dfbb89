# The LibTorch worker once per PyTorch environment (docs/environments.md):
# a venv with a PyTorch of its own (a pip wheel carries LibTorch's headers,
# libraries and CMake package) gets bin/torchsweep-worker-ENV, the worker
# configured alone (TORCHSWEEP_WORKER_ONLY) against that LibTorch in a build
# of its own, build/worker-ENV (one project cannot find two Torch packages).
# A venv that sees the system's PyTorch (--system-site-packages) runs the
# system's worker. Pip's Linux wheels are CUDA builds, whose CMake package
# needs a CUDA toolkit at configure time, even for a worker that will run on
# a CPU: TORCHSWEEP_CUDA_TOOLKIT, else the first /usr/local/cuda* with nvcc
# (scripts/env-run makes the host's visible in the build root).
include(ExternalProject)

set(TORCHSWEEP_CUDA_TOOLKIT "" CACHE PATH "a CUDA toolkit, for the worker's builds against CUDA wheels")
set(TORCHSWEEP_WORKER_ENVIRONMENTS "all" CACHE STRING
    "the environments (venv names) to build a worker for: all those with a PyTorch of their own, or none")

function(ts_cuda_toolkit out)
  set(found "${TORCHSWEEP_CUDA_TOOLKIT}")
  if(NOT found)
    file(GLOB candidates LIST_DIRECTORIES true /usr/local/cuda /usr/local/cuda-*)
    foreach(candidate ${candidates})
      if(EXISTS ${candidate}/bin/nvcc)
        set(found ${candidate})
        break()
      endif()
    endforeach()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Sets `out` to the "builds" of runners.json: {"ENV": "PROGRAM", ...} for
# each of `environments` whose PyTorch the worker is built against, and
# defines the external build of each that needs one.
function(ts_worker_builds out venvs environments)
  set(builds "")
  if(NOT TARGET torchsweep-worker OR TORCHSWEEP_WORKER_ONLY OR TORCHSWEEP_WORKER_ENVIRONMENTS STREQUAL "none")
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  # Where the system's PyTorch lives: a venv whose torch is there shares the system's worker.
  set(where_torch "import importlib.util as u; s = u.find_spec('torch'); print(s.submodule_search_locations[0] if s else '')")
  execute_process(COMMAND python3 -c "${where_torch}" OUTPUT_VARIABLE system_torch OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
  ts_cuda_toolkit(cuda)
  foreach(environment ${environments})
    if(NOT TORCHSWEEP_WORKER_ENVIRONMENTS STREQUAL "all" AND NOT environment IN_LIST TORCHSWEEP_WORKER_ENVIRONMENTS)
      continue()
    endif()
    set(python ${venvs}/${environment}/bin/python3)
    if(NOT EXISTS ${python})
      continue()
    endif()
    execute_process(COMMAND ${python} -c "${where_torch}" OUTPUT_VARIABLE torch OUTPUT_STRIP_TRAILING_WHITESPACE
                    ERROR_QUIET)
    if(NOT torch)
      continue()  # no PyTorch there (TensorFlow's, JAX's)
    elseif(torch STREQUAL system_torch)
      string(APPEND builds "${builds_separator}\"${environment}\": \"torchsweep-worker\"")
      set(builds_separator ", ")
      continue()
    elseif(NOT EXISTS ${torch}/share/cmake/Torch/TorchConfig.cmake)
      message(STATUS "torchsweep-worker: ${environment}'s PyTorch (${torch}) has no CMake package; no worker for it")
      continue()
    endif()
    set(cuda_arguments "")
    file(GLOB cuda_libraries ${torch}/lib/libtorch_cuda.so)
    if(cuda_libraries)
      if(NOT cuda)
        message(STATUS "torchsweep-worker: ${environment}'s PyTorch is a CUDA build and no CUDA toolkit was found "
                       "(TORCHSWEEP_CUDA_TOOLKIT); no worker for it")
        continue()
      endif()
      # The wheel's CUDA libraries (nvidia-* wheels beside torch) resolve its
      # libraries' own dependencies at link time; at run time torch's RUNPATH does.
      file(GLOB nvidia_libraries LIST_DIRECTORIES true ${torch}/../nvidia/*/lib)
      string(REPLACE ";" ":" nvidia_libraries "${nvidia_libraries}")
      list(APPEND cuda_arguments -DCUDA_TOOLKIT_ROOT_DIR=${cuda} -DCMAKE_CUDA_COMPILER=${cuda}/bin/nvcc
           -DTORCH_CUDA_ARCH_LIST=8.0|9.0
           "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed -Wl,-rpath-link,${nvidia_libraries}")
      # NCCL: the worker's CMakeLists finds the wheel's (nvidia-nccl-cu*) beside torch itself.
    endif()
    set(program torchsweep-worker-${environment})
    ExternalProject_Add(worker-${environment}
      SOURCE_DIR ${PROJECT_SOURCE_DIR}
      BINARY_DIR ${PROJECT_BINARY_DIR}/worker-${environment}
      LIST_SEPARATOR |
      CMAKE_ARGS -DTORCHSWEEP_WORKER_ONLY=ON -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
                 -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
                 -DTORCHSWEEP_WERROR=${TORCHSWEEP_WERROR} -DCMAKE_PREFIX_PATH=${torch}|${torch}/share/cmake -Wno-dev
                 ${cuda_arguments}
      BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --target torchsweep-worker
      INSTALL_COMMAND ${CMAKE_COMMAND} -E copy <BINARY_DIR>/bin/torchsweep-worker
                      ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${program}
      BUILD_ALWAYS ON
      USES_TERMINAL_BUILD ON)
    # A component of its own: it runs only beside this machine's venv, so the Debian package leaves it out.
    install(PROGRAMS ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${program} DESTINATION ${CMAKE_INSTALL_BINDIR}
            COMPONENT environment_workers)
    message(STATUS "torchsweep-worker: also built against ${environment}'s LibTorch (${torch}) as ${program}")
    string(APPEND builds "${builds_separator}\"${environment}\": \"${program}\"")
    set(builds_separator ", ")
  endforeach()
  set(${out} "${builds}" PARENT_SCOPE)
endfunction()
