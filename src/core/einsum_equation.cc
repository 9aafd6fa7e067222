// SPDX-License-Identifier: Apache-2.0
#include "core/einsum_equation.h"

#include <algorithm>
#include <string>

#include "core/strings.h"

namespace ignis {

namespace {

constexpr int kEllipsis = -1;

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Splits one subscript term into letters and at most one ellipsis (kEllipsis).
Result<std::vector<int>> tokenize(std::string_view term) {
  std::vector<int> out;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size();) {
    const char c = term[i];
    if (is_label(c)) {
      out.push_back(c);
      ++i;
    } else if (term.substr(i, 3) == "...") {
      if (seen_ellipsis) return invalid_argument(str_cat("einsum term '", term, "' has more than one ellipsis"));
      seen_ellipsis = true;
      out.push_back(kEllipsis);
      i += 3;
    } else {
      return invalid_argument(str_cat("einsum term '", term, "' has an invalid character '", c, "'"));
    }
  }
  return out;
}

}  // namespace

Result<EinsumEquation> parse_einsum(std::string_view equation, std::span<const Shape> inputs) {
  std::string eq;
  for (char c : equation)
    if (c != ' ' && c != '\t' && c != '\n') eq.push_back(c);
  std::string lhs = eq, rhs;
  const size_t arrow = eq.find("->");
  const bool explicit_output = arrow != std::string::npos;
  if (explicit_output) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos) return invalid_argument("einsum equation has more than one '->'");
  }
  std::vector<std::vector<int>> terms;
  size_t start = 0;
  for (;;) {
    const size_t comma = lhs.find(',', start);
    IGNIS_ASSIGN_OR_RETURN(auto t, tokenize(std::string_view(lhs).substr(start, comma - start)));
    terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != inputs.size())
    return invalid_argument(str_cat("einsum equation '", equation, "' has ", terms.size(), " operand terms but ",
                                    inputs.size(), " inputs were given"));

  // Ellipsis extents per operand, and the broadcast ellipsis rank.
  std::vector<int> ell_dims(terms.size(), 0);
  int ell_rank = 0;
  bool any_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int letters =
        static_cast<int>(std::count_if(terms[i].begin(), terms[i].end(), [](int t) { return t != kEllipsis; }));
    const bool has_ell = letters != static_cast<int>(terms[i].size());
    const int rank = inputs[i].rank();
    if (has_ell ? rank < letters : rank != letters)
      return invalid_argument(str_cat("einsum operand ", i, " has shape ", inputs[i].str(), " but its term names ",
                                      letters, " axes", has_ell ? " plus an ellipsis" : ""));
    if (has_ell) {
      any_ellipsis = true;
      ell_dims[i] = rank - letters;
      ell_rank = std::max(ell_rank, ell_dims[i]);
    }
  }

  // Label ids: ellipsis axes first (0 .. ell_rank-1), then letters by first appearance.
  EinsumEquation e;
  e.num_labels = ell_rank;
  int letter_id[128];
  std::fill(std::begin(letter_id), std::end(letter_id), -1);
  std::vector<int> letter_count(128, 0);
  auto label_of = [&](int c) {
    if (letter_id[c] < 0) letter_id[c] = e.num_labels++;
    return letter_id[c];
  };
  e.inputs.resize(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    for (int t : terms[i]) {
      if (t == kEllipsis) {
        for (int d = ell_rank - ell_dims[i]; d < ell_rank; ++d) e.inputs[i].push_back(d);
      } else {
        e.inputs[i].push_back(label_of(t));
        ++letter_count[t];
      }
    }
  }
  e.label_dims.assign(e.num_labels, -1);
  for (size_t i = 0; i < terms.size(); ++i) {
    for (int ax = 0; ax < inputs[i].rank(); ++ax) {
      const int label = e.inputs[i][ax];
      const int64_t d = inputs[i][ax];
      int64_t& known = e.label_dims[label];
      if (known < 0 || (label < ell_rank && known == 1)) {
        known = d;
      } else if (d != known && !(label < ell_rank && d == 1)) {
        return invalid_argument(str_cat("einsum operand ", i, " axis ", ax, " has extent ", d, " but the same ",
                                        label < ell_rank ? "ellipsis axis" : "label", " has extent ", known,
                                        " elsewhere"));
      }
    }
  }
  for (int64_t& d : e.label_dims)
    if (d < 0) d = 1;  // an ellipsis axis no operand reaches (cannot happen for letters)

  if (explicit_output) {
    IGNIS_ASSIGN_OR_RETURN(auto out, tokenize(rhs));
    std::vector<bool> used(e.num_labels, false);
    for (int t : out) {
      if (t == kEllipsis) {
        if (!any_ellipsis && ell_rank == 0) continue;
        for (int d = 0; d < ell_rank; ++d) e.output.push_back(d);
        continue;
      }
      if (letter_id[t] < 0)
        return invalid_argument(
            str_cat("einsum output label '", static_cast<char>(t), "' does not appear in any input"));
      if (used[letter_id[t]])
        return invalid_argument(str_cat("einsum output label '", static_cast<char>(t), "' is repeated"));
      used[letter_id[t]] = true;
      e.output.push_back(letter_id[t]);
    }
  } else {
    for (int d = 0; d < ell_rank; ++d) e.output.push_back(d);
    for (int c = 0; c < 128; ++c)
      if (letter_count[c] == 1) e.output.push_back(letter_id[c]);
  }
  return e;
}

}  // namespace ignis
