# TORCHSWEEP_PORTABLE: torchsweep (coordinator, agent, CLI) for a machine
# that lacks its libraries and has an older glibc, such as a lent GPU node
# (docs/gpu.md): every library but glibc is linked statically, so the one
# file runs wherever a glibc at least as new as the build host's runs.
# scripts/portable-build makes the static libraries and passes their folder
# in CMAKE_PREFIX_PATH. The worker is LibTorch's shared libraries and is
# built on the node itself (scripts/worker-build), so it is not part of it.
if(TORCHSWEEP_BUILD_WORKER OR TORCHSWEEP_WORKER_ONLY)
  message(FATAL_ERROR "TORCHSWEEP_PORTABLE builds torchsweep without the worker: "
                      "add -DTORCHSWEEP_BUILD_WORKER=OFF (the worker is built on the node, scripts/worker-build)")
endif()
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(OPENSSL_USE_STATIC_LIBS TRUE)
set(Boost_USE_STATIC_LIBS TRUE)
add_link_options(-static-libstdc++ -static-libgcc)
message(STATUS "portable: static libraries only, glibc shared")
