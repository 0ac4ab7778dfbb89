#include "runners/libtorch/data/jpeg_image.hpp"

#ifdef TORCHSWEEP_WITH_TURBOJPEG
#include <turbojpeg.h>
#endif

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "runners/libtorch/device.hpp"
#include "shared/schema.hpp"

namespace ts::worker {
namespace {

#ifdef TORCHSWEEP_WITH_TURBOJPEG
std::vector<unsigned char> read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot be read");
  std::vector<unsigned char> bytes(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) throw std::runtime_error("cannot be read");
  return bytes;
}
#endif

// One output pixel's source pixels and weights along an axis.
struct Taps {
  int first = 0;
  std::vector<float> weights;
};

// PIL's antialiased bilinear resampling of `length` source pixels starting
// at `offset` onto `out` pixels: a triangle filter widened by the scale
// when shrinking, so that no source pixel is skipped.
std::vector<Taps> bilinear_taps(int offset, int length, int out) {
  const double scale = static_cast<double>(length) / out;
  const double support = std::max(scale, 1.0);
  std::vector<Taps> taps(static_cast<std::size_t>(out));
  for (int o = 0; o < out; ++o) {
    const double center = (o + 0.5) * scale;
    const int low = std::max(0, static_cast<int>(std::floor(center - support)));
    const int high = std::min(length, static_cast<int>(std::ceil(center + support)));
    auto& tap = taps[static_cast<std::size_t>(o)];
    tap.first = offset + low;
    double total = 0;
    for (int i = low; i < high; ++i) {
      const double weight = std::max(0.0, 1.0 - std::abs((i + 0.5 - center) / support));
      tap.weights.push_back(static_cast<float>(weight));
      total += weight;
    }
    for (auto& weight : tap.weights) weight = static_cast<float>(weight / total);
  }
  return taps;
}

}  // namespace

const ImageTransforms& ImageTransforms::standard() {
  static const ImageTransforms transforms = [] {
    const auto file = nlohmann::json::parse(schema::text("transforms.json"));
    ImageTransforms t;
    const auto& crop = file.at("random_resized_crop");
    t.scale = crop.at("scale").get<std::array<double, 2>>();
    t.ratio = crop.at("ratio").get<std::array<double, 2>>();
    t.attempts = crop.at("attempts").get<int>();
    t.flip_probability = file.at("horizontal_flip").get<double>();
    t.mean = file.at("normalize").at("mean").get<std::array<float, 3>>();
    t.std = file.at("normalize").at("std").get<std::array<float, 3>>();
    return t;
  }();
  return transforms;
}

#ifdef TORCHSWEEP_WITH_TURBOJPEG
void require_jpeg_decoding() {}

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {
  if (handle_ == nullptr) throw std::runtime_error("TurboJPEG: cannot create a decompressor");
}

JpegDecoder::~JpegDecoder() { tjDestroy(handle_); }

RgbImage JpegDecoder::decode(const std::filesystem::path& file) {
  auto bytes = read_file(file);
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  // After an error the handle is made anew: TurboJPEG 2.1 leaves a failed
  // decompressor's state behind, and the next good file would fail too.
  const auto fail = [&](const char* what) {
    std::string message = std::string(what) + tjGetErrorStr2(handle_);
    tjDestroy(handle_);
    handle_ = tjInitDecompress();
    if (handle_ == nullptr) throw std::runtime_error("TurboJPEG: cannot create a decompressor");
    throw std::runtime_error(message);
  };
  if (tjDecompressHeader3(handle_, bytes.data(), bytes.size(), &width, &height, &subsampling, &colorspace) != 0) {
    fail("not a JPEG image: ");
  }
  RgbImage image{width, height, std::vector<uint8_t>(static_cast<std::size_t>(width) * height * 3)};
  if (tjDecompress2(handle_, bytes.data(), bytes.size(), image.pixels.data(), width, 0, height, TJPF_RGB,
                    TJFLAG_STOPONWARNING) != 0) {
    fail("does not decode: ");
  }
  return image;
}
#else
namespace {
const char* const without_turbojpeg =
    "data: this torchsweep-worker was built without TurboJPEG (libturbojpeg was not found at configure time), so it "
    "cannot decode imagefolder data; synthetic data runs";
}

void require_jpeg_decoding() { throw Unsupported(without_turbojpeg); }
JpegDecoder::JpegDecoder() : handle_(nullptr) { require_jpeg_decoding(); }
JpegDecoder::~JpegDecoder() = default;
RgbImage JpegDecoder::decode(const std::filesystem::path&) { throw Unsupported(without_turbojpeg); }
#endif

CropBox random_resized_crop(int width, int height, const ImageTransforms& t, std::mt19937_64& random) {
  const double area = static_cast<double>(width) * height;
  std::uniform_real_distribution<double> scale(t.scale[0], t.scale[1]);
  std::uniform_real_distribution<double> log_ratio(std::log(t.ratio[0]), std::log(t.ratio[1]));
  for (int attempt = 0; attempt < t.attempts; ++attempt) {
    const double target = area * scale(random);
    const double aspect = std::exp(log_ratio(random));
    const int w = static_cast<int>(std::lround(std::sqrt(target * aspect)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / aspect)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int y = std::uniform_int_distribution<int>(0, height - h)(random);
      const int x = std::uniform_int_distribution<int>(0, width - w)(random);
      return {x, y, w, h};
    }
  }
  // torchvision's fallback: the largest centred crop within the ratio range.
  int w = width, h = height;
  const double aspect = static_cast<double>(width) / height;
  if (aspect < t.ratio[0]) {
    h = static_cast<int>(std::lround(w / t.ratio[0]));
  } else if (aspect > t.ratio[1]) {
    w = static_cast<int>(std::lround(h * t.ratio[1]));
  }
  return {(width - w) / 2, (height - h) / 2, w, h};
}

void transform_into(const RgbImage& image, int side, const ImageTransforms& t, std::mt19937_64& random, float* chw) {
  const auto box = random_resized_crop(image.width, image.height, t, random);
  const bool flip = std::bernoulli_distribution(t.flip_probability)(random);
  const auto columns = bilinear_taps(box.x, box.width, side);
  const auto rows = bilinear_taps(box.y, box.height, side);
  // Horizontal pass over the crop's rows, then vertical, in float.
  std::vector<float> wide(static_cast<std::size_t>(box.height) * side * 3);
  for (int y = 0; y < box.height; ++y) {
    const uint8_t* source = image.pixels.data() + static_cast<std::size_t>(box.y + y) * image.width * 3;
    for (int x = 0; x < side; ++x) {
      const auto& tap = columns[static_cast<std::size_t>(x)];
      float sum[3] = {0, 0, 0};
      for (std::size_t k = 0; k < tap.weights.size(); ++k) {
        const uint8_t* pixel = source + (tap.first + static_cast<int>(k)) * 3;
        for (int c = 0; c < 3; ++c) sum[c] += tap.weights[k] * pixel[c];
      }
      const int to = flip ? side - 1 - x : x;
      for (int c = 0; c < 3; ++c) wide[(static_cast<std::size_t>(y) * side + to) * 3 + c] = sum[c];
    }
  }
  const std::size_t plane = static_cast<std::size_t>(side) * side;
  for (int y = 0; y < side; ++y) {
    const auto& tap = rows[static_cast<std::size_t>(y)];
    for (int x = 0; x < side; ++x) {
      float sum[3] = {0, 0, 0};
      for (std::size_t k = 0; k < tap.weights.size(); ++k) {
        const float* pixel = wide.data() + ((tap.first - box.y + static_cast<std::size_t>(k)) * side + x) * 3;
        for (int c = 0; c < 3; ++c) sum[c] += tap.weights[k] * pixel[c];
      }
      for (int c = 0; c < 3; ++c) {
        chw[c * plane + static_cast<std::size_t>(y) * side + x] = (sum[c] / 255.0f - t.mean[c]) / t.std[c];
      }
    }
  }
}

}  // namespace ts::worker
