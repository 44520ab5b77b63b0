// fibnicd's config schema: defaults, the shipped file, and clear errors.
#include "fibnicd/fibnicd_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace fibnic {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

StatusOr<FibnicdConfig> FromText(const std::string& text) {
  auto doc = YamlDocument::Parse(text, "f.yaml");
  if (!doc.ok()) return doc.status();
  return ParseFibnicdConfig(*doc);
}

TEST(FibnicdConfig, EmbeddedDefaultIsFileBackendWithKernelSource) {
  auto c = DefaultFibnicdConfig();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->device.backend, DeviceBackend::kFile);
  EXPECT_EQ(c->device.code_bits, 2);
  EXPECT_TRUE(c->kernel.enabled);
  EXPECT_THAT(c->kernel.tables, ElementsAre(255u, 254u));
  EXPECT_FALSE(c->fpm.enabled);
  EXPECT_EQ(c->web.listen.ToString(), "127.0.0.1:8080");
  EXPECT_EQ(c->policies.batch_delay, std::chrono::milliseconds(1));
  // The embedded text and the struct defaults mean the same.
  EXPECT_TRUE(c->SameSettings(FibnicdConfig{}));
}

TEST(FibnicdConfig, ShippedFileEqualsEmbeddedDefault) {
  auto shipped = LoadFibnicdConfig(FIBNIC_SOURCE_DIR "/configs/fibnicd.yaml");
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  auto def = DefaultFibnicdConfig();
  ASSERT_TRUE(def.ok());
  EXPECT_THAT(shipped->ChangedSections(*def), ::testing::IsEmpty());
}

TEST(FibnicdConfig, FullConfigIsRead) {
  auto c = FromText(R"(
device:
  backend: pci
  pci_id: "10ee:7021"
  code_bits: 4
  verify_writes: true
ports:
  - {interface: eth1, port: 0, mac: "02:00:00:00:00:01"}
  - {interface: eth2, port: 3}
sources:
  kernel: {enabled: true, tables: [254, 100], distance: 30}
  fpm: {enabled: true, listen: "[::1]:2620"}
policies:
  ecmp: punt
  slot_hysteresis: 2
  slot_hold: 90s
  slot_pins: [10.0.1.2, "fe80::2"]
  batch_delay: 200us
  batch_max: 5000
web:
  listen: 0.0.0.0:8443
  token: 0123456789abcdef0123
  tls_cert: /etc/fibnic/c.pem
  tls_key: /etc/fibnic/k.pem
logging: {level: debug}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->device.backend, DeviceBackend::kPci);
  EXPECT_EQ(*c->device.vendor_id, 0x10ee);
  EXPECT_EQ(*c->device.device_id, 0x7021);
  EXPECT_EQ(c->MakeFibConfig().caps, regs::Caps::Model4Bit());
  ASSERT_EQ(c->ports.size(), 2u);
  EXPECT_EQ(c->ports[0].mac->ToString(), "02:00:00:00:00:01");
  EXPECT_FALSE(c->ports[1].mac.has_value());
  EXPECT_EQ(c->ports[1].port, 3);
  EXPECT_THAT(c->kernel.tables, ElementsAre(254u, 100u));
  EXPECT_EQ(c->kernel.distance, 30);
  EXPECT_EQ(c->fpm.listen.ToString(), "[::1]:2620");
  EXPECT_EQ(c->policies.ecmp, EcmpPolicy::kPunt);
  EXPECT_EQ(c->policies.batch_delay, std::chrono::microseconds(200));
  EXPECT_EQ(c->MakeFibConfig().slot_hold, std::chrono::seconds(90));
  EXPECT_THAT(c->MakeFibConfig().slot_pins, ElementsAre(*IpAddr::Parse("10.0.1.2"), *IpAddr::Parse("fe80::2")));
  EXPECT_EQ(c->log_level, LogLevel::kDebug);
}

TEST(FibnicdConfig, ASlotPinMustBeAnAddress) {
  auto c = FromText("policies:\n  slot_pins: [10.0.1.2, r1]\n  slot_hold: 2h\n");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("policies.slot_pins: bad address 'r1'"));
  EXPECT_THAT(c.status().message(), HasSubstr("policies.slot_hold"));
}

TEST(FibnicdConfig, ErrorsNameFileLineKeyValueAndAllowed) {
  auto c = FromText(
      "device:\n"
      "  backend: file\n"
      "  code_bits: 8\n"
      "  bdf: 0000:03:00.0\n"
      "ports:\n"
      "  - {interface: eth1, port: 7}\n"
      "  - {interface: eth1, port: 1, mac: 'ff:ff:ff:ff:ff:ff'}\n"
      "policies:\n"
      "  ecmp: all\n"
      "logging:\n"
      "  level: verbose\n"
      "  colour: true\n");
  ASSERT_FALSE(c.ok());
  const std::string m = c.status().message();
  EXPECT_THAT(m, HasSubstr("f.yaml:3:14: device.code_bits: bad value '8'; allowed: 2, 4"));
  EXPECT_THAT(m, HasSubstr("f.yaml:4:8: device.bdf: 'bdf' is for backend 'pci'"));
  EXPECT_THAT(m, HasSubstr("f.yaml:6:29: ports[0].port: bad value '7'; allowed: an integer in 0..3"));
  EXPECT_THAT(m, HasSubstr("f.yaml:7:17: ports[1].interface: interface 'eth1' is mapped twice"));
  EXPECT_THAT(m, HasSubstr("ports[1].mac: bad value 'ff:ff:ff:ff:ff:ff'; allowed: a unicast, non-zero MAC"));
  EXPECT_THAT(m, HasSubstr("f.yaml:9:9: policies.ecmp: bad value 'all'; allowed: first, punt"));
  EXPECT_THAT(m, HasSubstr("f.yaml:11:10: logging.level: bad value 'verbose'; allowed: error, warn, info, debug"));
  EXPECT_THAT(m, HasSubstr("f.yaml:12:3: logging.colour: unknown key; allowed here: level"));
}

TEST(FibnicdConfig, CrossKeyRules) {
  EXPECT_THAT(FromText("device: {backend: pci}\n").status().message(),
              HasSubstr("device.backend: backend 'pci' needs exactly one of 'bdf' or 'pci_id'"));
  EXPECT_THAT(FromText("device: {backend: pci, bdf: '0000:03:00.0', path: /x}\n").status().message(),
              HasSubstr("'path' is for backend 'file'"));
  EXPECT_THAT(FromText("device: {backend: pci, bdf: '03:00.0'}\n").status().message(),
              HasSubstr("device.bdf: bad value '03:00.0'"));
  EXPECT_THAT(FromText("device: {path: relative.img}\n").status().message(),
              HasSubstr("allowed: an absolute file path"));
  EXPECT_THAT(FromText("web: {listen: 0.0.0.0:80}\n").status().message(),
              HasSubstr("web.listen: listening on non-loopback 0.0.0.0:80 needs 'token'"));
  EXPECT_THAT(FromText("web: {tls_cert: /a.pem}\n").status().message(),
              HasSubstr("TLS needs both 'tls_cert' and 'tls_key'"));
  EXPECT_THAT(FromText("web: {token: short}\n").status().message(), HasSubstr("token is too short"));
  EXPECT_THAT(FromText("sources: {kernel: {tables: []}}\n").status().message(),
              HasSubstr("needs at least one routing table"));
  EXPECT_THAT(FromText("ports:\n  - {port: 1}\n").status().message(),
              HasSubstr("f.yaml:2:5: ports[0].interface: missing required key"));
  EXPECT_TRUE(FromText("device: {backend: pci, bdf: '0000:03:00.0'}\n").ok());
}

// What FPM no longer does is refused by name (its routes come from the
// kernel, and nothing of zebra's is swept after a replay).
TEST(FibnicdConfig, FpmKeysNoLongerRead) {
  ASSERT_TRUE(FromText("sources: {fpm: {enabled: true}}\n").ok());
  EXPECT_THAT(FromText("policies: {stale_hold: 5s}\n").status().message(),
              HasSubstr("policies.stale_hold: is no longer read"));
  EXPECT_THAT(FromText("policies: {stale_hold_max: 2m}\n").status().message(),
              HasSubstr("policies.stale_hold_max: is no longer read"));
  EXPECT_THAT(FromText("sources: {fpm: {initial_wait: 2m}}\n").status().message(),
              HasSubstr("sources.fpm.initial_wait: is no longer read"));
  EXPECT_THAT(FromText("sources: {fpm: {distance: 20}}\n").status().message(),
              HasSubstr("sources.fpm.distance: is no longer read"));
  EXPECT_THAT(FromText("sources: {kernel: {enabled: false}, fpm: {enabled: true}}\n").status().message(),
              HasSubstr("sources.fpm.enabled: needs sources.kernel enabled"));
}

TEST(FibnicdConfig, FpmBeyondLoopbackNeedsTheOptIn) {
  // FPM has no authentication and programs the device: loopback unless the operator opts in.
  EXPECT_THAT(FromText("sources: {fpm: {enabled: true, listen: 0.0.0.0:2620}}\n").status().message(),
              HasSubstr("sources.fpm.listen: bad value '0.0.0.0:2620'; allowed: a loopback address"));
  EXPECT_THAT(FromText("sources: {fpm: {listen: '[2001:db8::1]:2620'}}\n").status().message(),
              HasSubstr("set 'allow_non_loopback: true'"));
  auto opted = FromText("sources: {fpm: {enabled: true, listen: 192.0.2.1:2620, allow_non_loopback: true}}\n");
  ASSERT_TRUE(opted.ok()) << opted.status().ToString();
  EXPECT_TRUE(opted->fpm.allow_non_loopback);
  EXPECT_TRUE(FromText("sources: {fpm: {enabled: true, listen: 127.0.0.2:2620}}\n").ok());
}

TEST(FibnicdConfig, WebHardeningKeys) {
  auto c = FromText("web: {max_connections_per_client: 8, max_streams: 2, max_streams_per_client: 1, "
                    "auth_failure_limit: 3, auth_failure_window_ms: 5000, allowed_hosts: [router1.example.net]}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->web.max_connections_per_client, 8u);
  EXPECT_EQ(c->web.max_streams, 2u);
  EXPECT_EQ(c->web.max_streams_per_client, 1u);
  EXPECT_EQ(c->web.auth_failure_limit, 3u);
  EXPECT_EQ(c->web.auth_failure_window_ms, 5000u);
  EXPECT_THAT(c->web.allowed_hosts, ElementsAre("router1.example.net"));
  EXPECT_THAT(FromText("web: {allowed_hosts: ['evil.example:80']}\n").status().message(),
              HasSubstr("web.allowed_hosts: bad value 'evil.example:80'"));
  EXPECT_THAT(FromText("web: {allowed_hosts: router1}\n").status().message(),
              HasSubstr("web.allowed_hosts: expected a list of host names"));
  EXPECT_THAT(FromText("web: {max_streams_per_client: 0}\n").status().message(),
              HasSubstr("web.max_streams_per_client: bad value '0'"));
}

TEST(FibnicdConfig, ChangedSectionsNamesWhatDiffers) {
  auto a = FromText("web: {listen: 127.0.0.1:9000}\n");
  auto b = FromText("logging: {level: debug}\nweb: {listen: 127.0.0.1:9000}\n");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_THAT(a->ChangedSections(*b), ElementsAre("logging"));
}

TEST(FibnicdConfig, BarPathFromConfigOrStateDirectory) {
  FibnicdConfig::Device d;
  d.path = "/tmp/x.img";
  EXPECT_EQ(ResolveBarPath(d), "/tmp/x.img");
  d.path.clear();
  setenv("STATE_DIRECTORY", "/var/lib/fibnic-test:/var/lib/other", 1);
  EXPECT_EQ(ResolveBarPath(d), "/var/lib/fibnic-test/bar0.img");
  unsetenv("STATE_DIRECTORY");
  EXPECT_EQ(ResolveBarPath(d), "/var/lib/fibnic/bar0.img");
}

}  // namespace
}  // namespace fibnic
