// CSV input: tf.io.decode_csv (lines -> one tensor per column) and tf.data.experimental.CsvDataset
// (CSV files -> one element per record). Columns are numeric: float32, float64, int32 or int64
// (tapeflow tensors hold no strings).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::io {

/// How records are split (tf.io.decode_csv's keyword arguments).
struct CsvOptions {
    char field_delim = ',';
    /// A field that starts with '"' runs to the closing quote; "" inside is one quote.
    bool use_quote_delim = true;
    /// A field equal to this is missing (takes the column's default).
    std::string na_value = "";
    /// Only these columns (ascending indices) are parsed; record_defaults then has one per column
    /// selected. Empty: every column.
    std::vector<int64_t> select_cols = {};
};

/// tf.io.decode_csv: splits each record into its fields and parses field i as record_defaults[i]'s
/// dtype, giving one rank-1 tensor [records] per column. record_defaults[i] is a scalar (the value
/// of an empty or na_value field) or an empty tensor of shape [0] (the column is required).
/// InvalidArgumentError naming the record and the field for a wrong number of fields ("Expect 3
/// fields but have 2 in record 0"), a value that does not parse, a missing required field, or an
/// unsupported dtype.
std::vector<Tensor> decode_csv(const std::vector<std::string>& records,
                               const std::vector<Tensor>& record_defaults,
                               const CsvOptions& options = {});

}  // namespace tapeflow::io

TAPEFLOW_API_END
