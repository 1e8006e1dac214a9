#include "util/escape.h"

#include <gtest/gtest.h>

namespace gpuplan {

TEST(Escape, HtmlTurnsEveryMarkupCharacterIntoAnEntity) {
  EXPECT_EQ(html_escape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(html_escape("x' onerror='alert(1)"), "x&#39; onerror=&#39;alert(1)");
  EXPECT_EQ(html_escape("a\"b&c"), "a&quot;b&amp;c");
  EXPECT_EQ(html_escape("bad \xff byte"), "bad \xEF\xBF\xBD byte");
}

TEST(Escape, MarkdownCannotAddLinksMarkupOrCells) {
  EXPECT_EQ(markdown_escape("[click](http://evil)"), "\\[click\\](http://evil)");
  EXPECT_EQ(markdown_escape("<img src=x onerror=alert(1)>"), "\\<img src=x onerror=alert(1)\\>");
  EXPECT_EQ(markdown_escape("a|b *c* `d`"), "a\\|b \\*c\\* \\`d\\`");
  EXPECT_EQ(markdown_escape("two\nlines"), "two lines");
}

TEST(Escape, PrintableDropsTerminalEscapesAndControls) {
  EXPECT_EQ(printable("\x1b[31mred\x1b[0m"), "red");
  EXPECT_EQ(printable("\x1b]8;;http://evil\x07link\x1b]8;;\x07"), "link");
  EXPECT_EQ(printable("\x1b]0;title\x1b\\after"), "after");
  EXPECT_EQ(printable("bell\x07 back\x08 cr\r del\x7f"), "bell back cr del");
  EXPECT_EQ(printable("c1 \xc2\x9b" "31m"), "c1 31m");
  EXPECT_EQ(printable("keeps\ttabs\nand lines, caf\xc3\xa9"), "keeps\ttabs\nand lines, caf\xc3\xa9");
}

}  // namespace gpuplan
