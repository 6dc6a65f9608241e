// Keras' dtype policies (tf::keras::mixed_precision::Policy): the compute and variable dtypes of a
// layer. Layers take the global policy when they are made (layer.hpp). docs/mixed-precision.md.
#pragma once

#include <string>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::mixed_precision {

/// Keras' DTypePolicy: "mixed_float16" (compute float16, variables float32), "mixed_bfloat16"
/// (bfloat16, float32), or a dtype name ("float32", "float64", "float16", "bfloat16", ...) for
/// both. Another name raises InvalidArgumentError with Keras' message ("Cannot convert 'x' to a
/// mixed precision DTypePolicy. ...").
class Policy {
public:
    explicit Policy(std::string name);
    const std::string& name() const { return name_; }
    DType compute_dtype() const { return compute_; }
    DType variable_dtype() const { return variable_; }
    bool operator==(const Policy& other) const { return name_ == other.name_; }

private:
    std::string name_;
    DType compute_;
    DType variable_;
};

/// The policy layers take when they are made and Model.compile reads (Keras' set_dtype_policy);
/// starts as "float32". Process-wide, as in Keras.
void set_global_policy(const Policy& policy);
void set_global_policy(const std::string& name);
Policy global_policy();

}  // namespace tapeflow::keras::mixed_precision

TAPEFLOW_API_END
