// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>

namespace hfget::store {

/// Whether `directory` (which must exist) accepts symlinks: one is created there and removed again, as
/// huggingface_hub's are_symlinks_supported() does in the repo folder. FAT, exFAT and many CIFS/SMB shares
/// refuse them (EPERM, or ENOSYS through FUSE). A leftover probe (kill -9 between the two calls) is named as
/// a temporary, so util::remove_stale_temporaries sweeps it.
bool symlinks_supported_in(const std::filesystem::path& directory);

/// True for the errno values a filesystem answers symlink() with when it has no symlinks at all (as opposed
/// to a full disk or a missing folder): huggingface_hub then copies instead, and so does hfget.
bool is_symlink_refusal(int error_number) noexcept;

}  // namespace hfget::store
