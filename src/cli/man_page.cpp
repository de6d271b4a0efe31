// SPDX-License-Identifier: MIT
// The man page is generated rather than written: a hand-kept page lists last year's flags. Walking the CLI11
// tree gives every command and option --help shows; the prose that --help has no room for (environment, files,
// exit codes) is the fixed text at the end.
#include "cli/man_page.hpp"

#include <vector>

namespace hfget::cli {
namespace {

// A named subcommand --help lists; an option group (CLI11 makes it an unnamed subcommand) is not one.
bool visible(const CLI::App* command) {
  return !command->get_name().empty() && !command->get_group().empty();
}

std::vector<const CLI::App*> option_groups(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* group : app.get_subcommands([](const CLI::App* sub) { return sub->get_name().empty(); })) {
    out.push_back(group);
  }
  return out;
}

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (visible(command)) out.push_back(command);
  }
  return out;
}

// "\fB\-\-include\fR \fIPATTERN\fR": the option's names in bold, its value's kind in italics.
std::string option_term(const CLI::Option& option) {
  std::string term = "\\fB" + roff_escape(option.get_name(false, true)) + "\\fR";
  if (option.get_items_expected_max() > 0 && !option.get_type_name().empty()) {
    term += " \\fI" + roff_escape(option.get_type_name()) + "\\fR";
  }
  return term;
}

std::string option_body(const CLI::Option& option) {
  std::string body = roff_escape(option.get_description());
  if (!option.get_default_str().empty()) body += " (default: " + roff_escape(option.get_default_str()) + ")";
  return body;
}

std::string synopsis(const CLI::App& command, const std::string& path) {
  std::string out = ".PP\n\\fB" + roff_escape(path) + "\\fR";
  if (!command.get_options([](const CLI::Option* o) { return o->nonpositional(); }).empty())
    out += " [\\fIOPTIONS\\fR]";
  for (const CLI::Option* positional : command.get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    out += " \\fI" + roff_escape(positional->get_name(true)) + "\\fR";
    if (positional->get_items_expected_max() > 1) out += "...";
  }
  if (!visible_subcommands(command).empty()) out += " \\fICOMMAND\\fR";
  return out + "\n";
}

void describe_options(const CLI::App& command, std::string& out) {
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    const std::string term =
        option->get_positional() ? "\\fI" + roff_escape(option->get_name(true)) + "\\fR" : option_term(*option);
    out += ".TP\n" + term + "\n" + option_body(*option) + "\n";
  }
  for (const CLI::App* group : option_groups(command)) {  // as --help shows them: under the group's title
    out += ".PP\n\\fI" + roff_escape(group->get_group()) + "\\fR\n";
    describe_options(*group, out);
  }
}

void describe_command(const CLI::App& command, const std::string& path, std::string& out) {
  out += ".SS \"" + roff_escape(path) + "\"\n" + roff_escape(command.get_description()) + "\n";
  out += synopsis(command, path);
  describe_options(command, out);
  for (const CLI::App* sub : visible_subcommands(command)) describe_command(*sub, path + " " + sub->get_name(), out);
}

constexpr const char* kClosingSections = R"(.SH ENVIRONMENT
hfget reads the variables huggingface_hub reads, with the same precedence.
.TP
.B HF_ENDPOINT
The Hub to talk to (default https://huggingface.co).
.TP
.B HF_HOME
Where the token and the cache live (default $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface).
.TP
.BR HF_HUB_CACHE ", " HUGGINGFACE_HUB_CACHE
The cache of downloaded repos (default $HF_HOME/hub).
.TP
.BR HF_TOKEN ", " HUGGING_FACE_HUB_TOKEN ", " HF_TOKEN_PATH
The token, else the file that holds it (default $HF_HOME/token).
.TP
.BR HF_HUB_OFFLINE ", " HF_HUB_DISABLE_SYMLINKS ", " HF_HUB_DISABLE_PROGRESS_BARS
Offline mode, real files instead of symlinks in the cache, no progress bars.
.TP
.BR CURL_CA_BUNDLE ", " SSL_CERT_FILE ", " SSL_CERT_DIR
Trusted certificates.
.TP
.BR https_proxy ", " http_proxy ", " all_proxy ", " no_proxy
Proxies, as libcurl reads them.
.PP
\fBhfget env\fR prints what each of them resolves to.
.SH EXIT STATUS
0 on success, 2 for a usage error; docs/exit-codes.md lists the others.
.SH SEE ALSO
\fBhf\fR(1); the files under /usr/share/doc/hfget.
)";

}  // namespace

std::string roff_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '\n') {
      out += "\n.br\n";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
  return out;
}

std::string man_page(const CLI::App& root, const std::string& version) {
  std::string out = ".TH HFGET 1 \"\" \"hfget " + roff_escape(version) + "\" \"User Commands\"\n";
  std::string summary = root.get_description();
  if (summary.starts_with("hfget: ")) summary.erase(0, 7);  // NAME already says "hfget \-"
  out += ".SH NAME\nhfget \\- " + roff_escape(summary) + "\n";
  out += ".SH SYNOPSIS\n" + synopsis(root, "hfget");
  out += ".SH OPTIONS\n";
  describe_options(root, out);
  out += ".SH COMMANDS\n";
  for (const CLI::App* command : visible_subcommands(root)) {
    describe_command(*command, "hfget " + command->get_name(), out);
  }
  return out + kClosingSections;
}

}  // namespace hfget::cli
