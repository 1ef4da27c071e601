#include "sandbox/profile.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/glob.h"

namespace kd::sandbox {
namespace {

const char* kMinimal =
    R"({"name": "t", "system_ro": ["/usr"], "tmpfs": [{"path": "/tmp", "size_mb": 8}],
  "dev": ["null"], "landlock": "required", "cgroup": "off"})";

std::string error_of(const std::string& text) {
  try {
    parse_profile(text, "p.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string with(const std::string& key_value) {
  std::string s = kMinimal;
  s.insert(s.size() - 1, ", " + key_value);
  return s;
}

TEST(Profile, DefaultProfilesLoadAndDiffer) {
  Profile author = load_profile("author");
  Profile verifier = load_profile("verifier");
  EXPECT_EQ(author.name, "author");
  EXPECT_EQ(verifier.name, "verifier");
  EXPECT_EQ(author.landlock, Need::Required);
  EXPECT_EQ(author.seccomp_notify, Need::Required);
  EXPECT_EQ(verifier.seccomp_notify, Need::Required);
  EXPECT_GT(verifier.limits.timeout_s, author.limits.timeout_s);
  EXPECT_FALSE(author.system_ro.empty());
  bool tmp = false;
  for (const auto& t : author.tmpfs)
    tmp |= t.path == "/tmp" && t.size_mb > 0;
  EXPECT_TRUE(tmp);
  bool denies_keys = false;
  for (const auto& d : author.env.deny)
    denies_keys |= glob_match(d, "ANTHROPIC_API_KEY");
  EXPECT_TRUE(denies_keys);
}

TEST(Profile, MinimalParsesWithDefaults) {
  Profile p = parse_profile(kMinimal, "p.json");
  EXPECT_EQ(p.cgroup, Need::Off);
  EXPECT_EQ(p.limits.pids, 512u);
  EXPECT_EQ(p.dev, std::vector<std::string>{"null"});
  EXPECT_EQ(p.seccomp_notify, Need::Required);  // fail closed when a profile does not say
  EXPECT_EQ(parse_profile(with(R"("seccomp_notify": "best_effort")"), "p.json").seccomp_notify,
            Need::BestEffort);
  EXPECT_EQ(error_of(with(R"("seccomp_notify": true)")),
            "p.json: \"seccomp_notify\" must be a non-empty string");
  EXPECT_EQ(error_of(with(R"("seccomp_notify": "log")")),
            "p.json: \"seccomp_notify\" must be \"required\", \"best_effort\" or \"off\"");
}

TEST(Profile, ErrorsNameTheFileAndField) {
  EXPECT_NE(error_of("{").find("p.json: not JSON"), std::string::npos);
  EXPECT_EQ(error_of(with(R"("colour": 1)")), "p.json: unknown field \"colour\"");
  EXPECT_EQ(error_of(R"({"name": "t"})"), "p.json: missing field \"system_ro\"");
  EXPECT_EQ(error_of(with(R"("hostname": 3)")), "p.json: \"hostname\" must be a non-empty string");
  std::string rel = kMinimal;
  rel.replace(rel.find("\"/usr\""), 6, "\"usr\"");
  EXPECT_EQ(error_of(rel),
            "p.json: \"system_ro\" entry \"usr\" must be an absolute, normalized path");
  std::string ll = kMinimal;
  ll.replace(ll.find("\"required\""), 10, "\"maybe\"");
  EXPECT_EQ(error_of(ll), "p.json: \"landlock\" must be \"required\", \"best_effort\" or \"off\"");
  std::string dev = kMinimal;
  dev.replace(dev.find("\"null\""), 6, "\"../sda\"");
  EXPECT_EQ(error_of(dev), "p.json: \"dev\" entry \"../sda\" must be a plain name under /dev");
  EXPECT_EQ(error_of(with(R"("limits": {"pids": 2})")),
            "p.json: limits: \"pids\" must be at least 8 (a shell and a build need a few)");
  EXPECT_EQ(error_of(with(R"("limits": {"timeout_s": -1})")),
            "p.json: limits: \"timeout_s\" must be a number of seconds in (0, 86400]");
  EXPECT_EQ(error_of(with(R"("limits": {"nofile": "many"})")),
            "p.json: limits: \"nofile\" must be an integer from 0 to 1048576");
  std::string tmpfs = kMinimal;
  tmpfs.replace(tmpfs.find("\"size_mb\": 8"), 12, "\"size_mb\": 0");
  EXPECT_EQ(error_of(tmpfs), "p.json: tmpfs[0]: \"size_mb\" must be positive");
  EXPECT_EQ(error_of(with(R"("env": {"set": {"OPENAI_API_KEY": "x"}, "deny": ["*_API_KEY"]})")),
            "p.json: env: \"set\" sets \"OPENAI_API_KEY\", which \"deny\" forbids");
}

TEST(Profile, UnknownNameIsRefused) {
  try {
    load_profile("attacker");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a known profile"), std::string::npos);
  }
  EXPECT_THROW(load_profile("/nonexistent/profile.json"), Error);
}

}  // namespace
}  // namespace kd::sandbox
