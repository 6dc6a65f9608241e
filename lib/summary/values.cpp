// Argument checks and payload encoding for each summary kind.
#include "summary/values.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/creation.hpp>

#include "summary/encoders.hpp"

namespace tapeflow::summary {
namespace {

SummaryValue make(std::string tag, const char* kind, const char* plugin) {
    if (tag.empty()) {  // TensorBoard drops values without a tag
        throw errors::InvalidArgumentError(
            fmt::format("summary.{}: the tag must not be empty", kind));
    }
    SummaryValue v;
    v.tag = std::move(tag);
    v.kind = kind;
    v.plugin_name = plugin;
    return v;
}

[[noreturn]] void bad(const char* op, const std::string& tag, const std::string& what) {
    throw errors::InvalidArgumentError(fmt::format("summary.{} '{}': {}", op, tag, what));
}

std::string shape_and_dtype(const Tensor& t) {
    return fmt::format("shape {} and dtype {}", t.shape().debug_string(), dtype_name(t.dtype()));
}

void require_defined(const char* op, const std::string& tag, const Tensor& t) {
    if (!t.defined()) bad(op, tag, "the tensor is undefined");
}

bool valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        int extra = 0;
        uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            extra = 1, cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2, cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            extra = 3, cp = c & 0x07;
        } else {
            return false;
        }
        if (i + extra >= s.size()) return false;  // truncated sequence
        for (int k = 1; k <= extra; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
        if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += extra + 1;
    }
    return true;
}

// A host float32 (or uint8) copy of `t`, as a CPU tensor whose raw_data can be read directly.
Tensor host_as(const Tensor& t, DType dtype) {
    Tensor host = t.cpu();
    return host.dtype() == dtype ? host : host.cast(dtype);
}

}  // namespace

std::string scoped_tag(std::string_view tag) {
    return current_name_scope() + std::string(tag);
}

SummaryValue scalar_value(std::string tag, double value) {
    SummaryValue v = make(std::move(tag), "scalar", "scalars");
    v.scalar_value = value;
    return v;
}

SummaryValue scalar_value(std::string tag, const Tensor& value) {
    require_defined("scalar", tag, value);
    if (value.num_elements() != 1) {
        bad("scalar", tag, "needs exactly one element, got " + shape_and_dtype(value));
    }
    // Always float32 rank 0, as tf.summary.scalar casts (TensorBoard's data server drops others).
    const Tensor host = host_as(value, DType::float32);
    SummaryValue v = make(std::move(tag), "scalar", "scalars");
    v.tensor = detail::make_constant(host.raw_data(), host.dtype(), 1, Shape{}, std::nullopt);
    v.scalar_value = host.item<double>();
    return v;
}

SummaryValue histogram_value(std::string tag, const Tensor& values, int buckets) {
    require_defined("histogram", tag, values);
    if (buckets < 0) bad("histogram", tag, fmt::format("buckets must be >= 0, got {}", buckets));
    const std::vector<double> data = values.to_vector<double>();
    for (double x : data) {
        if (!std::isfinite(x))
            bad("histogram", tag, fmt::format("values must be finite, got {}", x));
    }
    SummaryValue v = make(std::move(tag), "histogram", "histograms");
    v.tensor = constant(histogram_buckets(data, buckets), Shape{buckets, 3});
    return v;
}

SummaryValue image_value(std::string tag, const Tensor& images, int max_outputs) {
    require_defined("image", tag, images);
    const Shape& s = images.shape();
    const bool ok_dtype = images.dtype() == DType::uint8 || is_floating(images.dtype());
    if (s.rank() != 4 || s[3] < 1 || s[3] > 4 || !ok_dtype) {
        bad("image",
            tag,
            "images must be [N,H,W,C] with C in {1,2,3,4}, uint8 or float; got " +
                shape_and_dtype(images));
    }
    if (s[1] < 1 || s[2] < 1 || s[1] > (1 << 24) || s[2] > (1 << 24)) {
        bad("image", tag, "images need height and width >= 1, got " + shape_and_dtype(images));
    }
    if (max_outputs < 0)
        bad("image", tag, fmt::format("max_outputs must be >= 0, got {}", max_outputs));
    const int64_t n = std::min<int64_t>(s[0], max_outputs);
    const int64_t h = s[1], w = s[2], c = s[3];
    const int64_t per_image = h * w * c;
    SummaryValue v = make(std::move(tag), "image", "images");
    v.strings = {std::to_string(w), std::to_string(h)};
    std::vector<uint8_t> pixels;
    const Tensor host =
        host_as(images, images.dtype() == DType::uint8 ? DType::uint8 : DType::float32);
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t* img;
        if (host.dtype() == DType::uint8) {
            img = static_cast<const uint8_t*>(host.raw_data()) + i * per_image;
        } else {
            // TF's convert_image_dtype(..., uint8, saturate=True): x * 255.5, clamped, truncated.
            const float* src = static_cast<const float*>(host.raw_data()) + i * per_image;
            pixels.resize(static_cast<std::size_t>(per_image));
            for (int64_t k = 0; k < per_image; ++k) {
                const float x = src[k] * 255.5f;
                pixels[k] = static_cast<uint8_t>(x > 0 ? (x < 255 ? x : 255) : 0);  // NaN -> 0
            }
            img = pixels.data();
        }
        v.strings.push_back(
            encode_png(img, static_cast<int>(h), static_cast<int>(w), static_cast<int>(c)));
    }
    return v;
}

SummaryValue audio_value(std::string tag,
                         const Tensor& audio,
                         double sample_rate,
                         int max_outputs) {
    require_defined("audio", tag, audio);
    const Shape& s = audio.shape();
    if (s.rank() != 3 || s[2] < 1 || !is_floating(audio.dtype())) {
        bad("audio", tag, "audio must be float [N,T,C] with C >= 1; got " + shape_and_dtype(audio));
    }
    if (!(sample_rate >= 1 && sample_rate <= std::numeric_limits<int32_t>::max())) {
        bad("audio",
            tag,
            fmt::format("sample_rate must be a positive number of Hz, got {}", sample_rate));
    }
    if (s[1] * s[2] * 2 > std::numeric_limits<int32_t>::max() || s[2] > 65535) {
        bad("audio",
            tag,
            "clips longer than 2 GiB of 16-bit samples do not fit a WAV file; got " +
                shape_and_dtype(audio));
    }
    if (max_outputs < 0)
        bad("audio", tag, fmt::format("max_outputs must be >= 0, got {}", max_outputs));
    const int64_t n = std::min<int64_t>(s[0], max_outputs);
    const Tensor host = host_as(audio, DType::float32);
    const auto* samples = static_cast<const float*>(host.raw_data());
    SummaryValue v = make(std::move(tag), "audio", "audio");
    for (int64_t i = 0; i < n; ++i) {
        v.strings.push_back(encode_wav(samples + i * s[1] * s[2],
                                       s[1],
                                       static_cast<int>(s[2]),
                                       static_cast<int>(sample_rate)));
    }
    return v;
}

SummaryValue text_value(std::string tag, std::string_view text) {
    if (!valid_utf8(text))
        bad("text", tag, "the text is not valid UTF-8 (TensorBoard cannot show it)");
    SummaryValue v = make(std::move(tag), "text", "text");
    v.strings = {std::string(text)};
    return v;
}

}  // namespace tapeflow::summary
