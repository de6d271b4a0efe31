// SPDX-License-Identifier: MIT
#include "transfer/publish.hpp"

#include <utility>

namespace hfget::transfer {

PublishStep publish_into(store::Layout& layout) {
  return [&layout](const RemoteFile& file, store::PartialFile&& bytes) { layout.publish(file, std::move(bytes)); };
}

}  // namespace hfget::transfer
