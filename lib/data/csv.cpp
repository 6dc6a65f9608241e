// tf.io.decode_csv and tf.data.experimental.CsvDataset: RFC 4180 splitting (quoted fields, ""
// escapes) and TensorFlow's per-column parsing, with its error messages.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/core.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/data/csv.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>

#include "core/dtype_dispatch.hpp"

namespace tapeflow::io {
namespace {

[[noreturn]] void csv_fail(const std::string& message) {
    throw errors::InvalidArgumentError(message, "DecodeCSV");
}

// The fields of one record; quoted fields lose their quotes.
std::vector<std::string> split_record(const std::string& record,
                                      const CsvOptions& options,
                                      std::size_t index) {
    std::vector<std::string> fields;
    std::size_t i = 0;
    const std::size_t n = record.size();
    while (true) {
        std::string field;
        if (options.use_quote_delim && i < n && record[i] == '"') {
            ++i;
            while (true) {
                if (i >= n) {
                    csv_fail(
                        fmt::format("Quoted field has to end with quote followed by delim or "
                                    "end, in record {}",
                                    index));
                }
                if (record[i] == '"') {
                    if (i + 1 < n && record[i + 1] == '"') {  // "" is one quote
                        field += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += record[i++];
            }
            if (i < n && record[i] != options.field_delim) {
                csv_fail(
                    fmt::format("Quote inside a field has to be escaped by another quote, in "
                                "record {}",
                                index));
            }
        } else {
            while (i < n && record[i] != options.field_delim)
                field += record[i++];
        }
        fields.push_back(std::move(field));
        if (i >= n) return fields;
        ++i;  // the delimiter: another field follows, maybe empty
    }
}

template <class T>
T parse_number(const std::string& field, std::size_t record, std::size_t column) {
    T value{};
    const char* first = field.data();
    const char* last = first + field.size();
    while (first < last && *first == ' ')
        ++first;  // TensorFlow strips surrounding spaces
    while (last > first && last[-1] == ' ')
        --last;
    if constexpr (std::is_floating_point_v<T>) {
        // strtod accepts what TensorFlow's safe_strtof/strtod do (inf, nan, hex); from_chars
        // would refuse a leading '+'
        const std::string text(first, last);
        char* end = nullptr;
        const double parsed = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size()) return static_cast<T>(parsed);
    } else {
        const auto [ptr, ec] =
            std::from_chars(first + (first < last && *first == '+'), last, value);
        if (ec == std::errc() && ptr == last && first < last) return value;
    }
    csv_fail(fmt::format("Field {} in record {} is not a valid {}: {}",
                         column,
                         record,
                         std::is_same_v<T, float>    ? "float"
                         : std::is_same_v<T, double> ? "double"
                         : sizeof(T) == 4            ? "int32"
                                                     : "int64",
                         field));
}

}  // namespace

std::vector<Tensor> decode_csv(const std::vector<std::string>& records,
                               const std::vector<Tensor>& record_defaults,
                               const CsvOptions& options) {
    for (std::size_t c = 0; c < record_defaults.size(); ++c) {
        const Tensor& d = record_defaults[c];
        if (!d.defined() || (d.num_elements() > 1) || (d.num_elements() == 0 && d.rank() != 1)) {
            csv_fail(
                fmt::format("record_defaults[{}] must be a scalar or an empty [0] tensor, got {}",
                            c,
                            d.defined() ? d.shape().debug_string() : "an undefined tensor"));
        }
        const DType t = d.dtype();
        if (t != DType::float32 && t != DType::float64 && t != DType::int32 && t != DType::int64) {
            csv_fail(
                fmt::format("record_defaults[{}]: dtype {} is not supported (float32, float64, "
                            "int32 or int64)",
                            c,
                            dtype_name(t)));
        }
    }
    for (std::size_t k = 1; k < options.select_cols.size(); ++k) {
        if (options.select_cols[k] <= options.select_cols[k - 1]) {
            csv_fail("select_cols is not strictly increasing.");
        }
    }
    if (!options.select_cols.empty() && options.select_cols.size() != record_defaults.size()) {
        csv_fail(fmt::format("Expected {} record defaults for the selected columns, got {}",
                             options.select_cols.size(),
                             record_defaults.size()));
    }
    const std::size_t columns = record_defaults.size();
    std::vector<std::vector<std::string>> cells(columns, std::vector<std::string>(records.size()));
    for (std::size_t r = 0; r < records.size(); ++r) {
        std::vector<std::string> fields = split_record(records[r], options, r);
        if (options.select_cols.empty()) {
            if (fields.size() != columns) {
                csv_fail(fmt::format(
                    "Expect {} fields but have {} in record {}", columns, fields.size(), r));
            }
            for (std::size_t c = 0; c < columns; ++c)
                cells[c][r] = std::move(fields[c]);
        } else {
            for (std::size_t c = 0; c < columns; ++c) {
                const auto col = static_cast<std::size_t>(options.select_cols[c]);
                if (col >= fields.size()) {
                    csv_fail(fmt::format(
                        "Expect {} fields but have {} in record {}", col + 1, fields.size(), r));
                }
                cells[c][r] = std::move(fields[col]);
            }
        }
    }
    std::vector<Tensor> out;
    const auto n = static_cast<int64_t>(records.size());
    for (std::size_t c = 0; c < columns; ++c) {
        const Tensor& def = record_defaults[c];
        visit_dtype(def.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
                std::vector<T> values(records.size());
                for (std::size_t r = 0; r < records.size(); ++r) {
                    const std::string& field = cells[c][r];
                    if (field.empty() || field == options.na_value) {
                        if (def.num_elements() == 0) {
                            csv_fail(fmt::format(
                                "Field {} is required but missing in record {}!", c, r));
                        }
                        values[r] = def.item<T>();
                    } else {
                        values[r] = parse_number<T>(field, r, c);
                    }
                }
                out.push_back(constant(values, Shape{n}));
            }
        });
    }
    return out;
}

}  // namespace tapeflow::io

namespace tapeflow::data {

Dataset<std::vector<Tensor>> CsvDataset(std::vector<std::string> files,
                                        std::vector<Tensor> record_defaults,
                                        bool header,
                                        io::CsvOptions options) {
    (void)io::decode_csv({}, record_defaults, options);  // argument errors now, not at iteration
    auto lines = from_vector(std::move(files))
                     .interleave(
                         [header](const std::string& path) {
                             return TextLineDataset({path}).skip(header ? 1 : 0);
                         },
                         1);
    return lines.map([defaults = std::move(record_defaults),
                      options = std::move(options)](const std::string& line) {
        std::vector<Tensor> fields = io::decode_csv({line}, defaults, options);
        for (Tensor& f : fields)
            f = reshape(f, Shape{});
        return fields;
    });
}

}  // namespace tapeflow::data
