// SPDX-License-Identifier: MIT
// The tree endpoint is the source of truth for what a download must produce: every size and hash hfget
// checks comes from here, so each field is validated before it becomes an expectation.
//
// Both answers parsed here come from the network and may be hostile (up to the 64 MiB hub_client accepts),
// so neither is ever built as a JSON tree: a DOM of 31 M nested brackets took 2.27 GB. They are parsed as
// SAX events with a depth limit, keeping only what is used (a tree page: the fields of the entry being read,
// then its RemoteFile; revision info: the top-level "sha") and skipping everything else unstored. Memory
// follows the files listed, and time is linear: no event looks back at what came before it (nlohmann's
// callback parser did, scanning the parent after each object, which made 1 M `{}` in an unused field run
// for minutes).
#include "hub/tree_listing.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "hfget/error.hpp"
#include "util/message_text.hpp"

namespace hfget::hub {
namespace {

using Json = nlohmann::json;

// Sizes above this are refused: no Hub file is a petabyte, and it keeps arithmetic far from overflow.
constexpr std::uint64_t kMaxFileSize = std::uint64_t{1} << 50;
// Containers nested in a tree page, the top array included: the array, an entry and its "lfs" are three;
// the rest is room for fields hfget ignores.
constexpr std::size_t kMaxTreeDepth = 7;
// Revision info carries the model card's metadata (cardData), nested as its author wrote it; a real one is
// a handful of levels deep.
constexpr std::size_t kMaxRevisionDepth = 64;
// The longest path the store accepts; a longer one is quoted clipped.
constexpr std::size_t kMaxQuotedPath = 4096;

bool is_lower_hex(const std::string& text, std::size_t length) {
  if (text.size() != length) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ErrorCode::kNetwork, "the Hub sent a malformed tree listing: " + what);
}

[[noreturn]] void malformed_info(const std::string& what) {
  throw Error(ErrorCode::kNetwork, "the Hub sent malformed repo info: " + what);
}

// The JSON type of a value, as the parsers tell them apart.
enum class Type : std::uint8_t { kAbsent, kString, kUnsigned, kNull, kTrue, kObject, kArray, kOther };

// One field of an entry as it arrived; its value is kept only for the fields hfget reads.
struct Field {
  Type type = Type::kAbsent;
  std::string text;          // kString
  std::uint64_t number = 0;  // kUnsigned
};

// The fields of the tree entry being read. A field given twice counts with its last value, as in a parsed
// JSON object.
struct PendingEntry {
  Field type, path, size, oid, lfs, xet_hash;
  Field lfs_oid, lfs_size;  // inside "lfs", when it is an object
};

std::uint64_t read_size(const Field& field, const char* key, const std::string& path) {
  if (field.type != Type::kUnsigned) {
    malformed(fmt::format("'{}' of '{}' is not a non-negative integer", key, path));
  }
  if (field.number > kMaxFileSize) {
    malformed(fmt::format("'{}' of '{}' is absurdly large ({})", key, path, field.number));
  }
  return field.number;
}

RemoteFile file_from(PendingEntry& entry) {
  if (entry.path.type != Type::kString) malformed("a file entry has no path");
  RemoteFile file;
  file.path = std::move(entry.path.text);
  const std::string path = util::clip_for_message(file.path, kMaxQuotedPath);
  file.size = read_size(entry.size, "size", path);

  if (entry.oid.type != Type::kString || !is_lower_hex(entry.oid.text, 40)) {
    malformed(fmt::format("'oid' of '{}' is not a 40-hex git object id", path));
  }
  file.blob_id = std::move(entry.oid.text);

  if (entry.lfs.type != Type::kAbsent && entry.lfs.type != Type::kNull) {
    if (entry.lfs.type != Type::kObject) malformed(fmt::format("'lfs' of '{}' is not an object", path));
    if (entry.lfs_oid.type != Type::kString || !is_lower_hex(entry.lfs_oid.text, 64)) {
      malformed(fmt::format("'lfs.oid' of '{}' is not a 64-hex sha256", path));
    }
    file.lfs_sha256 = std::move(entry.lfs_oid.text);
    file.lfs_size = read_size(entry.lfs_size, "size", path);
    if (*file.lfs_size != file.size) {
      malformed(fmt::format("'{}' has size {} but lfs.size {}", path, file.size, *file.lfs_size));
    }
  }
  if (entry.xet_hash.type == Type::kString && is_lower_hex(entry.xet_hash.text, 64)) {
    file.xet_hash = std::move(entry.xet_hash.text);
  }
  return file;
}

// The events of both answers, reduced to "a value of this type at this depth"; subclasses say what a value
// or key means where it is. Depth counts the containers open.
class Events : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return scalar(Type::kNull); }
  bool boolean(bool value) override { return scalar(value ? Type::kTrue : Type::kOther); }
  bool number_integer(number_integer_t /*value*/) override { return scalar(Type::kOther); }
  bool number_unsigned(number_unsigned_t number) override {
    number_ = number;
    return scalar(Type::kUnsigned);
  }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return scalar(Type::kOther); }
  bool string(string_t& text) override {
    text_ = &text;
    return scalar(Type::kString);
  }
  bool binary(binary_t& /*value*/) override { return scalar(Type::kOther); }
  bool start_object(std::size_t /*elements*/) override { return open(Type::kObject); }
  bool start_array(std::size_t /*elements*/) override { return open(Type::kArray); }
  bool end_object() override {
    --depth_;
    closed_object();
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    return false;
  }

 protected:
  // Opening a container while `max_depth` are open already calls too_deep().
  explicit Events(std::size_t max_depth) : max_depth_(max_depth) {}

  std::size_t depth() const noexcept { return depth_; }
  // The value being handled: its string (movable) for kString, its number for kUnsigned.
  std::string& text() noexcept { return *text_; }
  std::uint64_t number() const noexcept { return number_; }

  // A scalar, or a container about to open (then depth() is the depth it opens at). text() and number()
  // are valid only for the type they belong to.
  virtual void value(Type type) = 0;
  virtual void closed_object() {}  // an object closed; depth() is the depth it was opened at
  [[noreturn]] virtual void too_deep() = 0;

 private:
  bool open(Type type) {
    if (depth_ >= max_depth_) too_deep();
    value(type);
    ++depth_;
    return true;
  }
  bool scalar(Type type) {
    value(type);
    return true;
  }

  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::uint64_t number_ = 0;
  string_t* text_ = nullptr;
};

// A tree page: [entry, entry, …]; depth 1 is inside the array, 2 inside an entry, 3 inside its "lfs".
class TreePageEvents final : public Events {
 public:
  explicit TreePageEvents(std::vector<RemoteFile>& files) : Events(kMaxTreeDepth), files_(files) {}

  bool key(string_t& text) override {
    if (depth() == 2) entry_key_ = entry_field(text);
    if (depth() == 3 && in_lfs_) {
      lfs_key_ = text == "oid" ? &entry_.lfs_oid : text == "size" ? &entry_.lfs_size : nullptr;
    }
    return true;
  }

 private:
  Field* entry_field(const std::string& name) {
    if (name == "type") return &entry_.type;
    if (name == "path") return &entry_.path;
    if (name == "size") return &entry_.size;
    if (name == "oid") return &entry_.oid;
    if (name == "lfs") return &entry_.lfs;
    if (name == "xetHash") return &entry_.xet_hash;
    return nullptr;  // a field hfget does not use: skipped, not stored
  }

  void value(Type type) override {
    switch (depth()) {
      case 0:
        if (type != Type::kArray) malformed("the body is not a JSON array");
        break;
      case 1:
        if (type != Type::kObject) malformed("an entry is not an object");
        entry_ = PendingEntry{};
        break;
      case 2:
        if (entry_key_ == nullptr) break;
        assign(*entry_key_, type);
        if (entry_key_ == &entry_.lfs) {
          entry_.lfs_oid = Field{};
          entry_.lfs_size = Field{};
          in_lfs_ = type == Type::kObject;
        }
        break;
      case 3:
        if (in_lfs_ && lfs_key_ != nullptr) assign(*lfs_key_, type);
        break;
      default: break;
    }
  }

  void closed_object() override {
    if (depth() == 2) in_lfs_ = false;
    if (depth() != 1) return;
    if (entry_.type.type != Type::kString) malformed("an entry has no type");
    // Directories (and anything newer) carry no bytes to fetch.
    if (entry_.type.text == "file") files_.push_back(file_from(entry_));
  }

  [[noreturn]] void too_deep() override { malformed("the body is nested too deeply"); }

  void assign(Field& field, Type type) {
    field.type = type;
    field.text.clear();
    if (type == Type::kString) field.text = std::move(text());
    if (type == Type::kUnsigned) field.number = number();
  }

  std::vector<RemoteFile>& files_;
  PendingEntry entry_;
  Field* entry_key_ = nullptr;
  Field* lfs_key_ = nullptr;
  bool in_lfs_ = false;
};

// Revision info: {"sha": "…", "gated": false | "auto" | "manual", …}; only those two top-level fields are kept.
class RevisionEvents final : public Events {
 public:
  RevisionEvents() : Events(kMaxRevisionDepth) {}

  const std::optional<std::string>& sha() const noexcept { return sha_; }
  bool gated() const noexcept { return gated_; }

  bool key(string_t& text) override {
    if (depth() == 1) {
      at_sha_ = text == "sha";
      at_gated_ = text == "gated";
    }
    return true;
  }

 private:
  void value(Type type) override {
    if (depth() == 0 && type != Type::kObject) malformed_info("not a JSON object");
    if (depth() != 1) return;
    if (at_gated_) gated_ = type == Type::kTrue || (type == Type::kString && !text().empty());
    if (!at_sha_) return;
    sha_.reset();
    if (type == Type::kString && is_lower_hex(text(), 40)) sha_ = std::move(text());
  }

  [[noreturn]] void too_deep() override {
    malformed_info(fmt::format("nested more than {} levels deep", kMaxRevisionDepth));
  }

  bool at_sha_ = false;
  bool at_gated_ = false;
  std::optional<std::string> sha_;
  bool gated_ = false;
};

}  // namespace

std::vector<RemoteFile> parse_tree_page(const std::string& json_text) {
  // Each entry becomes a RemoteFile as soon as its object closes, and its fields are dropped.
  std::vector<RemoteFile> files;
  TreePageEvents events(files);
  if (!Json::sax_parse(json_text.begin(), json_text.end(), &events)) malformed("the body is not valid JSON");
  return files;
}

RevisionInfo parse_revision_info(const std::string& json_text) {
  RevisionEvents events;
  if (!Json::sax_parse(json_text.begin(), json_text.end(), &events)) malformed_info("not a JSON object");
  if (!events.sha()) malformed_info("'sha' is not a 40-hex commit id");
  return RevisionInfo{*events.sha(), events.gated()};
}

std::string parse_commit_from_revision_info(const std::string& json_text) {
  return parse_revision_info(json_text).commit;
}

}  // namespace hfget::hub
