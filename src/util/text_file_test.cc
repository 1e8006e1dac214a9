#include "util/text_file.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace gpuplan {

namespace fs = std::filesystem;

class TextFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpuplan_text_file_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(TextFileTest, ReadsARegularFile) {
  std::ofstream(path("a.json")) << "{\"x\": 1}";
  auto r = read_text_file(path("a.json"), "config");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(*r, "{\"x\": 1}");
}

TEST_F(TextFileTest, RefusesAFifoAtOnceInsteadOfWaitingForAWriter) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto r = read_text_file(path("fifo"), "config");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, path("fifo"));
  EXPECT_NE(r.error().message.find("FIFO"), std::string::npos);
}

TEST_F(TextFileTest, RefusesDirectoriesDevicesAndSockets) {
  auto d = read_text_file(dir_.string(), "profile summary");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("directory"), std::string::npos);
  auto dev = read_text_file("/dev/zero", "config");
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.error().message.find("device"), std::string::npos);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sp = path("sock");
  ASSERT_LT(sp.size(), sizeof(addr.sun_path));
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sp.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  auto so = read_text_file(sp, "config");
  ::close(s);
  ASSERT_FALSE(so.ok());
  EXPECT_NE(so.error().message.find("socket"), std::string::npos);
}

TEST_F(TextFileTest, RefusesAFileLargerThanTheCapWithoutReadingIt) {
  { std::ofstream big(path("big.json")); }
  fs::resize_file(path("big.json"), uint64_t{1} << 30);  // sparse: 1 GiB claimed, nothing written
  const auto start = std::chrono::steady_clock::now();
  auto r = read_text_file(path("big.json"), "profile summary");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("larger than 64.0 MiB"), std::string::npos) << r.error().message;
}

TEST_F(TextFileTest, MissingFileIsAOneLineErrorWithTheReason) {
  auto r = read_text_file(path("missing.json"), "config");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot open config: No such file or directory");
}

TEST_F(TextFileTest, InputFileReadsByOffsetAndStopsAtTheEnd) {
  std::ofstream(path("b.bin")) << "0123456789";
  auto f = InputFile::open(path("b.bin"), "header");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->size(), 10u);
  EXPECT_EQ(*f->read(2, 3), "234");
  EXPECT_EQ(*f->read(8, 100), "89");
  EXPECT_EQ(*f->read(20, 1), "");
}

}  // namespace gpuplan
