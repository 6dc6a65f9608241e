// The .npy format (numpy/lib/format.py): encoding a tensor as a file's bytes and decoding bytes
// back, shared by the .npy functions and the members of .npz archives (lib/io/zip.hpp).
#pragma once

#include <string>
#include <string_view>

#include <tapeflow/core/tensor.hpp>

namespace tapeflow::io::npy {

/// The header of a .npy file holding `t` (magic, version, dict, padding: a multiple of 64 bytes).
/// Format 1.0, 2.0 when the dict needs more than 65535 bytes. bfloat16: InvalidArgumentError.
std::string encode_header(const Tensor& t);

/// The tensor a .npy file's bytes hold; `name` (the file, or "archive.npz: member.npy") goes into
/// every error. Malformed or truncated bytes: DataLossError; a dtype tapeflow cannot hold (object,
/// structured, complex, strings, uint64, ...): InvalidArgumentError. Never unpickles anything.
Tensor decode(std::string_view bytes, const std::string& name);

}  // namespace tapeflow::io::npy
