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
# Debian 13 and Ubuntu 24.04 (NVIDIA's PyTorch images) name these alike.
apt-get install -y --no-install-recommends cmake ninja-build g++ git pkg-config ca-certificates \
  libboost-dev libssl-dev libsqlite3-dev nlohmann-json3-dev libvalijson-dev libcli11-dev libspdlog-dev \
  libyaml-cpp-dev prometheus-cpp-dev libturbojpeg0-dev libjs-vega python3-dev python3-setuptools python3-jsonschema \
  python3-safetensors python3-yaml python3-scipy iproute2 procps
# Multi-rank jobs need an MPI; an image that has one (HPC-X in NVIDIA's) keeps it.
command -v mpicxx > /dev/null || apt-get install -y --no-install-recommends libopenmpi-dev openmpi-bin
torch_prefix=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cmake -S "$source" -B /tmp/torchsweep-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DTORCHSWEEP_BUILD_TESTS=OFF -DTORCHSWEEP_BUILD_BENCH=OFF
cmake --build /tmp/torchsweep-build --parallel "$(nproc)"
cmake --install /tmp/torchsweep-build
rm -rf /tmp/torchsweep-build "$source"
apt-get clean
rm -rf /var/lib/apt/lists/*
