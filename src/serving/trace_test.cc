#include <gtest/gtest.h>

#include "serving/trace.h"

namespace gpuplan {

TEST(Trace, CsvWithHeaderInAnyColumnOrder) {
  auto t = parse_trace("output_tokens,prompt_tokens\n10,100\n\n20,200\n", "t.csv");
  ASSERT_TRUE(t) << t.error().to_string();
  ASSERT_EQ(t->requests.size(), 2u);
  EXPECT_EQ(t->requests[1].prompt_tokens, 200);
  EXPECT_EQ(t->requests[1].output_tokens, 20);
  EXPECT_FALSE(t->has_arrivals);
}

TEST(Trace, JsonLinesWithArrivals) {
  auto t = parse_trace("{\"prompt_tokens\": 5, \"output_tokens\": 7, \"arrival_s\": 0.5}\n"
                       "{\"prompt_tokens\": 6, \"output_tokens\": 8, \"arrival_s\": 1.5}\n",
                       "t.jsonl");
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_TRUE(t->has_arrivals);
  EXPECT_DOUBLE_EQ(t->requests[1].arrival_s, 1.5);
}

TEST(Trace, EveryBadLineIsAnErrorNamingTheLine) {
  const char* bad[] = {
      "",                                           // empty
      "prompt_tokens\n5\n",                         // no output column
      "prompt_tokens,output_tokens,foo\n1,2,3\n",  // unknown column
      "prompt_tokens,output_tokens\n1,2,3\n",       // field count
      "prompt_tokens,output_tokens\n0,2\n",         // zero tokens
      "prompt_tokens,output_tokens\n1.5,2\n",       // fractional tokens
      "prompt_tokens,output_tokens\nx,2\n",         // not a number
      "prompt_tokens,output_tokens\n99999999999,2\n",
      "prompt_tokens,output_tokens,arrival_s\n1,2,5\n1,2,4\n",  // arrivals go back
      "prompt_tokens,output_tokens,arrival_s\n1,2,nan\n",
      "{\"prompt_tokens\": 1}\n",
      "{\"prompt_tokens\": 1, \"output_tokens\": 2, \"extra\": 1}\n",
      "{\"prompt_tokens\": 1, \"output_tokens\": 2, \"arrival_s\": 1}\n{\"prompt_tokens\": 1, \"output_tokens\": 2}\n",
      "{not json\n",
      "prompt_tokens,output_tokens\n",  // no requests
  };
  for (const char* text : bad) {
    auto t = parse_trace(text, "t");
    EXPECT_FALSE(t) << text;
    if (!t) {
      EXPECT_EQ(t.error().to_string().find('\n'), std::string::npos) << text;
    }
  }
  auto t = parse_trace("prompt_tokens,output_tokens\n1,2\n0,2\n", "t.csv");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().to_string().find("line 3"), std::string::npos);
}

}  // namespace gpuplan
