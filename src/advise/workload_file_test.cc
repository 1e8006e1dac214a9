#include "advise/workload_file.h"

#include <gtest/gtest.h>

namespace gpuplan {

namespace {
constexpr int64_t kToday = 20790;  // 2026-12-02
Result<AdviseRequest> parse(const std::string& text) { return parse_workload_file(text, "w.toml", kToday, OwnershipCosts{}); }
const char* kJob = "[[training]]\nname='ft'\nmodel='llama-3.1-8b'\ntask='qlora'\ntokens=1e8\n";
}  // namespace

TEST(WorkloadFile, ReadsJobsServicesAndConstraints) {
  auto r = parse(std::string(kJob) +
                 "deadline_days=2\n[[inference]]\nname='chat'\nmodel='llama-3.1-8b'\nprompt_tokens=512\noutput_tokens=128\n"
                 "peak_rps=10\naverage_rps=2\nttft_target_s=1\ntpot_target_s=0.05\n"
                 "[constraints]\nbudget_capex_usd=10000\ntiers=['consumer']\nmodes=['buy']\nbusy_hours_per_month=200\n");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->training.size(), 1u);
  EXPECT_EQ(r->training[0].workload.task, Task::qlora);
  EXPECT_DOUBLE_EQ(*r->training[0].deadline_s, 2 * 86400.0);
  EXPECT_EQ(r->inference[0].target.peak_rps, 10);
  EXPECT_FALSE(r->constraints.allows_rental());
  EXPECT_TRUE(r->constraints.allows("buy"));
  EXPECT_EQ(r->constraints.tiers.size(), 1u);
}

TEST(WorkloadFile, ModesAndProviderClassesNameHowGpusArePaidFor) {
  auto cloud = parse(std::string(kJob) + "[constraints]\nmodes=['cloud']\nprovider_classes=['hyperscaler']\n");
  ASSERT_TRUE(cloud.ok()) << cloud.error().to_string();
  EXPECT_TRUE(cloud->constraints.allows("spot"));
  EXPECT_TRUE(cloud->constraints.allows("reserved-3y"));
  EXPECT_FALSE(cloud->constraints.allows("buy"));
  EXPECT_TRUE(cloud->constraints.allows_class("hyperscaler"));
  EXPECT_FALSE(cloud->constraints.allows_class("marketplace"));
  auto some = parse(std::string(kJob) + "[constraints]\nmodes=['reserved-1y', 'buy']\n");
  ASSERT_TRUE(some.ok());
  EXPECT_FALSE(some->constraints.allows("on-demand"));
  auto bad = parse(std::string(kJob) + "[constraints]\nmodes=['lease']\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("lease"), std::string::npos);
  auto cls = parse(std::string(kJob) + "[constraints]\nprovider_classes=['neocloud']\n");
  ASSERT_FALSE(cls.ok());
  EXPECT_NE(cls.error().field.find("provider_classes"), std::string::npos);
}

TEST(WorkloadFile, StackDefaultsToTheTasksUsualOneAndCanBeNamed) {
  auto dflt = parse(kJob);
  ASSERT_TRUE(dflt.ok()) << dflt.error().to_string();
  EXPECT_EQ(dflt->training[0].stack.id, "hf");  // QLoRA: Hugging Face PEFT + bitsandbytes
  auto named = parse(std::string(kJob) + "stack='unsloth'\n");
  ASSERT_TRUE(named.ok()) << named.error().to_string();
  EXPECT_EQ(named->training[0].stack.id, "unsloth");
  auto bad = parse(std::string(kJob) + "stack='unslot'\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "w.toml: training[0].stack");
  EXPECT_NE(bad.error().message.find("unsloth"), std::string::npos);
}

TEST(WorkloadFile, UnknownKeyIsNamed) {
  auto r = parse(std::string(kJob) + "epoch=3\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "w.toml: training[0].epoch");
}

TEST(WorkloadFile, WrongTypeIsNamed) {
  auto r = parse("[[training]]\nname='ft'\nmodel='llama-3.1-8b'\ntokens='lots'\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "w.toml: training[0].tokens");
}

TEST(WorkloadFile, DeadlineInThePastIsRejected) {
  auto r = parse(std::string(kJob) + "deadline=2025-01-01\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "w.toml: training[0].deadline");
  EXPECT_NE(r.error().message.find("not in the future"), std::string::npos);
  EXPECT_TRUE(parse(std::string(kJob) + "deadline=2027-06-30\n").ok());
}

TEST(WorkloadFile, ZeroBudgetIsRejected) {
  auto r = parse(std::string(kJob) + "[constraints]\nbudget_capex_usd=0\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "w.toml: constraints.budget_capex_usd");
}

TEST(WorkloadFile, MalformedTomlIsAnError) {
  auto r = parse("[[training]\nname=");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("malformed TOML"), std::string::npos);
}

TEST(WorkloadFile, UnknownModelAndTierAreNamed) {
  auto m = parse("[[training]]\nname='ft'\nmodel='llama-9'\ntokens=1e8\n");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().field, "w.toml: training[0].model");
  auto t = parse(std::string(kJob) + "[constraints]\ntiers=['cloud']\n");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().field, "w.toml: constraints.tiers");
}

TEST(WorkloadFile, TokensOrEpochsButNotBoth) {
  EXPECT_FALSE(parse("[[training]]\nname='ft'\nmodel='gpt2'\ntokens=1e8\nepochs=2\ndataset_tokens=1e6\n").ok());
  EXPECT_FALSE(parse("[[training]]\nname='ft'\nmodel='gpt2'\n").ok());
  EXPECT_TRUE(parse("[[training]]\nname='ft'\nmodel='gpt2'\nepochs=2\ndataset_tokens=1e6\n").ok());
}

TEST(WorkloadFile, AverageRateAbovePeakIsRejected) {
  auto r = parse("[[inference]]\nname='c'\nmodel='gpt2'\nprompt_tokens=1\noutput_tokens=1\npeak_rps=1\naverage_rps=5\n"
                 "ttft_target_s=1\ntpot_target_s=1\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "w.toml: inference[0].average_rps");
}

// A service says its traffic is chat (lengths spread as ShareGPT's) with lengths = "chat".
TEST(WorkloadFile, ChatLengthsAreNamedAndTheirMeansChecked) {
  const std::string service = "[[inference]]\nname='c'\nmodel='gpt2'\npeak_rps=1\nttft_target_s=1\ntpot_target_s=1\n";
  auto chat = parse(service + "prompt_tokens=300\noutput_tokens=200\nlengths='chat'\n");
  ASSERT_TRUE(chat.ok()) << chat.error().to_string();
  EXPECT_TRUE(chat->inference[0].target.chat_lengths);
  auto fixed = parse(service + "prompt_tokens=300\noutput_tokens=200\n");
  ASSERT_TRUE(fixed.ok());
  EXPECT_FALSE(fixed->inference[0].target.chat_lengths);
  auto odd = parse(service + "prompt_tokens=300\noutput_tokens=200\nlengths='zipf'\n");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().field, "w.toml: inference[0].lengths");
  auto long_prompt = parse(service + "prompt_tokens=3000\noutput_tokens=200\nlengths='chat'\n");
  ASSERT_FALSE(long_prompt.ok());
  EXPECT_EQ(long_prompt.error().field, "w.toml: inference[0].lengths");
}

// A service may pin attention data parallelism (attention_dp = "on" | "off"; default "auto");
// "on" for a dense model, or anything but the three words, is an error naming the field.
TEST(WorkloadFile, AttentionDpIsAChoiceOfThreeAndNeedsAMoeModel) {
  const std::string service = "[[inference]]\nname='c'\npeak_rps=1\nttft_target_s=1\ntpot_target_s=1\n"
                              "prompt_tokens=300\noutput_tokens=200\n";
  auto dflt = parse(service + "model='qwen3-235b-a22b'\n");
  ASSERT_TRUE(dflt.ok()) << dflt.error().to_string();
  EXPECT_EQ(dflt->inference[0].attention_dp, AttentionDpChoice::automatic);
  auto on = parse(service + "model='qwen3-235b-a22b'\nengine='sglang'\nattention_dp='on'\n");
  ASSERT_TRUE(on.ok()) << on.error().to_string();
  EXPECT_EQ(on->inference[0].attention_dp, AttentionDpChoice::on);
  auto dense = parse(service + "model='llama-3.1-8b'\nattention_dp='on'\n");
  ASSERT_FALSE(dense.ok());
  EXPECT_EQ(dense.error().field, "w.toml: inference[0].attention_dp");
  EXPECT_TRUE(parse(service + "model='llama-3.1-8b'\nattention_dp='off'\n").ok());
  auto odd = parse(service + "model='qwen3-235b-a22b'\nattention_dp='yes'\n");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().field, "w.toml: inference[0].attention_dp");
  auto typed = parse(service + "model='qwen3-235b-a22b'\nattention_dp=true\n");
  ASSERT_FALSE(typed.ok());
  EXPECT_EQ(typed.error().field, "w.toml: inference[0].attention_dp");
}

TEST(WorkloadFile, EmptyFileIsAnError) { EXPECT_FALSE(parse("name='x'\n").ok()); }

}  // namespace gpuplan
