#include "util/output_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpuplan {

namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char t[] = "/tmp/gpuplan-output-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string contents(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(OutputFile, APlantedSymlinkIsNotFollowed) {
  TempDir d;
  std::ofstream(d.path / "victim") << "precious";
  fs::create_symlink(d.path / "victim", d.path / "report.html");
  const Status s = write_output_file((d.path / "report.html").string(), "<html>", "--html");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->field, "--html");
  EXPECT_NE(s->message.find("symbolic link"), std::string::npos);
  EXPECT_EQ(contents(d.path / "victim"), "precious");
}

TEST(OutputFile, ReplacesARegularFileWhole) {
  TempDir d;
  std::ofstream(d.path / "out.json") << "a much longer earlier content";
  ASSERT_FALSE(write_output_file((d.path / "out.json").string(), "{}", "--json-out").has_value());
  EXPECT_EQ(contents(d.path / "out.json"), "{}");
}

TEST(OutputFile, AFullDiskIsAnError) {
  // /dev/full answers every write with ENOSPC.
  const Status s = write_output_file("/dev/full", "x", "--html");
  ASSERT_TRUE(s.has_value());
  EXPECT_NE(s->message.find("No space left on device"), std::string::npos) << s->message;
}

TEST(OutputFile, AtomicWriteFollowsTheUmaskAndLeavesNoTemporaryFile) {
  TempDir d;
  const int dir = open(d.path.c_str(), O_RDONLY | O_DIRECTORY);
  const mode_t old = umask(027);
  const Status s = write_file_atomic(dir, "summary.json", "{}\n", "x", "--out");
  umask(old);
  close(dir);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(contents(d.path / "summary.json"), "{}\n");
  EXPECT_EQ(fs::status(d.path / "summary.json").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path), fs::directory_iterator()), 1);
}

}  // namespace gpuplan
