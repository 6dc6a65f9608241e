// PNG decoding with libpng's transforms (as TensorFlow's png_io.cc): palettes and low bit depths
// expand to 8 bits, tRNS to alpha, 16 bits strip to 8, gray <-> RGB and alpha added or stripped
// to reach the channels asked for. libpng reports errors by longjmp: the setjmp frame holds no
// objects with destructors, and the message is rethrown after.
#include "image/png_codec.hpp"

#include <csetjmp>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <png.h>

#include <tapeflow/core/error.hpp>

namespace tapeflow::image::detail {
namespace {

struct ReadState {
    const std::string* data;
    std::size_t offset;
    char error[256];
};

void read_bytes(png_structp png, png_bytep out, png_size_t n) {
    auto* state = static_cast<ReadState*>(png_get_io_ptr(png));
    if (state->offset + n > state->data->size()) png_error(png, "unexpected end of PNG data");
    std::memcpy(out, state->data->data() + state->offset, n);
    state->offset += n;
}
void on_error(png_structp png, png_const_charp msg) {
    auto* state = static_cast<ReadState*>(png_get_error_ptr(png));
    std::strncpy(state->error, msg, sizeof state->error - 1);
    png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}

// Fills `out` (sized after the header is read) through `rows` (the row pointers): both belong to
// the caller, so a longjmp out of libpng skips no destructor here. False with state->error set
// when libpng failed.
bool decode(ReadState* state, int channels, DecodedPng* out, std::vector<png_bytep>* rows) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, state, on_error, on_warning);
    if (png == nullptr) return false;
    png_infop info = png_create_info_struct(png);
    if (info == nullptr || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, nullptr);
        return false;
    }
    png_set_read_fn(png, state, read_bytes);
    png_read_info(png, info);
    const int color = png_get_color_type(png, info);
    const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (png_get_bit_depth(png, info) == 16) png_set_strip_16(png);
    png_set_expand(png);  // palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha
    const bool file_color = (color & PNG_COLOR_MASK_COLOR) != 0;
    const bool file_alpha = (color & PNG_COLOR_MASK_ALPHA) != 0 || has_trns;
    const int file_channels = (file_color ? 3 : 1) + (file_alpha ? 1 : 0);
    const int want = channels == 0 ? file_channels : channels;
    const bool want_color = want >= 3, want_alpha = want == 2 || want == 4;
    if (want_color && !file_color) png_set_gray_to_rgb(png);
    if (!want_color && file_color) png_set_rgb_to_gray_fixed(png, 1, -1, -1);
    if (want_alpha && !file_alpha) png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
    if (!want_alpha && file_alpha) png_set_strip_alpha(png);
    if (png_get_interlace_type(png, info) != PNG_INTERLACE_NONE) png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const png_uint_32 width = png_get_image_width(png, info);
    const png_uint_32 height = png_get_image_height(png, info);
    if (png_get_channels(png, info) != want || png_get_bit_depth(png, info) != 8)
        png_error(png, "unsupported PNG layout after conversion");
    // TensorFlow's decoder refuses images whose pixel buffer does not fit an int.
    if (static_cast<uint64_t>(width) * height * static_cast<uint64_t>(want) >= (uint64_t{1} << 31))
        png_error(png, "PNG size too large for int");
    out->height = height;
    out->width = width;
    out->channels = want;
    out->pixels.resize(static_cast<std::size_t>(height) * width * static_cast<std::size_t>(want));
    rows->resize(height);
    for (png_uint_32 y = 0; y < height; ++y)
        (*rows)[y] = out->pixels.data() + static_cast<std::size_t>(y) * width * want;
    png_read_image(png, rows->data());
    png_read_end(png, nullptr);
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
}

}  // namespace

DecodedPng decode_png(const std::string& contents, int channels) {
    if (channels != 0 && channels != 1 && channels != 3 && channels != 4)
        throw errors::InvalidArgumentError(
            fmt::format("tf.io.decode_png: channels must be 0, 1, 3, or 4, got {}", channels));
    if (contents.size() < 8 ||
        png_sig_cmp(reinterpret_cast<png_const_bytep>(contents.data()), 0, 8) != 0)
        throw errors::InvalidArgumentError(
            "tf.io.decode_png: the data is not a PNG image (no PNG signature)");
    ReadState state{&contents, 0, {}};
    DecodedPng out;
    std::vector<png_bytep> rows;
    if (!decode(&state, channels, &out, &rows))
        throw errors::InvalidArgumentError(
            std::string("tf.io.decode_png: invalid PNG data: ") +
            (state.error[0] != '\0' ? state.error : "out of memory"));
    return out;
}

}  // namespace tapeflow::image::detail
