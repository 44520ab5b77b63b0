// The YAML validation machinery: every bad value names file:line:column, the
// key, the value and what is allowed; unknown and repeated keys are errors.
#include "common/config_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fibnic {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

YamlDocument Doc(const std::string& text) {
  auto d = YamlDocument::Parse(text, "t.yaml");
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return *d;
}

TEST(ConfigYaml, ReadsTypedValuesAndDefaults) {
  YamlDocument doc = Doc(
      "a:\n"
      "  n: 42\n"
      "  b: true\n"
      "  word: file\n"
      "  d: 250us\n"
      "  x: 1.5\n"
      "  ip: 10.0.0.1\n"
      "  mac: 02:00:00:00:00:01\n"
      "  listen: '[::1]:8080'\n"
      "  list: [254, 100]\n");
  YamlErrors errs(doc.name());
  YamlMap root(doc.root(), "", &errs);
  YamlMap a = root.Map("a");
  EXPECT_EQ(a.Int<int>("n", 0, {0, 100}), 42);
  EXPECT_TRUE(a.Bool("b", false));
  EXPECT_EQ(a.Enum("word", 0, {"pci", "file"}), 1u);
  EXPECT_EQ(a.Duration("d", std::chrono::milliseconds(1), std::chrono::nanoseconds(0), std::chrono::seconds(1)),
            std::chrono::microseconds(250));
  EXPECT_DOUBLE_EQ(a.Double("x", 0, 1, 2), 1.5);
  EXPECT_EQ(a.Address("ip")->ToString(), "10.0.0.1");
  EXPECT_EQ(a.Mac("mac")->ToString(), "02:00:00:00:00:01");
  Endpoint ep = a.Listen("listen", {});
  EXPECT_EQ(ep.ToString(), "[::1]:8080");
  EXPECT_THAT(a.IntList("list", {}, 0, 255), ElementsAre(254, 100));
  EXPECT_EQ(a.String("absent", "dflt"), "dflt");
  EXPECT_EQ(a.Integer("absent2", 7, 0, 10), 7);
  a.Finish();
  root.Finish();
  EXPECT_TRUE(errs.ToStatus().ok()) << errs.ToStatus().ToString();
}

TEST(ConfigYaml, BadValueNamesFileLineColumnKeyValueAndAllowed) {
  YamlDocument doc = Doc(
      "device:\n"
      "  backend: pcie\n"
      "  code_bits: 3\n"
      "  batch: 5 ms\n");
  YamlErrors errs(doc.name());
  YamlMap root(doc.root(), "", &errs);
  YamlMap dev = root.Map("device");
  EXPECT_EQ(dev.Enum("backend", 1, {"pci", "file"}), 1u);  // default kept
  EXPECT_EQ(dev.OneOfInts("code_bits", 2, {2, 4}), 2);
  dev.Duration("batch", std::chrono::milliseconds(1), std::chrono::nanoseconds(0), std::chrono::seconds(1));
  dev.Finish();
  root.Finish();
  ASSERT_EQ(errs.errors().size(), 3u);
  EXPECT_EQ(errs.errors()[0], "t.yaml:2:12: device.backend: bad value 'pcie'; allowed: pci, file");
  EXPECT_EQ(errs.errors()[1], "t.yaml:3:14: device.code_bits: bad value '3'; allowed: 2, 4");
  EXPECT_THAT(errs.errors()[2], HasSubstr("t.yaml:4:10: device.batch: bad value '5 ms'"));
  Status st = errs.ToStatus();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST(ConfigYaml, UnknownAndRepeatedKeysAreErrors) {
  YamlDocument doc = Doc(
      "web:\n"
      "  listen: 127.0.0.1:80\n"
      "  lisen: 127.0.0.1:81\n"
      "  listen: 127.0.0.1:82\n"
      "extra: 1\n");
  YamlErrors errs(doc.name());
  YamlMap root(doc.root(), "", &errs);
  YamlMap web = root.Map("web");
  web.Listen("listen", {});
  web.Finish();
  root.Finish();
  ASSERT_EQ(errs.errors().size(), 3u) << errs.ToStatus().ToString();
  EXPECT_EQ(errs.errors()[0], "t.yaml:4:3: web.listen: key given twice");
  EXPECT_EQ(errs.errors()[1], "t.yaml:3:3: web.lisen: unknown key; allowed here: listen");
  EXPECT_EQ(errs.errors()[2], "t.yaml:5:1: extra: unknown key; allowed here: web");
}

TEST(ConfigYaml, WrongShapesAreErrors) {
  YamlDocument doc = Doc(
      "ports: 3\n"
      "web: [1, 2]\n"
      "sources:\n"
      "  tables: {a: 1}\n"
      "  more: [1, x]\n");
  YamlErrors errs(doc.name());
  YamlMap root(doc.root(), "", &errs);
  EXPECT_TRUE(root.MapList("ports").empty());
  root.Map("web").Finish();
  YamlMap src = root.Map("sources");
  EXPECT_THAT(src.IntList("tables", {254}, 0, 10), ElementsAre(254));
  EXPECT_THAT(src.IntList("more", {254}, 0, 10), ElementsAre(254));
  src.Finish();
  root.Finish();
  ASSERT_EQ(errs.errors().size(), 4u) << errs.ToStatus().ToString();
  EXPECT_EQ(errs.errors()[0], "t.yaml:1:8: ports: expected a list of mappings, found a scalar");
  EXPECT_EQ(errs.errors()[1], "t.yaml:2:6: web: expected a mapping of keys, found a list");
  EXPECT_THAT(errs.errors()[2], HasSubstr("t.yaml:4:11: sources.tables: expected a list of integers"));
  EXPECT_EQ(errs.errors()[3], "t.yaml:5:13: sources.more: bad value 'x'; allowed: a list of integers in 0..10");
}

TEST(ConfigYaml, MissingRequiredKeyPointsAtTheSection) {
  YamlDocument doc = Doc("device:\n  backend: pci\n");
  YamlErrors errs(doc.name());
  YamlMap root(doc.root(), "", &errs);
  YamlMap dev = root.Map("device");
  dev.String("backend", "");
  EXPECT_FALSE(dev.Require("bdf"));
  ASSERT_EQ(errs.errors().size(), 1u);
  EXPECT_EQ(errs.errors()[0], "t.yaml:2:3: device.bdf: missing required key");
}

TEST(ConfigYaml, SyntaxErrorNamesThePlace) {
  auto d = YamlDocument::Parse("a:\n  b: [1, 2\n", "bad.yaml");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("bad.yaml:"));
  EXPECT_THAT(d.status().message(), HasSubstr("YAML syntax error"));
  auto missing = YamlDocument::LoadFile("/nonexistent/fibnicd.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
}

TEST(ConfigYaml, EmptyDocumentReadsAsAllDefaults) {
  YamlDocument doc = Doc("");
  YamlErrors errs(doc.name());
  YamlMap root(doc.root(), "", &errs);
  YamlMap dev = root.Map("device");
  EXPECT_EQ(dev.Int<int>("code_bits", 2, {2, 4}), 2);
  dev.Finish();
  root.Finish();
  EXPECT_TRUE(errs.empty());
}

TEST(ConfigYaml, EndpointAndDurationParsing) {
  EXPECT_TRUE(Endpoint::Parse("127.0.0.1:2620").ok());
  EXPECT_FALSE(Endpoint::Parse("127.0.0.1").ok());
  EXPECT_FALSE(Endpoint::Parse("127.0.0.1:70000").ok());
  EXPECT_FALSE(Endpoint::Parse("::1:80").ok());
  EXPECT_FALSE(Endpoint::Parse("[::1]80").ok());
  EXPECT_FALSE(Endpoint::Parse("localhost:80").ok());
  EXPECT_EQ(*ParseDuration("30s"), std::chrono::seconds(30));
  EXPECT_EQ(*ParseDuration("5m"), std::chrono::minutes(5));
  EXPECT_FALSE(ParseDuration("5").ok());
  EXPECT_FALSE(ParseDuration("-5ms").ok());
  EXPECT_FALSE(ParseDuration("1.5s").ok());
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(1)), "1ms");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(1500)), "1500ms");
}

}  // namespace
}  // namespace fibnic
