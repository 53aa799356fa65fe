// waitpath-gen: writes multi-host LTTng-layout kernel traces with known active paths.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "tools/gen/scenario.h"
#include "tools/gen/trace_generator.h"

int main(int argc, char** argv) {
  CLI::App app{"waitpath-gen: simulate hosts and write LTTng kernel CTF traces plus truth.json"};
  std::string scenario_path;
  std::string out_dir;
  std::vector<std::string> overrides;
  uint64_t seed = 0;
  bool quiet = false;
  app.add_option("--scenario", scenario_path, "scenario TOML file")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--out", out_dir, "output directory (one CTF trace per host + truth.json)")
      ->required();
  app.add_option("--set", overrides, "override a scenario value: key=value (dotted path)");
  auto* seed_opt = app.add_option("--seed", seed, "random seed (overrides the scenario's)");
  app.add_flag("-q,--quiet", quiet, "print nothing on success");
  CLI11_PARSE(app, argc, argv);

  try {
    waitpath::gen::Scenario scenario = waitpath::gen::ScenarioLoader::Load(
        scenario_path, overrides, seed_opt->count() > 0 ? &seed : nullptr);
    waitpath::gen::GenerationSummary s = waitpath::gen::TraceGenerator::Generate(scenario, out_dir);
    if (!quiet) {
      for (const auto& h : s.hosts) {
        fmt::print("{}/{}: {} events ({} discarded)\n", out_dir, h.host, h.events, h.discarded);
      }
      fmt::print("{} events; simulate {:.2f} s, write {:.2f} s, truth {:.2f} s\n", s.total_events,
                 s.simulate_seconds, s.write_seconds, s.truth_seconds);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "waitpath-gen: {}\n", e.what());
    return 1;
  }
  return 0;
}
