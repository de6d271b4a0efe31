// SPDX-License-Identifier: MIT
#include "xet/reconstruction.hpp"

// Implemented on the xet-format branch (issue 18).
