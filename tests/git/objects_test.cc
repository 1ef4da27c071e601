// The object store and the reader without libgit2 (git/objects.h, git/reader.h) against
// repositories written by the git command line: loose objects, packs with offset and ref deltas,
// packed refs, tags, worktrees, alternates; and the refusals: corrupt objects, unknown formats, ref
// names that leave the refs directory.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "common/files.h"
#include "git/object_format.h"
#include "git/objects.h"
#include "git/reader.h"
#include "tests/support/process.h"

namespace fs = std::filesystem;

namespace kd::git {
namespace {

const std::map<std::string, std::string> kGitEnv = {{"GIT_CONFIG_NOSYSTEM", "1"},
                                                    {"GIT_CONFIG_GLOBAL", "/dev/null"},
                                                    {"GIT_AUTHOR_NAME", "t"},
                                                    {"GIT_AUTHOR_EMAIL", "t@example.com"},
                                                    {"GIT_COMMITTER_NAME", "t"},
                                                    {"GIT_COMMITTER_EMAIL", "t@example.com"},
                                                    {"GIT_AUTHOR_DATE", "@1700000000 +0000"},
                                                    {"GIT_COMMITTER_DATE", "@1700000000 +0000"}};

std::string git(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", dir.string()});
  test::ProcessResult r = test::run_process(args, "", kGitEnv);
  EXPECT_EQ(r.exit_code, 0) << args[3] << ": " << r.err;
  return r.out;
}

std::string trimmed(std::string s) {
  while (!s.empty() && s.back() == '\n')
    s.pop_back();
  return s;
}

// A repository with nested pages, an executable, a symlink, binary bytes and an empty file, and
// a second commit that edits every page (so a repack stores deltas).
fs::path make_repo(const test::TempDir& tmp) {
  fs::path repo = tmp / "repo";
  fs::create_directories(repo / "wiki/pages");
  git(repo, {"init", "-q", "-b", "main"});
  for (int i = 0; i < 20; ++i) {
    std::string page;
    for (int line = 0; line < 100 + i; ++line)
      page += "page " + std::to_string(i) + " line " + std::to_string(line) + "\n";
    write_file_atomic(repo / ("wiki/pages/p" + std::to_string(i) + ".md"), page);
  }
  write_file_atomic(repo / "wiki/binary.bin", std::string("\0\1\2\xff\n\0zz", 8));
  write_file_atomic(repo / "wiki/empty.md", "");
  write_file_atomic(repo / "run.sh", "#!/bin/sh\n");
  fs::permissions(repo / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
  fs::create_symlink("pages/p3.md", repo / "wiki/link.md");
  git(repo, {"add", "-A"});
  git(repo, {"commit", "-qm", "one"});
  git(repo, {"branch", "first"});
  for (int i = 0; i < 20; ++i) {
    fs::path p = repo / ("wiki/pages/p" + std::to_string(i) + ".md");
    write_file_atomic(p, read_file(p) + "edited\n");
  }
  git(repo, {"commit", "-qam", "two"});
  return repo;
}

// Every path in `rev`'s tree read through CommitTree equals what git itself prints.
void expect_matches_git(const fs::path& repo, const std::string& rev) {
  CommitTree tree(repo, rev);
  EXPECT_EQ(tree.commit(), trimmed(git(repo, {"rev-parse", rev + "^{commit}"})));
  std::string listing = git(repo, {"ls-tree", "-r", "--name-only", rev});
  size_t start = 0, files = 0;
  while (start < listing.size()) {
    size_t end = listing.find('\n', start);
    std::string path = listing.substr(start, end - start);
    start = end + 1;
    auto e = tree.lookup(path);
    ASSERT_TRUE(e) << path;
    EXPECT_TRUE(e->is_file) << path;
    EXPECT_EQ(e->symlink, path == "wiki/link.md") << path;
    EXPECT_EQ(e->content, git(repo, {"cat-file", "blob", rev + ":" + path})) << path;
    ++files;
  }
  EXPECT_EQ(files, 24u);
}

TEST(ObjectStore, LooseObjectsMatchGit) {
  test::TempDir tmp;
  fs::path repo = make_repo(tmp);
  expect_matches_git(repo, "HEAD");
  expect_matches_git(repo, "refs/heads/first");
  CommitTree tree(repo, "HEAD");
  EXPECT_FALSE(tree.lookup("wiki/pages/nope.md"));
  EXPECT_FALSE(tree.lookup("run.sh/inside"));  // through a file
  EXPECT_FALSE(tree.lookup(""));
  auto dir = tree.lookup("wiki/pages");
  ASSERT_TRUE(dir);
  EXPECT_FALSE(dir->is_file);
  std::vector<std::string> names = tree.list("wiki");
  EXPECT_EQ(names, (std::vector<std::string>{"binary.bin", "empty.md", "link.md"}));
  EXPECT_EQ(tree.list("wiki/pages").size(), 20u);
  EXPECT_TRUE(tree.list("run.sh").empty());
}

TEST(ObjectStore, PackedObjectsWithOffsetDeltasMatchGit) {
  test::TempDir tmp;
  fs::path repo = make_repo(tmp);
  git(repo, {"gc", "-q", "--aggressive"});
  ASSERT_EQ(git(repo, {"count-objects"}).rfind("0 objects", 0), 0u) << "objects left loose";
  std::string idx;
  for (auto& e : fs::directory_iterator(repo / ".git/objects/pack"))
    if (e.path().extension() == ".idx") idx = e.path();
  // Entries with a delta base carry two more columns in verify-pack's listing.
  std::string verify = git(repo, {"verify-pack", "-v", idx});
  ASSERT_NE(verify.find("chain length = 1:"), std::string::npos) << "no deltas to exercise";
  ASSERT_FALSE(fs::exists(repo / ".git/refs/heads/first")) << "refs not packed";
  expect_matches_git(repo, "HEAD");
  expect_matches_git(repo, "refs/heads/first");
}

TEST(ObjectStore, PackedObjectsWithRefDeltasMatchGit) {
  test::TempDir tmp;
  fs::path repo = make_repo(tmp);
  git(repo, {"-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq"});
  git(repo, {"prune-packed"});
  ASSERT_EQ(git(repo, {"count-objects"}).rfind("0 objects", 0), 0u) << "objects left loose";
  expect_matches_git(repo, "HEAD");
  expect_matches_git(repo, "refs/heads/first");
}

TEST(ObjectStore, TagsSymbolicRefsWorktreesAndAlternates) {
  test::TempDir tmp;
  fs::path repo = make_repo(tmp);
  git(repo, {"tag", "-a", "v1", "-m", "annotated", "first"});
  git(repo, {"tag", "-a", "v2", "-m", "tag of a tag", "v1"});
  EXPECT_EQ(CommitTree(repo, "refs/tags/v2").commit(), trimmed(git(repo, {"rev-parse", "first"})));
  git(repo, {"symbolic-ref", "refs/heads/alias", "refs/heads/first"});
  EXPECT_EQ(CommitTree(repo, "refs/heads/alias").commit(),
            trimmed(git(repo, {"rev-parse", "first"})));

  git(repo, {"worktree", "add", "-q", (tmp / "wt").c_str(), "first"});
  EXPECT_TRUE(fs::is_regular_file(tmp / "wt/.git"));
  expect_matches_git(tmp / "wt", "HEAD");  // HEAD is the worktree's, objects are shared

  test::run_process({"git", "clone", "-q", "--shared", repo.string(), tmp / "borrow"}, "", kGitEnv);
  ASSERT_TRUE(fs::exists(tmp / "borrow/.git/objects/info/alternates"));
  expect_matches_git(tmp / "borrow", "HEAD");

  git(repo, {"init", "-q", "--bare", (tmp / "bare").c_str()});
  git(repo, {"push", "-q", (tmp / "bare").c_str(), "main"});
  expect_matches_git(tmp / "bare", "refs/heads/main");
}

TEST(ObjectStore, ObjectsThatDoNotMatchTheirIdAreRefused) {
  test::TempDir tmp;
  fs::path repo = make_repo(tmp);
  std::string id = trimmed(git(repo, {"rev-parse", "HEAD:wiki/pages/p1.md"}));
  fs::path loose = repo / ".git/objects" / id.substr(0, 2) / id.substr(2);
  std::string forged = std::string("blob 5") + '\0' + "evil\n";
  std::string packed(compressBound(forged.size()), '\0');
  uLongf n = packed.size();
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(packed.data()), &n,
                     reinterpret_cast<const Bytef*>(forged.data()), forged.size()),
            Z_OK);
  packed.resize(n);
  fs::permissions(loose, fs::perms::owner_write, fs::perm_options::add);
  write_file_atomic(loose, packed);
  CommitTree tree(repo, "HEAD");
  try {
    tree.lookup("wiki/pages/p1.md");
    FAIL() << "a forged object was accepted";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find(id + " in \"" + repo.string() + "\" does not match its id"),
        std::string::npos)
        << e.what();
  }
  write_file_atomic(loose, "not zlib at all");
  try {
    tree.lookup("wiki/pages/p1.md");
    FAIL() << "a corrupt object was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inflate(\"" + loose.string() + "\")"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(tree.lookup("wiki/pages/p2.md")->content, read_file(repo / "wiki/pages/p2.md"));
}

TEST(ObjectStore, TruncatedPackIsRefused) {
  test::TempDir tmp;
  fs::path repo = make_repo(tmp);
  git(repo, {"gc", "-q"});
  for (auto& e : fs::directory_iterator(repo / ".git/objects/pack"))
    if (e.path().extension() == ".pack") fs::resize_file(e.path(), 200);
  try {
    expect_matches_git(repo, "HEAD");
    FAIL() << "a truncated pack was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(".pack\""), std::string::npos) << e.what();
  }
}

TEST(ObjectStore, UnknownFormatsAndBadRefsAreRefused) {
  test::TempDir tmp;
  fs::path repo = make_repo(tmp);
  auto error_of = [](const fs::path& r, const std::string& rev) -> std::string {
    try {
      CommitTree t(r, rev);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of(repo, "refs/heads/../../config").find("is not a valid reference name"),
            std::string::npos);
  EXPECT_NE(error_of(repo, "refs/heads/nope").find("reference \"refs/heads/nope\" not found"),
            std::string::npos);
  EXPECT_NE(error_of(tmp / "nothing", "HEAD").find("is not a git repository"), std::string::npos);
  std::string blob = trimmed(git(repo, {"rev-parse", "HEAD:run.sh"}));
  git(repo, {"update-ref", "refs/tags/blob", blob});
  EXPECT_NE(error_of(repo, "refs/tags/blob").find("names a blob, not a commit"), std::string::npos);

  fs::path sha256 = tmp / "sha256";
  git(tmp.path(), {"init", "-q", "--object-format=sha256", sha256.string()});
  write_file_atomic(sha256 / "a.md", "a\n");
  git(sha256, {"add", "-A"});
  git(sha256, {"commit", "-qm", "one"});
  EXPECT_NE(error_of(sha256, "HEAD").find("extension objectformat = sha256 is not supported"),
            std::string::npos);
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

std::string raw_id(char fill) {
  return std::string(20, fill);
}

// Trees as git writes them re-serialize to their own bytes; the zero-padded and overlong modes
// and the names that are not one path component (found by fuzz_git_objects) are refused.
TEST(ObjectFormat, TreesAreReadInGitsCanonicalFormOnly) {
  test::TempDir tmp;
  fs::path repo = make_repo(tmp);
  for (const char* tree : {"HEAD^{tree}", "HEAD:wiki"}) {
    std::string data = git(repo, {"cat-file", "tree", tree});
    std::vector<TreeEntry> entries = parse_tree(data, "t");
    ASSERT_FALSE(entries.empty());
    EXPECT_EQ(tree_bytes(entries), data);
  }
  auto entry = [](const std::string& mode, const std::string& name) {
    return mode + " " + name + '\0' + raw_id('\x11');
  };
  EXPECT_EQ(parse_tree(entry("40000", "d") + entry("100644", "f"), "t").size(), 2u);
  EXPECT_EQ(error_of([&] { parse_tree(entry("040000", "d"), "t"); }),
            "t: malformed mode at byte 0");
  EXPECT_EQ(error_of([&] { parse_tree(entry("100644", "f") + entry("0100644", "g"), "t"); }),
            "t: malformed mode at byte 29");
  // 2^32 + 0100644 wraps to a valid-looking mode in an unsigned; it is too long to be one.
  EXPECT_EQ(error_of([&] { parse_tree(entry("40000100644", "f"), "t"); }),
            "t: malformed mode at byte 0");
  for (const char* name : {".", "..", "a/b", "../x"})
    EXPECT_EQ(error_of([&] { find_tree_entry(entry("100644", name), "x", "t"); }),
              "t: entry name " + quote(name) + " is not a single path component");
}

// A loose object's size is canonical decimal, as git reads it, and a declared size allocates
// nothing the stream does not hold.
TEST(ObjectFormat, LooseObjectHeadersAreCanonicalAndSizesOnlyClaims) {
  auto deflate = [](const std::string& raw) {
    std::string out(compressBound(raw.size()), '\0');
    uLongf n = out.size();
    EXPECT_EQ(compress(reinterpret_cast<Bytef*>(out.data()), &n,
                       reinterpret_cast<const Bytef*>(raw.data()), raw.size()),
              Z_OK);
    out.resize(n);
    return out;
  };
  StoredObject o = decode_loose_object(deflate(std::string("blob 3\0abc", 10)), "o");
  EXPECT_EQ(o.type, ObjectType::blob);
  EXPECT_EQ(o.data, "abc");
  EXPECT_EQ(decode_loose_object(deflate(std::string("tree 0\0", 7)), "o").data, "");
  EXPECT_EQ(error_of([&] { decode_loose_object(deflate(std::string("blob 03\0abc", 11)), "o"); }),
            "o: malformed loose object header");
  EXPECT_EQ(error_of([&] { decode_loose_object(deflate(std::string("blob +3\0abc", 11)), "o"); }),
            "o: malformed loose object header");
  EXPECT_EQ(error_of([&] {
              decode_loose_object(deflate(std::string("blob 999999999999999\0abc", 24)), "o");
            }),
            "inflate(o): the data does not have the declared 999999999999999 bytes");
  EXPECT_EQ(error_of([&] { decode_loose_object(deflate(std::string("blob 2\0abc", 10)), "o"); }),
            "o: more data than the header's 2 bytes");
  // A pack entry may claim up to 2^64 bytes in its header; inflating it is refused by name.
  std::string pack =
      std::string(12, 'P') + "\xbf\xff\xff\xff\xff\xff\xff\xff\x7f" + deflate("tiny");
  PackEntryHeader h = parse_pack_entry_header(pack, 12, "p");
  EXPECT_EQ(h.type, 3);
  EXPECT_EQ(h.data, 21u);
  EXPECT_GT(h.size, std::uint64_t(1) << 59);
  EXPECT_EQ(error_of([&] {
              inflate_exact(std::string_view(pack).substr(h.data), h.size, "p");
            }).rfind("inflate(p): the data does not have the declared ", 0),
            0u);
}

TEST(ObjectFormat, DeltasMayNotClaimMoreThanTheyProduce) {
  const std::string base = "0123456789";
  // base size 10, result size 4, copy 4 bytes from offset 2.
  EXPECT_EQ(apply_delta(base, std::string("\x0a\x04\x91\x02\x04", 5), "d"), "2345");
  // A result of 2^62 bytes declared: nothing is reserved for it, and it is not produced.
  EXPECT_EQ(error_of([&] {
              apply_delta(base, std::string("\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x40\x01x", 12),
                          "d");
            }),
            "d: delta produced 1 bytes, expected 4611686018427387904");
  EXPECT_EQ(error_of([&] { apply_delta(base, std::string("\x0a\x02\x91\x02\x04", 5), "d"); }),
            "d: delta produces more than its declared 2 bytes");
  EXPECT_EQ(error_of([&] { apply_delta(base, std::string("\x0a\x04\x05xy", 5), "d"); }),
            "d: truncated delta insert");
}

}  // namespace
}  // namespace kd::git
