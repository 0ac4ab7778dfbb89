// The LibTorch worker's imagefolder loader (runners/libtorch/data): the tree as
// torchvision reads it, its errors naming the path, corrupt files skipped
// and counted or failing the job, batches that depend on the seed alone,
// and the transforms' arithmetic.
#include "runners/libtorch/data/image_folder.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cstdlib>
#include <fstream>

#include "runners/libtorch/data/jpeg_image.hpp"

namespace ts::worker {
namespace {

namespace fs = std::filesystem;

std::vector<unsigned char> jpeg_of(int width, int height, uint8_t red, uint8_t green, uint8_t blue) {
  std::vector<unsigned char> pixels;
  for (int i = 0; i < width * height; ++i) pixels.insert(pixels.end(), {red, green, blue});
  tjhandle handle = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(handle, pixels.data(), width, 0, height, TJPF_RGB, &out, &size, TJSAMP_444, 95, 0), 0);
  std::vector<unsigned char> bytes(out, out + size);
  tjFree(out);
  tjDestroy(handle);
  return bytes;
}

void write(const fs::path& file, const std::vector<unsigned char>& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

class ImageFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "image-folder-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    for (int i = 0; i < 6; ++i) {
      write(root_ / "b_class" / fmt::format("{}.jpg", i), jpeg_of(40 + 7 * i, 30 + 5 * i, 200, 20, 20));
      write(root_ / "a_class" / "nested" / fmt::format("{}.JPEG", i), jpeg_of(50, 20 + 9 * i, 20, 200, 20));
    }
    write(root_ / "a_class" / "notes.txt", {'h', 'i'});
  }
  void TearDown() override { fs::remove_all(root_); }

  LoaderOptions options(int64_t workers = 2, bool fail = false, int64_t rank = 0, int64_t ranks = 1) const {
    LoaderOptions options{4, 16, workers, 2, fail, 7};
    options.rank = rank;
    options.ranks = ranks;
    return options;
  }

  fs::path root_;
};

TEST_F(ImageFolder, ClassesAreSortedFoldersAndTheirJpegFilesAreFoundAtAnyDepth) {
  const auto tree = ImageTree::read(root_);
  EXPECT_EQ(tree.classes, (std::vector<std::string>{"a_class", "b_class"}));
  ASSERT_EQ(tree.samples.size(), 12u);
  EXPECT_EQ(tree.samples.front().first, root_ / "a_class" / "nested" / "0.JPEG");
  EXPECT_EQ(tree.samples.front().second, 0);
  EXPECT_EQ(tree.samples.back().second, 1);
}

TEST_F(ImageFolder, AMissingFolderATreeWithoutClassesAndAnEmptyClassNameThePath) {
  const auto message_of = [](const fs::path& folder) {
    try {
      ImageTree::read(folder);
    } catch (const std::runtime_error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of(root_ / "nope").find((root_ / "nope").string() + ": no such directory"), std::string::npos);
  EXPECT_NE(message_of(root_ / "a_class" / "nested").find("no class folders"), std::string::npos);
  fs::create_directories(root_ / "c_empty");
  EXPECT_NE(message_of(root_).find((root_ / "c_empty").string() + ": class 'c_empty' has no JPEG files"),
            std::string::npos);
}

TEST_F(ImageFolder, BatchesAreNormalisedImagesOfTheInputSizeAndTheSameWhateverTheThreads) {
  const auto tree = ImageTree::read(root_);
  ImageFolderData one(tree, options(1), torch::kCPU), three(tree, options(3), torch::kCPU);
  for (int i = 0; i < 5; ++i) {  // past the end of a pass (3 batches): a new shuffle
    const auto a = one.next_on_host();
    const auto b = three.next_on_host();
    EXPECT_EQ(a.inputs.sizes(), (std::vector<int64_t>{4, 3, 16, 16}));
    EXPECT_TRUE(torch::equal(a.inputs, b.inputs)) << "batch " << i;
    EXPECT_TRUE(torch::equal(a.targets, b.targets)) << "batch " << i;
    EXPECT_TRUE(a.targets.ge(0).all().item<bool>() && a.targets.le(1).all().item<bool>());
  }
  // Flat colours in, their normalised values out (red 200 of class b, say).
  const auto& t = ImageTransforms::standard();
  const auto batch = ImageFolderData(tree, options(), torch::kCPU).next_on_host();
  for (int64_t j = 0; j < 4; ++j) {
    const uint8_t red = batch.targets[j].item<int64_t>() == 1 ? 200 : 20;
    EXPECT_NEAR(batch.inputs[j][0].mean().item<float>(), (red / 255.0f - t.mean[0]) / t.std[0], 0.05);
  }
}

TEST_F(ImageFolder, RanksTakeTurnsInTheOneStream) {
  const auto tree = ImageTree::read(root_);
  ImageFolderData all(tree, options(), torch::kCPU), first(tree, options(2, false, 0, 2), torch::kCPU),
      second(tree, options(2, false, 1, 2), torch::kCPU);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(torch::equal(all.next_on_host().inputs, first.next_on_host().inputs)) << "batch " << 2 * i;
    EXPECT_TRUE(torch::equal(all.next_on_host().inputs, second.next_on_host().inputs)) << "batch " << 2 * i + 1;
  }
}

TEST_F(ImageFolder, ACorruptFileIsSkippedAndCountedOrFailsTheJobNamingIt) {
  auto truncated = jpeg_of(64, 64, 1, 2, 3);
  truncated.resize(truncated.size() / 2);
  write(root_ / "a_class" / "truncated.jpg", truncated);
  write(root_ / "b_class" / "png.jpg", {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
  const auto tree = ImageTree::read(root_);
  {
    ImageFolderData skipping(tree, options(), torch::kCPU);
    for (int i = 0; i < 8; ++i) skipping.next_on_host();  // more than two passes
    EXPECT_EQ(skipping.corrupt_files(), (std::set<std::string>{(root_ / "a_class" / "truncated.jpg").string(),
                                                               (root_ / "b_class" / "png.jpg").string()}));
  }
  ImageFolderData failing(tree, options(2, /*fail=*/true), torch::kCPU);
  try {
    for (int i = 0; i < 8; ++i) failing.next_on_host();
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_TRUE(message.find("truncated.jpg: ") != std::string::npos || message.find("png.jpg: ") != std::string::npos)
        << message;
    EXPECT_NE(message.find("on_corrupt is fail"), std::string::npos) << message;
  }
}

TEST(RandomResizedCrop, BoxesLieInsideTheImageAndExtremeShapesFallBackToACentredCrop) {
  const auto& t = ImageTransforms::standard();
  std::mt19937_64 random(3);
  for (int i = 0; i < 1000; ++i) {
    const int width = 1 + static_cast<int>(random() % 500), height = 1 + static_cast<int>(random() % 500);
    const auto box = random_resized_crop(width, height, t, random);
    ASSERT_GT(box.width, 0);
    ASSERT_GT(box.height, 0);
    ASSERT_LE(box.x + box.width, width);
    ASSERT_LE(box.y + box.height, height);
  }
  // 1000 x 10: no crop of ratio <= 4/3 fits in ten tries' area range; the fallback keeps the full height.
  auto strict = t;
  strict.attempts = 0;
  const auto box = random_resized_crop(1000, 10, strict, random);
  EXPECT_EQ(box.height, 10);
  EXPECT_EQ(box.width, 13);
  EXPECT_EQ(box.x, (1000 - 13) / 2);
}

}  // namespace
}  // namespace ts::worker
