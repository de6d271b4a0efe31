// SPDX-License-Identifier: MIT
#pragma once

#include "store/layout.hpp"
#include "transfer/incoming_file.hpp"

namespace hfget::transfer {

/// The publish stage of a download into `layout` (which must outlive it): the verified partial file becomes
/// the file under its final name (cache: the blob, its snapshot link; local dir: the file and its metadata).
PublishStep publish_into(store::Layout& layout);

}  // namespace hfget::transfer
