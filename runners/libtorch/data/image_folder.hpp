#pragma once
// imagefolder data for the LibTorch worker (docs/data.md): the tree read as
// torchvision's ImageFolder reads it, decoded and transformed by a pool of
// loader threads (runners/libtorch/data/jpeg_image.hpp) that keep `prefetch`
// batches ready ahead of the step loop.
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runners/libtorch/data/synthetic_data.hpp"

namespace ts::worker {

// FOLDER/CLASS/.../IMAGE.jpg: classes sorted by name and numbered from 0,
// files sorted within each. Throws std::runtime_error naming the path for a
// missing folder, a tree without class folders or a class without JPEG files.
struct ImageTree {
  std::filesystem::path folder;
  std::vector<std::string> classes;
  std::vector<std::pair<std::filesystem::path, int64_t>> samples;  // file, label
  static ImageTree read(const std::filesystem::path& folder);
};

struct LoaderOptions {
  int64_t batch_size = 0;
  int64_t side = 0;  // the input size
  int64_t workers = 1, prefetch = 1;
  bool fail_on_corrupt = false;
  uint64_t seed = 0;
  // Multi-rank jobs: rank r of n takes batches r, r + n, ... of the one
  // seeded stream, as DistributedSampler shards an epoch.
  int64_t rank = 0, ranks = 1;
  // The layout of the batches on the device (job memory_format); the copy
  // to the device makes it, on the clock as a real pipeline's would be.
  torch::MemoryFormat layout = torch::MemoryFormat::Contiguous;
};

// An endless stream of batches over the tree: each pass in its own seeded
// shuffle, the last partial batch of a pass dropped (as DataLoader's
// drop_last). The same seed gives the same batches whatever the threads do.
// Batch indices below are this rank's; make_batch takes the stream's.
class ImageFolderData final : public DataSource {
 public:
  ImageFolderData(const ImageTree& tree, LoaderOptions options, torch::Device device);
  ~ImageFolderData() override;
  ImageFolderData(const ImageFolderData&) = delete;
  ImageFolderData& operator=(const ImageFolderData&) = delete;

  // The next batch on the device (waiting for the loaders if they are
  // behind); rethrows a loader's error.
  const Batch& next() override;
  const Batch& peek() override;
  std::string name() const override { return "torchsweep-worker loader threads (libjpeg-turbo)"; }

  // The next batch as the loaders made it, on the host.
  Batch next_on_host();
  // Files that did not decode, skipped (fail_on_corrupt false).
  std::set<std::string> corrupt_files() const;

 private:
  Batch take();  // the next batch in order, on the host
  void load();
  Batch make_batch(int64_t index, class JpegDecoder& decoder, std::vector<std::size_t>& order, int64_t& order_pass);

  const ImageTree& tree_;
  LoaderOptions options_;
  torch::Device device_;
  int64_t batches_per_pass_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::map<int64_t, Batch> done_;  // batch index -> batch, made out of order
  int64_t next_to_make_ = 0, next_to_take_ = 0;
  std::exception_ptr error_;
  std::set<std::string> corrupt_;
  bool stopping_ = false;
  std::optional<Batch> current_;  // on the device: what next() and peek() return
  bool peeked_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ts::worker
