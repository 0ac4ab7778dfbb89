#include "runners/libtorch/data/image_folder.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "runners/libtorch/data/jpeg_image.hpp"

namespace ts::worker {
namespace {

namespace fs = std::filesystem;

bool is_jpeg_name(const fs::path& file) {
  auto extension = file.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return extension == ".jpg" || extension == ".jpeg";
}

}  // namespace

ImageTree ImageTree::read(const fs::path& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error))
    throw std::runtime_error("data.folder: " + folder.string() + ": no such directory");
  ImageTree tree{folder, {}, {}};
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.is_directory()) tree.classes.push_back(entry.path().filename().string());
  }
  std::sort(tree.classes.begin(), tree.classes.end());
  if (tree.classes.empty()) {
    throw std::runtime_error("data.folder: " + folder.string() +
                             ": no class folders (expected FOLDER/CLASS/IMAGE.jpg)");
  }
  for (std::size_t label = 0; label < tree.classes.size(); ++label) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(folder / tree.classes[label],
                                                              fs::directory_options::follow_directory_symlink)) {
      if (entry.is_regular_file() && is_jpeg_name(entry.path())) files.push_back(entry.path());
    }
    if (files.empty()) {
      throw std::runtime_error("data.folder: " + (folder / tree.classes[label]).string() + ": class '" +
                               tree.classes[label] + "' has no JPEG files");
    }
    std::sort(files.begin(), files.end());
    for (auto& file : files) tree.samples.emplace_back(std::move(file), static_cast<int64_t>(label));
  }
  return tree;
}

ImageFolderData::ImageFolderData(const ImageTree& tree, LoaderOptions options, torch::Device device)
    : tree_(tree), options_(options), device_(device) {
  batches_per_pass_ = static_cast<int64_t>(tree.samples.size()) / options.batch_size;
  if (batches_per_pass_ == 0) {
    throw std::runtime_error("data.folder: " + tree.folder.string() + " has " + std::to_string(tree.samples.size()) +
                             " images, fewer than one batch (" + std::to_string(options.batch_size) + ")");
  }
  ImageTransforms::standard();  // read before the threads share it
  for (int64_t i = 0; i < options.workers; ++i) threads_.emplace_back([this] { load(); });
}

ImageFolderData::~ImageFolderData() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  room_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void ImageFolderData::load() {
  JpegDecoder decoder;
  std::vector<std::size_t> order;
  int64_t order_pass = -1;
  while (true) {
    int64_t index = 0;
    {
      std::unique_lock lock(mutex_);
      room_.wait(lock, [&] { return stopping_ || error_ || next_to_make_ - next_to_take_ < options_.prefetch; });
      if (stopping_ || error_) return;
      index = next_to_make_++;
    }
    try {
      auto batch = make_batch(index * options_.ranks + options_.rank, decoder, order, order_pass);
      std::lock_guard lock(mutex_);
      done_.emplace(index, std::move(batch));
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    ready_.notify_all();
  }
}

Batch ImageFolderData::make_batch(int64_t index, JpegDecoder& decoder, std::vector<std::size_t>& order,
                                  int64_t& order_pass) {
  const auto count = tree_.samples.size();
  const int64_t pass = index / batches_per_pass_;
  if (pass != order_pass) {
    order.resize(count);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::seed_seq seeds{options_.seed, static_cast<uint64_t>(pass)};
    std::mt19937_64 shuffle(seeds);
    std::shuffle(order.begin(), order.end(), shuffle);
    order_pass = pass;
  }
  const auto side = options_.side;
  const auto pinned = device_.is_cuda();
  auto inputs = torch::empty({options_.batch_size, 3, side, side}, torch::TensorOptions().pinned_memory(pinned));
  auto targets = torch::empty({options_.batch_size}, torch::TensorOptions().dtype(torch::kInt64).pinned_memory(pinned));
  float* pixels = inputs.data_ptr<float>();
  auto* labels = targets.data_ptr<int64_t>();
  const auto& transforms = ImageTransforms::standard();
  std::size_t position = static_cast<std::size_t>((index % batches_per_pass_) * options_.batch_size);
  for (int64_t j = 0; j < options_.batch_size; ++j, ++position) {
    // A file that does not decode gives way to the next of the pass.
    for (std::size_t tried = 0;; ++tried, ++position) {
      if (tried == count) throw std::runtime_error("data.folder: " + tree_.folder.string() + ": no file decodes");
      const auto& [file, label] = tree_.samples[order[position % count]];
      try {
        const auto image = decoder.decode(file);
        std::seed_seq seeds{options_.seed, static_cast<uint64_t>(index), static_cast<uint64_t>(j)};
        std::mt19937_64 random(seeds);
        transform_into(image, static_cast<int>(side), transforms, random, pixels + j * 3 * side * side);
        labels[j] = label;
        break;
      } catch (const std::runtime_error& error) {
        if (options_.fail_on_corrupt) {
          throw std::runtime_error(file.string() + ": " + error.what() + "; on_corrupt is fail");
        }
        std::lock_guard lock(mutex_);
        corrupt_.insert(file.string());
      }
    }
  }
  return {inputs, targets};
}

Batch ImageFolderData::take() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return error_ || done_.contains(next_to_take_); });
  if (error_ && !done_.contains(next_to_take_)) std::rethrow_exception(error_);
  auto batch = std::move(done_.at(next_to_take_));
  done_.erase(next_to_take_++);
  lock.unlock();
  room_.notify_all();
  return batch;
}

Batch ImageFolderData::next_on_host() { return take(); }

const Batch& ImageFolderData::peek() {
  if (!peeked_) {
    auto batch = take();
    current_ = Batch{batch.inputs.to(device_, /*non_blocking=*/true).contiguous(options_.layout),
                     batch.targets.to(device_, true)};
    peeked_ = true;
  }
  return *current_;
}

const Batch& ImageFolderData::next() {
  const auto& batch = peek();
  peeked_ = false;
  return batch;
}

std::set<std::string> ImageFolderData::corrupt_files() const {
  std::lock_guard lock(mutex_);
  return corrupt_;
}

}  // namespace ts::worker
