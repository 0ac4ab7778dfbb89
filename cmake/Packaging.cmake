# `cpack -G DEB` in the build directory: one Debian package of everything
# `cmake --install` installs, under /usr (docs/deploy.md). The shared
# libraries the binaries link (LibTorch, OpenSSL, SQLite, yaml-cpp, spdlog, fmt,
# prometheus-cpp, Open MPI's) become dependencies through dpkg-shlibdeps;
# what the Python runners import is declared by hand.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME torchsweep)
set(CPACK_PACKAGE_VENDOR "torchsweep")
set(CPACK_PACKAGE_CONTACT "torchsweep developers <torchsweep@torchsweep.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed benchmark orchestrator for PyTorch")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Stripped, as Debian ships binaries: their line tables stay in the build tree.
set(CPACK_STRIP_FILES ON)
# The torch.compile runner (python3-torch and a compiler for Inductor's CPU
# kernels), the harness every Python runner shares (jsonschema, safetensors).
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "python3 (>= 3.11), python3-torch, python3-jsonschema, python3-safetensors, python3-yaml")
# Fast BLAS for LibTorch (Debian's default libblas.so.3 is the reference
# one), mpirun for multi-rank jobs, torchvision, and what Inductor builds with.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0-openmp, openmpi-bin, python3-torchvision, g++, python3-dev")
# The LibTorch workers built against a venv's PyTorch (cmake/WorkerBuilds.cmake)
# load that venv's libraries, which no package provides: installed by
# `cmake --install` on this machine, not packaged.
set(CPACK_INSTALL_CMAKE_PROJECTS "${PROJECT_BINARY_DIR};${PROJECT_NAME};Unspecified;/")
include(CPack)
