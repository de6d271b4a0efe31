// SPDX-License-Identifier: MIT
#include "transfer/reconstruction_prefetch.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace hfget::transfer {
namespace {

using namespace std::chrono_literals;

xet::Reconstruction plan_for(std::uint64_t first) {
  xet::Reconstruction plan;
  plan.offset_into_first_range = first;  // tells the plans apart
  return plan;
}

// The CAS of these tests: answers every ask with a plan naming its first byte, after `gate` opens.
struct FakeAsker {
  std::atomic<int> asked{0};
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();

  ReconstructionPrefetch::Ask make(const std::stop_token& /*stop*/) {
    return [this](const std::string& /*hash*/, std::uint64_t first, std::uint64_t /*last*/) {
      ++asked;
      opened.wait();
      return std::optional(plan_for(first));
    };
  }
};

// One range queued (the product queues a connection's ranges together).
void ask_one(ReconstructionPrefetch& prefetch, const std::string& xet_hash, std::uint64_t first, std::uint64_t last) {
  const ReconstructionPrefetch::Wanted wanted[] = {{xet_hash, first, last}};
  prefetch.ask_ahead(wanted);
}

bool eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 500 && !condition(); ++i) std::this_thread::sleep_for(2ms);
  return condition();
}

TEST(ReconstructionPrefetch, APlanAskedAheadIsHandedOnceAndOnlyForItsExactRange) {
  FakeAsker cas;
  cas.gate.set_value();
  ReconstructionPrefetch prefetch([&cas](std::stop_token stop) { return cas.make(stop); });
  ask_one(prefetch, "a", 100, 199);
  ask_one(prefetch, "a", 100, 199);  // known: not asked twice
  ASSERT_TRUE(eventually([&] { return cas.asked == 1; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(prefetch.take("a", 100, 150, {}).has_value()) << "another range";
  EXPECT_FALSE(prefetch.take("b", 100, 199, {}).has_value()) << "another file";
  const std::optional<xet::Reconstruction> plan = prefetch.take("a", 100, 199, {});  // asked 20 ms ago
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->offset_into_first_range, 100U);
  EXPECT_FALSE(prefetch.take("a", 100, 199, {}).has_value()) << "handed once";
  EXPECT_EQ(prefetch.takes().used, 1U);
  EXPECT_EQ(prefetch.takes().ready, 1U);
  EXPECT_EQ(prefetch.takes().missing, 3U);
  EXPECT_EQ(cas.asked, 1);
}

TEST(ReconstructionPrefetch, AskedFromSaysWhetherAPlanStartsAtAByteUntilItIsTaken) {
  FakeAsker cas;
  ReconstructionPrefetch prefetch([&cas](std::stop_token stop) { return cas.make(stop); }, 1, 1);
  ask_one(prefetch, "a", 100, 199);
  EXPECT_TRUE(prefetch.asked_from("a", 100)) << "queued or being asked";
  EXPECT_FALSE(prefetch.asked_from("a", 101));
  EXPECT_FALSE(prefetch.asked_from("b", 100)) << "another file";
  ASSERT_TRUE(eventually([&] { return cas.asked == 1; }));
  cas.gate.set_value();
  ASSERT_TRUE(prefetch.take("a", 100, 199, {}).has_value());  // waited for while being asked
  EXPECT_FALSE(prefetch.asked_from("a", 100)) << "taken: the range it was for is on its way";
}

TEST(ReconstructionPrefetch, APlanBeingAskedIsWaitedForAndAQueuedOneIsLeftToTheConnection) {
  FakeAsker cas;  // the gate stays shut: the first ask hangs
  ReconstructionPrefetch prefetch([&cas](std::stop_token stop) { return cas.make(stop); }, 1, 1);
  ask_one(prefetch, "a", 0, 99);
  ASSERT_TRUE(eventually([&] { return cas.asked == 1; }));
  ask_one(prefetch, "a", 100, 199);  // queued behind the one in flight
  EXPECT_FALSE(prefetch.take("a", 100, 199, {}).has_value()) << "queued: the connection asks it itself";
  auto waiting = std::async(std::launch::async, [&] { return prefetch.take("a", 0, 99, {}); });
  EXPECT_EQ(waiting.wait_for(30ms), std::future_status::timeout) << "being asked: waited for";
  cas.gate.set_value();
  const std::optional<xet::Reconstruction> plan = waiting.get();
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->offset_into_first_range, 0U);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cas.asked, 1) << "the range the connection took back was never asked";
  const ReconstructionPrefetch::Takes takes = prefetch.takes();
  EXPECT_EQ(takes.waited, 1U);
  EXPECT_EQ(takes.queued, 1U);
  EXPECT_EQ(takes.ready, 0U);
}

TEST(ReconstructionPrefetch, SeveralPlansAreAskedAtOnceOneAskerEach) {
  FakeAsker cas;  // the gate stays shut: every ask hangs until it opens
  ReconstructionPrefetch prefetch([&cas](std::stop_token stop) { return cas.make(stop); }, 3, 3);
  for (std::uint64_t i = 0; i < 4; ++i) ask_one(prefetch, "a", i * 100, i * 100 + 99);
  ASSERT_TRUE(eventually([&] { return cas.asked == 3; })) << "one plan in flight per asker";
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cas.asked, 3) << "the fourth waits for a free asker";
  EXPECT_FALSE(prefetch.take("a", 300, 399, {}).has_value()) << "still queued: left to the connection";
  cas.gate.set_value();
  for (std::uint64_t i = 0; i < 3; ++i) {
    const std::optional<xet::Reconstruction> plan = prefetch.take("a", i * 100, i * 100 + 99, {});
    ASSERT_TRUE(plan.has_value()) << i;
    EXPECT_EQ(plan->offset_into_first_range, i * 100);
  }
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cas.asked, 3) << "the range its connection took back is not asked";
  EXPECT_EQ(prefetch.takes().used, 3U);
}

TEST(ReconstructionPrefetch, RangesAskedTogetherAreQueuedOnceEachAndWakeAnAskerEach) {
  FakeAsker cas;  // the gate stays shut: every ask hangs until it opens
  ReconstructionPrefetch prefetch([&cas](std::stop_token stop) { return cas.make(stop); }, 3, 3);
  ask_one(prefetch, "a", 0, 99);
  ASSERT_TRUE(eventually([&] { return cas.asked == 1; }));
  const std::vector<ReconstructionPrefetch::Wanted> wanted = {
      {"a", 0, 99}, {"a", 100, 199}, {"b", 0, 99}, {"a", 100, 199}, {"a", 200, 299}};
  prefetch.ask_ahead(wanted);
  ASSERT_TRUE(eventually([&] { return cas.asked == 3; })) << "each asker woken for a plan of its own";
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cas.asked, 3) << "three askers: the fourth plan waits for one";
  cas.gate.set_value();
  ASSERT_TRUE(eventually([&] { return cas.asked == 4; })) << "known ranges are not asked twice";
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cas.asked, 4);
  for (const ReconstructionPrefetch::Wanted& range :
       std::vector<ReconstructionPrefetch::Wanted>{{"a", 0, 99}, {"a", 100, 199}, {"b", 0, 99}, {"a", 200, 299}}) {
    EXPECT_TRUE(prefetch.take(range.xet_hash, range.first, range.last, {}).has_value())
        << range.xet_hash << " " << range.first;
  }
}

TEST(ReconstructionPrefetch, APlanTakenBackWhileQueuedWakesAnAskerForNothingAndLaterPlansAreStillAsked) {
  FakeAsker cas;  // the gate stays shut until the plan in flight has company
  ReconstructionPrefetch prefetch([&cas](std::stop_token stop) { return cas.make(stop); }, 1, 1);
  ask_one(prefetch, "a", 0, 99);
  ASSERT_TRUE(eventually([&] { return cas.asked == 1; }));
  ask_one(prefetch, "a", 100, 199);
  EXPECT_FALSE(prefetch.take("a", 100, 199, {}).has_value()) << "queued: taken back by its connection";
  cas.gate.set_value();  // the asker finds the permit of the plan taken back, and nothing queued
  ASSERT_TRUE(prefetch.take("a", 0, 99, {}).has_value());
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cas.asked, 1) << "the plan taken back is not asked";
  ask_one(prefetch, "a", 200, 299);
  ASSERT_TRUE(eventually([&] { return cas.asked == 2; })) << "a plan queued later is asked";
  const std::optional<xet::Reconstruction> plan = prefetch.take("a", 200, 299, {});  // ready, or waited for
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->offset_into_first_range, 200U);
}

TEST(ReconstructionPrefetch, MoreAskersStartWhilePlansQueueBehindBusyOnesUpToTheMost) {
  FakeAsker cas;  // the gate stays shut: every ask hangs until it opens
  ReconstructionPrefetch prefetch([&cas](std::stop_token stop) { return cas.make(stop); }, 2, 5);
  for (std::uint64_t i = 0; i < 2; ++i) ask_one(prefetch, "a", i * 100, i * 100 + 99);
  ASSERT_TRUE(eventually([&] { return cas.asked == 2; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cas.asked, 2) << "as many askers as plans: none more started";
  for (std::uint64_t i = 2; i < 8; ++i) ask_one(prefetch, "a", i * 100, i * 100 + 99);
  ASSERT_TRUE(eventually([&] { return cas.asked == 5; })) << "three more started for the queued plans";
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cas.asked, 5) << "no more than the most";
  cas.gate.set_value();
  for (std::uint64_t i = 0; i < 5; ++i) EXPECT_TRUE(prefetch.take("a", i * 100, i * 100 + 99, {}).has_value()) << i;
}

TEST(ReconstructionPrefetch, AFailedAskIsNoPlanAndAStoppedPrefetchReleasesItsWaiters) {
  std::atomic<int> asked{0};
  {
    ReconstructionPrefetch prefetch([&asked](std::stop_token) -> ReconstructionPrefetch::Ask {
      return [&asked](const std::string&, std::uint64_t, std::uint64_t) -> std::optional<xet::Reconstruction> {
        ++asked;
        return std::nullopt;
      };
    });
    ask_one(prefetch, "a", 0, 99);
    ASSERT_TRUE(eventually([&] { return asked == 1; }));
    std::this_thread::sleep_for(10ms);
    EXPECT_FALSE(prefetch.take("a", 0, 99, {}).has_value());
    for (std::uint64_t i = 1; i <= 2 * ReconstructionPrefetch::kMaxPlans; ++i)
      ask_one(prefetch, "a", i * 100, i * 100 + 99);
  }  // destroyed with plans queued: the thread stops without asking them all
  EXPECT_LE(asked, static_cast<int>(2 * ReconstructionPrefetch::kMaxPlans) + 1);
}

}  // namespace
}  // namespace hfget::transfer
