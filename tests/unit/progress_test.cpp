// SPDX-License-Identifier: MIT
#include "hfget/progress.hpp"

#include <gtest/gtest.h>

namespace hfget {
namespace {

TEST(IsWeightFile, CountsSafetensorsGgufAndPyTorchCheckpoints) {
  EXPECT_TRUE(is_weight_file("model-00001-of-00004.safetensors"));
  EXPECT_TRUE(is_weight_file("sub/model.gguf"));
  EXPECT_TRUE(is_weight_file("pytorch_model.bin"));
  EXPECT_TRUE(is_weight_file("sub/pytorch_model-00001-of-00002.bin"));
  EXPECT_TRUE(is_weight_file("consolidated-00001-of-00002.pth"));
}

TEST(IsWeightFile, LeavesSmallPickledAndOtherFilesOut) {
  EXPECT_FALSE(is_weight_file("training_args.bin"));
  EXPECT_FALSE(is_weight_file("optimizer.pt"));
  EXPECT_FALSE(is_weight_file("pytorch_model/config.json"));
  EXPECT_FALSE(is_weight_file("model.safetensors.index.json"));
  EXPECT_FALSE(is_weight_file(""));
}

}  // namespace
}  // namespace hfget
