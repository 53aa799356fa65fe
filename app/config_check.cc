#include "app/config_check.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace waitpath {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The option's TOML key: its long name without dashes.
std::vector<std::string> Keys(const CLI::App& command) {
  std::vector<std::string> keys;
  for (const CLI::Option* o : command.get_options()) {
    for (const std::string& name : o->get_lnames()) keys.push_back(name);
    if (o->get_lnames().empty() && !o->get_name().empty() && o->get_name()[0] != '-')
      keys.push_back(o->get_name());  // a positional, e.g. TRACE
  }
  return keys;
}

}  // namespace

std::string ClosestName(std::string_view key, const std::vector<std::string>& keys) {
  std::string best;
  size_t best_distance = 3;  // suggest only near misses
  for (const std::string& k : keys) {
    const size_t d = EditDistance(key, k);
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

std::string UnknownOption(const CLI::App& app, int argc, char** argv) {
  const CLI::App* command = nullptr;
  std::vector<const CLI::Option*> options = app.get_options();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (arg.size() < 2 || arg[0] != '-' || (arg[1] >= '0' && arg[1] <= '9')) {
      if (command) continue;  // a positional (TRACE) or a value
      for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == arg) command = sub;
      }
      if (command) {
        const auto own = command->get_options();
        options.insert(options.end(), own.begin(), own.end());
      }
      continue;
    }
    const auto known = std::find_if(options.begin(), options.end(), [&](const CLI::Option* o) {
      return name.size() > 2 && name[1] == '-' ? o->check_lname(name.substr(2))
                                               : o->check_sname(name.substr(1));
    });
    if (known != options.end()) {
      // Its value (--watch comm=x) is not an option, whatever it starts with.
      if (eq == std::string::npos && (*known)->get_items_expected_min() > 0) ++i;
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::Option* o : options) {
      for (const std::string& l : o->get_lnames()) names.push_back(l);
    }
    // A one- or two-letter name is near every short word: no guess.
    const std::string bare = name.substr(name.find_first_not_of('-'));
    const std::string near = bare.size() < 3 ? std::string() : ClosestName(bare, names);
    return fmt::format("{}no option {}{}", command ? command->get_name() + ": " : "", name,
                       near.empty() ? "" : " (did you mean --" + near + "?)");
  }
  return {};
}

namespace {

std::string Where(const std::string& path, const toml::node& node) {
  const toml::source_region& s = node.source();
  return fmt::format("{}:{}", path, s.begin.line);
}

}  // namespace

std::string ConfigPathFromArgs(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--config" && i + 1 < argc) return argv[i + 1];
    if (arg.substr(0, 9) == "--config=") return std::string(arg.substr(9));
  }
  return {};
}

bool CheckConfig(const std::string& path, CLI::App& app, std::string* error) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    // A file that cannot be read has no position (toml++ says 0:0).
    *error = begin.line == 0 ? fmt::format("--config {}: {}", path, e.description())
                             : fmt::format("--config {}:{}:{}: {}", path, begin.line, begin.column,
                                           e.description());
    return false;
  }
  for (const auto& [name, node] : root) {
    CLI::App* command = nullptr;
    try {
      command = app.get_subcommand(std::string(name.str()));
    } catch (const CLI::OptionNotFound&) {
    }
    if (!command || !node.is_table()) {
      *error = fmt::format("--config {}: [{}] is not a command's table (a [SUBCOMMAND] each)",
                           Where(path, node), name.str());
      return false;
    }
    const std::vector<std::string> keys = Keys(*command);
    for (const auto& [key_name, value] : *node.as_table()) {
      const std::string key(key_name.str());
      const CLI::Option* option = nullptr;
      for (const CLI::Option* o : command->get_options()) {
        const auto& names = o->get_lnames();
        if (std::find(names.begin(), names.end(), key) != names.end() || o->get_name() == key)
          option = o;
      }
      if (!option) {
        const std::string near = ClosestName(key, keys);
        *error = fmt::format("--config {}: [{}] has no key '{}'{}", Where(path, value), name.str(),
                             key, near.empty() ? "" : " (did you mean '" + near + "'?)");
        return false;
      }
      const bool flag = option->get_expected_max() == 0;  // takes no value on the command line
      if (flag != value.is_boolean()) {
        *error = fmt::format("--config {}: [{}] {} takes {}", Where(path, value), name.str(), key,
                             flag ? "true or false" : "a string, a number or a list");
        return false;
      }
    }
  }
  return true;
}

}  // namespace waitpath
