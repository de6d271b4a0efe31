// SPDX-License-Identifier: MIT
#include "http/header_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace hfget::http {
namespace {

TEST(HeaderText, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(header_text("bytes 0-99/1000"), "bytes 0-99/1000");
  EXPECT_EQ(header_text("\"caf\xc3\xa9-\xe2\x82\xac\""), "\"caf\xc3\xa9-\xe2\x82\xac\"");
  EXPECT_EQ(header_text(""), "");
}

TEST(HeaderText, EscapesControlBytes) {
  EXPECT_EQ(header_text("gzip\r\nhfget: error: forged"), "gzip\\x0d\\x0ahfget: error: forged");
  EXPECT_EQ(header_text("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(header_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(header_text("\x7f"), "\\x7f");
}

TEST(HeaderText, EscapesC1ControlsAndBidiOverrides) {
  EXPECT_EQ(header_text("\xc2\x9b"
                        "31m"),
            "\\u009b31m");  // CSI as a C1 control
  EXPECT_EQ(header_text("abc\xe2\x80\xae"
                        "fed"),
            "abc\\u202efed");
  EXPECT_EQ(header_text("a\xe2\x80\x8b"
                        "b"),
            "a\\u200bb");
}

TEST(HeaderText, EscapesInvalidUtf8ByteByByte) {
  EXPECT_EQ(header_text("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(header_text("\xc3"), "\\xc3");                             // cut sequence
  EXPECT_EQ(header_text("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(header_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(header_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(HeaderText, CutsLongValues) {
  const std::string cut = header_text(std::string(1 << 20, 'x'));
  EXPECT_EQ(cut, std::string(200, 'x') + "...");
  EXPECT_EQ(header_text("abcdef", 3), "abc...");
  EXPECT_EQ(header_text("abc", 3), "abc");
}

TEST(HeaderText, CutsAtACharacterBoundary) {
  // 199 ASCII bytes then a 2-byte character: it is kept whole, not split.
  const std::string text = std::string(199, 'a') + "\xc3\xa9" + "tail";
  EXPECT_EQ(header_text(text), std::string(199, 'a') + "\xc3\xa9" + "...");
}

}  // namespace
}  // namespace hfget::http
