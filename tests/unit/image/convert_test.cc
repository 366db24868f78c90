#include "ferry/convert.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <map>

#include "ferry/atomic_file.h"
#include "ferry/fault_env.h"
#include "testutil/image_util.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;
using Outcome = ConvertItem::Outcome;

class ConvertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = dir_.Join("src");
    fs::create_directories(src_);
    dst_ = dir_.Join("dst");
    fs::copy(test::SamplesDir() + "/dataset/cat", src_ + "/cat",
             fs::copy_options::recursive);
    fs::copy(test::SamplesDir() + "/images/png/rgba8.png", src_ + "/rgba.png");
    test::WriteFile(Env::Default(), src_ + "/notes.txt", "not an image");
    std::string png = test::SampleBytes("images/png/rgb8.png");
    test::WriteFile(Env::Default(), src_ + "/broken/truncated.png",
                    png.substr(0, png.size() / 2));
    test::WriteFile(Env::Default(), src_ + "/broken/fake.png",
                    "text, named like a PNG");
    opt_.transcode.resize.width = opt_.transcode.resize.height = 64;
  }

  std::map<std::string, ConvertItem> Run(ConvertSummary* sum,
                                         const ConvertOptions* o = nullptr) {
    std::map<std::string, ConvertItem> items;
    auto r = ConvertTree(src_, dst_, o ? *o : opt_,
                         [&](const ConvertItem& i) { items[i.input] = i; });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok() && sum) *sum = *r;
    return items;
  }

  // Output name -> bytes, ignoring ferry's own state files.
  std::map<std::string, std::string> Outputs() {
    std::map<std::string, std::string> out;
    auto files = ListFilesRecursive(Env::Default(), dst_);
    if (!files.ok()) return out;
    for (const auto& rel : *files) {
      if (rel.rfind(".ferry", 0) == 0) continue;
      out[rel] = test::ReadFile(Env::Default(), dst_ + "/" + rel);
    }
    return out;
  }

  test::ScratchDir dir_;
  std::string src_, dst_;
  ConvertOptions opt_;
};

TEST_F(ConvertTest, ConvertsEveryImageAndReportsEachBadOne) {
  ConvertSummary sum;
  auto items = Run(&sum);
  EXPECT_EQ(sum.converted, 21u);  // 20 cats + rgba
  EXPECT_EQ(sum.skipped, 1u);     // notes.txt
  EXPECT_EQ(sum.failed, 2u);
  EXPECT_EQ(items["notes.txt"].outcome, Outcome::kSkipped);
  EXPECT_EQ(items["broken/truncated.png"].outcome, Outcome::kFailed);
  EXPECT_NE(items["broken/truncated.png"].error.ToString().find("truncated"),
            std::string::npos);
  EXPECT_EQ(items["broken/fake.png"].outcome, Outcome::kFailed);
  EXPECT_EQ(items["rgba.png"].output, "rgba.jpg");
  auto outputs = Outputs();
  EXPECT_EQ(outputs.size(), 21u);
  for (const auto& [name, bytes] : outputs) {
    auto img = image::DecodeJpeg(bytes, {});
    ASSERT_TRUE(img.ok()) << name;
    EXPECT_EQ(std::max(img->width, img->height), 64) << name;
  }
  EXPECT_FALSE(fs::exists(dst_ + "/broken/truncated.jpg"));
}

TEST_F(ConvertTest, RerunKeepsUpToDateOutputsAndRedoesChangedInputs) {
  ConvertSummary sum;
  Run(&sum);
  auto before = fs::last_write_time(dst_ + "/rgba.jpg");
  Run(&sum);
  EXPECT_EQ(sum.converted, 0u);
  EXPECT_EQ(sum.up_to_date, 21u);
  EXPECT_EQ(fs::last_write_time(dst_ + "/rgba.jpg"), before);
  // A newer input is converted again; the rest stay.
  fs::last_write_time(src_ + "/rgba.png", fs::file_time_type::clock::now() +
                                              std::chrono::seconds(5));
  auto items = Run(&sum);
  EXPECT_EQ(sum.converted, 1u);
  EXPECT_EQ(items["rgba.png"].outcome, Outcome::kConverted);
}

TEST_F(ConvertTest, ChangedOptionsMakeEveryOutputStale) {
  ConvertSummary sum;
  Run(&sum);
  ConvertOptions bigger = opt_;
  bigger.transcode.resize.width = bigger.transcode.resize.height = 32;
  Run(&sum, &bigger);
  EXPECT_EQ(sum.converted, 21u);
  Run(&sum, &bigger);
  EXPECT_EQ(sum.converted, 0u);
}

// Every option that changes output bytes, changed alone, makes the outputs
// of the same options otherwise stale (a fingerprint that forgets a field,
// say --quality, would keep them as "up to date").
TEST_F(ConvertTest, EveryOutputOptionIsInTheResumeFingerprint) {
  using image::TranscodeOptions;
  const std::vector<
      std::pair<const char*, std::function<void(TranscodeOptions*)>>>
      changes = {
          {"autorotate",
           [](TranscodeOptions* t) { t->decode.autorotate = false; }},
          {"pillow_16bit",
           [](TranscodeOptions* t) { t->decode.pillow_16bit = true; }},
          {"shrink_on_load",
           [](TranscodeOptions* t) { t->shrink_on_load = false; }},
          {"width", [](TranscodeOptions* t) { t->resize.width = 48; }},
          {"height", [](TranscodeOptions* t) { t->resize.height = 48; }},
          {"mode",
           [](TranscodeOptions* t) {
             t->resize.mode = image::ResizeMode::kCover;
           }},
          {"filter",
           [](TranscodeOptions* t) { t->resize.filter = image::Filter::kBox; }},
          {"upscale", [](TranscodeOptions* t) { t->resize.upscale = true; }},
          {"background.r",
           [](TranscodeOptions* t) { t->resize.background.r = 0; }},
          {"background.g",
           [](TranscodeOptions* t) { t->resize.background.g = 0; }},
          {"background.b",
           [](TranscodeOptions* t) { t->resize.background.b = 0; }},
          {"quality", [](TranscodeOptions* t) { t->encode.quality = 80; }},
          {"subsampling",
           [](TranscodeOptions* t) {
             t->encode.subsampling = image::Subsampling::k444;
           }},
          {"optimize", [](TranscodeOptions* t) { t->encode.optimize = true; }},
          {"progressive",
           [](TranscodeOptions* t) { t->encode.progressive = true; }},
      };
  ConvertSummary sum;
  for (const auto& [name, change] : changes) {
    SCOPED_TRACE(name);
    Run(&sum);  // the base options (converts again after the last change)
    ConvertOptions changed = opt_;
    change(&changed.transcode);
    Run(&sum, &changed);
    EXPECT_EQ(sum.converted, 21u);
    EXPECT_EQ(sum.up_to_date, 0u);
  }
}

TEST_F(ConvertTest, OutputIsTheSameWhateverTheThreadCount) {
  ConvertSummary sum;
  opt_.jobs = 1;
  Run(&sum);
  auto one = Outputs();
  fs::remove_all(dst_);
  opt_.jobs = 3;
  Run(&sum);
  EXPECT_EQ(Outputs(), one);
}

TEST_F(ConvertTest, DryRunWritesNothing) {
  opt_.dry_run = true;
  ConvertSummary sum;
  auto items = Run(&sum);
  EXPECT_EQ(sum.would_convert, 21u);
  EXPECT_EQ(sum.failed, 2u);
  EXPECT_FALSE(fs::exists(dst_));
}

TEST_F(ConvertTest, StaleTempFilesOfAKilledRunAreRemovedUserFilesKept) {
  const std::string stale =
      dst_ + "/cat/.ferry-tmp-2147483646-0123456789ab-cat_000.jpg";
  const std::string users = dst_ + "/cat/cat_000.jpg.tmp-0123456789ab";
  test::WriteFile(Env::Default(), stale, "half");
  test::WriteFile(Env::Default(), users, "mine");
  ConvertSummary sum;
  Run(&sum);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(users));
}

TEST_F(ConvertTest, CollidingOutputNamesFailTheSecondInput) {
  fs::copy(test::SamplesDir() + "/images/jpeg/baseline.jpg",
           src_ + "/rgba.jpg");
  ConvertSummary sum;
  auto items = Run(&sum);
  EXPECT_EQ(items["rgba.jpg"].outcome, Outcome::kConverted);  // sorted first
  EXPECT_EQ(items["rgba.png"].outcome, Outcome::kFailed);
  EXPECT_NE(
      items["rgba.png"].error.ToString().find("already made from rgba.jpg"),
      std::string::npos);
}

TEST_F(ConvertTest, FailuresMidRunLeaveNoPartialOutputAndARerunFinishes) {
  for (int n : {3, 10, 25, 60}) {
    SCOPED_TRACE(n);
    fs::remove_all(dst_);
    FaultInjectionEnv fenv(Env::Default());
    fenv.FailNthOperation(n);
    ConvertOptions o = opt_;
    o.env = &fenv;
    o.jobs = 2;
    (void)ConvertTree(src_, dst_, o, [](const ConvertItem&) {});
    for (const auto& [name, bytes] : Outputs()) {
      EXPECT_FALSE(IsAtomicTempName(name)) << name;
      EXPECT_TRUE(image::DecodeJpeg(bytes, {}).ok()) << name;
    }
    ConvertSummary sum;
    Run(&sum);
    EXPECT_EQ(sum.converted + sum.up_to_date, 21u);
    EXPECT_EQ(Outputs().size(), 21u);
  }
}

TEST_F(ConvertTest, ASecondWriterOnTheSameDestinationIsRefused) {
  ASSERT_OK(Env::Default()->CreateDirs(dst_));
  auto lock = Env::Default()->LockFile(dst_ + "/.ferry-convert.lock", false);
  ASSERT_OK(lock.status());
  auto r = ConvertTree(src_, dst_, opt_, [](const ConvertItem&) {});
  EXPECT_TRUE(r.status().IsUnavailable()) << r.status().ToString();
}

TEST_F(ConvertTest, ASingleFileConvertsToTheNamedOutput) {
  auto r = ConvertTree(src_ + "/rgba.png", dir_.Join("one.jpg"), opt_,
                       [](const ConvertItem&) {});
  ASSERT_OK(r.status());
  EXPECT_EQ(r->converted, 1u);
  EXPECT_TRUE(fs::exists(dir_.Join("one.jpg")));
}

TEST(JpegOutputNameTest, ReplacesTheExtension) {
  EXPECT_EQ(JpegOutputName("a/b.png"), "a/b.jpg");
  EXPECT_EQ(JpegOutputName("a/b.tar.PNG"), "a/b.tar.jpg");
  EXPECT_EQ(JpegOutputName("a.d/noext"), "a.d/noext.jpg");
  EXPECT_EQ(JpegOutputName(".hidden"), ".hidden.jpg");
}

// A stand-in ICC profile: a header with the signature and a data colour
// space ("RGB ", "GRAY", "CMYK"), padding after.
std::string Profile(const std::string& space) {
  std::string p(3000, 'I');
  p.replace(16, 4, space);
  p.replace(36, 4, "acsp");
  return p;
}

// A sample PNG with an iCCP chunk right after IHDR.
std::string PngWithProfile(const std::string& sample,
                           const std::string& profile) {
  std::string png = test::SampleBytes("images/png/" + sample);
  std::string iccp =
      std::string("test profile") + '\0' + '\0' + test::ZlibCompress(profile);
  return png.substr(0, 33) + test::PngChunk("iCCP", iccp) + png.substr(33);
}

// A sample JPEG with the profile in one APP2 segment right after SOI.
std::string JpegWithProfile(const std::string& sample,
                            const std::string& profile) {
  std::string jpeg = test::SampleBytes("images/jpeg/" + sample);
  std::string body = std::string("ICC_PROFILE\0\1\1", 14) + profile;
  const size_t len = body.size() + 2;
  return jpeg.substr(0, 2) + "\xFF\xE2" + static_cast<char>(len >> 8) +
         static_cast<char>(len & 0xFF) + body + jpeg.substr(2);
}

TEST(IccTest, ProfilesSurviveWhenAskedFor) {
  const std::string profile = Profile("RGB ");
  // PNG: an iCCP chunk.
  const std::string png = PngWithProfile("rgb8.png", profile);
  image::DecodeOptions want;
  want.read_icc = true;
  EXPECT_EQ(image::DecodePng(png, want)->icc_profile, profile);
  EXPECT_EQ(image::DecodePng(png, {})->icc_profile, "");
  // Through transcode, into the JPEG, and back.
  image::JpegEncoder enc;
  image::TranscodeOptions t;
  t.keep_icc = true;
  auto jpeg = image::Transcode(png, t, &enc);
  ASSERT_OK(jpeg.status());
  EXPECT_EQ(image::DecodeJpeg(*jpeg, want)->icc_profile, profile);
  t.keep_icc = false;
  EXPECT_EQ(image::Transcode(png, t, &enc)->find("ICC_PROFILE"),
            std::string::npos);
}

// Issue 10 D19: --keep-icc copied a CMYK JPEG's CMYK profile into the RGB
// output, which LittleCMS rejects. A profile is kept only when its colour
// space is the output's.
TEST(IccTest, KeptOnlyWhenItsColourSpaceIsTheOutputs) {
  image::JpegEncoder enc;
  image::TranscodeOptions t;
  t.keep_icc = true;
  image::DecodeOptions want;
  want.read_icc = true;
  auto out_profile = [&](const std::string& input) {
    auto jpeg = image::Transcode(input, t, &enc);
    EXPECT_OK(jpeg.status());
    if (!jpeg.ok()) return std::string("?");
    return image::DecodeJpeg(*jpeg, want)->icc_profile;
  };
  const std::string cmyk = Profile("CMYK"), rgb = Profile("RGB "),
                    gray = Profile("GRAY");
  EXPECT_EQ(out_profile(JpegWithProfile("cmyk.jpg", cmyk)), "");
  EXPECT_EQ(out_profile(JpegWithProfile("baseline.jpg", rgb)), rgb);
  EXPECT_EQ(out_profile(PngWithProfile("rgb8.png", cmyk)), "");
  EXPECT_EQ(out_profile(PngWithProfile("gray8.png", gray)), gray);
  EXPECT_EQ(out_profile(PngWithProfile("gray8.png", rgb)), "");
  EXPECT_EQ(out_profile(PngWithProfile("rgb8.png", gray)), "");
  // Gray + alpha over a coloured background becomes RGB: a gray profile no
  // longer fits.
  const std::string ga = PngWithProfile("gray_alpha8.png", gray);
  EXPECT_EQ(out_profile(ga), gray);  // over white: still gray
  t.resize.background = image::Rgb{255, 0, 0};
  EXPECT_EQ(out_profile(ga), "");
  // Not a profile at all (no 'acsp' signature): dropped.
  t.resize.background = image::Rgb{};
  EXPECT_EQ(out_profile(PngWithProfile("rgb8.png", std::string(3000, 'I'))),
            "");
}

}  // namespace
}  // namespace ferry
