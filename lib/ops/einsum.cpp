// tf::einsum as a composite (include/tapeflow/ops/einsum.hpp). The equation is parsed and checked
// by TensorFlow's rules (tf.einsum's parser and the Einsum kernel's), then, as that kernel does:
// each operand takes its diagonals (a gather with stride (d^c - 1) / (d - 1) over its repeated
// axes merged into one) and sums the labels only it has; two operands then meet in ONE matmul
// whose batch axes are the shared output labels (the broadcast `...` dims first), whose rows and
// columns are each operand's free labels and whose inner axis is the contracted labels (a
// broadcasting multiply when nothing is contracted). Gradients, on every device and to every
// order, are those of the parts.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/einsum.hpp>
#include <tapeflow/ops/math.hpp>

namespace tapeflow {
namespace {

// A label is a letter's character code, or kBroadcast + k for dimension k of the broadcast (`...`)
// dimensions, k counted in the widest operand's, so that broadcast dims align on the right.
constexpr int kBroadcast = 256;
constexpr int kEllipsis = -1;  // `...` in a parsed subscript, before it is expanded

using Labels = std::vector<int>;

bool has(const Labels& labels, int label) {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

int64_t position(const Labels& labels, int label) {
    return std::find(labels.begin(), labels.end(), label) - labels.begin();
}

std::string label_name(int label) {
    return label >= kBroadcast ? std::string("...") : std::string(1, static_cast<char>(label));
}

// The call being checked: every error names the equation and the operand shapes.
struct Call {
    std::string_view equation;
    const std::vector<Tensor>& inputs;

    template <class... Args>
    [[noreturn]] void fail(fmt::format_string<Args...> what, Args&&... args) const {
        std::vector<std::string> shapes;
        for (const Tensor& t : inputs) {
            shapes.push_back(t.defined() ? t.shape().debug_string() : "undefined");
        }
        throw errors::InvalidArgumentError(
            fmt::format("einsum '{}' with operand shapes {}: {}",
                        equation,
                        fmt::join(shapes, ", "),
                        fmt::format(what, std::forward<Args>(args)...)),
            "Einsum");
    }
};

struct Equation {
    std::vector<std::string> text;  // each input subscript as written (spaces removed)
    std::vector<Labels> in;         // with kEllipsis for `...`
    Labels out;
};

Labels parse_subscript(const Call& call, std::string_view s, std::string_view which) {
    Labels labels;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        if (ch == '.') {
            if (s.substr(i, 3) != "...") call.fail("{} has a '.' outside an ellipsis '...'", which);
            if (has(labels, kEllipsis)) {
                call.fail("{} has more than one ellipsis '...'; use one per subscript", which);
            }
            labels.push_back(kEllipsis);
            i += 2;
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
            labels.push_back(ch);
        } else {
            call.fail(
                "{} has the character '{}'; subscripts are letters a-z, A-Z and '...', "
                "with ',' between operands and '->' before the output",
                which,
                ch);
        }
    }
    return labels;
}

Equation parse(const Call& call) {
    std::string eq;
    for (const char ch : call.equation) {
        if (ch != ' ') eq += ch;
    }
    const std::size_t arrow = eq.find("->");
    if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos) {
        call.fail("more than one '->'");
    }
    Equation e;
    const std::string lhs = eq.substr(0, arrow);
    for (std::size_t begin = 0;;) {
        const std::size_t comma = lhs.find(',', begin);
        e.text.push_back(lhs.substr(begin, comma - begin));
        if (comma == std::string::npos) break;
        begin = comma + 1;
    }
    if (e.text.size() != call.inputs.size()) {
        call.fail(
            "{} subscript(s) for {} operand(s); give one subscript per operand, separated by ','",
            e.text.size(),
            call.inputs.size());
    }
    for (std::size_t i = 0; i < e.text.size(); ++i) {
        e.in.push_back(
            parse_subscript(call, e.text[i], fmt::format("subscript {} ('{}')", i, e.text[i])));
    }
    if (arrow == std::string::npos) {
        // Implicit output: the labels that appear once, in ASCII order, after `...` if any.
        bool ellipsis = false;
        for (const Labels& in : e.in)
            ellipsis = ellipsis || has(in, kEllipsis);
        if (ellipsis) e.out.push_back(kEllipsis);
        for (int label = 'A'; label <= 'z'; ++label) {
            int count = 0;
            for (const Labels& in : e.in)
                count += static_cast<int>(std::count(in.begin(), in.end(), label));
            if (count == 1) e.out.push_back(label);
        }
        return e;
    }
    e.out = parse_subscript(call, std::string_view(eq).substr(arrow + 2), "the output subscript");
    for (std::size_t i = 0; i < e.out.size(); ++i) {
        const int label = e.out[i];
        if (label == kEllipsis) continue;
        if (std::count(e.out.begin(), e.out.end(), label) > 1) {
            call.fail("the output subscript repeats the label '{}'; output labels must be distinct",
                      label_name(label));
        }
        bool found = false;
        for (const Labels& in : e.in)
            found = found || has(in, label);
        if (!found) {
            call.fail(
                "the output label '{}' is in no input subscript; every output label must "
                "label a dimension of an operand",
                label_name(label));
        }
    }
    return e;
}

struct Operand {
    Tensor t;
    Labels labels;  // one per axis of t
};

// Replaces each `...` by the broadcast labels of the dimensions it covers and checks ranks.
std::vector<Operand> expand(const Call& call, Equation& e) {
    const std::size_t n = e.in.size();
    std::vector<int64_t> covered(n, 0);
    int64_t widest = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Labels& labels = e.in[i];
        const bool ellipsis = has(labels, kEllipsis);
        const auto named = static_cast<int64_t>(labels.size()) - (ellipsis ? 1 : 0);
        const int64_t rank = call.inputs[i].rank();
        if (!ellipsis && rank != named) {
            call.fail(
                "subscript {} ('{}') has {} label(s) but operand {} has rank {}; give one "
                "label per dimension, or '...' for the dimensions without one",
                i,
                e.text[i],
                named,
                i,
                rank);
        }
        if (ellipsis && rank < named) {
            call.fail(
                "subscript {} ('{}') has {} named label(s) but operand {} has rank {}; "
                "remove labels",
                i,
                e.text[i],
                named,
                i,
                rank);
        }
        covered[i] = ellipsis ? rank - named : 0;
        widest = std::max(widest, covered[i]);
    }
    const auto expanded = [&](const Labels& labels, int64_t count) {
        Labels out;
        for (const int label : labels) {
            if (label != kEllipsis) {
                out.push_back(label);
                continue;
            }
            for (int64_t k = widest - count; k < widest; ++k)
                out.push_back(kBroadcast + static_cast<int>(k));
        }
        return out;
    };
    std::vector<Operand> ops;
    for (std::size_t i = 0; i < n; ++i)
        ops.push_back({call.inputs[i], expanded(e.in[i], covered[i])});
    if (has(e.out, kEllipsis)) {
        e.out = expanded(e.out, widest);
    } else if (widest > 0) {
        call.fail(
            "the '...' of the operands covers {} dimension(s) but the output subscript has no "
            "'...'; add '...' to the output (or sum those dimensions with reduce_sum first)",
            widest);
    }
    return ops;
}

// A named label has one size everywhere; broadcast dims of the two operands must broadcast.
void check_sizes(const Call& call, const std::vector<Operand>& ops) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
        for (std::size_t a = 0; a < ops[i].labels.size(); ++a) {
            const int label = ops[i].labels[a];
            const int64_t d = ops[i].t.shape()[static_cast<int64_t>(a)];
            for (std::size_t j = 0; j <= i; ++j) {
                const auto& other = ops[j];
                const int64_t b = position(other.labels, label);
                if (b == static_cast<int64_t>(other.labels.size())) continue;
                const int64_t e = other.t.shape()[b];
                if (label >= kBroadcast) {
                    if (d != e && d != 1 && e != 1) {
                        call.fail(
                            "the '...' dimensions of the operands do not broadcast ({} vs {} "
                            "in dimension {} of operand {}); make them equal or 1",
                            e,
                            d,
                            a,
                            i);
                    }
                } else if (d != e) {
                    call.fail(
                        "label '{}' has size {} in dimension {} of operand {} but size {} in "
                        "dimension {} of operand {}; a label must have one size everywhere",
                        label_name(label),
                        e,
                        b,
                        j,
                        d,
                        a,
                        i);
                }
            }
        }
    }
}

// t with its axes in the order of `to` (labels of t's axes: `from`); t itself when unchanged.
Tensor permute(const Tensor& t, const Labels& from, const Labels& to) {
    std::vector<int64_t> perm;
    bool identity = true;
    for (std::size_t i = 0; i < to.size(); ++i) {
        perm.push_back(position(from, to[i]));
        identity = identity && perm.back() == static_cast<int64_t>(i);
    }
    return identity ? t : transpose(t, perm);
}

// Takes the diagonal of every label repeated in x, one label at a time.
Operand take_diagonals(Operand x) {
    for (;;) {
        const auto repeated = std::find_if(x.labels.begin(), x.labels.end(), [&](int label) {
            return std::count(x.labels.begin(), x.labels.end(), label) > 1;
        });
        if (repeated == x.labels.end()) return x;
        const int label = *repeated;
        std::vector<int64_t> perm;
        std::vector<int64_t> dims;
        Labels rest;
        for (std::size_t a = 0; a < x.labels.size(); ++a) {
            if (x.labels[a] == label) continue;
            perm.push_back(static_cast<int64_t>(a));
            dims.push_back(x.t.shape()[static_cast<int64_t>(a)]);
            rest.push_back(x.labels[a]);
        }
        const int64_t d = x.t.shape()[repeated - x.labels.begin()];
        int64_t merged = 1;
        for (std::size_t a = 0; a < x.labels.size(); ++a) {
            if (x.labels[a] != label) continue;
            perm.push_back(static_cast<int64_t>(a));
            merged *= d;
        }
        // Element (k, k, ..., k) of the merged axes is at k * (1 + d + d^2 + ...).
        const int64_t stride = d > 1 ? (merged - 1) / (d - 1) : 1;
        std::vector<int64_t> at(static_cast<std::size_t>(d));
        for (int64_t k = 0; k < d; ++k)
            at[static_cast<std::size_t>(k)] = k * stride;
        dims.push_back(merged);
        const Tensor flat = reshape(transpose(x.t, perm), Shape(dims));
        const Tensor indices = constant(at, Shape{d}, DType::int64).to(x.t.device());
        rest.push_back(label);
        x = {gather(flat, indices, static_cast<int64_t>(rest.size()) - 1), rest};
    }
}

// Sums the labels of x that neither the other operand nor the output has.
Operand sum_own_labels(Operand x, const Labels& other, const Labels& out) {
    std::vector<int64_t> axes;
    Labels kept;
    for (std::size_t a = 0; a < x.labels.size(); ++a) {
        const int label = x.labels[a];
        if (has(out, label) || has(other, label)) {
            kept.push_back(label);
        } else {
            axes.push_back(static_cast<int64_t>(a));
        }
    }
    if (axes.empty()) return x;
    return {reduce_sum(x.t, Axes(axes)), kept};
}

std::vector<int64_t> dims_of(const Tensor& t, std::size_t from, std::size_t to) {
    const auto& d = t.shape().dims();
    return {d.begin() + static_cast<std::ptrdiff_t>(from),
            d.begin() + static_cast<std::ptrdiff_t>(to)};
}

int64_t product(const std::vector<int64_t>& dims) {
    int64_t p = 1;
    for (const int64_t d : dims)
        p *= d;
    return p;
}

Labels only_in(const Labels& labels, const Labels& keep) {
    Labels out;
    for (const int label : labels) {
        if (has(keep, label)) out.push_back(label);
    }
    return out;
}

Labels concat_labels(std::initializer_list<const Labels*> parts) {
    Labels out;
    for (const Labels* p : parts)
        out.insert(out.end(), p->begin(), p->end());
    return out;
}

// a and b (diagonals taken, own labels summed) as one matmul, then laid out as `out`.
Tensor contract(const Operand& a, const Operand& b, const Labels& out) {
    Labels batch;  // broadcast labels first (matmul broadcasts batch axes from the right)
    for (const int label : out) {
        if (label >= kBroadcast) batch.push_back(label);
    }
    Labels free_a, free_b, summed;
    for (const int label : out) {
        if (label >= kBroadcast) continue;
        const bool in_a = has(a.labels, label);
        const bool in_b = has(b.labels, label);
        if (in_a && in_b) batch.push_back(label);
        if (in_a && !in_b) free_a.push_back(label);
        if (in_b && !in_a) free_b.push_back(label);
    }
    for (const int label : a.labels) {
        if (has(b.labels, label) && !has(out, label)) summed.push_back(label);
    }
    const Labels batch_a = only_in(batch, a.labels);
    const Labels batch_b = only_in(batch, b.labels);
    // [batch, rows, inner] x [batch, inner, cols]. An operand laid out as the transpose of that
    // goes to matmul as it is, with its transpose flag set (no copy); one that needs a copy
    // anyway keeps its last axis last, so that the copy moves whole rows.
    const bool contracts = !summed.empty();
    const auto flag = [&](const Labels& labels, const Labels& std_form, const Labels& alt_form) {
        if (!contracts || labels == std_form) return false;
        return labels == alt_form ||
               (labels.back() == alt_form.back() && labels.back() != std_form.back());
    };
    const Labels std_a = concat_labels({&batch_a, &free_a, &summed});
    const Labels alt_a = concat_labels({&batch_a, &summed, &free_a});
    const Labels std_b = concat_labels({&batch_b, &summed, &free_b});
    const Labels alt_b = concat_labels({&batch_b, &free_b, &summed});
    const bool ta = flag(a.labels, std_a, alt_a);
    const bool tb = flag(b.labels, std_b, alt_b);
    const Tensor pa = permute(a.t, a.labels, ta ? alt_a : std_a);
    const Tensor pb = permute(b.t, b.labels, tb ? alt_b : std_b);
    const std::size_t na = batch_a.size();
    const std::size_t nb = batch_b.size();
    const auto rank_a = static_cast<std::size_t>(pa.rank());
    const auto rank_b = static_cast<std::size_t>(pb.rank());
    const auto rows_dims =
        dims_of(pa, ta ? na + summed.size() : na, ta ? rank_a : na + free_a.size());
    const auto cols_dims =
        dims_of(pb, tb ? nb : nb + summed.size(), tb ? nb + free_b.size() : rank_b);
    const int64_t m = product(rows_dims);
    const int64_t n = product(cols_dims);
    const int64_t k =
        product(dims_of(pb, tb ? nb + free_b.size() : nb, tb ? rank_b : nb + summed.size()));
    const auto matrix = [](const Tensor& t, std::size_t batch_rank, int64_t r, int64_t c) {
        std::vector<int64_t> dims = dims_of(t, 0, batch_rank);
        dims.push_back(r);
        dims.push_back(c);
        return reshape(t, Shape(std::move(dims)));
    };
    Tensor c;
    if (!contracts) {
        c = matrix(pa, na, m, 1) * matrix(pb, nb, 1, n);  // outer products: no sum to run
    } else {
        c = matmul(ta ? matrix(pa, na, k, m) : matrix(pa, na, m, k),
                   tb ? matrix(pb, nb, n, k) : matrix(pb, nb, k, n),
                   ta,
                   tb);
    }
    std::vector<int64_t> dims = dims_of(c, 0, static_cast<std::size_t>(c.rank()) - 2);
    dims.insert(dims.end(), rows_dims.begin(), rows_dims.end());
    dims.insert(dims.end(), cols_dims.begin(), cols_dims.end());
    return permute(
        reshape(c, Shape(std::move(dims))), concat_labels({&batch, &free_a, &free_b}), out);
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& inputs) {
    const Call call{equation, inputs};
    if (inputs.empty() || inputs.size() > 2) {
        call.fail("einsum takes one or two operands, got {}; contract more operands pairwise",
                  inputs.size());
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].defined()) call.fail("operand {} is an undefined tensor", i);
    }
    if (inputs.size() == 2 && inputs[0].dtype() != inputs[1].dtype()) {
        call.fail("the operands have dtypes {} and {}; cast one of them",
                  dtype_name(inputs[0].dtype()),
                  dtype_name(inputs[1].dtype()));
    }
    Equation e = parse(call);
    std::vector<Operand> ops = expand(call, e);
    check_sizes(call, ops);
    for (Operand& op : ops)
        op = take_diagonals(std::move(op));
    if (ops.size() == 1) {
        const Operand x = sum_own_labels(std::move(ops[0]), {}, e.out);
        return permute(x.t, x.labels, e.out);
    }
    const Operand a = sum_own_labels(ops[0], ops[1].labels, e.out);
    const Operand b = sum_own_labels(ops[1], ops[0].labels, e.out);
    return contract(a, b, e.out);
}

}  // namespace tapeflow
