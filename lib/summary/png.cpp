// PNG encoding through libpng into memory. libpng reports errors by longjmp: the setjmp frame
// below holds no objects with destructors, and the error text is rethrown as InternalError after.
#include <csetjmp>
#include <cstring>

#include <png.h>

#include <tapeflow/core/error.hpp>

#include "summary/encoders.hpp"

namespace tapeflow::summary {
namespace {

struct PngState {
    std::string* out;
    char error[256];
};

void write_bytes(png_structp png, png_bytep data, png_size_t n) {
    static_cast<PngState*>(png_get_io_ptr(png))
        ->out->append(reinterpret_cast<const char*>(data), n);
}
void flush_nothing(png_structp) {}
void on_error(png_structp png, png_const_charp msg) {
    auto* state = static_cast<PngState*>(png_get_error_ptr(png));
    std::strncpy(state->error, msg, sizeof state->error - 1);
    png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}

// Returns false (with state->error set) when libpng failed.
bool encode(PngState* state, const uint8_t* pixels, int height, int width, int channels) {
    static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY,
                                          PNG_COLOR_TYPE_GRAY_ALPHA,
                                          PNG_COLOR_TYPE_RGB,
                                          PNG_COLOR_TYPE_RGB_ALPHA};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, state, on_error, on_warning);
    if (png == nullptr) return false;
    png_infop info = png_create_info_struct(png);
    if (info == nullptr || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return false;
    }
    png_set_write_fn(png, state, write_bytes, flush_nothing);
    png_set_IHDR(png,
                 info,
                 static_cast<png_uint_32>(width),
                 static_cast<png_uint_32>(height),
                 8,
                 kColorTypes[channels - 1],
                 PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    const std::size_t stride = static_cast<std::size_t>(width) * channels;
    for (int y = 0; y < height; ++y)
        png_write_row(png, pixels + y * stride);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return true;
}

}  // namespace

std::string encode_png(const uint8_t* pixels, int height, int width, int channels) {
    std::string out;
    PngState state{&out, {}};
    if (!encode(&state, pixels, height, width, channels)) {
        throw errors::InternalError(std::string("PNG encoding failed: ") +
                                    (state.error[0] != '\0' ? state.error : "out of memory"));
    }
    return out;
}

}  // namespace tapeflow::summary
