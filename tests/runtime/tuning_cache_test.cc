// SPDX-License-Identifier: Apache-2.0
// The tuning cache file: entries round-trip; other CPUs' entries are kept but never found;
// malformed lines are dropped and counted; a save merges what another writer added.
#include "runtime/tuning_cache.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing/temp_dir.h"

namespace ignis::runtime {
namespace {

using testing::TempDir;

std::string file_in(const TempDir& dir) { return (dir.path() / "sub" / "tuning.tsv").string(); }

TEST(TuningCache, RoundTripsThroughTheFile) {
  TempDir dir("ignis_tuning_roundtrip");
  const std::string path = file_in(dir);
  TuningCache a("cpu A");
  a.put(2, "Conv@11 f32[1,16,20,20] {group=1}", {"x86/conv_f32_8x32", "winograd4", 12.5});
  a.put(4, "Conv@11 f32[1,16,20,20] {group=1}", {"x86/conv_f32_8x32", "gemm", 8.25});
  a.put(2, "MatMul@13 f32[3,7] f32[7,5]c {}", {"x86/matmul_f32_4x24", "", 1.0});
  ASSERT_TRUE(a.save(path));  // creates the missing folder

  auto loaded = TuningCache::load(path, "cpu A");
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ((*loaded)->entries(), 3u);
  EXPECT_EQ((*loaded)->malformed_lines(), 0u);
  TunedChoice c;
  ASSERT_TRUE((*loaded)->find(2, "Conv@11 f32[1,16,20,20] {group=1}", &c));
  EXPECT_EQ(c.kernel_id, "x86/conv_f32_8x32");
  EXPECT_EQ(c.tactic, "winograd4");
  EXPECT_DOUBLE_EQ(c.micros, 12.5);
  ASSERT_TRUE((*loaded)->find(4, "Conv@11 f32[1,16,20,20] {group=1}", &c));
  EXPECT_EQ(c.tactic, "gemm");
  ASSERT_TRUE((*loaded)->find(2, "MatMul@13 f32[3,7] f32[7,5]c {}", &c));
  EXPECT_EQ(c.tactic, "");
  EXPECT_FALSE((*loaded)->find(3, "Conv@11 f32[1,16,20,20] {group=1}", &c));
}

TEST(TuningCache, ForeignCpuEntriesAreKeptButNeverFound) {
  TempDir dir("ignis_tuning_foreign");
  const std::string path = file_in(dir);
  TuningCache a("cpu A");
  a.put(2, "k", {"x86/conv_f32_8x32", "transposed", 3});
  ASSERT_TRUE(a.save(path));

  auto b = TuningCache::load(path, "cpu B");
  ASSERT_TRUE(b);
  TunedChoice c;
  EXPECT_FALSE((*b)->find(2, "k", &c));
  EXPECT_EQ((*b)->entries(), 0u);
  EXPECT_EQ((*b)->foreign_entries(), 1u);
  (*b)->put(2, "k", {"x86/conv_f32_4x24", "gemm", 4});
  ASSERT_TRUE((*b)->save(path));

  // Both CPUs' entries survive B's save, each visible to its own CPU only.
  auto a2 = TuningCache::load(path, "cpu A");
  ASSERT_TRUE(a2);
  ASSERT_TRUE((*a2)->find(2, "k", &c));
  EXPECT_EQ(c.tactic, "transposed");
  auto b2 = TuningCache::load(path, "cpu B");
  ASSERT_TRUE(b2);
  ASSERT_TRUE((*b2)->find(2, "k", &c));
  EXPECT_EQ(c.kernel_id, "x86/conv_f32_4x24");
}

TEST(TuningCache, MalformedLinesAreDroppedAndCounted) {
  TempDir dir("ignis_tuning_corrupt");
  const std::string path = (dir.path() / "tuning.tsv").string();
  {
    std::ofstream out(path);
    out << "# a comment\n"
        << "\n"
        << "garbage without tabs\n"
        << "cpu A\t2\tkey\tkernel\ttactic\n"                // five fields
        << "cpu A\tzero\tkey\tkernel\ttactic\t1.0\n"        // threads not a number
        << "cpu A\t-2\tkey\tkernel\ttactic\t1.0\n"          // threads not positive
        << "cpu A\t2\tkey\tkernel\ttactic\tfast\n"          // micros not a number
        << "cpu A\t2\t\tkernel\ttactic\t1.0\n"              // empty key
        << "cpu A\t2\tgood key\tx86/k\tt\t7.5\r\n"          // valid, CRLF
        << "\x01\x02\xff binary\n";
  }
  auto loaded = TuningCache::load(path, "cpu A");
  ASSERT_TRUE(loaded);
  EXPECT_EQ((*loaded)->malformed_lines(), 7u);
  EXPECT_EQ((*loaded)->entries(), 1u);
  TunedChoice c;
  ASSERT_TRUE((*loaded)->find(2, "good key", &c));
  EXPECT_EQ(c.kernel_id, "x86/k");
  EXPECT_EQ(c.tactic, "t");
}

TEST(TuningCache, MissingFileIsAnEmptyCache) {
  TempDir dir("ignis_tuning_missing");
  auto loaded = TuningCache::load((dir.path() / "none.tsv").string(), "cpu A");
  ASSERT_TRUE(loaded);
  EXPECT_EQ((*loaded)->entries(), 0u);
}

TEST(TuningCache, SaveMergesEntriesAnotherWriterAdded) {
  TempDir dir("ignis_tuning_merge");
  const std::string path = file_in(dir);
  TuningCache first("cpu A"), second("cpu A");
  first.put(1, "k1", {"a", "", 1});
  ASSERT_TRUE(first.save(path));
  second.put(1, "k2", {"b", "", 2});
  second.put(1, "k1", {"c", "x", 3});  // the same key: the saving writer's entry wins
  ASSERT_TRUE(second.save(path));
  auto loaded = TuningCache::load(path, "cpu A");
  ASSERT_TRUE(loaded);
  EXPECT_EQ((*loaded)->entries(), 2u);
  TunedChoice c;
  ASSERT_TRUE((*loaded)->find(1, "k1", &c));
  EXPECT_EQ(c.kernel_id, "c");
  ASSERT_TRUE((*loaded)->find(1, "k2", &c));
  EXPECT_EQ(c.kernel_id, "b");
}

TEST(TuningCache, FieldsCannotBreakTheLineFormat) {
  TempDir dir("ignis_tuning_fields");
  const std::string path = file_in(dir);
  TuningCache a("cpu\twith tab");
  a.put(1, "key\twith\ttabs\nand newline", {"k\tid", "t\nx", 1});
  ASSERT_TRUE(a.save(path));
  auto loaded = TuningCache::load(path, "cpu\twith tab");
  ASSERT_TRUE(loaded);
  EXPECT_EQ((*loaded)->malformed_lines(), 0u);
  TunedChoice c;
  ASSERT_TRUE((*loaded)->find(1, "key with tabs and newline", &c));
  EXPECT_EQ(c.kernel_id, "k id");
}

}  // namespace
}  // namespace ignis::runtime
