// SPDX-License-Identifier: Apache-2.0
#include "serve/metrics.h"

#include <gtest/gtest.h>

namespace ignis::serve {
namespace {

TEST(MetricsRegistry, RendersPrometheusTextWithCumulativeBuckets) {
  MetricsRegistry r;
  Histogram* h = r.histogram("t_seconds", "A time.", {0.1, 1}, {{"model", "m\"1"}});
  h->observe(0.05);
  h->observe(0.1);  // on a bound: counted in that bucket (le)
  h->observe(0.5);
  h->observe(5);
  r.counter("c_total", "A count.", {{"reason", "x"}})->add(2);
  r.gauge("g", "A gauge.")->set(-3);
  const std::string text = r.render();
  EXPECT_NE(text.find("# TYPE t_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_bucket{model=\"m\\\"1\",le=\"0.1\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("t_seconds_bucket{model=\"m\\\"1\",le=\"1\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_bucket{model=\"m\\\"1\",le=\"+Inf\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_sum{model=\"m\\\"1\"} 5.65\n"), std::string::npos) << text;
  EXPECT_NE(text.find("t_seconds_count{model=\"m\\\"1\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("c_total{reason=\"x\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("g -3\n"), std::string::npos);
  EXPECT_NE(text.find("process_resident_memory_bytes "), std::string::npos);
  EXPECT_NE(text.find("process_cpu_seconds_total "), std::string::npos);
}

TEST(MetricsRegistry, SameNameAndLabelsIsOneSeries) {
  MetricsRegistry r;
  Counter* a = r.counter("x_total", "X.", {{"k", "v"}});
  Counter* b = r.counter("x_total", "X.", {{"k", "v"}});
  Counter* c = r.counter("x_total", "X.", {{"k", "w"}});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace ignis::serve
