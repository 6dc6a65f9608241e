// GradientTape: records the ops run while it is alive and computes gradients by walking the record
// backward (TensorFlow 2's tf.GradientTape, including nested tapes, jacobians, custom gradients).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <tapeflow/autograd/gradient.hpp>
#include <tapeflow/autograd/graph.hpp>
#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

enum class UnconnectedGradients { none, zero };
/// How several gradient contributions to one tensor are summed (results agree to rounding; the
/// peak memory differs): add_n keeps all until the producer is reached and sums them in one op;
/// experimental_tree sums pairwise as they arrive; default_ and experimental_accumulate_n keep one
/// running sum, freeing each contribution as it arrives.
enum class AggregationMethod { add_n, default_, experimental_tree, experimental_accumulate_n };

struct GradientOptions {
    std::vector<Tensor> output_gradients = {};
    UnconnectedGradients unconnected_gradients = UnconnectedGradients::none;
    AggregationMethod aggregation_method = AggregationMethod::default_;
};

/// Options of GradientTape::jacobian and batch_jacobian (TensorFlow's keyword arguments).
struct JacobianOptions {
    UnconnectedGradients unconnected_gradients = UnconnectedGradients::none;
    /// Target rows per vectorized backward walk (each walk holds this many copies of every
    /// gradient). 0: automatic, all rows at once unless rows x max(target, source) elements exceed
    /// kAutoJacobianElements, then as many rows as fit (at least 1).
    int64_t parallel_iterations = 0;
    /// true: vectorized walks (TensorFlow's pfor). false: one backward walk per target element (per
    /// target column for batch_jacobian); the tape must then be persistent (RuntimeError).
    bool experimental_use_pfor = true;
};
/// The automatic parallel_iterations bound: about 16M elements (64 MB of float32) per gradient.
inline constexpr int64_t kAutoJacobianElements = int64_t{1} << 24;

struct TapeState;

/// RAII pause of a tape's recording (GradientTape::stop_recording).
class [[nodiscard]] StopRecording {
public:
    explicit StopRecording(std::shared_ptr<TapeState> tape);
    ~StopRecording();
    StopRecording(const StopRecording&) = delete;
    StopRecording& operator=(const StopRecording&) = delete;

private:
    std::shared_ptr<TapeState> tape_;
};

/// Records from construction to destruction (TensorFlow's `with tf.GradientTape() as tape:`).
///
///     tf::Variable w(tf::constant({1.f, 2.f}));
///     tf::GradientTape tape;
///     auto loss = tf::reduce_sum(tf::square(w));
///     tf::Tensor dw = tape.gradient(loss, w);          // [2. 4.]
///
/// An op is recorded when one of its inputs is watched (a watched tensor or variable, or the output
/// of a recorded op) and has a floating dtype. Trainable variables read while recording are watched
/// automatically unless watch_accessed_variables is false. A tape belongs to the thread that made
/// it.
class GradientTape {
public:
    explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true);
    ~GradientTape();
    GradientTape(const GradientTape&) = delete;
    GradientTape& operator=(const GradientTape&) = delete;

    void watch(const Tensor& tensor);
    void watch(const Variable& variable);
    void watch(const std::vector<Tensor>& tensors);
    void watch(const std::vector<Variable>& variables);
    /// Pauses recording until the returned guard is destroyed. RuntimeError on a consumed tape.
    [[nodiscard]] StopRecording stop_recording();
    /// Forgets everything recorded so far (the tape keeps recording).
    void reset();
    /// Variables watched so far (automatically or explicitly), in creation order.
    std::vector<Variable> watched_variables() const;

    /// d(sum of targets)/d(sources). A non-persistent tape allows one gradient() or jacobian() call
    /// (RuntimeError afterwards). Sources no recorded path connects give an undefined Gradient, or
    /// zeros with UnconnectedGradients::zero.
    Gradient gradient(const Tensor& target,
                      const Tensor& source,
                      const GradientOptions& options = {});
    Gradient gradient(const Tensor& target,
                      const Variable& source,
                      const GradientOptions& options = {});
    std::vector<Gradient> gradient(const Tensor& target,
                                   const std::vector<Tensor>& sources,
                                   const GradientOptions& options = {});
    std::vector<Gradient> gradient(const Tensor& target,
                                   const std::vector<Variable>& sources,
                                   const GradientOptions& options = {});
    std::vector<Gradient> gradient(const std::vector<Tensor>& targets,
                                   const std::vector<Tensor>& sources,
                                   const GradientOptions& options = {});
    std::vector<Gradient> gradient(const std::vector<Tensor>& targets,
                                   const std::vector<Variable>& sources,
                                   const GradientOptions& options = {});

    /// Shape target.shape + source.shape: entry [i..., j...] = d target[i...] / d source[j...].
    /// Computed by vectorized backward walks (docs/autograd.md "How jacobians are computed").
    Tensor jacobian(const Tensor& target,
                    const Tensor& source,
                    UnconnectedGradients unconnected = UnconnectedGradients::none);
    Tensor jacobian(const Tensor& target,
                    const Variable& source,
                    UnconnectedGradients unconnected = UnconnectedGradients::none);
    Tensor jacobian(const Tensor& target, const Tensor& source, const JacobianOptions& options);
    Tensor jacobian(const Tensor& target, const Variable& source, const JacobianOptions& options);
    /// target [b, y...], source [b, x...] -> [b, y..., x...]: per-example jacobians (the sum over
    /// the batch of target[:, j] differentiated, as TensorFlow does). Unconnected: zeros.
    Tensor batch_jacobian(const Tensor& target,
                          const Tensor& source,
                          UnconnectedGradients unconnected = UnconnectedGradients::none);
    Tensor batch_jacobian(const Tensor& target,
                          const Tensor& source,
                          const JacobianOptions& options);

    /// The ops recorded so far, with names from name_scope (for TensorBoard's graph tab).
    Graph graph() const;

    const std::shared_ptr<TapeState>& state() const { return state_; }

private:
    std::shared_ptr<TapeState> state_;
};

/// Custom gradient: `forward` runs unrecorded; tapes record one op whose gradient is `backward`,
/// called with the inputs, the output and the upstream gradient, returning one gradient per input
/// (undefined = none). The ops `backward` runs are recorded by outer tapes (higher order works).
Tensor custom_gradient(
    const std::vector<Tensor>& inputs,
    std::function<Tensor(const std::vector<Tensor>& inputs)> forward,
    std::function<std::vector<Tensor>(
        const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& upstream)> backward);

}  // namespace tapeflow

TAPEFLOW_API_END
