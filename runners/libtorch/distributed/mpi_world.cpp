#include "runners/libtorch/distributed/mpi_world.hpp"

#include <cstdlib>
#include <stdexcept>

#include "shared/log.hpp"

namespace ts::worker {
namespace {

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

MpiWorld::MpiWorld() {
  // Autograd hooks may start all-reduces from LibTorch's backward thread
  // while the main thread waits on others, so ask for full thread support;
  // calls are never concurrent in practice, so SERIALIZED is enough.
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw std::runtime_error("this MPI library supports only thread level " + std::to_string(provided) +
                             "; torchsweep needs MPI_THREAD_SERIALIZED or better");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  host_.assign(name, static_cast<std::size_t>(length));
  log::set_program("worker[" + std::to_string(rank_) + "/" + std::to_string(size_) + "]");
  log::debug("MPI up: rank {} of {}, local rank {} of {} on {}", rank_, size_, local_rank_, local_size_, host_);
}

MpiWorld::~MpiWorld() { MPI_Finalize(); }

void MpiWorld::broadcast_bytes(void* data, std::size_t bytes, int root) const {
  check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

std::vector<nlohmann::json> MpiWorld::gather(const nlohmann::json& value, int root) const {
  const auto text = value.dump();
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(rank_ == root ? static_cast<std::size_t>(size_) : 0);
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> offsets(lengths.size());
  std::string all;
  if (rank_ == root) {
    int total = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      offsets[i] = total;
      total += lengths[i];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<nlohmann::json> values;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    values.push_back(
        nlohmann::json::parse(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i]))));
  }
  return values;
}

std::vector<uint64_t> MpiWorld::all_gather(uint64_t value) const {
  std::vector<uint64_t> values(static_cast<std::size_t>(size_));
  check(MPI_Allgather(&value, 1, MPI_UINT64_T, values.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD), "MPI_Allgather");
  return values;
}

void MpiWorld::barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

std::vector<double> MpiWorld::all_reduce_max(std::vector<double> values) const {
  check(
      MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
      "MPI_Allreduce");
  return values;
}

void MpiWorld::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this only satisfies [[noreturn]]
}

}  // namespace ts::worker
