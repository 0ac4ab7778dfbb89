#pragma once
// One training sample from a JPEG file (docs/data.md): decoded with
// libjpeg-turbo, then torchvision's training transforms, their figures from
// schemas/transforms.json: a random resized crop to side x side (resized
// with an antialiased bilinear filter, as PIL's), a random horizontal flip,
// and normalisation into float CHW.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <vector>

namespace ts::worker {

struct ImageTransforms {
  std::array<double, 2> scale{}, ratio{};  // of the random resized crop
  int attempts = 10;
  double flip_probability = 0.5;
  std::array<float, 3> mean{}, std{};
  // schemas/transforms.json, read once.
  static const ImageTransforms& standard();
};

struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // height x width x 3
};

// Throws Unsupported when this worker was built without TurboJPEG (a GPU
// node's image may lack it): imagefolder jobs are then unsupported.
void require_jpeg_decoding();

// A TurboJPEG decompressor: one per loader thread (a handle is not shared).
class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  // The file's pixels; throws std::runtime_error saying why a file is not a
  // whole JPEG image (a truncated one included: warnings stop decoding).
  RgbImage decode(const std::filesystem::path& file);

 private:
  void* handle_;  // tjhandle
};

// The crop's rectangle in `image`, as torchvision's RandomResizedCrop.get_params.
struct CropBox {
  int x = 0, y = 0, width = 0, height = 0;
};
CropBox random_resized_crop(int width, int height, const ImageTransforms& transforms, std::mt19937_64& random);

// The transformed sample written to `chw` (3 x side x side floats).
void transform_into(const RgbImage& image, int side, const ImageTransforms& transforms, std::mt19937_64& random,
                    float* chw);

}  // namespace ts::worker
