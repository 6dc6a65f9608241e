// tf::data: lazily evaluated, re-iterable input pipelines, like tf.data.
// A Dataset<T> is a recipe; begin() starts one iteration, whose stages (and threads, for parallel
// map, prefetch and parallel interleave) belong to the iterator and stop when it is destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/csv.hpp>
#include <tapeflow/data/parse_example.hpp>
#include <tapeflow/data/source.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::data {

/// Let the library pick the parallelism (tf.data.AUTOTUNE): the number of hardware threads for
/// map and interleave, a small buffer for prefetch.
inline constexpr int AUTOTUNE = -1;

template <class T>
class Dataset;

namespace detail {

template <class T>
struct IsDataset : std::false_type {};
template <class T>
struct IsDataset<Dataset<T>> : std::true_type {};

/// A small, fast generator with the same numbers on every platform (unlike <random>'s
/// distributions); shuffle's only need is an index into its buffer.
struct SplitMix64 {
    uint64_t state;
    uint64_t operator()() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
};

/// A Source whose next() is a callable (usually a mutable lambda owning its upstream).
template <class T, class F>
class FnSource final : public Source<T> {
public:
    explicit FnSource(F f) : f_(std::move(f)) {}
    std::optional<T> next() override { return f_(); }

private:
    F f_;
};
template <class T, class F>
SourcePtr<T> make_source(F f) {
    return std::make_unique<FnSource<T, F>>(std::move(f));
}

// Non-template helpers, in lib/data/.
/// num_parallel_calls / cycle_length: AUTOTUNE -> hardware threads; < 1 -> InvalidArgumentError.
int resolve_parallelism(int64_t value, const char* what);
/// buffer_size, batch_size, num_shards, ...: InvalidArgumentError naming `what` unless `ok`.
void check_argument(bool ok, const char* what, int64_t value, const char* requirement);
/// A seed for a shuffle without one: derived from the global seed (tf::random::set_seed) and a
/// counter when one is set, otherwise nondeterministic.
uint64_t fresh_seed();
/// Counts the iterations of a reshuffling shuffle (atomically: iterations may start on several
/// threads). Kept in lib/data so this header needs no <atomic>.
struct EpochCounter;
std::shared_ptr<EpochCounter> make_epoch_counter();
uint64_t next_epoch(EpochCounter& counter);
/// The seed of iteration `epoch` of a reshuffling shuffle.
uint64_t mix_seed(uint64_t seed, uint64_t epoch);
/// Stacks each component of the elements along a new axis 0 (InvalidArgumentError naming the
/// component and the shapes when they differ).
std::vector<Tensor> stack_batch(std::vector<std::vector<Tensor>>& elements);
Tensor stack_batch(std::vector<Tensor>& elements);

/// batch() of Tensor or std::vector<Tensor> stacks; of anything else it gathers a std::vector.
template <class T>
struct BatchOf {
    using type = std::vector<T>;
};
template <>
struct BatchOf<Tensor> {
    using type = Tensor;
};
template <>
struct BatchOf<std::vector<Tensor>> {
    using type = std::vector<Tensor>;
};

template <class T>
typename BatchOf<T>::type make_batch(std::vector<T>&& elements) {
    if constexpr (std::is_same_v<T, Tensor> || std::is_same_v<T, std::vector<Tensor>>)
        return stack_batch(elements);
    else
        return std::move(elements);
}

}  // namespace detail

/// A lazily evaluated, re-iterable pipeline of elements of type T (tf.data.Dataset).
///
///     auto ds = tf::data::TFRecordDataset({"train.tfrecord"})
///                   .map(parse, 4)                  // 4 threads, order kept
///                   .shuffle(10000, 42)
///                   .batch(32)
///                   .prefetch(2);                   // a producer thread fills a queue of 2
///     for (const std::vector<tf::Tensor>& batch : ds) train_step(batch);
///
/// Copies are cheap and share the recipe. Every transformation returns a new Dataset and leaves
/// this one usable. Callables are invoked as const with `const T&`; with num_parallel_calls > 1
/// they run on several threads at once. An error in any stage (a corrupt record, an exception
/// thrown by a map function) is rethrown with its type when the consumer reaches that element;
/// elements after it can still be read.
template <class T>
class Dataset {
public:
    using element_type = T;
    /// Starts one iteration: builds the chain of sources (and their threads).
    using Factory = std::function<detail::SourcePtr<T>()>;

    /// A dataset from a factory of sources (how new kinds of sources are added).
    explicit Dataset(Factory make) : make_(std::make_shared<const Factory>(std::move(make))) {}

    /// A fresh running iteration (what begin() wraps).
    detail::SourcePtr<T> make_source() const { return (*make_)(); }

    /// f(element) for each element, in order. num_parallel_calls > 1 (or AUTOTUNE) runs f on
    /// that many threads, a few elements ahead, and still returns results in input order.
    template <class F>
    auto map(F f, int num_parallel_calls = 1) const {
        using U = std::decay_t<std::invoke_result_t<const F&, const T&>>;
        auto fn = std::make_shared<const F>(std::move(f));
        const int workers = num_parallel_calls == 1 ? 1
                                                    : detail::resolve_parallelism(
                                                          num_parallel_calls, "num_parallel_calls");
        return Dataset<U>([self = *this, fn, workers]() -> detail::SourcePtr<U> {
            auto up = self.make_source();
            if (workers == 1) {
                return detail::make_source<U>([up = std::move(up), fn]() -> std::optional<U> {
                    auto x = up->next();
                    if (!x) return std::nullopt;
                    return std::optional<U>((*fn)(std::as_const(*x)));
                });
            }
            return std::make_unique<detail::OrderedStage<T, U>>(
                std::move(up),
                [fn](T&& x) { return (*fn)(std::as_const(x)); },
                workers,
                2 * static_cast<int64_t>(workers));
        });
    }

    /// The elements for which predicate(element) is true.
    template <class P>
    Dataset<T> filter(P predicate) const {
        auto pred = std::make_shared<const P>(std::move(predicate));
        return Dataset<T>([self = *this, pred] {
            return detail::make_source<T>([up = self.make_source(), pred]() -> std::optional<T> {
                while (auto x = up->next())
                    if ((*pred)(std::as_const(*x))) return x;
                return std::nullopt;
            });
        });
    }

    /// Shuffles with a buffer of `buffer_size` elements (TensorFlow's algorithm: fill the buffer,
    /// emit a uniformly chosen element, refill). With a seed the order is reproducible; with
    /// reshuffle_each_iteration every iteration (each begin(), each pass of a later repeat) uses
    /// another order, still the same sequence of orders for the same seed.
    Dataset<T> shuffle(int64_t buffer_size,
                       std::optional<uint64_t> seed = {},
                       bool reshuffle_each_iteration = true) const {
        detail::check_argument(buffer_size > 0, "buffer_size", buffer_size, "greater than zero");
        const uint64_t base = seed ? *seed : detail::fresh_seed();
        auto epochs = detail::make_epoch_counter();
        return Dataset<T>([self = *this, buffer_size, base, reshuffle_each_iteration, epochs] {
            const uint64_t epoch = reshuffle_each_iteration ? detail::next_epoch(*epochs) : 0;
            return detail::make_source<T>([up = self.make_source(),
                                           buffer = std::vector<T>(),
                                           buffer_size,
                                           done = false,
                                           rng = detail::SplitMix64{detail::mix_seed(
                                               base, epoch)}]() mutable -> std::optional<T> {
                while (!done && static_cast<int64_t>(buffer.size()) < buffer_size) {
                    auto x = up->next();
                    if (!x)
                        done = true;
                    else
                        buffer.push_back(std::move(*x));
                }
                if (buffer.empty()) return std::nullopt;
                const std::size_t i = static_cast<std::size_t>(rng() % buffer.size());
                std::swap(buffer[i], buffer.back());
                std::optional<T> out(std::move(buffer.back()));
                buffer.pop_back();
                return out;
            });
        });
    }

    /// Groups `batch_size` consecutive elements. For T = std::vector<Tensor> each component is
    /// stacked along a new axis 0 (T = Tensor likewise); other types give std::vector<T>. The
    /// last batch may be smaller, unless drop_remainder.
    auto batch(int64_t batch_size, bool drop_remainder = false) const {
        detail::check_argument(batch_size > 0, "batch_size", batch_size, "greater than zero");
        using B = typename detail::BatchOf<T>::type;
        return Dataset<B>([self = *this, batch_size, drop_remainder] {
            return detail::make_source<B>([up = self.make_source(),
                                           batch_size,
                                           drop_remainder,
                                           done = false]() mutable -> std::optional<B> {
                if (done) return std::nullopt;
                std::vector<T> elements;
                elements.reserve(static_cast<std::size_t>(batch_size < 4096 ? batch_size : 4096));
                while (static_cast<int64_t>(elements.size()) < batch_size) {
                    auto x = up->next();
                    if (!x) {
                        done = true;
                        break;
                    }
                    elements.push_back(std::move(*x));
                }
                if (elements.empty() ||
                    (drop_remainder && static_cast<int64_t>(elements.size()) < batch_size))
                    return std::nullopt;
                return detail::make_batch(std::move(elements));
            });
        });
    }

    /// The elements `count` times over (-1: forever). Each pass is a new iteration of this
    /// dataset, so an earlier shuffle reshuffles. Repeating an empty dataset forever ends.
    Dataset<T> repeat(int64_t count = -1) const {
        return Dataset<T>([self = *this, count] {
            return detail::make_source<T>(
                [self,
                 count,
                 epoch = int64_t(0),
                 produced = false,
                 current = detail::SourcePtr<T>()]() mutable -> std::optional<T> {
                    for (;;) {
                        if (count >= 0 && epoch >= count) return std::nullopt;
                        if (!current) {
                            current = self.make_source();
                            produced = false;
                        }
                        if (auto x = current->next()) {
                            produced = true;
                            return x;
                        }
                        current.reset();
                        ++epoch;
                        if (!produced && count < 0) return std::nullopt;
                    }
                });
        });
    }

    /// The first `count` elements (-1: all).
    Dataset<T> take(int64_t count) const {
        return Dataset<T>([self = *this, count] {
            return detail::make_source<T>(
                [up = self.make_source(), count, taken = int64_t(0)]() mutable -> std::optional<T> {
                    if (count >= 0 && taken >= count) return std::nullopt;
                    auto x = up->next();
                    if (x) ++taken;
                    return x;
                });
        });
    }

    /// All but the first `count` elements (-1: none).
    Dataset<T> skip(int64_t count) const {
        return Dataset<T>([self = *this, count] {
            return detail::make_source<T>(
                [up = self.make_source(), count, skipped = false]() mutable -> std::optional<T> {
                    if (!skipped) {
                        skipped = true;
                        for (int64_t i = 0; count < 0 || i < count; ++i)
                            if (!up->next()) return std::nullopt;
                    }
                    return up->next();
                });
        });
    }

    /// Every num_shards-th element, starting at `index` (the elements i with i % num_shards ==
    /// index): the shards 0..num_shards-1 partition the dataset.
    Dataset<T> shard(int64_t num_shards, int64_t index) const {
        detail::check_argument(num_shards > 0, "num_shards", num_shards, "greater than zero");
        detail::check_argument(
            index >= 0 && index < num_shards, "index", index, "in [0, num_shards)");
        return Dataset<T>([self = *this, num_shards, index] {
            return detail::make_source<T>([up = self.make_source(),
                                           num_shards,
                                           index,
                                           position = int64_t(0)]() mutable -> std::optional<T> {
                while (auto x = up->next())
                    if (position++ % num_shards == index) return x;
                return std::nullopt;
            });
        });
    }

    /// A producer thread reads ahead into a queue of `buffer_size` elements (AUTOTUNE: 2; 0: no
    /// thread), so producing the next element overlaps the consumer's work on this one.
    Dataset<T> prefetch(int64_t buffer_size) const {
        detail::check_argument(buffer_size >= 0 || buffer_size == AUTOTUNE,
                               "buffer_size",
                               buffer_size,
                               "non-negative or AUTOTUNE");
        if (buffer_size == 0) return *this;
        const int64_t capacity = buffer_size == AUTOTUNE ? 2 : buffer_size;
        return Dataset<T>([self = *this, capacity]() -> detail::SourcePtr<T> {
            return std::make_unique<detail::OrderedStage<T, T>>(
                self.make_source(), [](T&& x) { return std::move(x); }, 1, capacity);
        });
    }

    /// f(element) -> Dataset<U> for each element; the elements of `cycle_length` such datasets
    /// are interleaved one at a time (block length 1), in TensorFlow's order. With
    /// num_parallel_calls > 1 (or AUTOTUNE) each open dataset is read ahead on its own thread;
    /// the order stays the same.
    template <class F>
    auto interleave(F f, int64_t cycle_length, int num_parallel_calls = 1) const {
        using D = std::decay_t<std::invoke_result_t<const F&, const T&>>;
        static_assert(detail::IsDataset<D>::value, "interleave: f must return a Dataset");
        using U = typename D::element_type;
        const auto cycle =
            static_cast<std::size_t>(detail::resolve_parallelism(cycle_length, "cycle_length"));
        const bool parallel =
            num_parallel_calls != 1 &&
            detail::resolve_parallelism(num_parallel_calls, "num_parallel_calls") > 1;
        auto fn = std::make_shared<const F>(std::move(f));
        return Dataset<U>([self = *this, fn, cycle, parallel] {
            return detail::make_source<U>([input = self.make_source(),
                                           fn,
                                           cycle,
                                           parallel,
                                           slots = std::vector<detail::SourcePtr<U>>(cycle),
                                           index = std::size_t(0),
                                           open = std::size_t(0),
                                           input_done = false]() mutable -> std::optional<U> {
                while (!input_done || open > 0) {
                    auto& slot = slots[index];
                    if (slot) {
                        auto x = slot->next();
                        if (x) {
                            index = (index + 1) % cycle;
                            return x;
                        }
                        slot.reset();
                        --open;
                        index = (index + 1) % cycle;
                    } else if (!input_done) {
                        auto x = input->next();
                        if (!x) {
                            input_done = true;
                            continue;
                        }
                        D inner = (*fn)(std::as_const(*x));
                        slot = parallel ? inner.prefetch(16).make_source() : inner.make_source();
                        ++open;
                    } else {
                        index = (index + 1) % cycle;
                    }
                }
                return std::nullopt;
            });
        });
    }

    /// Marks the end of an iteration.
    struct Sentinel {};

    /// An input iterator over one iteration; it owns the pipeline's sources and threads.
    class Iterator {
    public:
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using reference = const T&;
        using pointer = const T*;

        Iterator() = default;
        explicit Iterator(detail::SourcePtr<T> source) : source_(std::move(source)) { advance(); }

        const T& operator*() const { return *current_; }
        const T* operator->() const { return &*current_; }
        Iterator& operator++() {
            advance();
            return *this;
        }
        void operator++(int) { advance(); }
        friend bool operator==(const Iterator& it, Sentinel) { return !it.current_; }

    private:
        // At the end the sources are released at once, so their threads stop before the loop
        // even leaves. An error leaves the iterator at "end" but alive: ++ reads on after it.
        void advance() {
            current_.reset();
            if (!source_) return;
            current_ = source_->next();
            if (!current_) source_.reset();
        }

        detail::SourcePtr<T> source_;
        std::optional<T> current_;
    };

    /// Starts an iteration (and its threads) and reads the first element.
    Iterator begin() const { return Iterator(make_source()); }
    Sentinel end() const { return {}; }

    /// TF1's iterator (tf.compat.v1.data.make_one_shot_iterator): get_next() returns the next
    /// element and raises OutOfRangeError ("End of sequence") at the end of input, as
    /// sess.run(iterator.get_next()) does, so queue-era loops that stop on OutOfRangeError port
    /// line by line. get_next() may be called from several threads.
    class OneShotIterator {
    public:
        explicit OneShotIterator(detail::SourcePtr<T> source)
            : state_(std::make_shared<State>(std::move(source))) {}

        T get_next() {
            const std::lock_guard lock(state_->mutex);
            if (state_->source) {
                if (std::optional<T> x = state_->source->next()) return std::move(*x);
                state_->source.reset();  // the end: its threads stop now
            }
            throw errors::OutOfRangeError("End of sequence", "IteratorGetNext");
        }

    private:
        struct State {
            explicit State(detail::SourcePtr<T> s) : source(std::move(s)) {}
            std::mutex mutex;
            detail::SourcePtr<T> source;
        };
        std::shared_ptr<State> state_;
    };

    /// Starts an iteration read through get_next().
    OneShotIterator make_one_shot_iterator() const { return OneShotIterator(make_source()); }

    /// Every element of one iteration (at most `limit` when limit >= 0), in order.
    std::vector<T> to_vector(int64_t limit = -1) const {
        std::vector<T> out;
        auto source = make_source();
        while (limit < 0 || static_cast<int64_t>(out.size()) < limit) {
            auto x = source->next();
            if (!x) break;
            out.push_back(std::move(*x));
        }
        return out;
    }

private:
    std::shared_ptr<const Factory> make_;
};

/// tf.compat.v1.data.make_one_shot_iterator(dataset).
template <class T>
typename Dataset<T>::OneShotIterator make_one_shot_iterator(const Dataset<T>& dataset) {
    return dataset.make_one_shot_iterator();
}

/// A dataset of the given values, in order (tf.data.Dataset.from_tensor_slices of a list).
template <class T>
Dataset<T> from_vector(std::vector<T> values) {
    auto shared = std::make_shared<const std::vector<T>>(std::move(values));
    return Dataset<T>([shared] {
        return detail::make_source<T>([shared, i = std::size_t(0)]() mutable -> std::optional<T> {
            if (i >= shared->size()) return std::nullopt;
            return (*shared)[i++];
        });
    });
}

/// One element per index of axis 0: element i holds component[i] of every component (all
/// components need the same size of axis 0: InvalidArgumentError otherwise).
Dataset<std::vector<Tensor>> from_tensor_slices(std::vector<Tensor> components);

/// The records of TFRecord files, file after file (with num_parallel_reads > 1, that many files
/// are read at once on their own threads and their records interleaved one at a time).
/// compression: "", "GZIP" or "ZLIB". A corrupt record raises DataLossError at its element; a
/// missing file raises NotFoundError when the iteration reaches it.
Dataset<std::string> TFRecordDataset(std::vector<std::string> files,
                                     std::string_view compression = "",
                                     int num_parallel_reads = 1);

/// The lines of text files, without their line ends ("\n" or "\r\n"), file after file.
Dataset<std::string> TextLineDataset(std::vector<std::string> files);

/// tf.data.experimental.CsvDataset: the records of CSV files, file after file, each element its
/// fields as rank-0 tensors (decode_csv's rules; `header` skips each file's first line).
Dataset<std::vector<Tensor>> CsvDataset(std::vector<std::string> files,
                                        std::vector<Tensor> record_defaults,
                                        bool header = false,
                                        io::CsvOptions options = {});

}  // namespace tapeflow::data

TAPEFLOW_API_END
