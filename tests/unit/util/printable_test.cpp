// SPDX-License-Identifier: MIT
#include "util/printable.hpp"

#include <gtest/gtest.h>

#include <string>

#include "hfget/error.hpp"

namespace hfget::util {

TEST(Printable, KeepsOrdinaryTextAndUnicode) {
  EXPECT_EQ(printable("model-00001-of-00064.safetensors"), "model-00001-of-00064.safetensors");
  EXPECT_EQ(printable("mod\xc3\xa8le/\xe6\xa8\xa1\xe5\x9e\x8b.bin"), "mod\xc3\xa8le/\xe6\xa8\xa1\xe5\x9e\x8b.bin");
  EXPECT_EQ(printable("emoji \xf0\x9f\xa4\x97"), "emoji \xf0\x9f\xa4\x97");
}

TEST(Printable, EscapesTerminalControlSequencesAndNewlines) {
  EXPECT_EQ(printable("\x1b]0;pwned\x07title"), "\\x1b]0;pwned\\x07title");
  EXPECT_EQ(printable("a\nhfget: done\r\t\x7f"), "a\\x0ahfget: done\\x0d\\x09\\x7f");
  EXPECT_EQ(printable(std::string("nul\0byte", 8)), "nul\\x00byte");
}

TEST(Printable, EscapesC1ControlsAndBidiOverrides) {
  EXPECT_EQ(printable("\xc2\x9b"
                      "2J"),
            "\\u009b2J");                                                 // CSI as a C1 code point
  EXPECT_EQ(printable("evil\xe2\x80\xaegpj.exe"), "evil\\u202egpj.exe");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(printable("a\xe2\x81\xa6"
                      "b\xe2\x80\x8b"
                      "c\xef\xbb\xbf"),
            "a\\u2066b\\u200bc\\ufeff");
}

TEST(Printable, EscapesEveryByteThatIsNotValidUtf8) {
  EXPECT_EQ(printable("\x9b"
                      "2J"),
            "\\x9b2J");                                              // a raw C1 byte
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable("\xe2\x80"), "\\xe2\\x80");                    // cut short
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(Printable, CutsLongTextAtACharacterBoundary) {
  EXPECT_EQ(printable(std::string(300, 'a'), 10), std::string(10, 'a') + "...");
  EXPECT_EQ(printable("abc\xe6\xa8\xa1\xe5\x9e\x8b", 4), "abc\xe6\xa8\xa1...");
  EXPECT_EQ(printable("short", 10), "short");
}

TEST(Printable, KeepsACharacterWholeAtTheCut) {
  // 199 ASCII bytes then a 2-byte character: it is kept whole, not split.
  const std::string text = std::string(199, 'a') + "\xc3\xa9" + "tail";
  EXPECT_EQ(printable(text), std::string(199, 'a') + "\xc3\xa9" + "...");
  EXPECT_EQ(printable(std::string(1 << 20, 'x')), std::string(200, 'x') + "...");
}

TEST(Printable, IsIdempotent) {
  const std::string once = printable("\x1b[2J\xe2\x80\xae\xff");
  EXPECT_EQ(printable(once), once);
  EXPECT_FALSE(has_unprintable(once));
  EXPECT_TRUE(has_unprintable("\x1b"));
}

TEST(Printable, ErrorMessagesAreAlwaysPrintable) {
  const Error error(ErrorCode::kNetwork, "bad Content-Range '\x1b]0;x\x07' from the server\n");
  EXPECT_STREQ(error.what(), "bad Content-Range '\\x1b]0;x\\x07' from the server\\x0a");
}

}  // namespace hfget::util
