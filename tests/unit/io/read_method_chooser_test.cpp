// SPDX-License-Identifier: MIT
#include "io/read_method_chooser.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>

namespace hfget::io {
namespace {

using std::chrono::nanoseconds;

constexpr std::uint64_t kWindow = 16 << 20;

// Chooses and records `windows` times, each window costing what `cost_per_byte` says for its method;
// counts the methods chosen.
std::map<ReadMethod, int> run(ReadMethodChooser& chooser, int windows, double mapped_cost, double copied_cost) {
  std::map<ReadMethod, int> chosen;
  for (int i = 0; i < windows; ++i) {
    const ReadMethod method = chooser.choose(kWindow);
    ++chosen[method];
    const double per_byte = method == ReadMethod::kMapped ? mapped_cost : copied_cost;
    chooser.record(method, kWindow, nanoseconds(static_cast<std::int64_t>(per_byte * kWindow)));
  }
  return chosen;
}

TEST(ReadMethodChooser, TriesEachMethodOnceBeforeChoosing) {
  ReadMethodChooser chooser;
  EXPECT_EQ(chooser.choose(kWindow), ReadMethod::kMapped);
  // Nothing measured yet (another thread is still reading its window): the other method, not the same again.
  EXPECT_EQ(chooser.choose(kWindow), ReadMethod::kCopied);
}

TEST(ReadMethodChooser, KeepsTheCheaperMethodAndRechecksTheOtherNowAndThen) {
  for (const bool mapped_is_cheaper : {true, false}) {
    SCOPED_TRACE(mapped_is_cheaper);
    ReadMethodChooser chooser;
    const double cheap = 0.5;
    const double dear = 0.75;
    const int windows = 10 * static_cast<int>(ReadMethodChooser::kRecheckEvery);
    const auto chosen = run(chooser, windows, mapped_is_cheaper ? cheap : dear, mapped_is_cheaper ? dear : cheap);
    const ReadMethod cheaper = mapped_is_cheaper ? ReadMethod::kMapped : ReadMethod::kCopied;
    const ReadMethod dearer = mapped_is_cheaper ? ReadMethod::kCopied : ReadMethod::kMapped;
    // One try while learning, then one recheck every kRecheckEvery windows.
    EXPECT_LE(chosen.at(dearer), 1 + windows / static_cast<int>(ReadMethodChooser::kRecheckEvery));
    EXPECT_GE(chosen.at(dearer), 2);
    EXPECT_EQ(chosen.at(cheaper) + chosen.at(dearer), windows);
  }
}

TEST(ReadMethodChooser, SwitchesWhenTheCostsChange) {
  ReadMethodChooser chooser;
  run(chooser, 200, 0.5, 0.75);  // mapped cheaper, learned
  EXPECT_EQ(chooser.choose(kWindow), ReadMethod::kMapped);
  // Now mapping costs more (say the cache went cold under a mapping): the rechecks find out.
  run(chooser, 6 * static_cast<int>(ReadMethodChooser::kRecheckEvery), 1.0, 0.75);
  const auto after = run(chooser, 100, 1.0, 0.75);
  EXPECT_GE(after.at(ReadMethod::kCopied), 98);
}

TEST(ReadMethodChooser, OneOddWindowDoesNotFlipTheChoice) {
  ReadMethodChooser chooser;
  run(chooser, 20, 0.5, 0.6);
  chooser.record(ReadMethod::kMapped, kWindow, nanoseconds(kWindow * 1));  // twice the usual, once
  EXPECT_EQ(chooser.choose(kWindow), ReadMethod::kMapped);
}

TEST(ReadMethodChooser, CopiesShortWindowsWithoutCountingThem) {
  ReadMethodChooser chooser;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(chooser.choose(ReadMethodChooser::kMeasuredWindowBytes - 1), ReadMethod::kCopied);
    chooser.record(ReadMethod::kCopied, ReadMethodChooser::kMeasuredWindowBytes - 1, nanoseconds(1));
  }
  // Nothing was learned from them: the first long window still tries mapping.
  EXPECT_EQ(chooser.choose(kWindow), ReadMethod::kMapped);
}

TEST(ReadMethodChooser, AFixedChooserAlwaysGivesItsMethod) {
  ReadMethodChooser copied(ReadMethod::kCopied);
  EXPECT_EQ(run(copied, 300, 0.1, 10.0).at(ReadMethod::kCopied), 300);
  ReadMethodChooser mapped(ReadMethod::kMapped);
  EXPECT_EQ(run(mapped, 300, 10.0, 0.1).at(ReadMethod::kMapped), 300);
}

}  // namespace
}  // namespace hfget::io
