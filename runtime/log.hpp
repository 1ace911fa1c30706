// LNTUNE_LOG=debug|info|warn|off (default warn): lntune's messages on stderr.
#pragma once

#include <string>

namespace lntune::rt {

bool debug_enabled();
void log_debug(const std::string& msg);
void log_warn(const std::string& msg);

}  // namespace lntune::rt
