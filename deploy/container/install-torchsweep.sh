#!/bin/sh
# Builds torchsweep from SOURCE and installs it to PREFIX inside an image
# whose base carries PyTorch (deploy/container/Containerfile and
# torchsweep-agent.def run it; docs/deploy.md, "Containers"):
#   install-torchsweep.sh SOURCE PREFIX
# The base's apt installs what building needs besides PyTorch; the LibTorch
# worker is built against the base's own torch (its LibTorch and CMake
# package, found from Python), so it matches the Python runners' torch. The
# build tree is removed; the compiler stays, as TorchInductor needs one.
set -eu
source=$1 prefix=$2
export DEBIAN_FRONTEND=noninteractive
apt-get update
# The lines of the reference platform's list tagged for an image
# (scripts/packages.txt): Debian 13 and Ubuntu 24.04 (NVIDIA's PyTorch
# images) name them alike.
image_packages() { grep -E "#[[:space:]]*$1\$" "$source/scripts/packages.txt" | cut -d' ' -f1; }
# shellcheck disable=SC2046
apt-get install -y --no-install-recommends $(image_packages image)
# Multi-rank jobs need an MPI; an image that has one (HPC-X in NVIDIA's) keeps it.
# shellcheck disable=SC2046
command -v mpicxx > /dev/null || apt-get install -y --no-install-recommends $(image_packages image-mpi)
torch_prefix=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cmake -S "$source" -B /tmp/torchsweep-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DTORCHSWEEP_BUILD_TESTS=OFF -DTORCHSWEEP_BUILD_BENCH=OFF
cmake --build /tmp/torchsweep-build --parallel "$(nproc)"
cmake --install /tmp/torchsweep-build
rm -rf /tmp/torchsweep-build "$source"
apt-get clean
rm -rf /var/lib/apt/lists/*
