// How `--help` lays out the options (and so the man pages help2man makes from it).
#pragma once

#include <CLI/CLI.hpp>
#include <sstream>
#include <string>

namespace waitpath {

// CLI11 pads an option's name to the description column: a name one character short of it is
// followed by a single space, and help2man, which needs two, read the description as part of
// the name (`--max-lag  TEXT:DURATION=10s Live: a host…`, the option left undescribed). Such a
// name goes on a line of its own, as a longer one does.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    const std::string name = make_option_name(opt, is_positional) + make_option_opts(opt);
    const std::string desc = make_option_desc(opt);
    std::stringstream out;
    if (!desc.empty() && 2 + name.size() + 1 == get_column_width()) {
      out << "  " << name << '\n';
      CLI::detail::format_help(out, "", desc, get_column_width());
      // format_help indents an empty name by two spaces and pads it: the description starts at
      // the column, as after a long name.
      return out.str();
    }
    CLI::detail::format_help(out, name, desc, get_column_width());
    return out.str();
  }
};

}  // namespace waitpath
