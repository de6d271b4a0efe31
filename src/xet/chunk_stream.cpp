// SPDX-License-Identifier: MIT
#include "xet/chunk_stream.hpp"

// Implemented on the xet-format branch (issue 18).
