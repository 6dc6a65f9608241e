// 16-bit PCM WAV files, byte for byte as TensorFlow's wav_io.cc EncodeAudioAsS16LEWav writes them.
#include <algorithm>
#include <cmath>

#include "summary/encoders.hpp"

namespace tapeflow::summary {
namespace {

void put_u16(std::string& out, uint32_t v) {
    out += static_cast<char>(v & 0xFF);
    out += static_cast<char>((v >> 8) & 0xFF);
}
void put_u32(std::string& out, uint32_t v) {
    put_u16(out, v & 0xFFFF);
    put_u16(out, v >> 16);
}

}  // namespace

std::string encode_wav(const float* samples, int64_t frames, int channels, int sample_rate) {
    const auto data_bytes = static_cast<uint32_t>(frames * channels * 2);
    std::string out;
    out.reserve(44 + data_bytes);
    out += "RIFF";
    put_u32(out, 36 + data_bytes);  // file size - 8
    out += "WAVEfmt ";
    put_u32(out, 16);  // fmt chunk size
    put_u16(out, 1);   // PCM
    put_u16(out, static_cast<uint32_t>(channels));
    put_u32(out, static_cast<uint32_t>(sample_rate));
    put_u32(out, static_cast<uint32_t>(sample_rate * channels * 2));  // byte rate
    put_u16(out, static_cast<uint32_t>(channels * 2));                // block align
    put_u16(out, 16);                                                 // bits per sample
    out += "data";
    put_u32(out, data_bytes);
    for (int64_t i = 0; i < frames * channels; ++i) {
        const float x = samples[i];
        const float scaled = std::isnan(x) ? 0.0f : std::round(x * 32768.0f);
        const auto s = static_cast<int16_t>(std::clamp(scaled, -32768.0f, 32767.0f));
        put_u16(out, static_cast<uint16_t>(s));
    }
    return out;
}

}  // namespace tapeflow::summary
